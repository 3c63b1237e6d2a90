/*
 * kallsyms text: one symbol per line, "ffffffff81000000 T _text" or with a
 * module "ffffffffc0201000 t name\t[module]". Addresses are 0 when the
 * reader lacked privilege (kptr_restrict): such a file is useless.
 */
#include "symbolize/kallsyms.h"

#include "core/hex.h"
#include "core/ropen.h"
#include "core/sorted.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KALLSYMS_MAX ((size_t)256 << 20)

void kallsyms_init(struct kallsyms *k)
{
	memset(k, 0, sizeof(*k));
}

void kallsyms_release(struct kallsyms *k)
{
	free(k->syms);
	free(k->buf);
	memset(k, 0, sizeof(*k));
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool hexval(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;

	if (!n || n > 16)
		return false;
	for (size_t i = 0; i < n; i++) {
		int d = hex_digit(s[i]);

		if (d < 0)
			return false;
		x = x << 4 | (unsigned)d;
	}
	*v = x;
	return true;
}

/* Appends n bytes of src and a NUL at buf + *w (src at or past it: a move). */
static void put_str(char *buf, size_t *w, const char *src, size_t n)
{
	memmove(buf + *w, src, n);
	*w += n;
	buf[(*w)++] = '\0';
}

/*
 * Parses buf (taken over: freed by kallsyms_release): "" at buf[0], then
 * len bytes of text, then one spare byte. The kept symbols' names (and
 * their modules, once per run of equal ones) are moved to the front of
 * buf as C strings as they are parsed (never past what is still to be
 * read: a line holds more than its name), and buf is then cut to them
 * (5.4 MB of text -> ~2.5 MB of names for 120 k symbols).
 */
static enum conv_err parse_owned(struct kallsyms *k, char *buf, size_t len)
{
	char *text = buf + 1;
	size_t pos = 0, cap, w = 1;
	uint32_t last_mod = 0;

	free(k->buf);
	k->buf = buf;
	k->buf_len = len + 2;
	k->nr = 0;
	k->text = 0;
	buf[0] = '\0';
	text[len] = '\0';
	/* a kallsyms line is 40-50 bytes: room for all at once, touched only as filled */
	cap = len / 32 + 16;
	{
		struct ksym *p = realloc(k->syms, cap * sizeof(*p));

		if (!p)
			return CONV_E_NOMEM;
		k->syms = p;
	}
	while (pos < len) {
		char *line = text + pos;
		char *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		char *sp1, *name, *end = line + ll, *mod = NULL;
		size_t nlen, mlen = 0;
		uint64_t addr;
		char type;

		pos += ll + 1;
		sp1 = memchr(line, ' ', ll);
		if (!sp1 || sp1 + 3 >= end || sp1[2] != ' ' || !hexval(line, (size_t)(sp1 - line), &addr)) {
			if (ll)
				k->malformed++;
			continue;
		}
		type = sp1[1];
		name = sp1 + 3;
		nlen = (size_t)(end - name);
		{
			char *tab = memchr(name, '\t', nlen);

			if (tab) {
				nlen = (size_t)(tab - name);
				if (tab + 1 < end && tab[1] == '[' && end[-1] == ']') {
					mod = tab + 2;
					mlen = (size_t)(end - 1 - mod);
				}
			}
		}
		if (!nlen)
			continue;
		if ((nlen == 5 && !memcmp(name, "_text", 5)) ||
		    (!k->text && nlen == 6 && !memcmp(name, "_stext", 6)))
			k->text = addr;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		/* an arm or arm64 module's mapping symbols ($x, $d: the kernel lists its modules'
		 * whole symbol tables) name no function, and perf skips them too */
		if (!addr || name[0] == '$')
			continue;
		if (k->nr == cap) {
			size_t nc = cap * 2;
			struct ksym *p = realloc(k->syms, nc * sizeof(*p));

			if (!p)
				return CONV_E_NOMEM;
			k->syms = p;
			cap = nc;
		}
		k->syms[k->nr].addr = addr;
		k->syms[k->nr].name = (uint32_t)w;
		put_str(buf, &w, name, nlen);
		if (mod && !(last_mod && !strncmp(buf + last_mod, mod, mlen) && !buf[last_mod + mlen])) {
			last_mod = (uint32_t)w;
			put_str(buf, &w, mod, mlen);
		}
		k->syms[k->nr].module = mod ? last_mod : 0;
		k->nr++;
	}
	{
		char *p = realloc(buf, w); /* smaller: stays valid on failure */

		if (p)
			k->buf = p;
		k->buf_len = w;
	}
	if (!k->nr)
		return CONV_E_FORMAT;
	/*
	 * The kernel lists its text symbols in address order (modules too):
	 * checking that is linear, where qsort (a merge sort in glibc, so
	 * ties keep file order either way) was a third of loading 120 k
	 * symbols.
	 */
	for (size_t i = 1; i < k->nr; i++) {
		if (k->syms[i].addr < k->syms[i - 1].addr) {
			qsort(k->syms, k->nr, sizeof(*k->syms), ksym_cmp);
			break;
		}
	}
	return CONV_E_OK;
}

enum conv_err kallsyms_parse(struct kallsyms *k, const char *text, size_t len)
{
	char *buf;

	if (len > KALLSYMS_MAX)
		return CONV_E_LIMIT;
	buf = malloc(len + 2);
	if (!buf)
		return CONV_E_NOMEM;
	memcpy(buf + 1, text, len);
	return parse_owned(k, buf, len);
}

enum conv_err kallsyms_load(struct kallsyms *k, const char *path)
{
	/* a regular file only (/proc/kallsyms is one): the path may be a recording's */
	int fd = ropen_regular(path, false);
	struct stat st;
	char *buf;
	size_t len = 0, cap = 1u << 20;

	if (fd < 0)
		return errno == ENOENT ? CONV_E_NOTFOUND : CONV_E_IO;
	/*
	 * A file is read at its size in one go (+ 1: EOF is seen without
	 * growing); /proc/kallsyms reports 0 and is read until EOF. The
	 * buffer has room for parse_owned's leading "" and spare byte.
	 */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < KALLSYMS_MAX)
		cap = (size_t)st.st_size + 1;
	buf = malloc(cap + 2);
	if (!buf) {
		close(fd);
		return CONV_E_NOMEM;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *p = cap * 2 > KALLSYMS_MAX ? NULL : realloc(buf, cap * 2 + 2);

			if (!p) {
				free(buf);
				close(fd);
				return cap * 2 > KALLSYMS_MAX ? CONV_E_LIMIT : CONV_E_NOMEM;
			}
			buf = p;
			cap *= 2;
		}
		n = read(fd, buf + 1 + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			close(fd);
			return CONV_E_IO;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	return parse_owned(k, buf, len);
}

uint64_t kallsyms_footprint(const struct kallsyms *k)
{
	return k->nr * sizeof(*k->syms) + k->buf_len;
}

const struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = sorted_first_above(k->syms, k->nr, sizeof(k->syms[0]), offsetof(struct ksym, addr),
				       addr);

	if (!lo || lo == k->nr)
		return NULL; /* before the first or after the last: no end known */
	return &k->syms[lo - 1];
}

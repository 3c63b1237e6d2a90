#include "cli/text.h"

#include "cli/cli.h"
#include "core/json.h"
#include "core/ropen.h"
#include "pipeline/symjob.h"
#include "pipeline/unwinding.h"
#include "reader/reader.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cli_size(uint64_t bytes, char *buf, size_t n)
{
	static const char *const unit[] = { "kB", "MB", "GB", "TB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1000) {
		snprintf(buf, n, "%" PRIu64 " B", bytes);
		return buf;
	}
	/* 999.95 kB would print as 1000.0 kB: that is 1.0 MB */
	while (u < 3 && v >= 999.95) {
		v /= 1000;
		u++;
	}
	snprintf(buf, n, "%.1f %s", v, unit[u]);
	return buf;
}

const char *cli_plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* $COLUMNS when it is a width (1 to 9999), else 0. */
static unsigned columns_env(void)
{
	const char *env = getenv("COLUMNS");
	unsigned long v;
	char *end;

	if (!env || !*env)
		return 0;
	v = strtoul(env, &end, 10);
	return !*end && v > 0 && v < 10000 ? (unsigned)v : 0;
}

unsigned cli_term_width(int fd)
{
	struct winsize ws;
	unsigned env;

	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	env = columns_env();
	return env ? env : 80;
}

/* The byte offset just past the first k columns of s. */
static size_t head_end(const char *s, size_t k)
{
	size_t i = 0;

	for (; s[i] && k; k--) {
		i++;
		while (((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
	}
	return i;
}

unsigned cli_wrap_width(int fd)
{
	return isatty(fd) ? cli_term_width(fd) : columns_env();
}

/* Columns of the first n bytes of a UTF-8 string: one per character (the lines are ASCII but for names). */
static size_t cols_n(const char *s, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n && s[i]; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

static size_t cols(const char *s)
{
	return cols_n(s, SIZE_MAX);
}

static void put_spaces(FILE *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++)
		fputc(' ', f);
}

/* A line break (f NULL: only counted). */
static void put_break(FILE *f, unsigned *n)
{
	if (f)
		fputc('\n', f);
	++*n;
}

static void put_bytes(FILE *f, const char *s, size_t n)
{
	if (f)
		fwrite(s, 1, n, f);
}

unsigned cli_wrap(FILE *f, unsigned width, unsigned indent, const char *text)
{
	unsigned lines = 0;
	size_t col = 0, lead = strspn(text, " ");
	const char *s = text + lead;

	if (!width) {
		if (f)
			fprintf(f, "%s\n", text);
		return 1;
	}
	/* a continuation shorter than a few columns would be no line at all */
	if (indent + 20 > width)
		indent = width > 20 ? width - 20 : 0;
	put_spaces(f, lead);
	col = lead;
	while (*s) {
		size_t sp = strspn(s, " "), wl, wc;

		if (s[sp] == '\n') {
			put_break(f, &lines);
			put_spaces(f, indent);
			col = indent;
			s += sp + 1;
			s += strspn(s, " ");
			continue;
		}
		if (!s[sp])
			break;
		s += sp;
		wl = strcspn(s, " \n");
		wc = cols_n(s, wl);
		if (col > indent && col + sp + wc > width) {
			put_break(f, &lines);
			put_spaces(f, indent);
			col = indent;
			sp = 0;
		}
		put_spaces(f, sp);
		col += sp;
		/* a word wider than the room left: cut at the edge, the rest on the next lines */
		while (col + wc > width && width > col) {
			size_t take = head_end(s, width - col);

			put_bytes(f, s, take);
			put_break(f, &lines);
			put_spaces(f, indent);
			col = indent;
			s += take;
			wl -= take;
			wc = cols_n(s, wl);
		}
		put_bytes(f, s, wl);
		col += wc;
		s += wl;
	}
	put_break(f, &lines);
	return lines;
}


static _Thread_local FILE *err_to;

FILE *cli_err(void)
{
	return err_to ? err_to : stderr;
}

void cli_err_to(FILE *f)
{
	err_to = f;
}

void cli_warn(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "conv: warning: ");

	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	cli_wrap(cli_err(), cli_wrap_width(STDERR_FILENO), 4, buf);
}

/* Whether a progress line is on the terminal: read by the signal handler. */
static volatile sig_atomic_t progress_shown;

void cli_progress_line(const char *name, const char *pre, double frac, const char *post)
{
	char line[1024], shortname[512], bar[40];
	size_t room = cli_term_width(STDERR_FILENO), fixed, used = 0, nb = 0;
	const char *nm = name;

	/* one column left free: a line that fills the last column wraps on some terminals */
	room = room > 1 ? room - 1 : 1;
	fixed = cols("conv: ") + cols(pre) + cols(post);
	if (nm) {
		size_t budget = room > fixed + 2 ? room - fixed - 2 : 0;

		if (cols(nm) > budget && strrchr(nm, '/'))
			nm = strrchr(nm, '/') + 1;
		if (cols(nm) > budget) {
			if (budget >= 8) {
				snprintf(shortname, sizeof(shortname), "...%s",
					 nm + head_end(nm, cols(nm) - (budget - 3)));
				nm = shortname;
			} else {
				nm = NULL;
			}
		}
		used = nm ? cols(nm) + 2 : 0;
	}
	if (frac >= 0 && room > fixed + used + 13) {
		size_t w = room - fixed - used - 3, fill;

		if (w > 30)
			w = 30;
		if (frac > 1)
			frac = 1;
		fill = (size_t)(frac * (double)w + 0.5);
		bar[nb++] = '[';
		for (size_t i = 0; i < w; i++)
			bar[nb++] = i < fill ? '=' : ' ';
		bar[nb++] = ']';
		bar[nb++] = ' ';
	}
	bar[nb] = 0;
	snprintf(line, sizeof(line), "conv: %s%s%s%s%s", nm ? nm : "", nm ? ": " : "", pre, bar, post);
	/* last resort: cut, never wrap */
	line[head_end(line, room)] = 0;
	/* set first: a signal right after the line is written must find it set */
	progress_shown = 1;
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
}

void cli_progress_clear(void)
{
	fputs("\r\033[K", stderr);
	fflush(stderr);
	progress_shown = 0;
}

void cli_progress_clear_on_signal(void)
{
	static const char clear[] = "\r\033[K";

	if (progress_shown && write(STDERR_FILENO, clear, sizeof(clear) - 1) < 0)
		return; /* nothing more a handler can do */
	progress_shown = 0;
}

void cli_dfd_counts(char *buf, size_t n, const struct symjob_stats *st, bool offline)
{
	char b[32];
	int k;

	if (!st->dfd_servers)
		k = snprintf(buf, n, "no server asked (%s): %" PRIu64 " from cache, %" PRIu64 " not cached",
			     offline ? "--offline" : "none configured", st->dfd_cache_hits,
			     st->dfd_not_asked + st->dfd_not_found);
	else
		k = snprintf(buf, n, "%" PRIu64 " fetched (%s), %" PRIu64 " from cache, %" PRIu64
			     " not found, %" PRIu64 " %s", st->dfd_fetched, cli_size(st->dfd_bytes, b, sizeof(b)),
			     st->dfd_cache_hits, st->dfd_not_found, st->dfd_errors,
			     cli_plural(st->dfd_errors, "error", "errors"));
	/* another user's entries in a shared cache, passed over (debuginfod.h) */
	if (st->dfd_untrusted && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, ", %" PRIu64 " cache %s not trusted", st->dfd_untrusted,
			 cli_plural(st->dfd_untrusted, "entry", "entries"));
}

void cli_dfd_down(char *buf, size_t n, const char *url, const char *why, uint64_t skipped)
{
	int k = snprintf(buf, n, "%s %s; not asked again", url, why);

	if (skipped && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, " (%" PRIu64 " %s not sent)", skipped,
			 cli_plural(skipped, "request", "requests"));
}

void cli_dfd_progress(const char **pre, char *post, size_t n, const struct symjob_progress *p,
		      bool offline)
{
	char counts[224], b1[32], b2[32];
	unsigned left = p->active + p->queued;

	/* the summary's own words and counters: the two cannot disagree */
	cli_dfd_counts(counts, sizeof(counts), p->st, offline);
	if (p->waited_ms) {
		*pre = "waiting for debuginfod: ";
		snprintf(post, n, "%u %s, %.1f s; %s", left, cli_plural(left, "request", "requests"),
			 (double)p->waited_ms / 1e3, counts);
		return;
	}
	*pre = "debuginfod ";
	if (p->build_id && !p->done)
		snprintf(post, n, "%s; %u downloading, %u queued; %.12s %s of %s", counts, p->active,
			 p->queued, p->build_id, cli_size(p->received, b1, sizeof(b1)),
			 p->total ? cli_size(p->total, b2, sizeof(b2)) : "?");
	else
		snprintf(post, n, "%s; %u downloading, %u queued", counts, p->active, p->queued);
}

int cli_open_input(const char *path, const struct rdr_opts *ro, struct rdr **r)
{
	struct conv_diag diag;
	struct stat stt;
	enum conv_err err;

	memset(&diag, 0, sizeof(diag));
	*r = NULL;
	if (strcmp(path, "-") && stat(path, &stt) == 0 && S_ISDIR(stt.st_mode)) {
		fprintf(cli_err(), "conv: %s: is a directory, not a perf.data file\n", path);
		return CLI_EXIT_INPUT;
	}
	err = !strcmp(path, "-") ? rdr_open_fd(r, STDIN_FILENO, ro, &diag)
				 : rdr_open_path(r, path, ro, &diag);
	if (!err)
		return CLI_EXIT_OK;
	if (err == CONV_E_IO && diag.msg[0])
		/* the system's reason alone ("cannot open X: No such file or directory") */
		fprintf(cli_err(), "conv: %s\n", diag.msg);
	else if (diag.offset != UINT64_MAX && diag.msg[0])
		fprintf(cli_err(), "conv: %s: %s at offset %" PRIu64 ": %s\n", path, conv_strerror(err),
			diag.offset, diag.msg);
	else
		fprintf(cli_err(), "conv: %s: %s%s%s\n", path, conv_strerror(err), diag.msg[0] ? ": " : "",
			diag.msg);
	return CLI_EXIT_INPUT;
}

int cli_map_file(const char *cmd, const char *path, size_t max, struct cli_mapped *m)
{
	/* a regular file only: a FIFO's open would block, a device's would run its driver */
	int fd = ropen_regular(path, false);
	struct stat st;
	char sz[32], lim[48];

	memset(m, 0, sizeof(*m));
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(cli_err(), "%s: %s: %s\n", cmd, path, ropen_strerror(errno));
		if (fd >= 0)
			close(fd);
		return CLI_EXIT_INPUT;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max || !st.st_size) {
		snprintf(lim, sizeof(lim), "larger than %s", cli_size(max, sz, sizeof(sz)));
		fprintf(cli_err(), "%s: %s: %s\n", cmd, path,
			!S_ISREG(st.st_mode) ? "not a regular file" : st.st_size ? lim : "empty");
		close(fd);
		return CLI_EXIT_INPUT;
	}
	m->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m->map == MAP_FAILED) {
		m->map = NULL;
		fprintf(cli_err(), "%s: %s: %s\n", cmd, path, strerror(errno));
		return CLI_EXIT_INPUT;
	}
	m->data = m->map;
	m->len = (size_t)st.st_size;
	return 0;
}

void cli_unmap_file(struct cli_mapped *m)
{
	if (m->map)
		munmap(m->map, m->len);
	memset(m, 0, sizeof(*m));
}

bool cli_stdin_usable(const char *cmd)
{
	if (!isatty(STDIN_FILENO))
		return true;
	fprintf(cli_err(), "%s: standard input is a terminal, not a recording: pipe one in "
			"(perf record -o - ... | conv -) or name a file\n", cmd);
	return false;
}

void cli_unwind_words(const struct unwinding_stats *u, char *dwarf, size_t ndwarf, char *lbr,
		      size_t nlbr)
{
	size_t len = 0;
	bool first = true;

	dwarf[0] = lbr[0] = '\0';
	if (u->samples) {
		len = (size_t)snprintf(dwarf, ndwarf, "%" PRIu64 " %s with a stack copy: %" PRIu64 " to the root",
				       u->samples, cli_plural(u->samples, "sample", "samples"), u->to_root);
		for (int why = 0; why < UW_STOP__COUNT && len < ndwarf; why++) {
			if (why == UW_STOP_ROOT || !u->stopped[why])
				continue;
			len += (size_t)snprintf(dwarf + len, ndwarf - len, "%s%" PRIu64 " %s", first ? "; cut: " : ", ",
						u->stopped[why], uw_stop_text((enum uw_stop)why));
			first = false;
			/* the warning's count (copy_full) is this part of the same figure */
			if (why == UW_STOP_COPY && u->copy_full && len < ndwarf)
				len += (size_t)snprintf(dwarf + len, ndwarf - len, " (%" PRIu64 " with the whole copy used)",
							u->copy_full);
		}
		if (len < ndwarf)
			snprintf(dwarf + len, ndwarf - len, "; %.1f user frames a sample",
				 (double)u->frames / (double)u->samples);
	}
	/* arm64 frame-pointer chains: only there, so that other recordings' words stay as they were */
	if (u->leaf_callers && len < ndwarf)
		snprintf(dwarf + len, ndwarf - len, "%s%" PRIu64 " frame-pointer %s given the leaf's caller from LR",
			 len ? "; " : "", u->leaf_callers, cli_plural(u->leaf_callers, "chain", "chains"));
	if (u->lbr_samples) {
		uint64_t built = u->lbr_samples - u->lbr_empty;

		len = (size_t)snprintf(lbr, nlbr, "%" PRIu64 " %s with LBR call stacks: %.1f callers a sample "
				       "from the call entries",
				       u->lbr_samples, cli_plural(u->lbr_samples, "sample", "samples"),
				       built ? (double)u->lbr_frames / (double)built : 0.0);
		if (u->lbr_empty && len < nlbr)
			snprintf(lbr + len, nlbr - len, ", %" PRIu64 " with an empty branch stack (recorded chain kept)",
				 u->lbr_empty);
	}
}

void cli_unwind_json(struct json *j, const struct unwinding_stats *u)
{
	json_obj_begin(j);
	json_kv_u64(j, "samples", u ? u->samples : 0);
	json_kv_u64(j, "to_root", u ? u->to_root : 0);
	json_kv_u64(j, "frames", u ? u->frames : 0);
	json_key(j, "truncated");
	json_obj_begin(j);
	for (int why = 0; why < UW_STOP__COUNT; why++)
		if (why != UW_STOP_ROOT)
			json_kv_u64(j, uw_stop_text((enum uw_stop)why), u ? u->stopped[why] : 0);
	json_obj_end(j);
	if (u && u->leaf_callers)
		json_kv_u64(j, "leaf_callers", u->leaf_callers);
	json_key(j, "lbr");
	json_obj_begin(j);
	json_kv_u64(j, "samples", u ? u->lbr_samples : 0);
	json_kv_u64(j, "callers", u ? u->lbr_frames : 0);
	json_kv_u64(j, "empty", u ? u->lbr_empty : 0);
	json_obj_end(j);
	json_obj_end(j);
}

void cli_dfd_counts_json(struct json *j, const struct symjob_stats *ss)
{
	json_kv_u64(j, "fetched", ss ? ss->dfd_fetched : 0);
	json_kv_u64(j, "cache_hits", ss ? ss->dfd_cache_hits : 0);
	json_kv_u64(j, "not_found", ss ? ss->dfd_not_found : 0);
	json_kv_u64(j, "errors", ss ? ss->dfd_errors : 0);
	json_kv_u64(j, "bytes", ss ? ss->dfd_bytes : 0);
	json_kv_u64(j, "not_asked", ss ? ss->dfd_not_asked : 0);
	json_kv_u64(j, "skipped", ss ? ss->dfd_skipped : 0);
	json_kv_u64(j, "untrusted", ss ? ss->dfd_untrusted : 0);
}

void cli_dfd_down_json(struct json *j, const char *url, const char *why, uint64_t skipped)
{
	json_obj_begin(j);
	json_kv_str(j, "url", url);
	json_kv_str(j, "why", why ? why : "");
	json_kv_u64(j, "skipped", skipped);
	json_obj_end(j);
}

void cli_missing_json(struct json *j, const char *build_id, const char *path, const char *count_key,
		      uint64_t count, const char *reason)
{
	json_obj_begin(j);
	json_kv_str(j, "build_id", build_id);
	json_kv_str(j, "path", path);
	json_kv_u64(j, count_key, count);
	if (reason)
		json_kv_str(j, "reason", reason);
	json_obj_end(j);
}

void cli_output_json(struct json *j, const char *format, const char *path, uint64_t bytes)
{
	json_obj_begin(j);
	json_kv_str(j, "format", format);
	json_kv_str(j, "path", path);
	json_kv_u64(j, "bytes", bytes);
	json_obj_end(j);
}

/* The name of a record type for messages: "" for none, "type N" (in buf) when perf never named it. */
const char *cli_record_name(uint32_t type, char buf[static 32])
{
	const char *n;

	if (!type)
		return "";
	n = rdr_record_name(type);
	if (n)
		return n;
	snprintf(buf, 32, "type %u", type);
	return buf;
}

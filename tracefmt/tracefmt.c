/*
 * Tracepoint formats and sample fields: the formats of the tracing-data
 * blob (walked by core/tdata.c), the checks that stand between the
 * recording and libtraceevent, and the per-sample decoding.
 * See tracefmt.h for the contract.
 *
 * What the checks refuse, and why (libtraceevent's history):
 *   - bytes other than printable ASCII, tab and newline, and field
 *     declarations with other characters than C's: libtraceevent 1.7 leaked
 *     the field list on a type like "unsig$ned short" (our fuzzing, the
 *     regression libtraceevent-leak-bad-field-type.data);
 *   - REC->x where x is not a field of the event: a SEGV in __print_flags
 *     parsing in 1.7 (libtraceevent-segv-print-flags-unknown-field.data);
 *   - unbalanced (), [], {} or quotes, nesting deeper than 32, a '?' without
 *     its ':' at the same depth: its recursive-descent parser recurses per
 *     level, and process_cond() leaked and then double-freed on broken
 *     conditionals (fixed upstream in 2024, after 1.7.1);
 *   - sizeof: process_sizeof() double-freed on a malformed operand (Google's
 *     fuzzing, fixed after 1.7.1); kernel print fmts use it rarely, for
 *     __print_array counts, refused anyway;
 *   - field declarations without a type, or with brackets before the name
 *     outside "__data_loc TYPE[] name", and malformed print fmt expressions
 *     (an operator where an operand is due, '~"x"', "args[!5]", "{ }"):
 *     1.7.1 leaks on them (fuzzing; kvm_inj_exception's "{ }" is real), and
 *     an operator right after a string ('"R" . x'): a NULL dereference in
 *     tep_parse_event (fuzzing); a call of a function it does not know
 *     (tfmt_known_function): it fails the format, leaking (fuzzing);
 *   - divisors other than non-zero literals: SIGFPE when it folds constants
 *     and when it prints (fuzzing);
 *   - lengths, counts and widths it takes from the sample unchecked
 *     (__print_array, __print_hex with a wide length, "%*d"), see
 *     tfmt_hex_len_ok and tfmt_conversions_ok;
 *   - fields that overlap, run past 64 KiB or repeat a name, ids that do not
 *     fit common_type (u16), formats without common_type at offset 0 (the
 *     rendering selects the event through it, at offset 0, see tfmt_render).
 */
#include "tracefmt/tracefmt.h"

#include "core/cursor.h"
#include "core/tdata.h"

#include "tfmt_syscalls.h"

#include <event-parse.h>
#include <trace-seq.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TFMT_MAX_FORMAT 65536u /* bytes of one format text */
#define TFMT_MAX_PRINT 32768u  /* bytes of its print fmt line */
#define TFMT_MAX_RECORD 65536u /* a tracepoint record's size */
#define TFMT_MAX_FIELDS 512u
#define TFMT_MAX_DEPTH 32u
#define TFMT_PAD 8u /* zero bytes after the copy of a sample: strings end there */
#define TFMT_MAX_HEX 4096u /* a constant __print_hex length */
#define TFMT_REC_BUF (2 * TFMT_MAX_RECORD + TFMT_PAD)

/* One literal segment of the print fmt's format string, escapes undone. */
struct tfmt_lit {
	size_t off, len; /* in tfmt_event.lits */
};

struct tfmt_event {
	struct tfmt *t;
	struct tep_event *ev;
	uint64_t id;
	char *name; /* "sys:name" */
	struct tep_format_field **fields;
	size_t nr_fields;
	/*
	 * The print fmt's format string cut at its conversions: lit[0] conv
	 * lit[1] conv ... lit[nr_lits-1]. Conversions with nothing between
	 * them are one value ("prev_state=%s%s" gives "R+"). group[i] is the
	 * number of the literal that precedes field i's "name=" conversion, or
	 * -1 when the field is not shown that way.
	 */
	char *lits;
	struct tfmt_lit *lit;
	size_t nr_lits;
	int *group;
	uint32_t min_size;  /* every field's offset + size, common ones included */
	int syscall_field;  /* own field holding the syscall number, or -1 */
	struct tep_format_field *type_field; /* common_type */
};

struct tfmt {
	struct tep_handle *tep;
	struct tfmt_stats stats;
	struct tfmt_event **events; /* by id */
	size_t nr_events, cap_events;
	bool swap;  /* the recording's byte order is not the host's */
	struct trace_seq seq;
	/*
	 * The copy libtraceevent reads: TFMT_REC_BUF bytes. A print fmt may
	 * read past the sample where its lengths come from the data
	 * (__print_hex(REC->a, __get_dynamic_array_len(b)) reads from a's
	 * offset, below 64 KiB, as many bytes as b holds, at most 64 KiB):
	 * such reads stay inside this buffer, which is zeroed once.
	 */
	uint8_t *rec;
	uint8_t ids_seen[8192]; /* ids handed to libtraceevent, one bit each (they are u16) */
	/*
	 * What seq holds: the rendering of rec (shown_len bytes) for event
	 * shown, whose own common_type bytes were shown_type. A caller asks
	 * for a sample's fields one by one; the line is rendered once.
	 */
	const struct tfmt_event *shown;
	size_t shown_len;
	uint8_t shown_type[2];
	bool shown_ok;
};

/* ---- the format text checks ---- */

struct tfmt_field_decl {
	const char *name;
	size_t name_len;
	uint32_t offset, size;
};

struct tfmt_check {
	const char *name;
	size_t name_len;
	uint64_t id;
	struct tfmt_field_decl fields[TFMT_MAX_FIELDS];
	size_t nr_fields;
};

static bool tfmt_is_ident(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '_';
}

/* The next line of c (without its newline), or NULL at the end. */
static const char *tfmt_next_line(struct cur *c, size_t *len)
{
	const char *s = (const char *)c->base + c->pos;
	size_t left = cur_remaining(c);
	const char *nl;

	if (!left || !cur_ok(c))
		return NULL;
	nl = memchr(s, '\n', left);
	*len = nl ? (size_t)(nl - s) : left;
	cur_skip(c, nl ? *len + 1 : *len);
	return s;
}

static bool tfmt_starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(s, prefix, k);
}

/* A decimal number of at most 9 digits at *p (advanced); false when none. */
static bool tfmt_number(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	size_t digits = 0;

	while (*p < end && **p >= '0' && **p <= '9' && digits < 10) {
		v = v * 10 + (uint64_t)(**p - '0');
		(*p)++;
		digits++;
	}
	if (!digits || digits > 9)
		return false;
	*out = v;
	return true;
}

static void tfmt_skip_ws(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
}

/* "key:N;" after optional blanks; false when it is not there. */
static bool tfmt_keyed(const char **p, const char *end, const char *key, uint64_t *out)
{
	size_t k = strlen(key);

	tfmt_skip_ws(p, end);
	if ((size_t)(end - *p) < k || memcmp(*p, key, k))
		return false;
	*p += k;
	if (!tfmt_number(p, end, out) || *p >= end || **p != ';')
		return false;
	(*p)++;
	return true;
}

/*
 * "__data_loc TYPE[] name" or "__rel_loc TYPE[] name": the keyword, a type of
 * identifiers and blanks, "[]" right after it, blanks, the name.
 */
static bool tfmt_dynamic_decl(const char *d, const char *end)
{
	const char *p = d;
	size_t k;

	if ((size_t)(end - p) > 11 && !memcmp(p, "__data_loc ", 11))
		k = 11;
	else if ((size_t)(end - p) > 10 && !memcmp(p, "__rel_loc ", 10))
		k = 10;
	else
		return false;
	p += k;
	tfmt_skip_ws(&p, end);
	if (p == end || !tfmt_is_ident(*p))
		return false;
	while (p < end && (tfmt_is_ident(*p) || *p == ' ' || *p == '*'))
		p++;
	if (end - p < 3 || p[-1] == ' ' || p[0] != '[' || p[1] != ']')
		return false;
	p += 2;
	if (*p != ' ' && *p != '\t')
		return false;
	tfmt_skip_ws(&p, end);
	if (p == end || !tfmt_is_ident(*p) || (*p >= '0' && *p <= '9'))
		return false;
	while (p < end && tfmt_is_ident(*p))
		p++;
	tfmt_skip_ws(&p, end);
	return p == end;
}

/*
 * "\tfield:DECL;\toffset:N;\tsize:N;\tsigned:N;": the declaration uses C's
 * characters only, its brackets balance, and its last identifier (before a
 * trailing [..]) is the name.
 */
static const char *tfmt_check_field(const char *s, size_t n, struct tfmt_field_decl *f)
{
	const char *p = s, *end = s + n, *decl, *semi, *q;
	uint64_t off, size, sign;
	int depth = 0;

	tfmt_skip_ws(&p, end);
	if (!tfmt_starts(p, (size_t)(end - p), "field:"))
		return "a format line is not a field";
	p += 6;
	decl = p;
	semi = memchr(p, ';', (size_t)(end - p));
	if (!semi || semi == decl)
		return "a field has no declaration";
	for (q = decl; q < semi; q++) {
		char ch = *q;

		if (ch == '[' || ch == '(')
			depth++;
		else if (ch == ']' || ch == ')')
			depth--;
		else if (!tfmt_is_ident(ch) && ch != ' ' && ch != '*' && ch != '\t')
			return "a field declaration has a character C does not use there";
		if (depth < 0 || depth > 4)
			return "a field declaration's brackets do not balance";
	}
	if (depth)
		return "a field declaration's brackets do not balance";
	/*
	 * Brackets before the name ("TYPE[] name") only in the dynamic form
	 * "__data_loc TYPE[] name": libtraceevent 1.7 leaked on "hacr [] comm"
	 * (fuzzing, regressions/tracefmt-leak-array-before-name).
	 */
	{
		const char *lastb = NULL, *rb = decl;

		while ((rb = memchr(rb, ']', (size_t)(semi - rb))) != NULL)
			lastb = rb++;
		q = semi;
		while (q > decl && (q[-1] == ' ' || q[-1] == '\t'))
			q--;
		if (lastb && lastb != q - 1 && !tfmt_dynamic_decl(decl, semi))
			return "a field declaration has brackets before its name";
	}
	if (q > decl && q[-1] == ']') {
		while (q > decl && q[-1] != '[')
			q--;
		if (q == decl)
			return "a field declaration's brackets do not balance";
		q--;
	}
	f->name_len = 0;
	while (q > decl && tfmt_is_ident(q[-1])) {
		q--;
		f->name_len++;
	}
	f->name = q;
	if (!f->name_len || f->name_len > 128 || (*q >= '0' && *q <= '9'))
		return "a field has no name";
	/* a type before the name: libtraceevent 1.7 leaked on "field:LOCAL_PR_F_pid;" (fuzzing) */
	{
		const char *t = decl;

		while (t < q && (*t == ' ' || *t == '\t'))
			t++;
		if (t == q)
			return "a field has no type";
	}
	p = semi + 1;
	if (!tfmt_keyed(&p, end, "offset:", &off) || !tfmt_keyed(&p, end, "size:", &size) ||
	    !tfmt_keyed(&p, end, "signed:", &sign))
		return "a field lacks offset:N; size:N; signed:N;";
	tfmt_skip_ws(&p, end);
	if (p != end)
		return "a field line goes on after signed:";
	if (sign > 1)
		return "a field's signed: is neither 0 nor 1";
	if (off > TFMT_MAX_RECORD || size > TFMT_MAX_RECORD || off + size > TFMT_MAX_RECORD)
		return "a field lies past 64 KiB";
	f->offset = (uint32_t)off;
	f->size = (uint32_t)size;
	return NULL;
}

static bool tfmt_known_field(const struct tfmt_check *ck, const char *s, size_t n)
{
	for (size_t i = 0; i < ck->nr_fields; i++)
		if (ck->fields[i].name_len == n && !memcmp(ck->fields[i].name, s, n))
			return true;
	return false;
}

/*
 * A divisor: a decimal (not starting with 0) or hexadecimal literal other
 * than zero, with C's suffixes. libtraceevent divides without checking, when it folds constants
 * while parsing (a SIGFPE found by fuzzing,
 * regressions/tracefmt-fpe-modulo-zero-at-parse) and when it prints, with
 * a field of the sample as divisor: kernel print fmts divide by constants
 * only ("/ 1000L", "% 64").
 */
static bool tfmt_nonzero_literal(const char **pp, const char *end)
{
	const char *p = *pp;
	bool hex = false, nonzero = false;

	tfmt_skip_ws(&p, end);
	if (p == end || *p < '0' || *p > '9')
		return false;
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		hex = true;
		p += 2;
	} else if (p[0] == '0') {
		/* octal to libtraceevent's strtoull: "0999" is 0 (fuzzing) */
		return false;
	}
	while (p < end && ((*p >= '0' && *p <= '9') ||
			   (hex && ((*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F'))))) {
		nonzero |= *p != '0';
		p++;
	}
	while (p < end && (*p == 'u' || *p == 'U' || *p == 'l' || *p == 'L'))
		p++;
	if (!nonzero || (p < end && tfmt_is_ident(*p)))
		return false;
	*pp = p;
	return true;
}

/*
 * The format string's conversions: no '*' (a width or precision from the
 * sample: "%*s" with 2^31 makes libtraceevent's trace_seq grow to match)
 * and widths and precisions of at most 3 digits, for the same reason.
 */
static bool tfmt_conversions_ok(const char *p, const char *end)
{
	while (p < end) {
		size_t digits = 0;

		if (*p == '\\' && p + 1 < end) {
			p += 2;
			continue;
		}
		if (*p++ != '%')
			continue;
		if (p < end && *p == '%') {
			p++;
			continue;
		}
		while (p < end && strchr("#-+ 0123456789.*", *p)) {
			if (*p == '*')
				return false;
			digits = (*p >= '0' && *p <= '9') ? digits + 1 : 0;
			if (digits > 3)
				return false;
			p++;
		}
	}
	return true;
}

/*
 * After "__print_hex(" or "__print_hex_str(": its length must be
 * __get_dynamic_array_len(...) (at most 64 KiB), a field of at most 2 bytes
 * or a constant up to TFMT_MAX_HEX, as libtraceevent reads that many bytes
 * from the first argument's place without looking at the record's size: the
 * read stays inside struct tfmt's rec. p is after the helper's name.
 */
static bool tfmt_hex_len_ok(const char *p, const char *end, const struct tfmt_check *ck)
{
	static const char dyn[] = "__get_dynamic_array_len(";
	static const char rel[] = "__get_rel_dynamic_array_len(";
	size_t depth = 0;
	uint64_t v;

	tfmt_skip_ws(&p, end);
	if (p == end || *p != '(')
		return false;
	for (; p < end; p++) {
		if (*p == '(') {
			depth++;
		} else if (*p == ')') {
			if (--depth == 0)
				return false; /* one argument only */
		} else if (*p == '"' || *p == '\'') {
			return false; /* not in a hex dump's first argument */
		} else if (*p == ',' && depth == 1) {
			break;
		}
	}
	if (p == end)
		return false;
	p++;
	tfmt_skip_ws(&p, end);
	if ((size_t)(end - p) > strlen(dyn) && !memcmp(p, dyn, strlen(dyn)))
		return true;
	if ((size_t)(end - p) > strlen(rel) && !memcmp(p, rel, strlen(rel)))
		return true;
	if ((size_t)(end - p) > 5 && !memcmp(p, "REC->", 5)) {
		/* kvm_emulate_insn: __print_hex(REC->insn, REC->len), len a u8 */
		const char *f = p + 5;

		p = f;
		while (p < end && tfmt_is_ident(*p))
			p++;
		for (size_t i = 0; i < ck->nr_fields; i++)
			if (ck->fields[i].name_len == (size_t)(p - f) &&
			    !memcmp(ck->fields[i].name, f, (size_t)(p - f)))
				return ck->fields[i].size <= 2;
		return false;
	}
	if (!tfmt_number(&p, end, &v) || v > TFMT_MAX_HEX)
		return false;
	tfmt_skip_ws(&p, end);
	return p < end && *p == ')';
}

/* Whether the name that ends at p is called: a '(' follows it. */
static bool tfmt_is_call(const char *p, const char *end)
{
	tfmt_skip_ws(&p, end);
	return p < end && *p == '(';
}

/*
 * The helpers libtraceevent 1.7 parses (process_function); it fails any other
 * call, through error paths that leak ('~_get_str(x)', fuzzing), so a
 * format calling one never reaches it.
 */
static bool tfmt_known_function(const char *w, size_t n)
{
	static const char *const known[] = {
		"__builtin_expect",        "__get_bitmask",           "__get_cpumask",
		"__get_dynamic_array",     "__get_dynamic_array_len", "__get_rel_bitmask",
		"__get_rel_cpumask",       "__get_rel_dynamic_array", "__get_rel_dynamic_array_len",
		"__get_rel_str",           "__get_sockaddr",          "__get_sockaddr_rel",
		"__get_str",               "__print_flags",           "__print_hex",
		"__print_hex_str",         "__print_symbolic",
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strlen(known[i]) == n && !memcmp(known[i], w, n))
			return true;
	return false;
}

/*
 * The print fmt: a quoted format string, then its arguments. Quotes close,
 * brackets balance and nest at most TFMT_MAX_DEPTH deep, every '?' has its
 * ':' at the same depth, REC-> names a field of this format, only C's
 * expression characters appear, no sizeof, and the tokens alternate as in a
 * C expression: an operand (name, number, string, bracketed group) where one
 * is due, a binary operator, ',' or a closing bracket after it. libtraceevent
 * leaks on many malformed expressions ("{ ~, "x" }", "args[!5]", fuzzing):
 * its error paths do not free what they parsed, so it must not see any. An
 * index is a decimal number ("REC->args[0]"), as in kernel formats.
 */
static const char *tfmt_check_print(const char *s, size_t n, const struct tfmt_check *ck)
{
	enum { TFMT_WANT_OPERAND, TFMT_HAVE_OPERAND } state = TFMT_WANT_OPERAND;
	/* the last token, where it matters: casts "(unsigned long)x", "(void *)x" */
	enum {
		TFMT_TOK_NONE,
		TFMT_TOK_NAME,
		TFMT_TOK_STRING,
		TFMT_TOK_CLOSE, /* ')' */
		TFMT_TOK_STAR,  /* '*' after a name or another such '*' */
		TFMT_TOK_OP,    /* another operator */
		TFMT_TOK_OTHER
	} last = TFMT_TOK_NONE;
	char stack[TFMT_MAX_DEPTH + 1];
	unsigned conds[TFMT_MAX_DEPTH + 1];
	bool filled[TFMT_MAX_DEPTH + 1]; /* something other than blanks inside the level */
	size_t depth = 0;
	const char *p = s, *end = s + n;
	bool first = true;

	if (n > TFMT_MAX_PRINT)
		return "the print fmt is too long";
	tfmt_skip_ws(&p, end);
	if (p == end || *p != '"')
		return "the print fmt does not start with a string";
	conds[0] = 0;
	filled[0] = false;
	while (p < end) {
		char ch = *p;

		if (ch == ' ' || ch == '\t' || ch == '\n') {
			p++;
			continue;
		}
		if (ch != ')' && ch != ']' && ch != '}')
			filled[depth] = true;
		if (ch == '"' || ch == '\'') {
			const char *q = p + 1, *sbeg = p + 1;

			/* "#" "DE": adjacent strings concatenate */
			if (state == TFMT_HAVE_OPERAND && !(ch == '"' && last == TFMT_TOK_STRING))
				return "the print fmt has a string where an operator is due";
			/* no operator applies to a string: '~"x"' leaked (fuzzing) */
			if (last == TFMT_TOK_OP)
				return "the print fmt has an operator before a string";
			while (q < end && *q != ch) {
				if (*q == '\\') {
					q++;
					if (q == end)
						break;
				}
				q++;
			}
			if (q >= end)
				return "a string of the print fmt is not closed";
			p = q + 1;
			state = TFMT_HAVE_OPERAND;
			last = ch == '"' ? TFMT_TOK_STRING : TFMT_TOK_OTHER;
			if (first && !tfmt_conversions_ok(sbeg, q))
				return "the print fmt's format string takes a width or precision it should not";
			if (first) {
				/* the format string is followed by its arguments or nothing */
				while (p < end && (*p == ' ' || *p == '\t' || *p == '\n'))
					p++;
				if (p < end && *p != ',')
					return "the print fmt's format string is not followed by ','";
				first = false;
			}
			continue;
		}
		if (ch == '[') {
			/* an index: "[" decimal "]" right after an operand */
			const char *q = p + 1;

			if (state != TFMT_HAVE_OPERAND)
				return "the print fmt has '[' where an operand is due";
			tfmt_skip_ws(&q, end);
			if (q == end || *q < '0' || *q > '9')
				return "the print fmt has an index other than a number";
			while (q < end && *q >= '0' && *q <= '9')
				q++;
			tfmt_skip_ws(&q, end);
			if (q == end || *q != ']')
				return "the print fmt has an index other than a number";
			p = q + 1;
			last = TFMT_TOK_OTHER;
			continue;
		}
		if (ch == '(' || ch == '{') {
			if (ch == '{' && state != TFMT_WANT_OPERAND)
				return "the print fmt has '{' where an operator is due";
			if (depth == TFMT_MAX_DEPTH)
				return "the print fmt nests too deeply";
			stack[depth++] = ch;
			conds[depth] = 0;
			filled[depth] = false;
			state = TFMT_WANT_OPERAND;
			last = TFMT_TOK_OTHER;
			p++;
			continue;
		}
		if (ch == ')' || ch == '}') {
			char open = ch == ')' ? '(' : '{';

			if (!depth || stack[depth - 1] != open)
				return "the print fmt's brackets do not balance";
			/*
			 * "{ }": libtraceevent 1.7 leaks parsing an empty
			 * __print_symbolic list (kvm:kvm_inj_exception, a real
			 * format; fixed upstream in 2024). "()" is a call
			 * without arguments.
			 */
			if (!filled[depth] && ch == '}')
				return "the print fmt has an empty { }";
			if (filled[depth] && state != TFMT_HAVE_OPERAND &&
			    !(ch == ')' && last == TFMT_TOK_STAR))
				return "the print fmt closes a bracket where an operand is due";
			if (conds[depth])
				return "a '?' of the print fmt has no ':'";
			depth--;
			state = TFMT_HAVE_OPERAND;
			last = ch == ')' ? TFMT_TOK_CLOSE : TFMT_TOK_OTHER;
			p++;
			continue;
		}
		if (ch == '?' || ch == ':' || ch == ',') {
			if (state != TFMT_HAVE_OPERAND)
				return "the print fmt has '?', ':' or ',' where an operand is due";
			if (ch == '?') {
				conds[depth]++;
			} else if (ch == ':') {
				if (!conds[depth])
					return "a ':' of the print fmt has no '?'";
				conds[depth]--;
			} else if (conds[depth]) {
				return "a '?' of the print fmt has no ':'";
			}
			state = TFMT_WANT_OPERAND;
			last = TFMT_TOK_OTHER;
			p++;
			continue;
		}
		if (tfmt_is_ident(ch)) {
			const char *w = p;

			/* "unsigned long" in a cast; "(u32)REC->x", "(gfp_t)0" after one */
			if (state == TFMT_HAVE_OPERAND &&
			    !(last == TFMT_TOK_NAME && !(ch >= '0' && ch <= '9')) &&
			    last != TFMT_TOK_CLOSE)
				return "the print fmt has an operand where an operator is due";
			while (p < end && tfmt_is_ident(*p))
				p++;
			if ((size_t)(p - w) == 6 && !memcmp(w, "sizeof", 6))
				return "the print fmt uses sizeof";
			if (tfmt_is_call(p, end) && !tfmt_known_function(w, (size_t)(p - w)))
				return "the print fmt calls a function libtraceevent does not know";
			/* its count and element size come from the data, unchecked */
			if ((size_t)(p - w) == 13 && !memcmp(w, "__print_array", 13))
				return "the print fmt uses __print_array";
			if ((((size_t)(p - w) == 11 && !memcmp(w, "__print_hex", 11)) ||
			     ((size_t)(p - w) == 15 && !memcmp(w, "__print_hex_str", 15))) &&
			    !tfmt_hex_len_ok(p, end, ck))
				return "the print fmt dumps a length that is not checked";
			if ((size_t)(p - w) == 3 && !memcmp(w, "REC", 3)) {
				const char *f;

				if (end - p < 2 || p[0] != '-' || p[1] != '>')
					return "REC without -> in the print fmt";
				p += 2;
				f = p;
				while (p < end && tfmt_is_ident(*p))
					p++;
				if (!tfmt_known_field(ck, f, (size_t)(p - f)))
					return "the print fmt names a field the format does not have";
			}
			state = TFMT_HAVE_OPERAND;
			last = TFMT_TOK_NAME;
			continue;
		}
		if (!strchr(".+-*/%&|^~!<>=", ch))
			return "the print fmt has a character C does not use there";
		{
			static const char *const two[] = { "<<", ">>", "<=", ">=", "==", "!=", "&&", "||" };
			size_t k = 1;

			for (size_t i = 0; i < sizeof(two) / sizeof(two[0]); i++)
				if (end - p >= 2 && p[0] == two[i][0] && p[1] == two[i][1])
					k = 2;
			/* nor after one: '"R" . REC->x' dereferenced NULL in tep_parse_event (fuzzing) */
			if (last == TFMT_TOK_STRING)
				return "the print fmt has an operator after a string";
			if (state == TFMT_HAVE_OPERAND) {
				/* a binary operator */
				if (k == 1 && (ch == '!' || ch == '~' || ch == '='))
					return "the print fmt has a unary operator where a binary one is due";
			} else if (k == 2 || !strchr("!~-+*&", ch)) {
				return "the print fmt has an operator where an operand is due";
			}
			p += k;
			if (state == TFMT_HAVE_OPERAND && k == 1 && (ch == '/' || ch == '%') &&
			    !tfmt_nonzero_literal(&p, end))
				return "the print fmt divides by something else than a non-zero number";
			if (k == 1 && ch == '*' &&
			    ((state == TFMT_HAVE_OPERAND && last == TFMT_TOK_NAME) ||
			     (state == TFMT_WANT_OPERAND && last == TFMT_TOK_STAR)))
				last = TFMT_TOK_STAR;
			else
				last = TFMT_TOK_OP;
			if (state == TFMT_HAVE_OPERAND && k == 1 && (ch == '/' || ch == '%'))
				state = TFMT_HAVE_OPERAND; /* the divisor was read */
			else
				state = TFMT_WANT_OPERAND;
		}
	}
	if (depth)
		return "the print fmt's brackets do not balance";
	if (conds[0])
		return "a '?' of the print fmt has no ':'";
	if (state != TFMT_HAVE_OPERAND)
		return "the print fmt ends where an operand is due";
	return NULL;
}

/* The whole format text; NULL when it may go to libtraceevent, else why not. */
static const char *tfmt_check_format(const char *text, size_t len, struct tfmt_check *ck)
{
	struct cur c;
	const char *line, *p, *end;
	size_t n;
	uint32_t next_free = 0;
	bool have_type = false, have_print = false;

	if (!len || len > TFMT_MAX_FORMAT)
		return "the format text is empty or larger than 64 KiB";
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)text[i];

		if ((ch < 0x20 || ch > 0x7e) && ch != '\t' && ch != '\n')
			return "the format text has bytes other than printable ASCII";
	}
	cur_init(&c, text, len, false);
	line = tfmt_next_line(&c, &n);
	if (!line || !tfmt_starts(line, n, "name:"))
		return "the format text does not start with name:";
	p = line + 5;
	end = line + n;
	tfmt_skip_ws(&p, end);
	ck->name = p;
	while (p < end && (tfmt_is_ident(*p) || *p == '-' || *p == '.'))
		p++;
	ck->name_len = (size_t)(p - ck->name);
	tfmt_skip_ws(&p, end);
	if (!ck->name_len || ck->name_len > 200 || p != end)
		return "the format's name is not a name";
	line = tfmt_next_line(&c, &n);
	if (!line || !tfmt_starts(line, n, "ID:"))
		return "the format has no ID: line";
	p = line + 3;
	end = line + n;
	tfmt_skip_ws(&p, end);
	if (!tfmt_number(&p, end, &ck->id))
		return "the format's ID is not a number";
	tfmt_skip_ws(&p, end);
	if (p != end || ck->id > UINT16_MAX)
		return "the format's ID is not a number that fits common_type";
	line = tfmt_next_line(&c, &n);
	if (!line || !tfmt_starts(line, n, "format:"))
		return "the format has no format: line";
	ck->nr_fields = 0;
	while ((line = tfmt_next_line(&c, &n)) != NULL) {
		struct tfmt_field_decl *f;
		const char *why;

		p = line;
		end = line + n;
		tfmt_skip_ws(&p, end);
		if (p == end)
			continue;
		if (tfmt_starts(p, (size_t)(end - p), "print fmt:")) {
			/*
			 * It runs to the end of the text: its strings may hold
			 * newlines (ext4_fc_stats, ext4_getfsmap_*).
			 */
			why = tfmt_check_print(p + 10, (size_t)(text + len - p - 10), ck);
			if (why)
				return why;
			have_print = true;
			break;
		}
		if (ck->nr_fields == TFMT_MAX_FIELDS)
			return "the format has too many fields";
		f = &ck->fields[ck->nr_fields];
		why = tfmt_check_field(line, n, f);
		if (why)
			return why;
		if (tfmt_known_field(ck, f->name, f->name_len))
			return "two fields have the same name";
		if (f->offset < next_free)
			return "the format's fields overlap or go back";
		next_free = f->offset + f->size;
		if (f->name_len == 11 && !memcmp(f->name, "common_type", 11)) {
			if (f->offset != 0 || f->size != 2)
				return "common_type is not a u16 at offset 0";
			have_type = true;
		}
		ck->nr_fields++;
	}
	if (!have_print)
		return "the format has no print fmt: line";
	if (!have_type)
		return "the format has no common_type";
	return NULL;
}

/* ---- the print fmt's literal segments, for finding "name=" values ---- */

/* Skips a printf conversion after its '%' the way libtraceevent reads it. */
static const char *tfmt_skip_conv(const char *p)
{
	while (*p && strchr("#-+ 0123456789.*", *p))
		p++;
	while (*p && strchr("hlLzZjt", *p))
		p++;
	if (*p == 'p') {
		p++;
		while (*p && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9')))
			p++;
		return p;
	}
	return *p ? p + 1 : p;
}

static bool tfmt_split_format(struct tfmt_event *e, const char *fmt)
{
	size_t flen = strlen(fmt), nconv = 1, o = 0;
	const char *p;

	for (p = fmt; *p; p++)
		if (*p == '%')
			nconv++;
	e->lits = malloc(flen + 1);
	e->lit = calloc(nconv + 1, sizeof(*e->lit));
	if (!e->lits || !e->lit)
		return false;
	e->nr_lits = 1;
	e->lit[0].off = 0;
	for (p = fmt; *p;) {
		char ch = *p;

		if (ch == '%' && p[1] == '%') {
			e->lits[o++] = '%';
			p += 2;
			continue;
		}
		if (ch == '%') {
			struct tfmt_lit *cur = &e->lit[e->nr_lits - 1];

			cur->len = o - cur->off;
			p = tfmt_skip_conv(p + 1);
			e->lit[e->nr_lits].off = o;
			e->nr_lits++;
			continue;
		}
		if (ch == '\\' && p[1]) {
			/* pretty_print's escapes */
			char x = p[1];

			e->lits[o++] = x == 'n' ? '\n' : x == 't' ? '\t' : x == 'r' ? '\r' : x;
			p += 2;
			continue;
		}
		e->lits[o++] = ch;
		p++;
	}
	e->lit[e->nr_lits - 1].len = o - e->lit[e->nr_lits - 1].off;
	e->lits[o] = '\0';
	return true;
}

/* Field i's "name=" literal: the one that ends with it after a non-identifier. */
static int tfmt_find_group(const struct tfmt_event *e, const char *name)
{
	size_t k = strlen(name);

	for (size_t l = 0; l + 1 < e->nr_lits; l++) {
		const char *s = e->lits + e->lit[l].off;
		size_t n = e->lit[l].len;

		if (n < k + 1 || s[n - 1] != '=' || memcmp(s + n - 1 - k, name, k))
			continue;
		if (n > k + 1 && tfmt_is_ident(s[n - 2 - k]))
			continue;
		return (int)l;
	}
	return -1;
}

/* ---- the blob ---- */

static void tfmt_event_free(struct tfmt_event *e)
{
	if (!e)
		return;
	free(e->name);
	free(e->fields);
	free(e->lits);
	free(e->lit);
	free(e->group);
	free(e);
}

static int tfmt_event_cmp(const void *a, const void *b)
{
	const struct tfmt_event *x = *(struct tfmt_event *const *)a;
	const struct tfmt_event *y = *(struct tfmt_event *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void tfmt_refuse(struct tfmt *t, struct conv_diag *diag, uint64_t off, const char *sys,
			const char *why)
{
	if (diag && !t->stats.refused)
		conv_fail(diag, CONV_E_FORMAT, off, "tracepoint format of %.64s refused: %s", sys,
			  why);
	t->stats.refused++;
}

/* Builds our view of an event libtraceevent has parsed; NULL when out of memory. */
static struct tfmt_event *tfmt_event_make(struct tfmt *t, struct tep_event *ev, const char *sys,
					  const struct tfmt_check *ck)
{
	struct tfmt_event *e = calloc(1, sizeof(*e));
	struct tep_format_field *f;
	size_t n = 0, i;

	if (!e)
		return NULL;
	e->t = t;
	e->ev = ev;
	e->id = ck->id;
	e->syscall_field = -1;
	if (asprintf(&e->name, "%s:%.*s", sys, (int)ck->name_len, ck->name) < 0) {
		e->name = NULL;
		goto fail;
	}
	for (f = ev->format.fields; f; f = f->next)
		n++;
	e->fields = calloc(n ? n : 1, sizeof(*e->fields));
	e->group = calloc(n ? n : 1, sizeof(*e->group));
	if (!e->fields || !e->group)
		goto fail;
	for (f = ev->format.fields, i = 0; f; f = f->next, i++)
		e->fields[i] = f;
	e->nr_fields = n;
	for (i = 0; i < ck->nr_fields; i++) {
		uint32_t end = ck->fields[i].offset + ck->fields[i].size;

		if (end > e->min_size)
			e->min_size = end;
	}
	e->type_field = tep_find_common_field(ev, "common_type");
	if (!tfmt_split_format(e, ev->print_fmt.format && !(ev->flags & TEP_EVENT_FL_FAILED)
					  ? ev->print_fmt.format
					  : ""))
		goto fail;
	for (i = 0; i < n; i++)
		e->group[i] = tfmt_find_group(e, e->fields[i]->name);
	if (!strcmp(sys, "raw_syscalls") || !strcmp(sys, "syscalls")) {
		const char *want = !strcmp(sys, "raw_syscalls") ? "id" : "__syscall_nr";

		for (i = 0; i < n; i++)
			if (!strcmp(e->fields[i]->name, want) &&
			    !(e->fields[i]->flags & TEP_FIELD_IS_ARRAY))
				e->syscall_field = (int)i;
	}
	return e;
fail:
	tfmt_event_free(e);
	return NULL;
}

/* Whether libtraceevent read the fields the checks saw, common ones first. */
static bool tfmt_same_fields(const struct tep_event *ev, const struct tfmt_check *ck)
{
	const struct tep_format_field *lists[2] = { ev->format.common_fields, ev->format.fields };
	size_t i = 0;

	for (size_t l = 0; l < 2; l++) {
		for (const struct tep_format_field *f = lists[l]; f; f = f->next, i++) {
			const struct tfmt_field_decl *d = &ck->fields[i];

			if (i >= ck->nr_fields || !f->name || strlen(f->name) != d->name_len ||
			    memcmp(f->name, d->name, d->name_len) || f->offset < 0 || f->size < 0 ||
			    (uint32_t)f->offset != d->offset || (uint32_t)f->size != d->size)
				return false;
		}
	}
	return i == ck->nr_fields;
}

static enum conv_err tfmt_add_format(struct tfmt *t, struct tfmt_check *ck, const char *sys,
				     const char *text, size_t len, uint64_t off,
				     struct conv_diag *diag)
{
	const char *why = tfmt_check_format(text, len, ck);
	struct tep_event *ev = NULL;
	struct tfmt_event *e;
	enum tep_errno terr;

	t->stats.formats++;
	/*
	 * libtraceevent keeps an event whose format it half read; a second
	 * format with its ID would make the lookup by ID ambiguous.
	 */
	if (!why && (t->ids_seen[ck->id / 8] & (1u << (ck->id % 8))))
		why = "two formats have the same ID";
	/* libtraceevent treats ftrace's formats apart (bprint): not events of a recording */
	if (!why && !strcmp(sys, "ftrace"))
		why = "its system is ftrace";
	if (why) {
		tfmt_refuse(t, diag, off, sys, why);
		return CONV_E_OK;
	}
	t->ids_seen[ck->id / 8] = (uint8_t)(t->ids_seen[ck->id / 8] | (1u << (ck->id % 8)));
	terr = tep_parse_event(t->tep, text, len, sys);
	if (terr == TEP_ERRNO__MEM_ALLOC_FAILED)
		return CONV_E_NOMEM;
	ev = tep_find_event(t->tep, (int)ck->id);
	/*
	 * tep_parse_event returns 0 for an event it added with
	 * TEP_EVENT_FL_FAILED, whether its fields or its print fmt failed. A
	 * print fmt libtraceevent cannot parse (a kernel helper it does not
	 * know) leaves the fields: such an event is kept, and its texts are
	 * the fields' own values. Its fields must be the ones checked here.
	 */
	if (!ev || terr != 0 || !tfmt_same_fields(ev, ck)) {
		tfmt_refuse(t, diag, off, sys, "libtraceevent does not parse it as checked");
		return CONV_E_OK;
	}
	if (t->nr_events == t->cap_events) {
		size_t ncap = t->cap_events ? t->cap_events * 2 : 64;
		struct tfmt_event **nv = realloc(t->events, ncap * sizeof(*nv));

		if (!nv)
			return CONV_E_NOMEM;
		t->events = nv;
		t->cap_events = ncap;
	}
	e = tfmt_event_make(t, ev, sys, ck);
	if (!e)
		return CONV_E_NOMEM;
	t->events[t->nr_events++] = e;
	t->stats.parsed++;
	return CONV_E_OK;
}

/* Whether sys is a system name (it goes into "sys:name" and the diagnostics). */
static bool tfmt_sys_ok(const char *sys)
{
	bool ok = sys && *sys && strlen(sys) <= 128;

	for (const char *q = sys; ok && *q; q++)
		ok = tfmt_is_ident(*q) || *q == '-' || *q == '.';
	return ok;
}

/* Sets libtraceevent's view of the recording from the blob's header. */
static void tfmt_set_head(struct tfmt *t, const struct tdata_head *h)
{
	uint16_t one = 1;
	bool host_big = *(const uint8_t *)&one == 0;

	tep_set_file_bigendian(t->tep, h->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(t->tep, host_big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(t->tep, h->long_size);
	if (h->page_size >= 4096 && h->page_size <= (1u << 24) &&
	    !(h->page_size & (h->page_size - 1)))
		tep_set_page_size(t->tep, (int)h->page_size);
}

/* Checks and adds every event format of the walk; stops at the first error (out of memory). */
static enum conv_err tfmt_add_formats(struct tfmt *t, struct tdata *w, struct conv_diag *diag)
{
	struct tfmt_check *ck = malloc(sizeof(*ck));
	struct tdata_format f;
	const char *sys = NULL;
	bool sys_ok = false;
	enum conv_err err = CONV_E_OK;

	if (!ck)
		return CONV_E_NOMEM;
	while (err == CONV_E_OK && tdata_next_format(w, &f)) {
		if (f.sys != sys) {
			sys = f.sys;
			sys_ok = tfmt_sys_ok(sys);
		}
		if (!sys_ok) {
			t->stats.formats++;
			tfmt_refuse(t, diag, f.off, "?", "its system name is not a name");
			continue;
		}
		err = tfmt_add_format(t, ck, sys, f.text, f.len, f.off, diag);
	}
	free(ck);
	return err;
}

/* The blob's layout and its walk: core/tdata.h. */
static enum conv_err tfmt_walk(struct tfmt *t, const uint8_t *blob, size_t len,
			       struct conv_diag *diag)
{
	struct tdata w;
	enum conv_err err = tdata_begin(&w, blob, len);

	if (err == CONV_E_FORMAT)
		return conv_fail(diag, CONV_E_FORMAT, 0, "tracing data has no 'tracing' magic");
	if (err != CONV_E_OK && !w.head.version)
		return conv_fail(diag, CONV_E_TRUNCATED, tdata_pos(&w),
				 "tracing data ends in its version");
	t->swap = w.head.swap;
	if (err != CONV_E_OK)
		return conv_fail(diag, CONV_E_TRUNCATED, tdata_pos(&w),
				 "tracing data ends in its header");
	if (w.head.long_size != 4 && w.head.long_size != 8)
		return conv_fail(diag, CONV_E_FORMAT, tdata_pos(&w), "tracing data's long size is %u",
				 w.head.long_size);
	tfmt_set_head(t, &w.head);
	/* header_page, header_event: libtraceevent does not need them to decode events */
	if (!tdata_skip_to_events(&w))
		goto short_blob;
	err = tfmt_add_formats(t, &w, diag);
	if (err != CONV_E_OK)
		return conv_fail(diag, err, UINT64_MAX, "out of memory");
	if (!tdata_ok(&w))
		goto short_blob;
	if (t->nr_events)
		qsort(t->events, t->nr_events, sizeof(*t->events), tfmt_event_cmp);
	return CONV_E_OK;
short_blob:
	return conv_fail(diag, CONV_E_TRUNCATED, tdata_pos(&w),
			 "tracing data ends before its event formats do");
}

enum conv_err tfmt_open(const uint8_t *blob, size_t len, struct tfmt **out,
			struct conv_diag *diag)
{
	struct tfmt *t;
	enum conv_err err;

	*out = NULL;
	if (!blob && len)
		return conv_fail(diag, CONV_E_INVAL, UINT64_MAX, "no tracing data");
	t = calloc(1, sizeof(*t));
	if (!t)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	/* library code does not print: libtraceevent's warnings are silenced (process-wide) */
	tep_set_loglevel(TEP_LOG_NONE);
	t->tep = tep_alloc();
	t->rec = calloc(1, TFMT_REC_BUF);
	trace_seq_init(&t->seq);
	if (!t->tep || !t->rec || !t->seq.buffer) {
		tfmt_free(t);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	}
	err = tfmt_walk(t, blob, len, diag);
	if (err != CONV_E_OK) {
		tfmt_free(t);
		return err;
	}
	*out = t;
	return CONV_E_OK;
}

void tfmt_free(struct tfmt *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_events; i++)
		tfmt_event_free(t->events[i]);
	free(t->events);
	if (t->tep)
		tep_free(t->tep);
	trace_seq_destroy(&t->seq);
	free(t->rec);
	free(t);
}

const struct tfmt_stats *tfmt_stats(const struct tfmt *t)
{
	return &t->stats;
}

const struct tfmt_event *tfmt_event(const struct tfmt *t, uint64_t id)
{
	size_t lo = 0, hi = t->nr_events;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->events[mid]->id == id)
			return t->events[mid];
		if (t->events[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const char *tfmt_event_name(const struct tfmt_event *e)
{
	return e->name;
}

size_t tfmt_nr_fields(const struct tfmt_event *e)
{
	return e->nr_fields;
}

static bool tfmt_is_pseudo(const struct tfmt_event *e, size_t i)
{
	return i == e->nr_fields && e->syscall_field >= 0;
}

const char *tfmt_field_name(const struct tfmt_event *e, size_t i)
{
	if (tfmt_is_pseudo(e, i))
		return "syscall";
	return i < e->nr_fields ? e->fields[i]->name : NULL;
}

int tfmt_field_index(const struct tfmt_event *e, const char *name)
{
	for (size_t i = 0; i < e->nr_fields; i++)
		if (!strcmp(e->fields[i]->name, name))
			return (int)i;
	if (e->syscall_field >= 0 && !strcmp(name, "syscall"))
		return (int)e->nr_fields;
	return -1;
}

/* ---- per sample ---- */

/* An unsigned integer of 1, 2, 4 or 8 bytes at p in the recording's byte order. */
static uint64_t tfmt_read_uint(const struct tfmt *t, const uint8_t *p, int size)
{
	uint8_t b1;
	uint16_t b2;
	uint32_t b4;
	uint64_t b8;

	switch (size) {
	case 1:
		memcpy(&b1, p, 1);
		return b1;
	case 2:
		memcpy(&b2, p, 2);
		return t->swap ? conv_bswap16(b2) : b2;
	case 4:
		memcpy(&b4, p, 4);
		return t->swap ? conv_bswap32(b4) : b4;
	default:
		memcpy(&b8, p, 8);
		return t->swap ? conv_bswap64(b8) : b8;
	}
}

/*
 * Whether the sample holds every field of the event and every dynamic
 * field's data: what libtraceevent may read when it renders the sample.
 */
static bool tfmt_raw_fits(const struct tfmt_event *e, const uint8_t *raw, size_t raw_len)
{
	if (!raw || raw_len < e->min_size)
		return false;
	for (size_t i = 0; i < e->nr_fields; i++) {
		const struct tep_format_field *f = e->fields[i];
		uint64_t loc, off, len;

		if (!(f->flags & TEP_FIELD_IS_DYNAMIC))
			continue;
		if (f->size != 4)
			return false;
		loc = tfmt_read_uint(e->t, raw + f->offset, 4);
		off = loc & 0xffff;
		len = loc >> 16;
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			off += (uint64_t)f->offset + (uint64_t)f->size;
		if (off > raw_len || len > raw_len - off)
			return false;
	}
	return true;
}

static bool tfmt_is_number(const struct tep_format_field *f)
{
	return !(f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) &&
	       (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8);
}

static int64_t tfmt_number_of(const struct tfmt_event *e, const struct tep_format_field *f,
			      const uint8_t *raw)
{
	uint64_t v = tfmt_read_uint(e->t, raw + f->offset, f->size);

	if (f->flags & TEP_FIELD_IS_SIGNED) {
		switch (f->size) {
		case 1:
			return (int8_t)v;
		case 2:
			return (int16_t)v;
		case 4:
			return (int32_t)v;
		default:
			return (int64_t)v;
		}
	}
	return (int64_t)v;
}

bool tfmt_field_num(const struct tfmt_event *e, size_t i, const uint8_t *raw, size_t raw_len,
		    int64_t *out)
{
	const struct tep_format_field *f;

	if (tfmt_is_pseudo(e, i))
		i = (size_t)e->syscall_field;
	if (i >= e->nr_fields || !raw || raw_len < e->min_size)
		return false;
	f = e->fields[i];
	if (!tfmt_is_number(f))
		return false;
	*out = tfmt_number_of(e, f, raw);
	return true;
}

static void tfmt_put(char *buf, size_t n, const char *s, size_t len)
{
	if (!n)
		return;
	if (len > n - 1)
		len = n - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
}

/*
 * Renders the sample with the print fmt into t->seq, from a copy of raw in
 * t->rec whose common_type is this event's id: libtraceevent picks the event
 * by common_type, and it is to render this one, whatever the sample says.
 */
static bool tfmt_render(const struct tfmt_event *e, const uint8_t *raw, size_t raw_len)
{
	struct tfmt *t = e->t;
	struct tep_record rec;
	size_t len = raw_len > TFMT_MAX_RECORD ? TFMT_MAX_RECORD : raw_len;
	uint16_t type = (uint16_t)e->id;

	if (!e->type_field || e->type_field->offset != 0 || len < 2)
		return false;
	if (t->shown == e && t->shown_len == len && !memcmp(raw, t->shown_type, 2) &&
	    !memcmp(raw + 2, t->rec + 2, len - 2))
		return t->shown_ok;
	memcpy(t->shown_type, raw, 2);
	memcpy(t->rec, raw, len);
	memset(t->rec + len, 0, TFMT_PAD);
	if (t->swap)
		type = conv_bswap16(type);
	memcpy(t->rec + e->type_field->offset, &type, 2);
	memset(&rec, 0, sizeof(rec));
	rec.data = t->rec;
	rec.size = (int)len;
	rec.record_size = (int)len;
	rec.cpu = 0;
	trace_seq_reset(&t->seq);
	tep_print_event(t->tep, &t->seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&t->seq);
	t->shown = e;
	t->shown_len = len;
	t->shown_ok = t->seq.state == TRACE_SEQ__GOOD;
	return t->shown_ok;
}

/*
 * The value of the conversions after literal `group` in the rendered line:
 * the output is walked against the literals, each conversion running to the
 * leftmost place where the next non-empty literal matches.
 */
static bool tfmt_extract(const struct tfmt_event *e, int group, const char *out, size_t olen,
			 const char **val, size_t *vlen)
{
	size_t pos = 0, l = 0;

	if (e->nr_lits < 2 || olen < e->lit[0].len || memcmp(out, e->lits, e->lit[0].len))
		return false;
	pos = e->lit[0].len;
	while (l + 1 < e->nr_lits) {
		size_t start = pos, next = l + 1, stop;

		while (next < e->nr_lits && !e->lit[next].len)
			next++;
		if (next == e->nr_lits) {
			stop = olen;
		} else {
			const char *hit = memmem(out + pos, olen - pos, e->lits + e->lit[next].off,
						 e->lit[next].len);

			if (!hit)
				return false;
			stop = (size_t)(hit - out);
		}
		for (size_t k = l; k < next; k++) {
			if ((int)k == group) {
				*val = out + start;
				*vlen = stop - start;
				return true;
			}
		}
		if (next == e->nr_lits)
			return false;
		pos = stop + e->lit[next].len;
		l = next;
	}
	return false;
}

/* The field's own value, when the print fmt does not show it. */
static bool tfmt_own_value(const struct tfmt_event *e, const struct tep_format_field *f,
			   const uint8_t *raw, size_t raw_len, char *buf, size_t n)
{
	struct tfmt *t = e->t;
	char num[32];

	if (tfmt_is_number(f) && !(f->flags & TEP_FIELD_IS_STRING)) {
		int64_t v = tfmt_number_of(e, f, raw);

		if (f->flags & TEP_FIELD_IS_SIGNED)
			snprintf(num, sizeof(num), "%lld", (long long)v);
		else
			snprintf(num, sizeof(num), "%llu", (unsigned long long)(uint64_t)v);
		tfmt_put(buf, n, num, strlen(num));
		return true;
	}
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		uint64_t loc = tfmt_read_uint(t, raw + f->offset, 4);
		uint64_t off = loc & 0xffff, len = loc >> 16;

		if (f->flags & TEP_FIELD_IS_RELATIVE)
			off += (uint64_t)f->offset + (uint64_t)f->size;
		if (off > raw_len || len > raw_len - off)
			return false;
		if (f->flags & TEP_FIELD_IS_STRING || strstr(f->type, "char")) {
			const char *s = (const char *)raw + off;

			tfmt_put(buf, n, s, strnlen(s, (size_t)len));
			return true;
		}
	} else if (f->flags & TEP_FIELD_IS_STRING) {
		const char *s = (const char *)raw + f->offset;

		tfmt_put(buf, n, s, strnlen(s, (size_t)f->size));
		return true;
	}
	/* arrays and the rest: libtraceevent's rendering, of the checked copy */
	{
		size_t len = raw_len > TFMT_MAX_RECORD ? TFMT_MAX_RECORD : raw_len;

		t->shown = NULL; /* rec and seq are reused here */
		memcpy(t->rec, raw, len);
		memset(t->rec + len, 0, TFMT_PAD);
		trace_seq_reset(&t->seq);
		tep_print_field_content(&t->seq, t->rec, (int)len, (struct tep_format_field *)f);
		trace_seq_terminate(&t->seq);
		if (t->seq.state != TRACE_SEQ__GOOD)
			return false;
		tfmt_put(buf, n, t->seq.buffer, t->seq.len);
		return true;
	}
}

bool tfmt_field_text(const struct tfmt_event *e, size_t i, const uint8_t *raw, size_t raw_len,
		     char *buf, size_t n)
{
	const struct tep_format_field *f;
	const char *val;
	size_t vlen;

	if (n)
		buf[0] = '\0';
	if (tfmt_is_pseudo(e, i)) {
		int64_t nr;

		if (!tfmt_field_num(e, i, raw, raw_len, &nr) || nr < 0 ||
		    (uint64_t)nr >= sizeof(tfmt_syscall_names) / sizeof(tfmt_syscall_names[0]) ||
		    !tfmt_syscall_names[nr])
			return false;
		tfmt_put(buf, n, tfmt_syscall_names[nr], strlen(tfmt_syscall_names[nr]));
		return true;
	}
	/* records are at most 64 KiB (perf's u16 size): nothing lies past that */
	if (raw_len > TFMT_MAX_RECORD)
		raw_len = TFMT_MAX_RECORD;
	if (i >= e->nr_fields || !tfmt_raw_fits(e, raw, raw_len))
		return false;
	f = e->fields[i];
	if (e->group[i] >= 0 && tfmt_render(e, raw, raw_len) &&
	    tfmt_extract(e, e->group[i], e->t->seq.buffer, e->t->seq.len, &val, &vlen)) {
		tfmt_put(buf, n, val, vlen);
		return true;
	}
	return tfmt_own_value(e, f, raw, raw_len, buf, n);
}

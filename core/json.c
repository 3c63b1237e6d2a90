#include "core/json.h"

#include "core/dbuf.h"
#include "core/utf8.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void json_init(struct json *j, struct dbuf *out, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->pretty = pretty;
	j->first[0] = true;
}

static void json_indent(struct json *j)
{
	dbuf_putc(j->out, '\n');
	for (int i = 0; i < j->depth; i++)
		dbuf_puts(j->out, "  ");
}

/* Writes the separator that goes before a new element at the current depth. */
static void json_sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		dbuf_putc(j->out, ',');
	j->first[j->depth] = false;
	if (j->pretty && j->depth > 0)
		json_indent(j);
}

static void json_open(struct json *j, char c)
{
	json_sep(j);
	dbuf_putc(j->out, c);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void json_close(struct json *j, char c)
{
	bool empty = j->first[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (j->pretty && !empty)
		json_indent(j);
	dbuf_putc(j->out, c);
}

void json_obj_begin(struct json *j)
{
	json_open(j, '{');
}

void json_obj_end(struct json *j)
{
	json_close(j, '}');
}

void json_arr_begin(struct json *j)
{
	json_open(j, '[');
}

void json_arr_end(struct json *j)
{
	json_close(j, ']');
}

static void escape(struct dbuf *out, const char *str, size_t len, bool lt)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	dbuf_putc(out, '"');
	while (i < len) {
		unsigned char c = s[i];
		size_t n;

		if (c == '<' && lt) {
			dbuf_puts(out, "\\u003c");
			i++;
		} else if (c == '"' || c == '\\') {
			dbuf_putc(out, '\\');
			dbuf_putc(out, (char)c);
			i++;
		} else if (c < 0x20) {
			switch (c) {
			case '\n':
				dbuf_puts(out, "\\n");
				break;
			case '\t':
				dbuf_puts(out, "\\t");
				break;
			case '\r':
				dbuf_puts(out, "\\r");
				break;
			default:
				dbuf_printf(out, "\\u%04x", c);
				break;
			}
			i++;
		} else if ((n = utf8_seq_len(s + i, len - i)) > 0) {
			dbuf_append(out, s + i, n);
			i += n;
		} else {
			dbuf_puts(out, "\\ufffd");
			i++;
		}
	}
	dbuf_putc(out, '"');
}

void json_escape(struct dbuf *out, const char *s, size_t len)
{
	escape(out, s, len, false);
}

void json_escape_in_script(struct dbuf *out, const char *s, size_t len)
{
	escape(out, s, len, true);
}

void json_key(struct json *j, const char *key)
{
	json_sep(j);
	json_escape(j->out, key, strlen(key));
	dbuf_puts(j->out, j->pretty ? ": " : ":");
	j->after_key = true;
}

void json_strn(struct json *j, const char *s, size_t len)
{
	json_sep(j);
	json_escape(j->out, s, len);
}

void json_str(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	json_strn(j, s, strlen(s));
}

void json_u64(struct json *j, uint64_t v)
{
	json_sep(j);
	dbuf_printf(j->out, "%" PRIu64, v);
}

void json_i64(struct json *j, int64_t v)
{
	json_sep(j);
	dbuf_printf(j->out, "%" PRId64, v);
}

void json_f64(struct json *j, double v)
{
	json_sep(j);
	/* JSON has no infinity or NaN */
	if (isfinite(v))
		dbuf_printf(j->out, "%.6g", v);
	else
		dbuf_puts(j->out, "null");
}

void json_bool(struct json *j, bool v)
{
	json_sep(j);
	dbuf_puts(j->out, v ? "true" : "false");
}

void json_null(struct json *j)
{
	json_sep(j);
	dbuf_puts(j->out, "null");
}

void json_kv_u64(struct json *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

void json_kv_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_str(j, s);
}

void json_kv_u64_or_null(struct json *j, const char *key, bool has, uint64_t v)
{
	json_key(j, key);
	if (has)
		json_u64(j, v);
	else
		json_null(j);
}

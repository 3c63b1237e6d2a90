/*
 * Minimal JSON writer into a dbuf: tracks nesting so commas are placed
 * automatically, escapes strings (invalid UTF-8 bytes become U+FFFD so the
 * output is always valid JSON even for garbage names from a hostile file).
 */
#ifndef CONV_CORE_JSON_H
#define CONV_CORE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dbuf;

#define JSON_MAX_DEPTH 32

struct json {
	struct dbuf *out;
	int depth;
	bool first[JSON_MAX_DEPTH]; /* no element written yet at this depth */
	bool after_key;             /* a key was written; the value follows */
	bool pretty;                /* newline and indent per element */
};

void json_init(struct json *j, struct dbuf *out, bool pretty);
void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s);
void json_strn(struct json *j, const char *s, size_t len);
void json_u64(struct json *j, uint64_t v);
void json_i64(struct json *j, int64_t v);
/* %.6g; null for infinity and NaN (JSON has neither) */
void json_f64(struct json *j, double v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* A key and its value, the common case of an object member. */
void json_kv_u64(struct json *j, const char *key, uint64_t v);
void json_kv_str(struct json *j, const char *key, const char *s);
/* The member key: v when has, else null (a value the input did not give). */
void json_kv_u64_or_null(struct json *j, const char *key, bool has, uint64_t v);

/* Appends s as a JSON string literal (with quotes) to out. */
void json_escape(struct dbuf *out, const char *s, size_t len);
/*
 * The same for a literal inside an HTML <script> element: every '<' is
 * written \u003c (the same string to JSON), so that nothing in s ("</",
 * "<!--<script") changes how the browser reads the element.
 */
void json_escape_in_script(struct dbuf *out, const char *s, size_t len);

#endif

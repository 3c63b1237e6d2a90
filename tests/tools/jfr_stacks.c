/*
 * jfr_stacks FILE.jfr: prints, one JSON array a line, the stack of every
 * event of FILE that has a stackTrace field, as jfredit/ reads it: the
 * event type, then per frame (leaf first) [class name, method name,
 * descriptor, line, frame type]. For tests comparing conv's JFR reader with
 * the JDK's `jfr print --json`. Exit 0, 2 when the file does not parse.
 */
#include "core/dbuf.h"
#include "core/json.h"
#include "jfredit/jfredit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The string a cp key names in the pool of v's type (a Symbol, a FrameType): "" when there is none. */
static void pool_str(const struct jfe_value *key, struct dbuf *out)
{
	dbuf_reset(out);
	if (jfe_value_str(key, out))
		return;
	dbuf_reset(out);
	dbuf_putc(out, 0);
}

/* Field `name` of the pool entry a cp key names, as a value; false when any link is missing. */
static bool deref(const struct jfe_value *key, const char *name, struct jfe_value *out)
{
	struct jfe_value v;

	return jfe_value_deref(key, &v) && jfe_value_field(&v, name, out, NULL);
}

static void print_frame(struct json *j, const struct jfe_value *fr, struct dbuf *s)
{
	struct jfe_value m, x, y;
	uint64_t line = 0;

	json_arr_begin(j);
	if (jfe_value_field(fr, "method", &m, NULL) && deref(&m, "type", &x) && deref(&x, "name", &y)) {
		pool_str(&y, s);
		json_str(j, (const char *)s->data);
	} else {
		json_str(j, "");
	}
	if (jfe_value_field(fr, "method", &m, NULL) && deref(&m, "name", &x)) {
		pool_str(&x, s);
		json_str(j, (const char *)s->data);
	} else {
		json_str(j, "");
	}
	if (jfe_value_field(fr, "method", &m, NULL) && deref(&m, "descriptor", &x)) {
		pool_str(&x, s);
		json_str(j, (const char *)s->data);
	} else {
		json_str(j, "");
	}
	if (jfe_value_field(fr, "lineNumber", &x, NULL))
		jfe_value_u64(&x, &line);
	/* an int field: -1 is written as its 32 unsigned bits */
	json_i64(j, (int64_t)(int32_t)(uint32_t)line);
	if (jfe_value_field(fr, "type", &x, NULL)) {
		pool_str(&x, s);
		json_str(j, (const char *)s->data);
	} else {
		json_str(j, "");
	}
	json_arr_end(j);
}

int main(int argc, char **argv)
{
	struct jfe_file f;
	struct conv_diag d;
	struct dbuf in, out, s;
	FILE *fp;
	char buf[65536];
	size_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: jfr_stacks FILE.jfr\n");
		return 2;
	}
	fp = fopen(argv[1], "rb");
	if (!fp) {
		perror(argv[1]);
		return 2;
	}
	dbuf_init(&in, 0);
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
		dbuf_append(&in, buf, n);
	fclose(fp);
	memset(&d, 0, sizeof(d));
	if (jfe_parse(&f, in.data, in.len, &d)) {
		fprintf(stderr, "jfr_stacks: %s: %s (offset %llu)\n", argv[1], d.msg, (unsigned long long)d.offset);
		return 2;
	}
	dbuf_init(&out, 0);
	dbuf_init(&s, 0);
	for (size_t ci = 0; ci < f.nr_chunks; ci++) {
		const struct jfe_chunk *c = &f.chunks[ci];

		struct jfe_record rec;
		size_t pos = 0;

		while (jfe_record_next(&f, c, &pos, &rec)) {
			struct jfe_value ev, st, frames, fr;
			const struct jfe_field *ff;
			struct jfe_array a;
			struct json j;
			uint64_t count, key;

			if (rec.type <= 1 || !jfe_event_value(&f, c, &rec, &ev) ||
			    !jfe_value_field(&ev, "stackTrace", &st, NULL) || !jfe_value_deref(&st, &st) ||
			    !jfe_value_field(&st, "frames", &frames, &ff) || !jfe_array_begin(&frames, ff, &a, &count))
				continue;
			dbuf_reset(&out);
			json_init(&j, &out, false);
			json_arr_begin(&j);
			json_str(&j, strtab_get(&c->names, ev.t->name));
			while (jfe_array_next(&a, &fr, &key))
				print_frame(&j, &fr, &s);
			json_arr_end(&j);
			dbuf_putc(&out, '\n');
			fwrite(out.data, 1, out.len, stdout);
		}
	}
	dbuf_release(&in);
	dbuf_release(&out);
	dbuf_release(&s);
	jfe_release(&f);
	return 0;
}

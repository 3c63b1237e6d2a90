/*
 * A test driver for tracefmt over real recordings.
 *
 *   tfmt_tool corpus DIR...   every perf.data file under DIR (recursively) with
 *                             tracing data: its formats through tfmt_open and
 *                             every tracepoint sample's fields through
 *                             tfmt_field_text; prints the figures; exit 1 when
 *                             a blob was unusable or a sample of a parsed event
 *                             did not decode, 77 when no DIR exists
 *   tfmt_tool print FILE      one line per tracepoint sample, "sys:name
 *                             f1=v1 f2=v2 ...", for comparing with perf script
 *   tfmt_tool blob FILE OUT   writes FILE's TRACING_DATA blob to OUT
 *
 * The blob is read in a first pass (a pipe file carries it as a record);
 * the samples in a second.
 */
#include "reader/perf_abi.h"
#include "reader/reader.h"
#include "tracefmt/tracefmt.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct tool_totals {
	uint64_t files, with_tracing, unusable, formats, parsed, refused;
	uint64_t samples, fields, texts_failed, no_event;
};

/* FILE's blob, copied (NULL when it has none or cannot be read). */
static uint8_t *tool_blob(const char *path, size_t *len)
{
	struct rdr *r;
	const struct rdr_event *ev;
	const struct rdr_info *info;
	uint8_t *copy = NULL;

	*len = 0;
	if (rdr_open_path(&r, path, NULL, NULL) != CONV_E_OK)
		return NULL;
	while (rdr_next(r, &ev) == CONV_E_OK && ev)
		;
	info = rdr_info(r);
	if (info->tracing_data && info->tracing_data_len) {
		copy = malloc(info->tracing_data_len);
		if (copy) {
			memcpy(copy, info->tracing_data, info->tracing_data_len);
			*len = info->tracing_data_len;
		}
	}
	rdr_close(r);
	return copy;
}

/* Decodes every tracepoint sample; prints them when print is set. */
static void tool_samples(const char *path, const struct tfmt *t, bool print,
			 struct tool_totals *tot)
{
	struct rdr *r;
	const struct rdr_event *ev;
	char text[4096];

	if (rdr_open_path(&r, path, NULL, NULL) != CONV_E_OK)
		return;
	while (rdr_next(r, &ev) == CONV_E_OK && ev) {
		const struct rdr_attr *a;
		const struct tfmt_event *e;

		if (ev->type != PERF_REC_SAMPLE || ev->attr < 0)
			continue;
		a = &rdr_info(r)->attrs[ev->attr];
		if (a->type != PERF_TYPE_TRACEPOINT)
			continue;
		tot->samples++;
		e = tfmt_event(t, a->config);
		if (!e) {
			tot->no_event++;
			continue;
		}
		if (print)
			printf("%s", tfmt_event_name(e));
		for (size_t i = 0; i <= tfmt_nr_fields(e); i++) {
			const char *name = tfmt_field_name(e, i);
			bool ok;

			if (!name)
				break;
			ok = tfmt_field_text(e, i, ev->u.sample.raw, ev->u.sample.raw_size, text,
					     sizeof(text));
			tot->fields++;
			if (!ok && i < tfmt_nr_fields(e))
				tot->texts_failed++;
			if (print)
				printf(" %s=%s", name, ok ? text : "<?>");
		}
		if (print)
			printf("\n");
	}
	rdr_close(r);
}

static int tool_one(const char *path, bool print, struct tool_totals *tot)
{
	size_t len;
	uint8_t *blob = tool_blob(path, &len);
	struct tfmt *t;
	struct conv_diag d = { 0 };
	enum conv_err err;

	tot->files++;
	if (!blob)
		return 0;
	tot->with_tracing++;
	err = tfmt_open(blob, len, &t, &d);
	if (err != CONV_E_OK) {
		tot->unusable++;
		fprintf(stderr, "%s: %s (%s)\n", path, conv_strerror(err), d.msg);
		free(blob);
		return 1;
	}
	{
		const struct tfmt_stats *s = tfmt_stats(t);

		tot->formats += s->formats;
		tot->parsed += s->parsed;
		tot->refused += s->refused;
		if (!print)
			printf("%s: %" PRIu64 " formats, %" PRIu64 " parsed, %" PRIu64
			       " refused%s%s\n",
			       path, s->formats, s->parsed, s->refused, s->refused ? "; first: " : "",
			       s->refused ? d.msg : "");
	}
	tool_samples(path, t, print, tot);
	tfmt_free(t);
	free(blob);
	return 0;
}

static int tool_walk(const char *dir, struct tool_totals *tot)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), bad = 0;

	if (n < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
				bad |= tool_walk(path, tot);
			else if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
				bad |= tool_one(path, false, tot);
		}
		free(names[i]);
	}
	free(names);
	return bad;
}

int main(int argc, char **argv)
{
	struct tool_totals tot = { 0 };

	if (argc >= 3 && !strcmp(argv[1], "corpus")) {
		int bad = 0, found = 0;
		struct stat st;

		for (int i = 2; i < argc; i++) {
			if (stat(argv[i], &st) != 0 || !S_ISDIR(st.st_mode))
				continue;
			found = 1;
			bad |= tool_walk(argv[i], &tot);
		}
		if (!found) {
			printf("SKIP: no corpus directory\n");
			return 77;
		}
		printf("files %" PRIu64 ", with tracing data %" PRIu64 ", unusable %" PRIu64
		       "; formats %" PRIu64 ", parsed %" PRIu64 ", refused %" PRIu64
		       "; tracepoint samples %" PRIu64 " (%" PRIu64 " of unknown events), fields %" PRIu64
		       ", texts failed %" PRIu64 "\n",
		       tot.files, tot.with_tracing, tot.unusable, tot.formats, tot.parsed, tot.refused,
		       tot.samples, tot.no_event, tot.fields, tot.texts_failed);
		return bad || tot.texts_failed ? 1 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "print"))
		return tool_one(argv[2], true, &tot);
	if (argc == 4 && !strcmp(argv[1], "blob")) {
		size_t len;
		uint8_t *blob = tool_blob(argv[2], &len);
		FILE *f;

		if (!blob)
			return 1;
		f = fopen(argv[3], "wb");
		if (!f || fwrite(blob, 1, len, f) != len || fclose(f) != 0)
			return 1;
		free(blob);
		return 0;
	}
	fprintf(stderr, "usage: tfmt_tool corpus DIR... | print FILE | blob FILE OUT\n");
	return 2;
}

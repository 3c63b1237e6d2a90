/*
 * libFuzzer target for conv symbolize's pprof reader and rewriter
 * (pprofedit/pprofedit.h).
 *
 * The input is a pprof profile, gzipped or not. When it parses, every
 * location gets two new lines (a function named after its id, inlined into
 * one shared by all) and every mapping all four flags; the rewrite, plain
 * and gzipped, must parse again and hold: the same number of mappings,
 * locations, samples' fields and strings plus the new ones, each rewritten
 * location exactly its two new lines with the new functions' ids, the new
 * functions after the old ones, the mappings flagged; every field that was
 * neither a mapping nor a location copied byte for byte (the rewrite's
 * top-level fields start with the input's, in order). The profile read
 * into the model (ppload_prof, conv diff's pprof inputs) either fails with
 * a format error or has its mappings and locations, one each.
 */
#include "fuzz_common.h"

#include "core/dbuf.h"
#include "model/profile.h"
#include "pipeline/ppload.h"
#include "pprofedit/pprofedit.h"

#include <stdio.h>

volatile uint64_t fuzz_sink;

/* Input cap on inflation: enough for the corpus, small enough not to trip the RSS limit. */
#define MAX_INFLATED ((size_t)64 << 20)

static void check_rewrite(const struct ppe_profile *in, const struct dbuf *out, size_t nr_new_strs)
{
	struct ppe_profile p;

	FUZZ_CHECK(ppe_parse(&p, out->data, out->len, MAX_INFLATED, NULL) == CONV_E_OK);
	FUZZ_CHECK(p.nr_mappings == in->nr_mappings && p.nr_locations == in->nr_locations);
	/* (a profile without strings gets "" first) */
	FUZZ_CHECK(p.nr_strs == in->nr_strs + nr_new_strs + (!in->nr_strs && nr_new_strs));
	FUZZ_CHECK(p.nr_functions == in->nr_functions + (in->nr_locations ? in->nr_locations + 1 : 0));
	for (size_t i = 0; i < p.nr_mappings; i++)
		FUZZ_CHECK(p.mappings[i].has_functions && p.mappings[i].has_filenames &&
			   p.mappings[i].has_line_numbers && p.mappings[i].has_inline_frames &&
			   p.mappings[i].id == in->mappings[i].id &&
			   p.mappings[i].start == in->mappings[i].start);
	for (size_t i = 0; i < p.nr_locations; i++) {
		const struct ppe_location *l = &p.locations[i];

		FUZZ_CHECK(l->id == in->locations[i].id && l->address == in->locations[i].address);
		FUZZ_CHECK(l->nr_lines == 2);
		FUZZ_CHECK(p.lines[l->first_line].function_id == in->max_function_id + 1 + i);
		FUZZ_CHECK(p.lines[l->first_line + 1].function_id ==
			   in->max_function_id + 1 + in->nr_locations);
	}
	/* other fields: the same bytes, in the same order (the new ones come last) */
	FUZZ_CHECK(p.nr_fields >= in->nr_fields);
	for (size_t i = 0, ipos = 0, opos = 0; i < in->nr_fields; i++) {
		struct ppe_field fa, fb;
		const struct ppe_field *a = &fa, *b = &fb;

		FUZZ_CHECK(ppe_field_next(in, &ipos, &fa) && ppe_field_next(&p, &opos, &fb));
		FUZZ_CHECK(a->number == b->number);
		if (a->number != 3 && a->number != 4)
			FUZZ_CHECK(a->len == b->len && !memcmp(in->buf + a->off, p.buf + b->off, a->len));
	}
	ppe_release(&p);
}

/* The profile as conv diff reads it: a format error, or every mapping and location in the model. */
static void check_model(const struct ppe_profile *pp)
{
	struct prof q;
	enum conv_err err;

	prof_init(&q);
	err = ppload_prof(pp, &q, NULL);
	FUZZ_CHECK(err == CONV_E_OK || err == CONV_E_FORMAT || err == CONV_E_NOMEM);
	if (!err)
		FUZZ_CHECK(q.nr_mappings == pp->nr_mappings && q.nr_locations == pp->nr_locations &&
			   q.nr_types % 2 == 0 && q.nr_types);
	prof_release(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ppe_profile p;
	struct ppe_edit e;
	struct dbuf out, gz;
	char names[64];
	size_t nr_strs;

	if (ppe_parse(&p, data, size, MAX_INFLATED, NULL) != CONV_E_OK)
		return 0;
	check_model(&p);
	for (size_t i = 0; i < p.nr_strs; i++)
		fuzz_sink += p.str_lens[i];
	FUZZ_CHECK(ppe_edit_init(&e, &p));
	e.functions = calloc(p.nr_locations + 1, sizeof(*e.functions));
	e.lines = calloc(2 * p.nr_locations + 1, sizeof(*e.lines));
	FUZZ_CHECK(e.functions && e.lines);
	e.cap_functions = p.nr_locations + 1;
	e.cap_lines = 2 * p.nr_locations + 1;
	/* the same string for every location's function: one new string, "f", and the shared "caller" */
	for (size_t i = 0; i < p.nr_locations; i++) {
		e.functions[i].name = "f";
		e.functions[i].system_name = "f";
		e.functions[i].filename = "";
		e.loc_first[i] = (uint32_t)e.nr_lines;
		e.loc_nr[i] = 2;
		e.lines[e.nr_lines].function = (uint32_t)i;
		e.lines[e.nr_lines++].line = (int64_t)i;
		e.lines[e.nr_lines].function = (uint32_t)p.nr_locations;
		e.lines[e.nr_lines++].line = 1;
	}
	snprintf(names, sizeof(names), "caller");
	e.functions[p.nr_locations].name = names;
	e.functions[p.nr_locations].system_name = names;
	e.functions[p.nr_locations].filename = "x.c";
	e.nr_functions = p.nr_locations ? p.nr_locations + 1 : 0;
	memset(e.map_flags, PPE_HAS_FUNCTIONS | PPE_HAS_FILENAMES | PPE_HAS_LINE_NUMBERS | PPE_HAS_INLINE_FRAMES,
	       p.nr_mappings);
	nr_strs = p.nr_locations ? 3 : 0; /* "f", "caller", "x.c" */
	dbuf_init(&out, 0);
	dbuf_init(&gz, 0);
	/* a largest function id that leaves no room for the new ones: refused, never wrapped */
	if (ppe_edit_fits(&p, &e, NULL) != CONV_E_OK) {
		FUZZ_CHECK(ppe_write(&p, &e, false, &out) == CONV_E_LIMIT);
		dbuf_release(&out);
		dbuf_release(&gz);
		ppe_edit_release(&e);
		ppe_release(&p);
		return 0;
	}
	FUZZ_CHECK(ppe_write(&p, &e, false, &out) == CONV_E_OK);
	check_rewrite(&p, &out, nr_strs);
	FUZZ_CHECK(ppe_write(&p, &e, true, &gz) == CONV_E_OK);
	check_rewrite(&p, &gz, nr_strs);
	dbuf_release(&out);
	dbuf_release(&gz);
	ppe_edit_release(&e);
	ppe_release(&p);
	return 0;
}

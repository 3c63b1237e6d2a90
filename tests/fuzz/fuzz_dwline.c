/*
 * libFuzzer target for conv's DWARF line-table decoder (symbolize/dwline.h),
 * which reads .debug_line from debug files that may come from a debuginfod
 * server.
 *
 * Input: u8 flags (bit 0: the other byte order, bit 1: 8-byte unit
 * addresses, bit 2: no comp_dir, bit 3: decode at offset 4 too), u16 (little
 * endian) n, n bytes used as .debug_line_str and .debug_str, the rest as
 * .debug_line. A decoded table is checked: rows in address order with an
 * end of sequence before the other rows at its address (but the last row,
 * which is always an end of sequence), every row's file either in the list or past its
 * end (libdw's NULL name), file names valid strings; dwline_find agrees
 * with a linear search (the last row at or below the address, none when
 * that is an end of sequence) at every row's address and its neighbours.
 */
#include "fuzz_common.h"

#include "symbolize/dwline.h"

volatile uint64_t fuzz_sink;

static const struct dwline_row *linear_find(const struct dwline_table *t, uint64_t pc)
{
	const struct dwline_row *r = NULL;

	for (size_t i = 0; i < t->nr_rows && t->rows[i].addr <= pc; i++)
		r = &t->rows[i];
	return r && !r->end_sequence ? r : NULL;
}

static void check(const struct dwline_table *t)
{
	uint64_t s = 0;

	for (size_t i = 0; i < t->nr_files; i++) {
		FUZZ_CHECK(t->files[i] != NULL);
		s += fuzz_touch_str(t->files[i]);
	}
	if (!t->nr_rows)
		return;
	FUZZ_CHECK(t->rows[t->nr_rows - 1].end_sequence);
	for (size_t i = 0; i < t->nr_rows; i++) {
		uint64_t a = t->rows[i].addr;

		/* libdw's order: by address, an end of sequence before other rows at its address */
		if (i)
			FUZZ_CHECK(t->rows[i - 1].addr < a ||
				   (t->rows[i - 1].addr == a &&
				    (t->rows[i - 1].end_sequence || !t->rows[i].end_sequence ||
				     i + 1 == t->nr_rows)));
		FUZZ_CHECK(dwline_find(t, a) == linear_find(t, a));
		FUZZ_CHECK(dwline_find(t, a + 1) == linear_find(t, a + 1));
		if (a)
			FUZZ_CHECK(dwline_find(t, a - 1) == linear_find(t, a - 1));
		s += t->rows[i].line + t->rows[i].file;
	}
	FUZZ_CHECK(dwline_find(t, UINT64_MAX) == linear_find(t, UINT64_MAX));
	FUZZ_CHECK(dwline_find(t, 0) == linear_find(t, 0));
	fuzz_sink += s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwline_sections s;
	struct dwline_table t;
	uint8_t flags;
	size_t n;

	if (size < 3)
		return 0;
	flags = data[0];
	n = (size_t)data[1] | (size_t)data[2] << 8;
	data += 3;
	size -= 3;
	if (n > size)
		n = size;
	memset(&s, 0, sizeof(s));
	s.swap = flags & 1;
	s.line_str = n ? data : NULL;
	s.line_str_len = n;
	s.str = s.line_str;
	s.str_len = n;
	s.line = size - n ? data + n : NULL;
	s.line_len = size - n;
	for (uint64_t off = 0; off <= ((flags & 8) ? 4u : 0u); off += 4) {
		if (dwline_decode(&t, &s, off, (flags & 2) ? 8 : 4, (flags & 4) ? NULL : "/comp/dir")) {
			check(&t);
			dwline_release(&t);
		} else {
			FUZZ_CHECK(t.rows == NULL && t.files == NULL && t.nr_rows == 0);
		}
	}
	return 0;
}

/*
 * libFuzzer target for tracefmt: a TRACING_DATA blob through tfmt_open,
 * then a raw sample payload through every field of every event it parsed.
 *
 * Input: u32 (little endian) blob length L, L bytes of blob, and the rest is
 * the raw payload. An input too short for its L is all blob (so that plain
 * blobs extracted from recordings are seeds as they are, with no payload).
 * The payload is copied into a buffer of exactly its size, so that
 * AddressSanitizer sees any read past it. Texts go to a buffer of a size
 * taken from the input too (cuts), checked to be NUL-terminated.
 */
#include "fuzz_common.h"

#include "tracefmt/tracefmt.h"

volatile uint64_t fuzz_sink;

static void fuzz_event(const struct tfmt_event *e, const uint8_t *raw, size_t raw_len, size_t n)
{
	char buf[512];
	size_t nf = tfmt_nr_fields(e);
	int64_t v;

	fuzz_sink += fuzz_touch_str(tfmt_event_name(e));
	for (size_t i = 0; i <= nf; i++) {
		const char *name = tfmt_field_name(e, i);

		if (!name) {
			FUZZ_CHECK(i == nf);
			break;
		}
		fuzz_sink += fuzz_touch_str(name);
		FUZZ_CHECK(tfmt_field_index(e, name) >= 0);
		if (tfmt_field_num(e, i, raw, raw_len, &v))
			fuzz_sink += (uint64_t)v;
		memset(buf, 'x', sizeof(buf));
		if (tfmt_field_text(e, i, raw, raw_len, buf, n))
			fuzz_sink += fuzz_touch_str(buf);
		if (n)
			FUZZ_CHECK(memchr(buf, '\0', n) != NULL);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *blob = data, *raw = NULL;
	size_t blob_len = size, raw_len = 0, n = 512;
	struct tfmt *t = NULL;
	struct conv_diag d;
	uint8_t *copy = NULL;

	if (size >= 4) {
		uint32_t l = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 |
			     (uint32_t)data[3] << 24;

		if (l <= size - 4) {
			blob = data + 4;
			blob_len = l;
			raw = data + 4 + l;
			raw_len = size - 4 - l;
			n = raw_len ? (size_t)raw[0] * 2 + 1 : 512;
			if (n > 512)
				n = 512;
		}
	}
	if (tfmt_open(blob, blob_len, &t, &d) != CONV_E_OK) {
		FUZZ_CHECK(t == NULL);
		return 0;
	}
	{
		const struct tfmt_stats *s = tfmt_stats(t);

		FUZZ_CHECK(s->parsed + s->refused == s->formats);
	}
	if (raw_len) {
		copy = malloc(raw_len);
		if (!copy) {
			tfmt_free(t);
			return 0;
		}
		memcpy(copy, raw, raw_len);
	}
	/* the ids a blob can give are u16; a recording names a few hundred at most */
	for (uint64_t id = 0; id <= 0xffff; id++) {
		const struct tfmt_event *e = tfmt_event(t, id);

		if (e)
			fuzz_event(e, copy, raw_len, n);
	}
	FUZZ_CHECK(tfmt_event(t, 0x10000) == NULL);
	free(copy);
	tfmt_free(t);
	return 0;
}

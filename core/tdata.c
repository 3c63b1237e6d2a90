#include "core/tdata.h"

#include <string.h>

static const uint8_t tdata_magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

/* Skips a u64-sized section: its size, then that many bytes (checked against what is left). */
static void tdata_skip_sized64(struct cur *c)
{
	uint64_t n = cur_u64(c);

	if (n > cur_remaining(c))
		cur_fail(c);
	else
		cur_skip(c, (size_t)n);
}

enum conv_err tdata_begin(struct tdata *w, const uint8_t *blob, size_t len)
{
	const uint8_t *magic;
	uint16_t one = 1;
	bool host_big = *(const uint8_t *)&one == 0;

	memset(w, 0, sizeof(*w));
	cur_init(&w->c, blob, len, false);
	magic = cur_view(&w->c, sizeof(tdata_magic));
	if (!magic || memcmp(magic, tdata_magic, sizeof(tdata_magic)))
		return CONV_E_FORMAT;
	w->head.version = cur_cstr(&w->c, NULL);
	if (!w->head.version)
		return CONV_E_TRUNCATED;
	w->head.big_endian = cur_u8(&w->c);
	w->head.long_size = cur_u8(&w->c);
	w->head.swap = (w->head.big_endian != 0) != host_big;
	w->c.swap = w->head.swap;
	w->head.page_size = cur_u32(&w->c);
	return cur_ok(&w->c) ? CONV_E_OK : CONV_E_TRUNCATED;
}

bool tdata_skip_to_events(struct tdata *w)
{
	uint32_t nftrace;

	if (!cur_cstr(&w->c, NULL)) /* "header_page" */
		return false;
	tdata_skip_sized64(&w->c);
	if (!cur_cstr(&w->c, NULL)) /* "header_event" */
		return false;
	tdata_skip_sized64(&w->c);
	nftrace = cur_u32(&w->c);
	/* each ftrace format takes 8 bytes at least: a count past that fails as the walk would */
	if (nftrace > cur_remaining(&w->c) / 8)
		cur_fail(&w->c);
	for (uint32_t i = 0; i < nftrace && cur_ok(&w->c); i++)
		tdata_skip_sized64(&w->c);
	w->sys_left = cur_u32(&w->c);
	w->fmt_left = 0;
	return cur_ok(&w->c);
}

bool tdata_next_format(struct tdata *w, struct tdata_format *f)
{
	while (cur_ok(&w->c)) {
		uint64_t size;

		if (!w->fmt_left) {
			if (!w->sys_left)
				return false;
			w->sys_left--;
			w->sys = cur_cstr(&w->c, NULL);
			w->fmt_left = cur_u32(&w->c);
			continue;
		}
		w->fmt_left--;
		size = cur_u64(&w->c);
		f->off = w->c.pos;
		/* a size cut short ends the walk too (no empty format at the end) */
		if (!cur_ok(&w->c) || size > cur_remaining(&w->c)) {
			cur_fail(&w->c);
			return false;
		}
		f->text = (const char *)cur_view(&w->c, (size_t)size);
		f->len = (size_t)size;
		f->sys = w->sys;
		return true;
	}
	return false;
}

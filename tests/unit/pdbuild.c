#include "tests/unit/pdbuild.h"

#include <string.h>

void pdb_init(struct pdb *p, bool big)
{
	dbuf_init(&p->b, 0);
	p->big = big;
	p->rec_start = 0;
}

void pdb_release(struct pdb *p)
{
	dbuf_release(&p->b);
}

static void put(struct pdb *p, uint64_t v, int n)
{
	uint8_t b[8];

	for (int i = 0; i < n; i++) {
		int shift = p->big ? 8 * (n - 1 - i) : 8 * i;

		b[i] = (uint8_t)(v >> shift);
	}
	dbuf_append(&p->b, b, (size_t)n);
}

void pdb_u8(struct pdb *p, uint8_t v)
{
	put(p, v, 1);
}
void pdb_u16(struct pdb *p, uint16_t v)
{
	put(p, v, 2);
}
void pdb_u32(struct pdb *p, uint32_t v)
{
	put(p, v, 4);
}
void pdb_u64(struct pdb *p, uint64_t v)
{
	put(p, v, 8);
}
void pdb_bytes(struct pdb *p, const void *d, size_t n)
{
	dbuf_append(&p->b, d, n);
}

void pdb_str8(struct pdb *p, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t pad = (8 - n % 8) % 8;
	static const uint8_t zeros[8];

	dbuf_append(&p->b, s, n);
	dbuf_append(&p->b, zeros, pad);
}

void pdb_hstr(struct pdb *p, const char *s)
{
	uint8_t buf[64];
	size_t n = strlen(s);

	memset(buf, 0, sizeof(buf));
	memcpy(buf, s, n < 63 ? n : 63);
	pdb_u32(p, 64);
	dbuf_append(&p->b, buf, 64);
}

void pdb_put_u64_at(struct pdb *p, size_t off, uint64_t v)
{
	size_t save = p->b.len;

	p->b.len = off;
	put(p, v, 8);
	p->b.len = save;
}

void pdb_put_u16_at(struct pdb *p, size_t off, uint16_t v)
{
	size_t save = p->b.len;

	p->b.len = off;
	put(p, v, 2);
	p->b.len = save;
}

void pdb_rec_begin(struct pdb *p, uint32_t type, uint16_t misc)
{
	p->rec_start = p->b.len;
	pdb_u32(p, type);
	pdb_u16(p, misc);
	pdb_u16(p, 0);
}

void pdb_rec_end(struct pdb *p)
{
	pdb_put_u16_at(p, p->rec_start + 6, (uint16_t)(p->b.len - p->rec_start));
}

void pdb_attr(struct pdb *p, const struct pdb_attr *a)
{
	uint8_t flags[8];

	pdb_u32(p, a->type);
	pdb_u32(p, 128);
	pdb_u64(p, a->config);
	pdb_u64(p, a->period);
	pdb_u64(p, a->sample_type);
	pdb_u64(p, a->read_format);
	/* the flag bit-field: bit n in byte n/8, bit order reversed in big-endian files */
	memset(flags, 0, sizeof(flags));
	for (unsigned n = 0; n < 64; n++)
		if ((a->flags >> n) & 1u)
			flags[n / 8] |= (uint8_t)(1u << (p->big ? 7 - n % 8 : n % 8));
	pdb_bytes(p, flags, 8);
	pdb_u32(p, 0);          /* wakeup */
	pdb_u32(p, 0);          /* bp_type */
	pdb_u64(p, 0);          /* config1 */
	pdb_u64(p, 0);          /* config2 */
	pdb_u64(p, a->branch_sample_type);
	pdb_u64(p, a->regs_user);
	pdb_u32(p, a->stack_user);
	pdb_u32(p, 0);          /* clockid */
	pdb_u64(p, a->regs_intr);
	pdb_u32(p, 0);          /* aux_watermark */
	pdb_u16(p, 0);          /* max_stack */
	pdb_u16(p, 0);
	pdb_u32(p, 0);          /* aux_sample_size */
	pdb_u32(p, 0);
	pdb_u64(p, 0);          /* sig_data */
}

void pdb_pipe_header(struct pdb *p)
{
	dbuf_append(&p->b, p->big ? "2ELIFREP" : "PERFILE2", 8);
	pdb_u64(p, 16);
}

void pdb_file_begin(struct pdb *p, const struct pdb_attr *attrs, const uint64_t *const *ids,
		    const size_t *nr_ids, size_t nr_attrs)
{
	size_t ids_off[16];
	size_t attrs_off;

	dbuf_append(&p->b, p->big ? "2ELIFREP" : "PERFILE2", 8);
	pdb_u64(p, 104);
	pdb_u64(p, 128 + 16);
	for (int i = 0; i < 11; i++)
		pdb_u64(p, 0);
	for (size_t i = 0; i < nr_attrs && i < 16; i++) {
		ids_off[i] = p->b.len;
		for (size_t k = 0; k < nr_ids[i]; k++)
			pdb_u64(p, ids[i][k]);
	}
	attrs_off = p->b.len;
	for (size_t i = 0; i < nr_attrs && i < 16; i++) {
		pdb_attr(p, &attrs[i]);
		pdb_u64(p, ids_off[i]);
		pdb_u64(p, nr_ids[i] * 8);
	}
	pdb_put_u64_at(p, 24, attrs_off);
	pdb_put_u64_at(p, 32, p->b.len - attrs_off);
	pdb_put_u64_at(p, 40, p->b.len); /* data.offset */
}

void pdb_file_begin_one(struct pdb *p, const struct pdb_attr *attr, uint64_t id)
{
	const uint64_t *ids[] = { &id };
	size_t nids[] = { 1 };

	pdb_file_begin(p, attr, ids, nids, 1);
}

void pdb_file_end(struct pdb *p, const struct pdb_feature *feats, size_t nr_feats)
{
	size_t data_off;
	size_t index_off = p->b.len;
	uint64_t bits[4] = { 0 };
	size_t payload_off;

	/* data.offset was written by pdb_file_begin */
	data_off = 0;
	for (int i = 0; i < 8; i++)
		data_off |= (size_t)p->b.data[40 + (p->big ? 7 - i : i)] << (8 * i);
	pdb_put_u64_at(p, 48, index_off - data_off);
	/* index entries in ascending feature order: callers pass them sorted */
	for (size_t i = 0; i < nr_feats; i++) {
		pdb_u64(p, 0);
		pdb_u64(p, 0);
		bits[feats[i].id / 64] |= 1ull << (feats[i].id % 64);
	}
	for (size_t i = 0; i < nr_feats; i++) {
		payload_off = p->b.len;
		dbuf_append(&p->b, feats[i].data, feats[i].len);
		pdb_put_u64_at(p, index_off + 16 * i, payload_off);
		pdb_put_u64_at(p, index_off + 16 * i + 8, feats[i].len);
	}
	for (int i = 0; i < 4; i++)
		pdb_put_u64_at(p, 72 + 8 * (size_t)i, bits[i]);
}

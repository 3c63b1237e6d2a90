/*
 * Test helper: builds perf.data bytes field by field in either byte order,
 * so reader tests can state exactly what a file holds (big-endian files and
 * odd layouts cannot be recorded on this machine).
 */
#ifndef CONV_TESTS_UNIT_PDBUILD_H
#define CONV_TESTS_UNIT_PDBUILD_H

#include "core/dbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pdb {
	struct dbuf b;
	bool big;           /* write big-endian */
	size_t rec_start;   /* start of the open record */
};

void pdb_init(struct pdb *p, bool big);
void pdb_release(struct pdb *p);
void pdb_u8(struct pdb *p, uint8_t v);
void pdb_u16(struct pdb *p, uint16_t v);
void pdb_u32(struct pdb *p, uint32_t v);
void pdb_u64(struct pdb *p, uint64_t v);
void pdb_bytes(struct pdb *p, const void *d, size_t n);
/* A NUL-terminated string zero-padded to a multiple of 8. */
void pdb_str8(struct pdb *p, const char *s);
/* perf_header_string: u32 len (padded to 64) + bytes. */
void pdb_hstr(struct pdb *p, const char *s);
void pdb_put_u64_at(struct pdb *p, size_t off, uint64_t v);
void pdb_put_u16_at(struct pdb *p, size_t off, uint16_t v);
/* Starts a record (header written with size 0), ends it by patching its size. */
void pdb_rec_begin(struct pdb *p, uint32_t type, uint16_t misc);
void pdb_rec_end(struct pdb *p);

/* attr fields the tests vary; the rest are zero */
struct pdb_attr {
	uint32_t type;
	uint64_t config;
	uint64_t period;
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags; /* flag bit n at bit n */
	uint64_t branch_sample_type;
	uint64_t regs_user;
	uint32_t stack_user;
	uint64_t regs_intr;
};

/* Writes a 128-byte perf_event_attr (attr.size = 128). */
void pdb_attr(struct pdb *p, const struct pdb_attr *a);

/* Writes a pipe header. */
void pdb_pipe_header(struct pdb *p);

/*
 * File mode: pdb_file_begin() reserves the header and writes the attrs with
 * their ids; records follow; pdb_file_end() writes the feature sections given
 * as (id, bytes) pairs and patches the header.
 */
struct pdb_feature {
	unsigned id;
	const uint8_t *data;
	size_t len;
};
void pdb_file_begin(struct pdb *p, const struct pdb_attr *attrs, const uint64_t *const *ids,
		    const size_t *nr_ids, size_t nr_attrs);
/* The usual file of one attr with one sample id. */
void pdb_file_begin_one(struct pdb *p, const struct pdb_attr *attr, uint64_t id);
void pdb_file_end(struct pdb *p, const struct pdb_feature *feats, size_t nr_feats);

#endif

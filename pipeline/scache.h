/*
 * The reading pass's cache of distinct samples: each distinct raw sample
 * (process generation, address space versions, thread, event, raw
 * addresses) is kept as a fingerprint and an aggregate, resolved once;
 * its frames are interned (mapping, address, JIT symbol) and registered
 * with the symbolizer once each; stacks are arrays of frame indexes, laid
 * out as the model's (which takes them over). Internal to pipeline/.
 */
#ifndef CONV_PIPELINE_SCACHE_H
#define CONV_PIPELINE_SCACHE_H

#include "core/hidx.h"
#include "core/hmap.h"
#include "pipeline/symjob.h"
#include "pipeline/unwinding.h"
#include "procmap/procmap.h"
#include "reader/reader.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jit_sym;

/*
 * One distinct resolved frame; stacks are arrays of their indexes. 16
 * bytes: the JIT symbol of the rare JIT frame is kept aside (scache.jits), and
 * ref says which of the two a frame has. A walk's early stop is a frame of
 * its own kind: no mapping, addr unwinding_stop_address, and a ref that no
 * unmapped frame of the program has (see scache_frame_stop).
 */
struct scache_frame {
	uint64_t addr;
	uint32_t mapping; /* PM_NO_MAPPING when unmapped */
	uint32_t ref;     /* symjob id; SCACHE_JIT | index into scache.jits; SYMJOB_NONE: neither */
};

#define SCACHE_JIT 0x80000000u

/*
 * A distinct sample as recorded, and the aggregate of its repeats. What
 * tells samples apart is its process generation and the versions of the
 * address spaces it was resolved in, its thread, event, cpumode, cpu (when
 * labelled), comm, field labels and the raw addresses (IP, then the
 * callchain as recorded, context markers included): all of it is kept as
 * one 128-bit fingerprint (scache_key_fingerprint, in scache.key_fp: dropped with
 * the indexes), not as the addresses, which were most of the reading
 * pass's memory. Equal keys resolve alike, so each
 * is resolved once and a repeat costs a hash of its addresses and a count.
 * Keys that resolve to the same stack and labels become one sample in the
 * model (prof_add_sample adds them up). The process and tid are the
 * thread's (scache.threads).
 */
struct scache_key {
	uint64_t count, weight;
	uint32_t attr, cpu;
	uint32_t stack, thread;
	uint32_t comm; /* the thread's name when sampled (procmap_thread_comm): perf's comm */
	uint32_t fields; /* tracepoint field labels: a tpfields value list, 0 none */
};

/*
 * What tells a sample's key apart besides the kept fields, and the key's
 * fingerprint. kversion is 0 for a sample without kernel frames
 * (procmap_sample_ctx). fields: what decides a tracepoint sample's field
 * labels (tpfields_key), in place of the labels, which are decoded only
 * for a new key.
 */
struct scache_id {
	uint64_t version, kversion;
	uint32_t proc, tid;
	uint32_t mode; /* cpumode | SCACHE_HAS_IP */
	const struct unwinding_built *walk; /* a chain built by unwinding: its exact entries and stop */
	struct hmap_fp fields;
	struct hmap_fp fp; /* set by scache_key_fingerprint */
};

#define SCACHE_HAS_IP 0x10000u
#define SCACHE_LAST_KEYS 256u

struct scache {
	struct scache_frame *frames; /* distinct frames */
	size_t nr_frames, cap_frames;
	const struct jit_sym **jits; /* the JIT frames' symbols */
	size_t nr_jits, cap_jits;
	struct hidx frame_idx;
	/*
	 * raw stacks in the model's layout (prof_adopt_stacks), which takes
	 * them over: per stack its length, then its frame indexes
	 */
	uint32_t *pool;
	size_t pool_len, pool_cap;
	uint32_t *stack_off; /* a stack's place in pool */
	uint8_t *stack_trunc;  /* the recorder cut the stack at its depth limit */
	size_t cap_trunc;
	size_t nr_stacks, cap_stacks;
	struct hidx stack_idx;
	/* threads of the samples: (process index, tid), in order of first sample */
	uint64_t *threads;
	size_t nr_threads, cap_threads;
	struct hidx thread_idx;
	struct scache_key *keys;
	size_t nr_keys, cap_keys;
	struct hmap_fp *key_fp; /* per key: its fingerprint; never read (nor set) for a key not indexed */
	size_t cap_fp;
	struct hidx key_idx;
	uint32_t *stack_buf; /* frame indexes of the sample being resolved */
	size_t stack_buf_cap;
	uint64_t *hash_buf; /* and their frames' hashes */
	size_t hash_buf_cap;
	/*
	 * The last indexed key seen per CPU (per tid without a CPU field), as
	 * index + 1. Half of the repeats in a system-wide recording repeat
	 * the previous sample on the same CPU; comparing with that key (hot
	 * in cache) skips the hash and the table probe, which were cache
	 * misses in tables of hundreds of thousands of entries.
	 */
	uint32_t last_key[SCACHE_LAST_KEYS];
};

/* A frame's JIT symbol, NULL for other code. */
static inline const struct jit_sym *scache_frame_jit(const struct scache *c, const struct scache_frame *f)
{
	return f->ref != SYMJOB_NONE && (f->ref & SCACHE_JIT) ? c->jits[f->ref & ~SCACHE_JIT] : NULL;
}

/* A frame's symbolizer id, SYMJOB_NONE for JIT code and unregistered addresses. */
static inline uint32_t scache_frame_addr_id(const struct scache_frame *f)
{
	return f->ref & SCACHE_JIT ? SYMJOB_NONE : f->ref;
}

/* The hash a frame is indexed by. */
static inline uint64_t scache_frame_hash(const struct pm_frame *pf)
{
	return hmap_mix(hmap_mix(hmap_mix(1, pf->mapping), pf->addr), (uint64_t)(uintptr_t)pf->jit);
}

/*
 * Whether f is the frame that ends an unwound stack early, and then why and
 * the object it stopped in (PM_NO_MAPPING: none). Its ref, which no
 * unmapped frame of the program has (SYMJOB_NONE or SCACHE_JIT | index), is the
 * reason, or UW_STOP__COUNT + the mapping for an object without CFI.
 */
static inline bool scache_frame_stop(const struct scache_frame *f, enum uw_stop *why, uint32_t *map)
{
	if (f->mapping != PM_NO_MAPPING || f->ref == SYMJOB_NONE || (f->ref & SCACHE_JIT))
		return false;
	*why = f->ref >= UW_STOP__COUNT ? UW_STOP_NO_CFI : (enum uw_stop)f->ref;
	*map = f->ref >= UW_STOP__COUNT ? f->ref - UW_STOP__COUNT : PM_NO_MAPPING;
	return true;
}

static inline bool scache_key_same(const struct scache *c, uint32_t key, const struct scache_id *id)
{
	return c->key_fp[key].lo == id->fp.lo && c->key_fp[key].hi == id->fp.hi;
}

/*
 * The index of a distinct frame (h: scache_frame_hash), registered with the
 * symbolizer when new; UINT32_MAX when out of memory.
 */
uint32_t scache_frame_of(struct scache *c, const struct pm_frame *pf, uint64_t h, struct symjob *sj);
/* The raw stack id of frame indexes f (added when new); UINT32_MAX when out of memory. */
uint32_t scache_stack_of(struct scache *c, const uint32_t *f, uint32_t n);
/*
 * A sample's key's fingerprint into id->fp: its identity (id, the kept
 * fields of k but its labels) and its raw addresses (the IP when sampled,
 * then the callchain), hashed from where they are.
 */
void scache_key_fingerprint(const struct scache_key *k, struct scache_id *id, const struct rdr_sample *s);
/*
 * The indexed key whose fingerprint is id->fp, UINT32_MAX when none; lk:
 * the sample's slot in last_key (its CPU, else its tid).
 */
uint32_t scache_key_find(struct scache *c, const struct scache_id *id, uint32_t lk);
/*
 * Adds a sample's key (resolved into stack and thread) with its first count;
 * indexed only when it can be looked up again. Returns its index,
 * UINT32_MAX when out of memory.
 */
uint32_t scache_key_add(struct scache *c, const struct scache_key *k, const struct scache_id *id, bool index);
/* The thread index of (process, tid), added on first sight; UINT32_MAX when out of memory. */
uint32_t scache_thread_of(struct scache *c, uint32_t proc, uint32_t tid);
/* The lookup tables of the reading pass (not the keys: they are the aggregates): the model needs the memory. */
void scache_drop_indexes(struct scache *c);
void scache_release(struct scache *c);

#endif

/*
 * The conversion pass. Each distinct sample (process generation, address
 * space versions, thread, event, raw addresses) is resolved once through
 * procmap; repeats cost a hash of their addresses. Resolved frames are
 * interned (mapping, address, JIT symbol) and registered with the
 * symbolizer once each; stacks are arrays of frame indexes, and samples are
 * aggregated by (stack, event, thread). After the pass the lookup tables are
 * dropped and symjob resolves every unique address once on its workers
 * while this thread builds the model's stacks and samples; then the
 * locations: one pprof location per distinct frame.
 */
#include "pipeline/convert.h"

#include "pipeline/host.h"
#include "pipeline/offcpu.h"
#include "pipeline/tpfields.h"
#include "pipeline/unwinding.h"

#include "core/satadd.h"
#include "core/vec.h"

#include "buildid/buildid.h"
#include "buildid/debuginfod.h"
#include "core/hidx.h"
#include "core/hmap.h"
#include "model/events.h"
#include "model/profile.h"
#include "procmap/jitmap.h"
#include "reader/perf_abi.h"
#include "reader/reader.h"
#include "symbolize/symbolize.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * One distinct resolved frame; stacks are arrays of their indexes. 16
 * bytes: the JIT symbol of the rare JIT frame is kept aside (cv.jits), and
 * ref says which of the two a frame has.
 */
struct rawframe {
	uint64_t addr;
	uint32_t mapping; /* PM_NO_MAPPING when unmapped */
	uint32_t ref;     /* symjob id; RF_JIT | index into cv.jits; SYMJOB_NONE: neither */
};

#define RF_JIT 0x80000000u

/*
 * A distinct sample as recorded, and the aggregate of its repeats. What
 * tells samples apart is its process generation and the versions of the
 * address spaces it was resolved in, its thread, event, cpumode, cpu (when
 * labelled), comm, field labels and the raw addresses (IP, then the
 * callchain as recorded, context markers included): all of it is kept as
 * one 128-bit fingerprint (rawkey_fingerprint, in cv.key_fp: dropped with
 * the indexes), not as the addresses, which were most of the reading
 * pass's memory. Equal keys resolve alike, so each
 * is resolved once and a repeat costs a hash of its addresses and a count.
 * Keys that resolve to the same stack and labels become one sample in the
 * model (prof_add_sample adds them up). The process and tid are the
 * thread's (cv.threads).
 */
struct rawkey {
	uint64_t count, weight;
	uint32_t attr, cpu;
	uint32_t stack, thread;
	uint32_t comm; /* the thread's name when sampled (procmap_thread_comm): perf's comm */
	uint32_t fields; /* tracepoint field labels: a tpfields value list, 0 none */
};

/* What tells a sample's key apart besides the kept fields, and the key's fingerprint. */
struct rawid {
	uint64_t version, kversion;
	uint32_t proc, tid;
	uint32_t mode; /* cpumode | RK_HAS_IP */
	struct hmap_fp fp; /* set by rawkey_fingerprint */
};

#define RK_HAS_IP 0x10000u
#define LAST_KEYS 256u

struct cv {
	struct rawframe *frames; /* distinct frames */
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
	struct rawkey *keys;
	size_t nr_keys, cap_keys;
	struct hmap_fp *key_fp; /* per key: its fingerprint; never read (nor set) for a key not indexed */
	size_t cap_fp;
	struct hidx key_idx;
	uint64_t *fp_buf; /* the words rawkey_fingerprint hashes */
	size_t fp_cap;
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
	uint32_t last_key[LAST_KEYS];
};

/* A cheaper step for long arrays, finished by hmap_hash. */
static uint64_t mix_fast(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* A frame's JIT symbol, NULL for other code. */
static const struct jit_sym *frame_jit(const struct cv *c, const struct rawframe *f)
{
	return f->ref != SYMJOB_NONE && (f->ref & RF_JIT) ? c->jits[f->ref & ~RF_JIT] : NULL;
}

/* A frame's symbolizer id, SYMJOB_NONE for JIT code and unregistered addresses. */
static uint32_t frame_addr_id(const struct rawframe *f)
{
	return f->ref & RF_JIT ? SYMJOB_NONE : f->ref;
}

/* The hash a frame is indexed by. */
static uint64_t frame_hash(const struct pm_frame *pf)
{
	return hmap_mix(hmap_mix(hmap_mix(1, pf->mapping), pf->addr), (uint64_t)(uintptr_t)pf->jit);
}

/*
 * The index of a distinct frame (h: frame_hash), registered with the
 * symbolizer when new; UINT32_MAX when out of memory.
 */
static uint32_t frame_of(struct cv *c, const struct pm_frame *pf, uint64_t h, struct symjob *sj)
{
	struct hidx_iter it;
	struct rawframe *f;

	for (uint32_t v = hidx_first(&c->frame_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&c->frame_idx, &it)) {
		f = &c->frames[v];
		if (f->mapping == pf->mapping && f->addr == pf->addr && frame_jit(c, f) == pf->jit)
			return v;
	}
	if (c->nr_frames >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&c->frames, &c->cap_frames, c->nr_frames + 1, sizeof(*f)))
		return UINT32_MAX;
	f = &c->frames[c->nr_frames];
	f->mapping = pf->mapping;
	f->addr = pf->addr;
	if (pf->jit) {
		if (c->nr_jits >= RF_JIT - 1 ||
		    !vec_reserve((void **)&c->jits, &c->cap_jits, c->nr_jits + 1, sizeof(*c->jits)))
			return UINT32_MAX;
		c->jits[c->nr_jits] = pf->jit;
		f->ref = RF_JIT | (uint32_t)c->nr_jits++;
	} else {
		/* --no-symbolize registers too: the binaries' program headers still give ELF addresses */
		f->ref = symjob_add(sj, pf->mapping, pf->file_offset);
		/* (ids with RF_JIT's bit would take 2^31 addresses: out of memory long before) */
		if (f->ref != SYMJOB_NONE && (f->ref & RF_JIT))
			return UINT32_MAX;
	}
	if (!hidx_add(&c->frame_idx, h, (uint32_t)c->nr_frames))
		return UINT32_MAX;
	return (uint32_t)c->nr_frames++;
}

/* The raw stack id of frame indexes f (added when new); UINT32_MAX when out of memory. */
static uint32_t raw_stack(struct cv *c, const uint32_t *f, uint32_t n)
{
	uint64_t h = 7;
	struct hidx_iter it;
	size_t old_cap = c->cap_stacks;

	for (uint32_t i = 0; i < n; i++)
		h = mix_fast(h, f[i]);
	h = hmap_hash(h);
	for (uint32_t v = hidx_first(&c->stack_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&c->stack_idx, &it)) {
		const uint32_t *e = c->pool + c->stack_off[v];

		if (e[0] == n && (!n || !memcmp(e + 1, f, n * sizeof(*f))))
			return v;
	}
	if (c->pool_len + n + 1 > UINT32_MAX || c->nr_stacks >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&c->pool, &c->pool_cap, c->pool_len + n + 1, sizeof(*f)) ||
	    !vec_reserve((void **)&c->stack_off, &c->cap_stacks, c->nr_stacks + 1, sizeof(uint32_t)))
		return UINT32_MAX;
	/* the flags follow stack_off's capacity (a realloc per stack when they did not check) */
	if ((c->cap_stacks != old_cap || !c->stack_trunc) &&
	    !vec_reserve_exact((void **)&c->stack_trunc, &c->cap_trunc, c->cap_stacks, 1))
		return UINT32_MAX;
	c->stack_trunc[c->nr_stacks] = 0;
	c->pool[c->pool_len] = n;
	if (n)
		memcpy(c->pool + c->pool_len + 1, f, n * sizeof(*f));
	c->stack_off[c->nr_stacks] = (uint32_t)c->pool_len;
	c->pool_len += n + 1;
	if (!hidx_add(&c->stack_idx, h, (uint32_t)c->nr_stacks))
		return UINT32_MAX;
	return (uint32_t)c->nr_stacks++;
}

/*
 * A sample's key's fingerprint into id->fp: its identity (id, the kept
 * fields of k) and its raw addresses (the IP when sampled, then the
 * callchain), hashed as one run of words; false when out of memory.
 */
static bool rawkey_fingerprint(struct cv *c, const struct rawkey *k, struct rawid *id,
			       const struct rdr_sample *s)
{
	bool ip = id->mode & RK_HAS_IP;
	size_t n = 7 + ip + s->callchain_nr;
	uint64_t *w;

	if (s->callchain_nr > SIZE_MAX / 16 ||
	    !vec_reserve((void **)&c->fp_buf, &c->fp_cap, n, sizeof(uint64_t)))
		return false;
	w = c->fp_buf;
	w[0] = id->version;
	w[1] = id->kversion;
	w[2] = (uint64_t)id->proc << 32 | id->tid;
	w[3] = (uint64_t)k->attr << 32 | k->cpu;
	w[4] = (uint64_t)id->mode << 32 | k->comm;
	w[5] = k->fields;
	w[6] = s->callchain_nr;
	if (ip)
		w[7] = s->ip;
	if (s->callchain_nr)
		memcpy(w + 7 + ip, s->callchain, s->callchain_nr * sizeof(uint64_t));
	id->fp = hmap_fingerprint(w, n * sizeof(uint64_t));
	return true;
}

static bool rawkey_same(const struct cv *c, uint32_t key, const struct rawid *id)
{
	return c->key_fp[key].lo == id->fp.lo && c->key_fp[key].hi == id->fp.hi;
}

/*
 * Adds a sample's key (resolved into stack and thread) with its first count;
 * indexed only when it can be looked up again. Returns its index,
 * UINT32_MAX when out of memory.
 */
static uint32_t rawkey_add(struct cv *c, const struct rawkey *k, const struct rawid *id, bool index)
{
	size_t old_cap = c->cap_keys;

	if (c->nr_keys >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&c->keys, &c->cap_keys, c->nr_keys + 1, sizeof(*k)))
		return UINT32_MAX;
	/* the fingerprints follow the keys' capacity */
	if ((c->cap_keys != old_cap || !c->key_fp) &&
	    !vec_reserve_exact((void **)&c->key_fp, &c->cap_fp, c->cap_keys, sizeof(*c->key_fp)))
		return UINT32_MAX;
	c->keys[c->nr_keys] = *k;
	if (index) {
		c->key_fp[c->nr_keys] = id->fp;
		if (!hidx_add(&c->key_idx, id->fp.lo, (uint32_t)c->nr_keys))
			return UINT32_MAX;
	}
	return (uint32_t)c->nr_keys++;
}

/* The lookup tables of the reading pass (not the keys: they are the aggregates): the model needs the memory. */
static void cv_drop_indexes(struct cv *c)
{
	/* what stays is done growing: give back the slack before the symbolizer's peak */
	vec_shrink((void **)&c->keys, &c->cap_keys, c->nr_keys, sizeof(*c->keys));
	vec_shrink((void **)&c->frames, &c->cap_frames, c->nr_frames, sizeof(*c->frames));
	vec_shrink((void **)&c->pool, &c->pool_cap, c->pool_len, sizeof(*c->pool));
	vec_free((void **)&c->fp_buf, &c->fp_cap);
	vec_free((void **)&c->key_fp, &c->cap_fp);
	vec_free((void **)&c->stack_buf, &c->stack_buf_cap);
	vec_free((void **)&c->hash_buf, &c->hash_buf_cap);
	hidx_release(&c->key_idx);
	hidx_release(&c->frame_idx);
	hidx_release(&c->stack_idx);
	hidx_release(&c->thread_idx);
}

static void cv_release(struct cv *c)
{
	free(c->frames);
	free(c->jits);
	free(c->pool);
	free(c->stack_off);
	free(c->stack_trunc);
	free(c->threads);
	free(c->keys);
	free(c->key_fp);
	free(c->fp_buf);
	free(c->stack_buf);
	free(c->hash_buf);
	hidx_release(&c->frame_idx);
	hidx_release(&c->stack_idx);
	hidx_release(&c->thread_idx);
	hidx_release(&c->key_idx);
}

/* The thread index of (process, tid), added on first sight; UINT32_MAX when out of memory. */
static uint32_t thread_of(struct cv *c, uint32_t proc, uint32_t tid)
{
	uint64_t key = (uint64_t)proc << 32 | tid, h = hmap_hash(key);
	struct hidx_iter it;

	for (uint32_t v = hidx_first(&c->thread_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&c->thread_idx, &it))
		if (c->threads[v] == key)
			return v;
	if (c->nr_threads >= UINT32_MAX - 1 ||
	    !vec_reserve((void **)&c->threads, &c->cap_threads, c->nr_threads + 1, sizeof(uint64_t)))
		return UINT32_MAX;
	c->threads[c->nr_threads] = key;
	if (!hidx_add(&c->thread_idx, h, (uint32_t)c->nr_threads))
		return UINT32_MAX;
	return (uint32_t)c->nr_threads++;
}

/*
 * Whether perf cut the callchain at its depth limit: as many entries (context
 * markers aside) as the limit (attr.sample_max_stack, else the kernel's
 * default perf_event_max_stack of 127).
 */
static bool callchain_truncated(const struct rdr_sample *s, const struct rdr_attr *a)
{
	uint64_t limit = a && a->sample_max_stack ? a->sample_max_stack : 127, n = 0;

	if (!s->callchain)
		return false;
	for (uint64_t i = 0; i < s->callchain_nr; i++)
		if (s->callchain[i] < PERF_CONTEXT_MAX)
			n++;
	return n >= limit;
}

/* Event name without perf's modifier suffix (cycles:ppp -> cycles; sys:event stays). */
static void base_name(const char *name, char *out, size_t n)
{
	const char *c1 = strchr(name, ':');
	size_t len = strlen(name);

	if (c1 && !strchr(c1 + 1, ':') && !strchr(name, '/')) {
		/* one colon: a tracepoint "sys:name" has no modifier letters only */
		bool mods = c1[1] != '\0';

		for (const char *q = c1 + 1; *q; q++)
			if (!strchr("ukhHGIpPSDWe", *q))
				mods = false;
		if (mods)
			len = (size_t)(c1 - name);
	} else if (c1 && strchr(c1 + 1, ':')) {
		len = (size_t)(strrchr(name, ':') - name);
	}
	snprintf(out, n, "%.*s", (int)len, name);
}

static bool is_clock_event(const struct rdr_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && (a->config == 0 || a->config == 1);
}

/*
 * The model's event descriptions and sample types: two per recorded event
 * (its samples, their periods), then with offcpu two for off-CPU intervals
 * (off_cpu_samples/count, off_cpu/nanoseconds), described as one more event.
 */
static void set_types(struct prof *p, const struct rdr_info *info, bool offcpu)
{
	size_t nd = info->nr_attrs + (offcpu ? 1 : 0);

	p->nr_types = 2 * nd;
	p->types = calloc(p->nr_types ? p->nr_types : 1, sizeof(*p->types));
	if (!p->types) {
		p->nr_types = 0;
		return;
	}
	for (size_t i = 0; i < info->nr_attrs; i++) {
		const struct rdr_attr *a = &info->attrs[i];
		char base[200], buf[260];

		base_name(a->name ? a->name : "event", base, sizeof(base));
		snprintf(buf, sizeof(buf), "%s_samples", base);
		p->types[2 * i].type = prof_str(p, buf);
		p->types[2 * i].unit = prof_str(p, "count");
		p->types[2 * i + 1].type = prof_str(p, base);
		p->types[2 * i + 1].unit = prof_str(p, is_clock_event(a) ? "nanoseconds" : "count");
	}
	p->events_desc = calloc(nd ? nd : 1, sizeof(*p->events_desc));
	if (p->events_desc)
		p->nr_events_desc = nd;
	if (offcpu && p->events_desc) {
		struct prof_event_desc *e = &p->events_desc[info->nr_attrs];

		p->types[2 * info->nr_attrs].type = prof_str(p, "off_cpu_samples");
		p->types[2 * info->nr_attrs].unit = prof_str(p, "count");
		p->types[2 * info->nr_attrs + 1].type = prof_str(p, "off_cpu");
		p->types[2 * info->nr_attrs + 1].unit = prof_str(p, "nanoseconds");
		e->name = e->full_name = prof_str(p, "off-cpu");
		e->clock = true;
		e->offcpu = true;
		p->offcpu_event = (uint32_t)info->nr_attrs;
	}
	p->primary_event = PROF_NONE;
	for (size_t i = 0; i < p->nr_events_desc && i < info->nr_attrs; i++) {
		const struct rdr_attr *a = &info->attrs[i];
		struct prof_event_desc *e = &p->events_desc[i];
		char base[200];

		base_name(a->name ? a->name : "event", base, sizeof(base));
		e->name = prof_str(p, base);
		e->full_name = prof_str(p, a->name ? a->name : "event");
		e->clock = is_clock_event(a);
		e->tracepoint = a->type == PERF_TYPE_TRACEPOINT;
		if (a->freq)
			e->frequency = a->sample_period;
		else
			e->period = a->sample_period;
		e->samples = a->samples;
	}
	/*
	 * The CPU-time event: cpu-clock, task-clock, then cycles (or ref-cycles),
	 * else none: a tracepoint or another count shown as CPU samples would
	 * tell JFR tools that threads ran where they waited or switched.
	 */
	for (int pass = 0; pass < 2; pass++) {
		bool found = false;

		for (size_t i = 0; i < p->nr_events_desc && i < info->nr_attrs && !found; i++) {
			const struct rdr_attr *a = &info->attrs[i];

			if (pass == 0 ? is_clock_event(a)
				      : a->type == PERF_TYPE_HARDWARE &&
						((a->config & 0xffffffffu) == 0 /* cycles, any PMU */ ||
						 (a->config & 0xffffffffu) == 9 /* ref-cycles */)) {
				p->primary_event = (uint32_t)i;
				found = true;
			}
		}
		if (found)
			break;
	}
	p->default_type = info->nr_attrs ? 1 : 0;
	if (info->nr_attrs) {
		const struct rdr_attr *a = &info->attrs[0];

		p->period_type = p->types[1];
		if (!a->freq)
			p->period = (int64_t)a->sample_period;
		else if (is_clock_event(a) && a->sample_period)
			p->period = (int64_t)(1000000000ull / a->sample_period);
	}
}

/* The model mapping of a procmap mapping (created on first use). */
static uint32_t mapping_of(struct prof *p, const struct procmap *pm, uint32_t *map_ids, uint32_t id)
{
	const struct pm_mapping *m = procmap_mapping(pm, id);
	struct prof_mapping pmp;
	char hex[2 * PM_BUILD_ID_MAX + 1];

	if (map_ids[id] != PROF_NONE)
		return map_ids[id];
	memset(&pmp, 0, sizeof(pmp));
	pmp.start = m->start;
	pmp.limit = m->limit;
	pmp.offset = m->pgoff;
	pmp.filename = prof_str(p, m->path);
	buildid_hex(m->build_id, m->build_id_size, hex);
	pmp.build_id = prof_str(p, hex);
	switch (m->kind) {
	case PM_KIND_FILE:
		pmp.kind = PROF_MAP_FILE;
		break;
	case PM_KIND_KERNEL:
	case PM_KIND_MODULE:
		pmp.kind = PROF_MAP_KERNEL;
		break;
	case PM_KIND_JIT:
		pmp.kind = PROF_MAP_JIT;
		break;
	default:
		pmp.kind = PROF_MAP_OTHER;
		break;
	}
	if (m->proc != PM_KERNEL_PROC) {
		const struct pm_proc *pr = procmap_proc(pm, m->proc);

		pmp.pid = pr ? pr->pid : 0;
	}
	map_ids[id] = prof_add_mapping(p, &pmp);
	return map_ids[id];
}

/*
 * pprof takes the first mapping for the main binary: make it the executable
 * of the process with the most samples (its first executable file mapping,
 * which the kernel maps at exec before any library).
 */
static void main_mapping_first(struct prof *p, const struct procmap *pm, uint32_t *map_ids)
{
	const struct pm_proc *best = NULL;

	for (uint32_t i = 0; i < procmap_proc_count(pm); i++) {
		const struct pm_proc *pr = procmap_proc(pm, i);

		if (pr->samples && (!best || pr->samples > best->samples))
			best = pr;
	}
	if (!best)
		return;
	for (uint32_t i = 0; i < procmap_mapping_count(pm); i++) {
		const struct pm_mapping *m = procmap_mapping(pm, i);

		if (m->proc == best->index && m->exec && m->kind == PM_KIND_FILE) {
			mapping_of(p, pm, map_ids, i);
			return;
		}
	}
}

/*
 * The name of the frame that ends an unwound stack early ("[truncated: stack
 * copy ended]", "[truncated: no CFI for libfoo.so]"); false when the word is
 * no such marker.
 */
static bool stop_name(const struct procmap *pm, uint64_t word, char *buf, size_t size)
{
	enum uw_stop why;
	uint32_t map;
	const struct pm_mapping *m;

	if (!unwinding_marker(word, &why, &map))
		return false;
	m = map == PM_NO_MAPPING ? NULL : procmap_mapping(pm, map);
	if (why == UW_STOP_NO_CFI && m) {
		const char *b = strrchr(m->path, '/');

		snprintf(buf, size, "[truncated: no CFI for %s]", b ? b + 1 : m->path);
	} else {
		snprintf(buf, size, "[truncated: %s]", uw_stop_text(why));
	}
	return true;
}

/*
 * The one name of the unnamed code in an anonymous region: perf's DSO for
 * JIT code without a perf map ("[JIT] tid 42"), else the region's own name
 * in brackets ("[heap]", "//anon" as "[anon]"). A name per address (what
 * the views made of "anon+0x7f...") gave each address its own frame and
 * shredded the flame graph: 2767 distinct stacks of a JVM where perf has
 * 1515. The address stays in the location.
 */
static const char *region_name(const struct pm_mapping *m, char *buf, size_t size)
{
	const char *b;

	if (m->kind == PM_KIND_JIT || m->dso[0] == '[')
		return m->dso;
	b = strrchr(m->path, '/');
	snprintf(buf, size, "[%.256s]", b && b[1] ? b + 1 : m->path[0] ? m->path : "anon");
	return buf;
}

/* The model location of a raw frame (created on first use). */
static uint32_t location_of(struct prof *p, const struct procmap *pm, struct symjob *sj,
			    uint32_t *map_ids, const struct rawframe *f, const struct jit_sym *jit)
{
	char stop[320];
	struct prof_line lines[64];
	uint32_t nl = 0, mapping = PROF_NONE, loc;
	uint64_t elf_addr = 0;
	bool has_elf = false;
	const struct pm_mapping *m = f->mapping == PM_NO_MAPPING ? NULL
								 : procmap_mapping(pm, f->mapping);

	if (m)
		mapping = mapping_of(p, pm, map_ids, f->mapping);
	if (!m && !jit && stop_name(pm, f->addr, stop, sizeof(stop))) {
		lines[nl].function = prof_function(p, prof_str(p, stop), prof_str(p, stop), 0, 0);
		lines[nl].line = 0;
		lines[nl].column = 0;
		nl++;
	} else if (jit) {
		lines[nl].function = prof_function(p, prof_str(p, jit->name), prof_str(p, jit->name), 0, 0);
		lines[nl].line = 0;
		lines[nl].column = 0;
		nl++;
	} else if (frame_addr_id(f) != SYMJOB_NONE) {
		const struct symjob_result *r = symjob_get(sj, frame_addr_id(f));

		if (r && r->normalized && m && m->kind != PM_KIND_KERNEL && m->kind != PM_KIND_MODULE) {
			elf_addr = r->elf_va;
			has_elf = true;
			if (mapping != PROF_NONE && !p->mappings[mapping].has_load_bias) {
				p->mappings[mapping].has_load_bias = true;
				p->mappings[mapping].load_bias = f->addr - r->elf_va;
			}
		}

		for (uint32_t i = 0; r && i < r->nr && nl < 64; i++) {
			const struct sym_frame *sf = &r->frames[i];
			/* the symbolizer's numbers as keys: each string and function hashed into the model once */
			uint32_t key = r->funcs ? r->funcs[i] : SYMJOB_NONE;
			const struct symjob_function *fn = symjob_function(sj, key);
			uint32_t fid = prof_function_of_key(p, key);

			if (fid == PROF_NONE) {
				/* file, system name, name: the order the model has numbered them in */
				uint32_t file = prof_str_keyed(p, fn ? fn->file : PROF_NONE, sf->file);
				uint32_t sys = prof_str_keyed(p, fn ? fn->system_name : PROF_NONE,
							      sf->system_name);
				uint32_t name = prof_str_keyed(p, fn ? fn->function : PROF_NONE, sf->function);

				fid = prof_function_keyed(p, fn ? key : PROF_NONE, name, sys, file,
							  sf->start_line);
			}
			lines[nl].function = fid;
			lines[nl].line = sf->line;
			lines[nl].column = sf->column;
			nl++;
		}
	}
	if (!nl && m && (m->kind == PM_KIND_JIT || m->kind == PM_KIND_ANON)) {
		const char *name = region_name(m, stop, sizeof(stop));

		lines[nl].function = prof_function(p, prof_str(p, name), prof_str(p, name), 0, 0);
		lines[nl].line = 0;
		lines[nl].column = 0;
		nl++;
	}
	if (mapping != PROF_NONE && nl) {
		struct prof_mapping *pmp = &p->mappings[mapping];

		pmp->has_functions = true;
		if (lines[0].line)
			pmp->has_line_numbers = true;
		for (uint32_t i = 0; i < nl; i++)
			if (p->functions[lines[i].function].filename)
				pmp->has_filenames = true;
		if (nl > 1)
			pmp->has_inline_frames = true;
	}
	/* frames are distinct (mapping, address, JIT symbol): no lookup, no index */
	loc = prof_location_append(p, mapping, f->addr, lines, nl);
	if (has_elf && loc != PROF_NONE) {
		p->locations[loc].has_elf_addr = true;
		p->locations[loc].elf_addr = elf_addr;
	}
	return loc;
}

static void report(const struct convert_opts *o, struct rdr *r, enum convert_phase ph,
		   uint64_t records)
{
	struct convert_progress pr;
	const struct rdr_info *info = rdr_info(r);

	memset(&pr, 0, sizeof(pr));
	pr.phase = ph;
	pr.bytes = rdr_stats(r)->bytes_read;
	pr.total_bytes = info->file_size;
	pr.records = records;
	pr.samples = rdr_stats(r)->samples;
	o->progress(o->progress_ctx, &pr);
}

static bool in_u32(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static bool in_str(const char *const *v, size_t n, const char *x)
{
	for (size_t i = 0; i < n; i++)
		if (x && !strcmp(v[i], x))
			return true;
	return false;
}

bool convert_event_matches(const char *recorded, const char *wanted)
{
	char base[200];
	size_t n;

	if (!recorded || !wanted)
		return false;
	if (!strcmp(recorded, wanted))
		return true;
	/* "sys:*": every tracepoint of a system, as perf record -e takes it */
	n = strlen(wanted);
	if (n >= 2 && wanted[n - 2] == ':' && wanted[n - 1] == '*')
		return strncmp(recorded, wanted, n - 1) == 0;
	base_name(recorded, base, sizeof(base));
	return !strcmp(base, wanted);
}

/* Whether a sample passes the user's filters (first: the first sample's time). */
static bool keep_sample(const struct convert_filter *f, const struct procmap *pm,
			const struct rdr_info *info, const struct rdr_event *ev, uint64_t first)
{
	const struct rdr_sample *s = &ev->u.sample;

	if (f->nr_pids && !in_u32(f->pids, f->nr_pids, s->pid))
		return false;
	if (f->nr_tids && !in_u32(f->tids, f->nr_tids, s->tid))
		return false;
	if (f->nr_comms && !in_str(f->comms, f->nr_comms, procmap_thread_name(pm, s->tid)))
		return false;
	if (f->nr_events) {
		const char *name = (size_t)ev->attr < info->nr_attrs ? info->attrs[ev->attr].name : NULL;
		bool match = false;

		for (size_t i = 0; i < f->nr_events && !match; i++)
			match = convert_event_matches(name, f->events[i]);
		if (!match)
			return false;
	}
	if (f->has_start || f->has_end) {
		uint64_t t = f->time_absolute ? s->time : s->time - first;

		if (f->has_start && t < f->start_ns)
			return false;
		if (f->has_end && t > f->end_ns)
			return false;
	}
	return true;
}

/*
 * Notes what a sample had for each pid, tid and comm filter, whatever the
 * others say (convert_seen): only when one of them is given.
 */
static void note_seen(struct convert_seen *sn, const struct convert_filter *f, const struct procmap *pm,
		      const struct rdr_sample *s)
{
	const char *comm = f->nr_comms ? procmap_thread_name(pm, s->tid) : NULL;

	if (!sn->samples++) {
		sn->pid_min = sn->pid_max = s->pid;
		sn->tid_min = sn->tid_max = s->tid;
	}
	sn->pid_min = s->pid < sn->pid_min ? s->pid : sn->pid_min;
	sn->pid_max = s->pid > sn->pid_max ? s->pid : sn->pid_max;
	sn->tid_min = s->tid < sn->tid_min ? s->tid : sn->tid_min;
	sn->tid_max = s->tid > sn->tid_max ? s->tid : sn->tid_max;
	for (size_t i = 0; sn->pids && i < f->nr_pids; i++)
		sn->pids[i] |= f->pids[i] == s->pid;
	for (size_t i = 0; sn->tids && i < f->nr_tids; i++)
		sn->tids[i] |= f->tids[i] == s->tid;
	if (!comm)
		return;
	for (size_t i = 0; sn->comms && i < f->nr_comms; i++)
		sn->comms[i] |= !strcmp(f->comms[i], comm);
	for (size_t i = 0; i < sn->nr_comm_names; i++)
		if (!strcmp(sn->comm_names[i], comm))
			return;
	if (sn->nr_comm_names < CONVERT_SEEN_COMMS) {
		sn->comm_names[sn->nr_comm_names] = strdup(comm);
		sn->nr_comm_names += sn->comm_names[sn->nr_comm_names] != NULL;
	} else {
		sn->more_comms = true;
	}
}

/* The per-value flags of note_seen; CONV_E_NOMEM. */
static enum conv_err seen_init(struct convert_seen *sn, const struct convert_filter *f)
{
	memset(sn, 0, sizeof(*sn));
	sn->pids = f->nr_pids ? calloc(f->nr_pids, sizeof(bool)) : NULL;
	sn->tids = f->nr_tids ? calloc(f->nr_tids, sizeof(bool)) : NULL;
	sn->comms = f->nr_comms ? calloc(f->nr_comms, sizeof(bool)) : NULL;
	if ((f->nr_pids && !sn->pids) || (f->nr_tids && !sn->tids) || (f->nr_comms && !sn->comms))
		return CONV_E_NOMEM;
	return CONV_E_OK;
}

void convert_stats_release(struct convert_stats *st)
{
	free(st->seen.pids);
	free(st->seen.tids);
	free(st->seen.comms);
	for (size_t i = 0; i < st->seen.nr_comm_names; i++)
		free(st->seen.comm_names[i]);
	memset(&st->seen, 0, sizeof(st->seen));
	for (size_t i = 0; i < st->nr_missing; i++) {
		free(st->missing[i].build_id);
		free(st->missing[i].path);
		free(st->missing[i].reason);
	}
	free(st->missing);
	st->missing = NULL;
	st->nr_missing = 0;
	for (size_t i = 0; i < st->nr_dfd_down; i++) {
		free(st->dfd_down[i].url);
		free(st->dfd_down[i].why);
	}
	free(st->dfd_down);
	st->dfd_down = NULL;
	st->nr_dfd_down = 0;
}

static int missing_cmp(const void *a, const void *b)
{
	const struct convert_missing *x = a, *y = b;

	if (x->frames != y->frames)
		return x->frames > y->frames ? -1 : 1;
	return strcmp(x->build_id, y->build_id);
}

/*
 * A frame in a mapping with no file to look in (anonymous memory, JIT code
 * without its perf map): unresolved, listed under the mapping's name.
 */
static void note_nofile(struct convert_stats *st, const struct procmap *pm, uint32_t map,
			uint64_t n)
{
	const struct pm_mapping *m = procmap_mapping(pm, map);
	const char *name = m && m->dso ? m->dso : "[anon]";

	st->frames_nofile += n;
	for (size_t i = 0; i < st->nr_missing; i++) {
		if (!strcmp(st->missing[i].path, name)) {
			st->missing[i].frames += n;
			return;
		}
	}
	if (st->nr_missing >= 64 || !vec_reserve((void **)&st->missing, &st->cap_missing,
						  st->nr_missing + 1, sizeof(*st->missing)))
		return;
	st->missing[st->nr_missing].build_id = strdup("");
	st->missing[st->nr_missing].path = strdup(name);
	st->missing[st->nr_missing].frames = n;
	st->missing[st->nr_missing].reason =
		strdup(m && m->kind == PM_KIND_JIT ? "JIT code: no perf-PID.map or jitdump names it"
						   : "no file behind this memory");
	if (!st->missing[st->nr_missing].build_id || !st->missing[st->nr_missing].path ||
	    !st->missing[st->nr_missing].reason) {
		free(st->missing[st->nr_missing].build_id);
		free(st->missing[st->nr_missing].path);
		free(st->missing[st->nr_missing].reason);
		return;
	}
	st->nr_missing++;
}

/* The debuginfod servers given up, copied: the symbolizer's strings go with it. */
static void collect_dfd_down(struct convert_stats *st, const struct symjob *sj)
{
	const struct dfd_server *s;

	if (!st->sym.dfd_servers_down)
		return;
	st->dfd_down = calloc(st->sym.dfd_servers_down, sizeof(*st->dfd_down));
	if (!st->dfd_down)
		return;
	for (size_t i = 0; (s = symjob_dfd_server(sj, i)) != NULL; i++) {
		struct convert_dfd_down *d = &st->dfd_down[st->nr_dfd_down];

		if (s->down == DFD_UP || st->nr_dfd_down == st->sym.dfd_servers_down)
			continue;
		d->url = strdup(s->url);
		d->why = strdup(s->why ? s->why : "");
		d->skipped = s->skipped;
		if (!d->url || !d->why) {
			free(d->url);
			free(d->why);
			continue;
		}
		st->nr_dfd_down++;
	}
}

/* Copies what the symbolizer found and missed before it goes away. */
static void collect_symstats(struct convert_stats *st, const struct symjob *sj)
{
	size_t n = symjob_unresolved_count(sj);

	st->sym = *symjob_stats(sj);
	collect_dfd_down(st, sj);
	if (!vec_reserve((void **)&st->missing, &st->cap_missing, st->nr_missing + n + 1,
			 sizeof(*st->missing)))
		return;
	for (size_t i = 0; i < n; i++) {
		const struct symjob_missing *m = symjob_unresolved_at(sj, i);

		if (!m->frames)
			continue;
		st->missing[st->nr_missing].build_id = strdup(m->build_id ? m->build_id : "");
		st->missing[st->nr_missing].path = strdup(m->path ? m->path : "");
		st->missing[st->nr_missing].frames = m->frames;
		/* the symbolizer's strings go with it: copy */
		st->missing[st->nr_missing].reason = strdup(m->reason ? m->reason : "");
		if (!st->missing[st->nr_missing].build_id || !st->missing[st->nr_missing].path ||
		    !st->missing[st->nr_missing].reason) {
			free(st->missing[st->nr_missing].build_id);
			free(st->missing[st->nr_missing].path);
			free(st->missing[st->nr_missing].reason);
			continue;
		}
		st->nr_missing++;
	}
	qsort(st->missing, st->nr_missing, sizeof(*st->missing), missing_cmp);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The process model's options: the caller's, and whether the recording was made here. */
static struct procmap *convert_new_procmap(struct rdr *r, const struct convert_opts *o)
{
	struct procmap_opts po = o->pm;
	const struct rdr_info *info = rdr_info(r);

	po.same_machine = host_is_recording_machine(info->hostname, info->osrelease);
	po.recorded_by_ns = info->file_mtime_ns;
	return procmap_new(&po);
}

/*
 * One conversion: its inputs, what the reading pass keeps and the phases'
 * shared state. Each phase is a function of its own (pass_*), called in
 * order by convert_run.
 */
struct pass {
	struct rdr *r;
	const struct convert_opts *o;
	struct prof *p;
	struct convert_stats *st;
	struct conv_diag *diag;
	struct procmap *pm;
	struct symjob *sj;
	struct unwinding *uw;      /* --call-graph dwarf samples' stacks */
	struct tpfields *tpf;      /* tracepoint field labels; made at the first tracepoint sample */
	struct offcpu *off;        /* off-CPU intervals from sched_switch samples and switch records */
	uint8_t *roles;            /* per attr: enum attr_role + 1, 0 = not yet looked at */
	size_t nr_roles;
	uint32_t *field_sets;      /* tpfields value list -> its labels' place in the label pool + 1 */
	size_t nr_field_sets;
	struct cv c;
	uint64_t nrec;             /* records read */
	uint64_t first_time;       /* the first sample's time (for --time) */
	bool have_first;
	size_t known_stacks;       /* raw stacks seen before this sample */
	uint64_t *kept_by_attr;    /* kept samples per attr (pipe mode: attrs arrive, so this grows) */
	size_t nr_kept;
	uint64_t *map_hits;        /* frames of kept samples per mapping */
	uint32_t *map_ids;         /* procmap mapping -> model mapping */
	uint64_t t_sym;            /* when the symbolizer's workers started */
};

static enum conv_err pass_init(struct pass *ps)
{
	enum conv_err err;

	memset(ps->st, 0, sizeof(*ps->st));
	if (seen_init(&ps->st->seen, &ps->o->filter))
		return conv_fail(ps->diag, CONV_E_NOMEM, UINT64_MAX, "no memory");
	memset(&ps->c, 0, sizeof(ps->c));
	hidx_init(&ps->c.frame_idx);
	hidx_init(&ps->c.stack_idx);
	hidx_init(&ps->c.thread_idx);
	hidx_init(&ps->c.key_idx);
	ps->pm = convert_new_procmap(ps->r, ps->o);
	if (!ps->pm)
		return conv_fail(ps->diag, CONV_E_NOMEM, UINT64_MAX, "no memory");
	if (ps->o->keep_events && !ps->p->events) {
		err = prof_events_open(&ps->p->events, ps->o->tmpdir, ps->diag);
		if (err)
			return err;
	}
	err = symjob_new(&ps->sj, &ps->o->sj, ps->pm, ps->diag);
	if (err)
		return err;
	ps->uw = unwinding_new(ps->pm, ps->sj, rdr_info(ps->r)->arch);
	if (!ps->uw)
		return conv_fail(ps->diag, CONV_E_NOMEM, UINT64_MAX, "no memory");
	procmap_add_build_ids(ps->pm, rdr_info(ps->r)->build_ids, rdr_info(ps->r)->nr_build_ids);
	return CONV_E_OK;
}

/*
 * A sample not seen before: its frames resolved and interned, its stack and
 * thread found or added, and its key added (k and id hold what was known
 * before; id->fp is set when known).
 */
static enum conv_err pass_new_sample(struct pass *ps, const struct rdr_event *ev, struct rawkey *k,
				     struct rawid *id, bool known, uint32_t lk, uint32_t *key)
{
	const struct rdr_sample *s = &ev->u.sample;
	struct cv *c = &ps->c;
	const struct pm_frame *frames;
	struct pm_space_key sk;
	struct pm_frame stop;
	size_t nr;
	uint32_t proc, stack, thread, ki;
	enum conv_err err;
	enum uw_stop why;
	uint32_t why_map;
	bool cut = s->callchain_nr &&
		   unwinding_marker(s->callchain[s->callchain_nr - 1], &why, &why_map);

	if (cut) {
		/* the walk's early stop is a frame of its own, not an address to resolve */
		struct rdr_event e2 = *ev;

		e2.u.sample.callchain_nr--;
		err = procmap_resolve(ps->pm, &e2, &frames, &nr, &proc);
	} else {
		err = procmap_resolve(ps->pm, ev, &frames, &nr, &proc);
	}
	if (err)
		return err;
	if (!vec_reserve((void **)&c->stack_buf, &c->stack_buf_cap, nr + 2, sizeof(uint32_t)) ||
	    !vec_reserve((void **)&c->hash_buf, &c->hash_buf_cap, nr + 1, sizeof(uint64_t)))
		return CONV_E_NOMEM;
	/* the frames' lookups are cache misses in a large table: started together */
	for (size_t i = 0; i < nr; i++) {
		c->hash_buf[i] = frame_hash(&frames[i]);
		hidx_prefetch(&c->frame_idx, c->hash_buf[i]);
	}
	for (size_t i = 0; i < nr; i++) {
		c->stack_buf[i] = frame_of(c, &frames[i], c->hash_buf[i], ps->sj);
		if (c->stack_buf[i] == UINT32_MAX)
			return CONV_E_NOMEM;
	}
	if (cut) {
		memset(&stop, 0, sizeof(stop));
		stop.mapping = PM_NO_MAPPING;
		stop.addr = s->callchain[s->callchain_nr - 1];
		c->stack_buf[nr] = frame_of(c, &stop, frame_hash(&stop), ps->sj);
		if (c->stack_buf[nr++] == UINT32_MAX)
			return CONV_E_NOMEM;
	}
	stack = raw_stack(c, c->stack_buf, (uint32_t)nr);
	if (stack == UINT32_MAX)
		return CONV_E_NOMEM;
	/* a property of the stack (its depth): looked at once, when the stack is new */
	/* (an unwound chain is not perf's: its length says nothing of perf's depth limit) */
	if (stack + 1 == c->nr_stacks && c->nr_stacks > ps->known_stacks &&
	    (cut || (!unwinding_wants(s) && (size_t)ev->attr < rdr_info(ps->r)->nr_attrs &&
		     callchain_truncated(s, &rdr_info(ps->r)->attrs[ev->attr]))))
		c->stack_trunc[stack] = 1;
	ps->known_stacks = c->nr_stacks;
	thread = thread_of(c, proc, s->tid);
	if (thread == UINT32_MAX)
		return CONV_E_NOMEM;
	/* the key as it was before resolving (procmap_resolve may have made the process) */
	if (!known && procmap_space_key(ps->pm, s->pid, &sk)) {
		id->proc = sk.proc;
		id->version = sk.version;
		id->kversion = sk.kversion;
		known = sk.proc == proc;
		if (known && !rawkey_fingerprint(c, k, id, s))
			return CONV_E_NOMEM;
	}
	k->stack = stack;
	k->thread = thread;
	k->count = 1;
	k->weight = satadd_u63(0, s->period ? s->period : 1);
	ki = rawkey_add(c, k, id, known);
	if (ki == UINT32_MAX)
		return CONV_E_NOMEM;
	if (known)
		c->last_key[lk] = ki + 1;
	*key = ki;
	return CONV_E_OK;
}

/*
 * The sample's tracepoint field labels (a tpfields value list; 0: none),
 * UINT32_MAX when out of memory. The fields are set up at the first
 * tracepoint sample: a pipe carries its formats before its samples.
 */
static uint32_t pass_fields(struct pass *ps, const struct rdr_event *ev)
{
	const struct rdr_info *info = rdr_info(ps->r);

	if (ev->attr < 0 || (size_t)ev->attr >= info->nr_attrs ||
	    info->attrs[ev->attr].type != PERF_TYPE_TRACEPOINT)
		return 0;
	/* made also without labels: off-CPU time needs sched_switch's fields */
	if (!ps->tpf) {
		ps->tpf = tpfields_new(info, ps->o->tp_fields, ps->o->nr_tp_fields);
		if (!ps->tpf)
			return UINT32_MAX;
	}
	return ps->o->no_labels ? 0 : tpfields_of(ps->tpf, ev->attr, &ev->u.sample);
}

/*
 * A tracepoint event's field values for the JFR: the value list's labels
 * placed in the profile's label pool (once per list), as that place + 1;
 * 0 for none, UINT32_MAX when out of memory.
 */
static uint32_t pass_field_set(struct pass *ps, uint32_t fields)
{
	const struct tpfields_label *fl;
	struct prof_label lb[PROF_MAX_FIELDS];
	size_t n;
	uint32_t place;

	if (!fields || !ps->tpf)
		return 0;
	if (fields < ps->nr_field_sets && ps->field_sets[fields])
		return ps->field_sets[fields];
	fl = tpfields_labels(ps->tpf, fields, &n);
	memset(lb, 0, sizeof(lb));
	for (size_t i = 0; i < n && i < PROF_MAX_FIELDS; i++) {
		lb[i].key = prof_str(ps->p, fl[i].name);
		if (fl[i].str)
			lb[i].str = prof_str(ps->p, fl[i].str);
		else
			lb[i].num = fl[i].num;
	}
	place = prof_label_set(ps->p, lb, (uint32_t)(n < PROF_MAX_FIELDS ? n : PROF_MAX_FIELDS));
	if (place == UINT32_MAX)
		return UINT32_MAX;
	if (fields >= ps->nr_field_sets) {
		size_t nn = (size_t)fields * 2 + 16;
		uint32_t *m = realloc(ps->field_sets, nn * sizeof(*m));

		if (!m)
			return UINT32_MAX;
		memset(m + ps->nr_field_sets, 0, (nn - ps->nr_field_sets) * sizeof(*m));
		ps->field_sets = m;
		ps->nr_field_sets = nn;
	}
	ps->field_sets[fields] = place + 1;
	return place + 1;
}

/* What an attr's samples mean to the off-CPU accounting (by the one event-name matcher). */
enum attr_role { ROLE_NONE, ROLE_SCHED_SWITCH, ROLE_OFFCPU_TIME };

static enum attr_role pass_attr_role(struct pass *ps, int attr)
{
	const struct rdr_info *info = rdr_info(ps->r);
	const struct rdr_attr *a;
	enum attr_role role = ROLE_NONE;

	if (attr < 0 || (size_t)attr >= info->nr_attrs)
		return ROLE_NONE;
	if ((size_t)attr < ps->nr_roles && ps->roles[attr])
		return (enum attr_role)(ps->roles[attr] - 1);
	a = &info->attrs[attr];
	if (a->name && a->type == PERF_TYPE_TRACEPOINT && convert_event_matches(a->name, "sched:sched_switch"))
		role = ROLE_SCHED_SWITCH;
	else if (a->name && convert_event_matches(a->name, "offcpu-time"))
		role = ROLE_OFFCPU_TIME;
	if ((size_t)attr >= ps->nr_roles) {
		size_t n = (size_t)attr + 8;
		uint8_t *r = realloc(ps->roles, n);

		if (!r)
			return role;
		memset(r + ps->nr_roles, 0, n - ps->nr_roles);
		ps->roles = r;
		ps->nr_roles = n;
	}
	ps->roles[attr] = (uint8_t)(role + 1);
	return role;
}

/* tid runs at t: an off-CPU interval of it that was pending ends, and is spooled as an event. */
static enum conv_err pass_offcpu_run(struct pass *ps, uint32_t tid, uint64_t t)
{
	struct offcpu_interval iv;
	bool oom;

	if (!ps->off || !offcpu_run(ps->off, tid, t, &iv, &oom))
		return ps->off && oom ? CONV_E_NOMEM : CONV_E_OK;
	if (ps->p->events) {
		const struct rawkey *k = &ps->c.keys[iv.key];
		struct prof_event pe;

		pe.time = iv.start;
		pe.period = iv.ns;
		pe.weight = 0;
		pe.stack = k->stack;
		pe.thread = k->thread;
		pe.cpu = UINT32_MAX;
		pe.event = PROF_EVENT_OFFCPU;
		pe.label = iv.label;
		prof_events_add(ps->p->events, &pe);
	}
	return CONV_E_OK;
}

/*
 * A kept sample's part in off-CPU time (key: its sample key): its thread
 * runs, so its pending interval ends; a sched_switch also ends the next
 * thread's (system-wide recordings name it) and starts one for its own,
 * charged to this sample's stack, unless the thread is dead; an
 * offcpu-time sample (perf record --off-cpu) is an interval of PERIOD ns
 * that ended at its time.
 */
static enum conv_err pass_offcpu_sample(struct pass *ps, const struct rdr_event *ev, uint32_t key)
{
	const struct rdr_sample *s = &ev->u.sample;
	enum attr_role role = pass_attr_role(ps, ev->attr);
	const char *state;
	int64_t next;
	uint32_t label;
	enum conv_err err;

	if (!(s->sample_type & PERF_SAMPLE_TIME))
		return CONV_E_OK;
	if (role != ROLE_NONE && !ps->off && !(ps->off = offcpu_new()))
		return CONV_E_NOMEM;
	err = pass_offcpu_run(ps, s->tid, s->time);
	if (err || role == ROLE_NONE)
		return err;
	if (role == ROLE_OFFCPU_TIME) {
		if (!offcpu_add(ps->off, key, 0, s->period))
			return CONV_E_NOMEM;
		if (ps->p->events) {
			struct prof_event pe;

			pe.time = s->time >= s->period ? s->time - s->period : 0;
			pe.period = s->period;
			pe.weight = 0;
			pe.stack = ps->c.keys[key].stack;
			pe.thread = ps->c.keys[key].thread;
			pe.cpu = UINT32_MAX;
			pe.event = PROF_EVENT_OFFCPU;
			pe.label = 0;
			prof_events_add(ps->p->events, &pe);
		}
		return CONV_E_OK;
	}
	if (!ps->tpf || !tpfields_switch(ps->tpf, ev->attr, s, &state, &next))
		return CONV_E_OK;
	if (next > 0) {
		err = pass_offcpu_run(ps, (uint32_t)next, s->time);
		if (err)
			return err;
	}
	/* the idle task, and a thread that exits, never wait to run */
	if (!s->tid || state[0] == 'X' || state[0] == 'Z')
		return CONV_E_OK;
	label = state[0] ? prof_str(ps->p, state) : 0;
	if (!offcpu_leave(ps->off, s->tid, s->time, key, label))
		return CONV_E_NOMEM;
	return CONV_E_OK;
}

/*
 * A kept sample: a sample seen before (same process generation and space
 * versions, thread, event, cpu and raw addresses) takes the earlier answer;
 * a new one is resolved frame by frame. Then it is counted and spooled.
 */
static enum conv_err pass_sample(struct pass *ps, const struct rdr_event *ev)
{
	struct rdr_event unwound;
	const struct rdr_sample *s = &ev->u.sample;
	struct cv *c = &ps->c;
	struct pm_space_key sk;
	struct rawkey k;
	struct rawid id;
	bool known = procmap_space_key(ps->pm, s->pid, &sk);
	uint32_t lk = (s->sample_type & PERF_SAMPLE_CPU ? s->cpu : s->tid) % LAST_KEYS;
	uint32_t found = UINT32_MAX;
	enum conv_err err;

	if (!unwinding_pick(ps->uw, rdr_info(ps->r), &ev, &unwound))
		return CONV_E_NOMEM;
	s = &ev->u.sample;
	memset(&k, 0, sizeof(k));
	memset(&id, 0, sizeof(id));
	id.tid = s->tid;
	k.comm = procmap_thread_comm(ps->pm, s->tid);
	k.attr = (uint32_t)ev->attr;
	/* no CPU field recorded: no cpu label rather than a made-up cpu 0 */
	k.cpu = !ps->o->label_cpu ? 0 : s->sample_type & PERF_SAMPLE_CPU ? s->cpu : UINT32_MAX;
	id.mode = (ev->misc & PERF_MISC_CPUMODE_MASK) | (s->sample_type & PERF_SAMPLE_IP ? RK_HAS_IP : 0);
	k.fields = pass_fields(ps, ev);
	if (k.fields == UINT32_MAX)
		return CONV_E_NOMEM;
	if (known) {
		id.proc = sk.proc;
		id.version = sk.version;
		id.kversion = sk.kversion;
		if (!rawkey_fingerprint(c, &k, &id, s))
			return CONV_E_NOMEM;
		if (c->last_key[lk] && rawkey_same(c, c->last_key[lk] - 1, &id)) {
			found = c->last_key[lk] - 1;
		} else {
			struct hidx_iter it;

			for (uint32_t ki = hidx_first(&c->key_idx, id.fp.lo, &it); ki != HIDX_NONE;
			     ki = hidx_next(&c->key_idx, &it)) {
				if (rawkey_same(c, ki, &id)) {
					found = ki;
					c->last_key[lk] = found + 1;
					break;
				}
			}
		}
	}
	if (found != UINT32_MAX) {
		struct rawkey *e = &c->keys[found];

		e->count++;
		e->weight = satadd_u63(e->weight, s->period ? s->period : 1);
		k.thread = e->thread;
		k.stack = e->stack;
		procmap_count_sample(ps->pm, (uint32_t)(c->threads[e->thread] >> 32));
	} else {
		err = pass_new_sample(ps, ev, &k, &id, known, lk, &found);
		if (err)
			return err;
	}
	err = pass_offcpu_sample(ps, ev, found);
	if (err)
		return err;
	if (ev->attr >= 0 && (size_t)ev->attr >= ps->nr_kept) {
		size_t nn = (size_t)ev->attr + 8;
		uint64_t *nk = realloc(ps->kept_by_attr, nn * sizeof(*nk));

		if (!nk)
			return CONV_E_NOMEM;
		memset(nk + ps->nr_kept, 0, (nn - ps->nr_kept) * sizeof(*nk));
		ps->kept_by_attr = nk;
		ps->nr_kept = nn;
	}
	if (ev->attr >= 0)
		ps->kept_by_attr[ev->attr]++;
	if (ps->p->events) {
		struct prof_event pe;

		pe.time = s->time;
		pe.period = s->period ? s->period : 1;
		pe.weight = s->weight;
		pe.stack = k.stack;
		pe.thread = k.thread;
		pe.cpu = s->sample_type & PERF_SAMPLE_CPU ? s->cpu : UINT32_MAX;
		pe.event = (uint32_t)ev->attr;
		pe.label = pass_field_set(ps, k.fields);
		if (pe.label == UINT32_MAX)
			return CONV_E_NOMEM;
		prof_events_add(ps->p->events, &pe);
	}
	ps->st->samples++;
	return CONV_E_OK;
}

/* The reading pass: every record, in time order, to the process model or pass_sample. */
static enum conv_err pass_read(struct pass *ps)
{
	const struct convert_opts *o = ps->o;
	uint64_t t0 = now_ns();
	enum conv_err err;

	for (;;) {
		const struct rdr_event *ev;

		err = rdr_next(ps->r, &ev);
		if (err || !ev)
			break;
		/* at the first record too: a slow pipe shows that conv is reading */
		if (o->progress && (!(++ps->nrec & 0xffff) || ps->nrec == 1))
			report(o, ps->r, CONVERT_READING, ps->nrec);
		if (ev->type != PERF_REC_SAMPLE) {
			/* a switch-in: the thread runs again (an off-CPU interval of it ends) */
			if ((ev->type == PERF_REC_SWITCH || ev->type == PERF_REC_SWITCH_CPU_WIDE) &&
			    !(ev->misc & PERF_MISC_SWITCH_OUT) && ev->has_time && (ev->sid.fields & RDR_SID_TID)) {
				err = pass_offcpu_run(ps, ev->sid.tid, ev->time);
				if (err)
					break;
			}
			host_note_record(ps->pm, rdr_info(ps->r), ev);
			err = procmap_feed(ps->pm, ev);
			if (err)
				break;
			continue;
		}
		if (!ps->have_first && ev->u.sample.time) {
			ps->first_time = ev->u.sample.time;
			ps->have_first = true;
		}
		if (o->filter.nr_pids || o->filter.nr_tids || o->filter.nr_comms)
			note_seen(&ps->st->seen, &o->filter, ps->pm, &ev->u.sample);
		if (!keep_sample(&o->filter, ps->pm, rdr_info(ps->r), ev, ps->first_time)) {
			ps->st->samples_filtered++;
			continue;
		}
		err = pass_sample(ps, ev);
		if (err)
			break;
	}
	if (err)
		return err;
	if (ps->off)
		offcpu_finish(ps->off);
	if (ps->p->events) {
		err = prof_events_finish(ps->p->events, ps->diag);
		if (err)
			return err;
	}
	cv_drop_indexes(&ps->c);
	ps->st->ns_read = now_ns() - t0;
	return CONV_E_OK;
}

/* Statistics: samples per distinct frame, then per registered address and per mapping. */
static enum conv_err pass_count_frames(struct pass *ps)
{
	struct cv *c = &ps->c;
	struct convert_stats *st = ps->st;
	uint64_t *hits = calloc(c->nr_frames + 1, sizeof(*hits));
	enum uw_stop why;
	uint32_t why_map;

	ps->map_hits = calloc(procmap_mapping_count(ps->pm) + 1, sizeof(*ps->map_hits));
	if (!hits || !ps->map_hits) {
		free(hits);
		return CONV_E_NOMEM;
	}
	for (size_t i = 0; i < c->nr_keys; i++) {
		const uint32_t *f = c->pool + c->stack_off[c->keys[i].stack] + 1;
		uint32_t n = f[-1];

		st->frames += c->keys[i].count * n;
		for (uint32_t k = 0; k < n; k++)
			hits[f[k]] += c->keys[i].count;
	}
	for (size_t i = 0; i < c->nr_frames; i++) {
		const struct rawframe *f = &c->frames[i];

		if (!hits[i])
			continue;
		if (f->mapping == PM_NO_MAPPING && !frame_jit(c, f) && unwinding_marker(f->addr, &why, &why_map)) {
			/* a walk's early stop: said by a frame of its own, not a frame of the program */
			st->frames -= hits[i];
			continue;
		}
		if (f->mapping != PM_NO_MAPPING)
			ps->map_hits[f->mapping] += hits[i];
		if (frame_addr_id(f) != SYMJOB_NONE)
			symjob_hit(ps->sj, frame_addr_id(f), hits[i]);
		else if (f->mapping == PM_NO_MAPPING)
			st->frames_unmapped += hits[i];
		else if (frame_jit(c, f))
			st->frames_jit += hits[i];
		else
			note_nofile(st, ps->pm, f->mapping, hits[i]);
	}
	free(hits);
	return CONV_E_OK;
}

/* Distinct pids and tids, as perf counts them (an exec does not make a new one). */
static void pass_count_threads(struct pass *ps)
{
	struct hmap pids, tids;

	hmap_init(&pids);
	hmap_init(&tids);
	for (size_t t = 0; t < ps->c.nr_threads; t++) {
		const struct pm_proc *pr = procmap_proc(ps->pm, (uint32_t)(ps->c.threads[t] >> 32));
		uint64_t pid = pr ? pr->pid : UINT32_MAX, tid = (uint32_t)ps->c.threads[t];

		if (!hmap_get(&pids, pid + 1) && hmap_put(&pids, pid + 1, 1))
			ps->st->processes++;
		if (!hmap_get(&tids, tid + 1) && hmap_put(&tids, tid + 1, 1))
			ps->st->threads++;
	}
	hmap_release(&pids);
	hmap_release(&tids);
}

/*
 * Symbolization starts on the workers beside this thread, which meanwhile
 * builds the model's stacks and samples: they need no symbols (a frame's
 * location will be its index). pass_locations joins them.
 */
static void pass_start_symbolize(struct pass *ps)
{
	bool running = host_runs_kernel(rdr_info(ps->r)->osrelease);

	if (ps->o->progress)
		report(ps->o, ps->r, CONVERT_SYMBOLIZING, ps->nrec);
	procmap_set_running_kernel(ps->pm, running);
	symjob_set_running_kernel(ps->sj, running);
	procmap_finish(ps->pm);
	/* where the build-ids came from, once the last ones are known (pipe mode: at the end) */
	for (uint32_t i = 0; i < procmap_mapping_count(ps->pm); i++)
		ps->st->frames_by_bid[procmap_mapping(ps->pm, i)->bid_source] += ps->map_hits[i];
	ps->t_sym = now_ns();
	symjob_start(ps->sj);
}

/* The label keys of the model's samples. */
struct label_keys {
	uint32_t pid, tid, comm, process, cpu, event, state;
};

/*
 * Values are kept for the types of events that have samples, and for
 * off-CPU time: an event that was never sampled (perf's dummy event of a
 * system-wide recording) has only zeros. Without the model's table of them
 * (out of memory) every type keeps its values: more memory, same profile.
 */
static void pass_value_types(struct pass *ps)
{
	struct prof *p = ps->p;
	bool *used = calloc(p->nr_types ? p->nr_types : 1, sizeof(*used));

	if (!used)
		return;
	for (size_t i = 0; i < p->nr_events_desc && 2 * i + 1 < p->nr_types; i++)
		used[2 * i] = used[2 * i + 1] = i == p->offcpu_event || p->events_desc[i].samples;
	(void)prof_set_value_types(p, used);
	free(used);
}

/* The model's event types, and the label keys (interned in this order: the string table's). */
static void pass_model_types(struct pass *ps, struct label_keys *k)
{
	struct prof *p = ps->p;

	set_types(p, rdr_info(ps->r), ps->off != NULL);
	for (size_t i = 0; i < p->nr_events_desc; i++)
		p->events_desc[i].samples = i < ps->nr_kept ? ps->kept_by_attr[i] : 0;
	if (p->offcpu_event != PROF_NONE)
		p->events_desc[p->offcpu_event].samples = offcpu_stats(ps->off)->intervals;
	pass_value_types(ps);
	for (size_t i = 0; ps->tpf && i < p->nr_events_desc && i < rdr_info(ps->r)->nr_attrs; i++) {
		const bool *num;
		size_t n;
		const char *const *names = tpfields_names(ps->tpf, (int)i, &num, &n);

		for (size_t f = 0; f < n && f < PROF_MAX_FIELDS; f++) {
			p->events_desc[i].field_name[f] = prof_str(p, names[f]);
			p->events_desc[i].field_num[f] = num[f];
		}
		p->events_desc[i].nr_fields = (uint32_t)(n < PROF_MAX_FIELDS ? n : PROF_MAX_FIELDS);
	}
	k->pid = prof_str(p, "pid");
	k->tid = prof_str(p, "tid");
	k->comm = prof_str(p, "comm");
	k->process = prof_str(p, "process");
	k->cpu = prof_str(p, "cpu");
	k->event = prof_str(p, "event");
	/* (interned only where used: a string more changes every output's string table) */
	k->state = p->offcpu_event != PROF_NONE ? prof_str(p, "state") : 0;
}

/*
 * The model's stacks: the raw stacks themselves, taken over by the model (a
 * stack's id stays its raw id, and a frame's location will be the frame's
 * index: the model is new, so it has no locations or stacks before them),
 * sized for the samples to come.
 */
static enum conv_err pass_model_stacks(struct pass *ps)
{
	struct cv *c = &ps->c;
	struct prof *p = ps->p;

	if (p->nr_locations)
		return CONV_E_INVAL;
	if (c->nr_frames >= PROF_NONE)
		return CONV_E_NOMEM;
	if (c->nr_stacks) {
		if (!prof_adopt_stacks(p, c->pool, c->pool_len, c->pool_cap, c->stack_off, c->nr_stacks,
				       c->cap_stacks, c->stack_trunc))
			return CONV_E_INVAL;
		c->pool = NULL;
		c->stack_off = NULL;
		c->stack_trunc = NULL;
	}
	/* sizes known now: allocated once (+1: the lost-samples entry) */
	if (!prof_reserve(p, c->nr_frames + 1, 1, 1, c->nr_keys + 1))
		return CONV_E_NOMEM;
	ps->st->unique_stacks = c->nr_stacks;
	return CONV_E_OK;
}

/* Per thread of the sample events (the spool's numbering), what its samples' labels use. */
struct thread_labels {
	uint32_t comm;  /* string: the thread's name */
	uint32_t proc;  /* string: the process's name */
	uint32_t cid;   /* procmap_thread_comm: the name's number, to tell older names apart */
	/*
	 * the label list of a thread's samples without a cpu or event label,
	 * placed in the pool once (prof_label_set) instead of hashed and
	 * compared for each of its distinct samples; UINT32_MAX: not yet
	 */
	uint32_t set;
};

/* The model's threads, and the labels their samples share. */
static enum conv_err pass_model_threads(struct pass *ps, struct thread_labels *tl)
{
	struct prof *p = ps->p;

	for (size_t t = 0; t < ps->c.nr_threads; t++) {
		uint32_t proc = (uint32_t)(ps->c.threads[t] >> 32), tid = (uint32_t)ps->c.threads[t];
		const struct pm_proc *pr = procmap_proc(ps->pm, proc);
		const char *tn = procmap_thread_name(ps->pm, tid);
		struct prof_thread th;

		th.tid = tid;
		th.pid = pr ? pr->pid : tid;
		th.name = prof_str(p, tn ? tn : pr && pr->comm ? pr->comm : "");
		th.process_name = prof_str(p, pr && pr->comm ? pr->comm : "");
		/*
		 * comm is the thread's, as perf's comm (perf report --comms), and
		 * the process's name is a label of its own
		 */
		tl[t].comm = th.name;
		tl[t].proc = th.process_name;
		tl[t].cid = procmap_thread_comm(ps->pm, tid);
		tl[t].set = UINT32_MAX;
		if (prof_add_thread(p, &th) == PROF_NONE)
			return CONV_E_NOMEM;
	}
	return CONV_E_OK;
}

/*
 * A key's thread labels (pid, tid, comm, process; none with --no-labels)
 * into lb; their number. *thread_only stays true while they are the
 * thread's own list (a sample named before the thread's last rename is not).
 */
static uint32_t pass_thread_labels(const struct pass *ps, const struct label_keys *keys,
				   const struct thread_labels *t, const struct rawkey *a,
				   struct prof_label *lb, bool *thread_only)
{
	const struct pm_proc *pr;
	uint64_t th = ps->c.threads[a->thread];
	uint32_t n = 0;

	*thread_only = true;
	if (ps->o->no_labels)
		return 0;
	pr = procmap_proc(ps->pm, (uint32_t)(th >> 32));
	lb[n].key = keys->pid;
	lb[n++].num = pr ? (int32_t)pr->pid : 0; /* -1: perf has none (a task at exit) */
	lb[n].key = keys->tid;
	lb[n++].num = (int32_t)(uint32_t)th;
	lb[n].key = keys->comm;
	/* a sample taken before the thread's last rename has the name it had then */
	if (a->comm == t->cid || a->comm == PM_NO_COMM) {
		lb[n++].str = t->comm;
	} else {
		lb[n++].str = prof_str(ps->p, procmap_comm_str(ps->pm, a->comm));
		*thread_only = false;
	}
	lb[n].key = keys->process;
	lb[n++].str = t->proc;
	return n;
}

/* The model's samples: one per distinct sample key, with its labels and values. */
static enum conv_err pass_model_samples(struct pass *ps, const struct label_keys *keys,
				       struct thread_labels *tl)
{
	struct prof *p = ps->p;
	const struct rdr_info *info = rdr_info(ps->r);
	int64_t *vals = calloc(p->nr_types ? p->nr_types : 1, sizeof(*vals));
	enum conv_err err = CONV_E_OK;

	if (!vals)
		return CONV_E_NOMEM;
	for (size_t i = 0; i < ps->c.nr_keys; i++) {
		const struct rawkey *a = &ps->c.keys[i];
		struct thread_labels *t = &tl[a->thread];
		struct prof_label lb[16];
		const struct tpfields_label *fl;
		size_t nfl = 0;
		uint32_t nlb = 0, ls;
		bool thread_only = true;

		memset(vals, 0, p->nr_types * sizeof(*vals));
		if (2 * (size_t)a->attr + 1 < p->nr_types) {
			vals[2 * a->attr] = (int64_t)a->count;
			vals[2 * a->attr + 1] = (int64_t)a->weight;
		}
		memset(lb, 0, sizeof(lb));
		nlb = pass_thread_labels(ps, keys, t, a, lb, &thread_only);
		if (ps->o->label_cpu && a->cpu != UINT32_MAX) {
			lb[nlb].key = keys->cpu;
			lb[nlb++].num = a->cpu;
			thread_only = false;
		}
		if (a->attr < info->nr_attrs && info->attrs[a->attr].type == PERF_TYPE_TRACEPOINT) {
			lb[nlb].key = keys->event;
			lb[nlb++].str = prof_str(p, info->attrs[a->attr].name);
			thread_only = false;
		}
		fl = a->fields && ps->tpf ? tpfields_labels(ps->tpf, a->fields, &nfl) : NULL;
		for (size_t f = 0; f < nfl && nlb < sizeof(lb) / sizeof(lb[0]); f++) {
			lb[nlb].key = prof_str(p, fl[f].name);
			if (fl[f].str)
				lb[nlb++].str = prof_str(p, fl[f].str);
			else
				lb[nlb++].num = fl[f].num;
			thread_only = false;
		}
		ls = thread_only ? t->set : UINT32_MAX;
		if (ls == UINT32_MAX) {
			ls = prof_label_set(p, lb, nlb);
			if (thread_only)
				t->set = ls;
		}
		if (ls == UINT32_MAX || !prof_add_sample_set(p, a->stack, ls, nlb, vals)) {
			err = CONV_E_NOMEM;
			break;
		}
	}
	free(vals);
	return err;
}

/*
 * The off-CPU samples: per switch-out key and state, the intervals' count
 * and nanoseconds under the off-CPU types, labelled with the thread's
 * labels and the state (not with the switch's other fields: a wait is the
 * thread's, whoever ran next).
 */
static enum conv_err pass_model_offcpu(struct pass *ps, const struct label_keys *keys,
				      const struct thread_labels *tl)
{
	struct prof *p = ps->p;
	const struct offcpu_total *t;
	int64_t *vals;
	size_t n;
	uint32_t o = p->offcpu_event;

	if (o == PROF_NONE)
		return CONV_E_OK;
	t = offcpu_totals(ps->off, &n);
	vals = calloc(p->nr_types, sizeof(*vals));
	if (!vals)
		return CONV_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct rawkey *a = &ps->c.keys[t[i].key];
		const struct thread_labels *th = &tl[a->thread];
		struct prof_label lb[5];
		bool thread_only;
		uint32_t nlb;

		memset(lb, 0, sizeof(lb));
		nlb = pass_thread_labels(ps, keys, th, a, lb, &thread_only);
		if (t[i].label && !ps->o->no_labels) {
			lb[nlb].key = keys->state;
			lb[nlb++].str = t[i].label;
		}
		vals[2 * o] = (int64_t)t[i].n;
		vals[2 * o + 1] = (int64_t)t[i].ns;
		if (!prof_add_sample(p, a->stack, lb, nlb, vals)) {
			free(vals);
			return CONV_E_NOMEM;
		}
	}
	free(vals);
	return CONV_E_OK;
}

/* The model's stacks, threads and samples, built while the workers symbolize. */
static enum conv_err pass_model(struct pass *ps)
{
	uint64_t t0 = now_ns();
	struct thread_labels *tl;
	struct label_keys keys;
	enum conv_err err;

	pass_model_types(ps, &keys);
	err = pass_model_stacks(ps);
	if (err)
		return err;
	tl = malloc((ps->c.nr_threads + 1) * sizeof(*tl));
	if (!tl)
		return CONV_E_NOMEM;
	err = pass_model_threads(ps, tl);
	if (!err)
		err = pass_model_samples(ps, &keys, tl);
	if (!err)
		err = pass_model_offcpu(ps, &keys, tl);
	free(tl);
	free(ps->c.keys);
	ps->c.keys = NULL;
	ps->c.nr_keys = ps->c.cap_keys = 0;
	ps->st->ns_model = now_ns() - t0;
	return err;
}

/* Joins the symbolizer, then the locations: one per distinct frame, in frame order. */
static enum conv_err pass_locations(struct pass *ps)
{
	uint64_t t0;
	size_t nmaps = procmap_mapping_count(ps->pm) + 1;
	enum conv_err err = symjob_finish(ps->sj, ps->diag);

	if (err)
		return err;
	collect_symstats(ps->st, ps->sj);
	/* from the workers' start: it overlaps the model's stacks and samples */
	ps->st->ns_symbolize = now_ns() - ps->t_sym;
	t0 = now_ns();
	if (ps->o->progress)
		report(ps->o, ps->r, CONVERT_MODEL, ps->nrec);
	ps->map_ids = malloc(nmaps * sizeof(*ps->map_ids));
	if (!ps->map_ids)
		return CONV_E_NOMEM;
	for (size_t i = 0; i < nmaps; i++)
		ps->map_ids[i] = PROF_NONE;
	main_mapping_first(ps->p, ps->pm, ps->map_ids);
	for (size_t i = 0; i < ps->c.nr_frames; i++)
		if (location_of(ps->p, ps->pm, ps->sj, ps->map_ids, &ps->c.frames[i],
				frame_jit(&ps->c, &ps->c.frames[i])) != i)
			return CONV_E_NOMEM;
	vec_free((void **)&ps->c.frames, &ps->c.cap_frames);
	vec_free((void **)&ps->c.jits, &ps->c.cap_jits);
	ps->st->ns_model += now_ns() - t0;
	return CONV_E_OK;
}

/* Lost samples, visible, never silent: a comment and a zero-valued sample labelled with the count. */
static void pass_lost_samples(struct pass *ps)
{
	struct prof *p = ps->p;
	struct prof_label lb;
	int64_t *zero = calloc(p->nr_types ? p->nr_types : 1, sizeof(*zero));
	uint32_t none[1];
	struct prof_line ln;
	char buf[64];

	snprintf(buf, sizeof(buf), "lost samples %" PRIu64, ps->st->lost_samples);
	prof_add_comment(p, buf);
	ln.function = prof_function(p, prof_str(p, "[lost samples]"), prof_str(p, "[lost samples]"), 0,
				    0);
	ln.line = ln.column = 0;
	none[0] = prof_location(p, PROF_NONE, 0, &ln, 1);
	memset(&lb, 0, sizeof(lb));
	lb.key = prof_str(p, "lost_samples");
	lb.num = (int64_t)ps->st->lost_samples;
	if (zero)
		prof_add_sample(p, prof_stack(p, none, 1), &lb, 1, zero);
	free(zero);
}

/* The recording's facts: machine, times, comments, lost samples. */
static void pass_facts(struct pass *ps)
{
	struct prof *p = ps->p;
	const struct rdr_info *info = rdr_info(ps->r);
	const struct rdr_stats *rs = rdr_stats(ps->r);
	char buf[512];

	ps->st->lost_samples = rs->lost_events + rs->lost_samples;
	p->sys.lost_samples = ps->st->lost_samples;
	p->sys.hostname = prof_str(p, info->hostname);
	p->sys.os_release = prof_str(p, info->osrelease);
	p->sys.arch = prof_str(p, info->arch);
	p->sys.cpu_desc = prof_str(p, info->cpudesc);
	p->sys.cpuid = prof_str(p, info->cpuid);
	p->sys.perf_version = prof_str(p, info->perf_version);
	p->sys.nr_cpus = info->nr_cpus_avail;
	if (rs->has_sample_time) {
		uint64_t first = rs->first_sample_time;

		p->sys.first_time = rs->first_sample_time;
		p->sys.last_time = rs->last_sample_time;
		p->sys.wall_known = true;
		if (info->has_clock_data && info->clock_data_wall_ns)
			p->time_nanos = (int64_t)(info->clock_data_wall_ns + first -
						  info->clock_data_clockid_ns);
		else if (info->file_mtime_ns > rs->last_sample_time - first)
			/* perf wrote the file when the recording ended, like perf report's
			 * "captured on"; sample times are since boot, not since the epoch */
			p->time_nanos = (int64_t)(info->file_mtime_ns - (rs->last_sample_time - first));
		else
			p->sys.wall_known = false;
		p->duration_nanos = (int64_t)(rs->last_sample_time - first);
	}
	if (info->perf_version) {
		snprintf(buf, sizeof(buf), "perf version %s", info->perf_version);
		prof_add_comment(p, buf);
	}
	if (info->hostname) {
		snprintf(buf, sizeof(buf), "hostname %s", info->hostname);
		prof_add_comment(p, buf);
	}
	if (info->cmdline_len) {
		size_t n = 0;

		n += (size_t)snprintf(buf, sizeof(buf), "cmdline");
		for (size_t i = 0; i < info->cmdline_len && n < sizeof(buf); i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, " %s", info->cmdline[i]);
		prof_add_comment(p, buf);
	}
	if (ps->st->lost_samples)
		pass_lost_samples(ps);
}

static void pass_release(struct pass *ps)
{
	free(ps->kept_by_attr);
	free(ps->map_ids);
	free(ps->map_hits);
	cv_release(&ps->c);
	unwinding_free(ps->uw);
	tpfields_free(ps->tpf);
	offcpu_free(ps->off);
	free(ps->roles);
	free(ps->field_sets);
	symjob_free(ps->sj);
	procmap_free(ps->pm);
}

enum conv_err convert_run(struct rdr *r, const struct convert_opts *o, struct prof *p,
			  struct convert_stats *st, struct conv_diag *diag)
{
	struct pass ps;
	enum conv_err err;

	memset(&ps, 0, sizeof(ps));
	ps.r = r;
	ps.o = o;
	ps.p = p;
	ps.st = st;
	ps.diag = diag;
	err = pass_init(&ps);
	if (!err)
		err = pass_read(&ps);
	if (!err)
		err = pass_count_frames(&ps);
	if (!err) {
		pass_count_threads(&ps);
		pass_start_symbolize(&ps);
		err = pass_model(&ps);
	}
	if (!err)
		err = pass_locations(&ps);
	if (!err)
		pass_facts(&ps);
	if (ps.uw)
		st->unwind = *unwinding_stats(ps.uw);
	if (ps.off)
		st->offcpu = *offcpu_stats(ps.off);
	if (ps.tpf)
		st->tracepoints = *tpfields_stats(ps.tpf);
	pass_release(&ps);
	return err;
}

/*
 * Process model. Each process generation owns an address space: a sorted
 * array of non-overlapping intervals, each naming the mapping that covers it.
 * A new mapping cuts what it overlaps (the kernel replaces mappings the same
 * way), and the pieces keep pointing at their original mapping, whose
 * recorded start and pgoff still give the right file offsets. Mappings are
 * never freed: they are the snapshots the writers emit.
 */
#include "procmap/procmap.h"

#include "core/vec.h"

#include "buildid/buildid.h"
#include "core/hmap.h"
#include "core/ropen.h"
#include "core/sorted.h"
#include "procmap/jitmap.h"
#include "core/strtab.h"
#include "reader/perf_abi.h"
#include "reader/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define PID_KERNEL 0xffffffffu
#define PROT_EXEC_BIT 0x4u

struct pm_ival {
	uint64_t start, end; /* [start, end) */
	uint32_t map;
};

/*
 * A space's intervals may be shared with its fork children (refs: how
 * many spaces hold v, NULL when this one alone does): a fork shares them,
 * and the first insert into a shared array copies it (space_own).
 */
struct pm_space {
	struct pm_ival *v;
	size_t n, cap;
	uint64_t version; /* changes with every insert: see procmap_space_key */
	uint32_t *refs;
};

struct pm_proc_int {
	struct pm_proc pub;
	struct pm_space space;
	uint32_t comm_id;
	uint32_t prev; /* the generation this one's exec replaced (its index), or PM_NONE */
	bool comm_changed; /* pre-3.16 exec detection: COMM changed, MMAP of it may follow */
};

#define PM_NONE UINT32_MAX

struct pm_thread {
	uint32_t tid, pid;
	uint32_t comm_id;
	/*
	 * The current process of pid as last looked up (procmap_sample_ctx),
	 * valid while nr_procs is proc_at: pid2proc changes only in proc_new.
	 */
	uint32_t proc;
	size_t proc_at;
};

struct pm_bid {
	uint8_t id[PM_BUILD_ID_MAX];
	uint8_t size;
	bool ambiguous;
	uint32_t path; /* strtab id of a user-space file's path; STRTAB_NONE otherwise */
};

/* Whether the files here are the recording's, decided once (trust_files). */
enum pm_trust { PM_TRUST_UNKNOWN, PM_TRUST_YES, PM_TRUST_NO };

/* JIT symbols of one pid, loaded the first time a frame needs them */
struct pm_jit {
	uint32_t pid;
	bool loaded;
	char *dump_path; /* jitdump named by an MMAP record of this pid, if any */
	struct jit_table table;
};

struct procmap {
	struct procmap_opts opts;
	struct hmap jit_by_pid; /* pid -> index in jits */
	struct pm_jit *jits;
	size_t nr_jits, cap_jits;
	struct strtab strs;
	struct pm_mapping *maps;
	size_t nr_maps, cap_maps;
	struct pm_proc_int *procs;
	size_t nr_procs, cap_procs;
	struct pm_space kspace;
	struct hmap pid2proc; /* pid -> current process index */
	struct hmap tid2thr;  /* tid -> thread index */
	struct pm_thread *thr;
	size_t nr_thr, cap_thr;
	struct hmap bid_by_key; /* strtab id of a key -> index in bids */
	struct pm_bid *bids;
	size_t nr_bids, cap_bids;
	bool seen_exec_flag; /* the recording marks execs itself (perf >= 3.16) */
	enum pm_trust trust;
	struct hmap path_bid;   /* strtab id of a path -> 1 + the mapping whose check of the file answered */
	struct pm_frame *frames;
	size_t cap_frames;
	struct pm_stats st;
	uint64_t user_highest; /* the highest end of a user mapping so far */
};

static void space_release(struct pm_space *s);

struct procmap *procmap_new(const struct procmap_opts *opts)
{
	struct procmap *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	if (opts)
		pm->opts = *opts;
	strtab_init(&pm->strs);
	hmap_init(&pm->pid2proc);
	hmap_init(&pm->tid2thr);
	hmap_init(&pm->bid_by_key);
	hmap_init(&pm->jit_by_pid);
	hmap_init(&pm->path_bid);
	return pm;
}

void procmap_free(struct procmap *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->nr_procs; i++)
		space_release(&pm->procs[i].space);
	free(pm->procs);
	space_release(&pm->kspace);
	free(pm->maps);
	free(pm->thr);
	free(pm->bids);
	free(pm->frames);
	hmap_release(&pm->pid2proc);
	hmap_release(&pm->tid2thr);
	hmap_release(&pm->bid_by_key);
	for (size_t i = 0; i < pm->nr_jits; i++) {
		if (pm->jits[i].loaded)
			jit_table_release(&pm->jits[i].table);
		free(pm->jits[i].dump_path);
	}
	free(pm->jits);
	hmap_release(&pm->jit_by_pid);
	hmap_release(&pm->path_bid);
	strtab_release(&pm->strs);
	free(pm);
}

static void jit_note_dump(struct procmap *pm, uint32_t pid, const char *path);

/* ---- address spaces ---- */

static void space_release(struct pm_space *s)
{
	if (s->refs && --*s->refs) {
		s->v = NULL; /* another space still holds the intervals */
		return;
	}
	free(s->refs);
	free(s->v);
	s->refs = NULL;
	s->v = NULL;
}

/* dst (empty) takes src's intervals, shared until either one changes. */
static bool space_share(struct pm_space *dst, struct pm_space *src)
{
	if (!src->n)
		return true;
	if (!src->refs) {
		src->refs = malloc(sizeof(*src->refs));
		if (!src->refs)
			return false;
		*src->refs = 1;
	}
	++*src->refs;
	dst->v = src->v;
	dst->n = src->n;
	dst->cap = src->cap;
	dst->refs = src->refs;
	return true;
}

/* s's intervals its own, copied when shared, before they change. */
static bool space_own(struct pm_space *s)
{
	struct pm_ival *v;

	if (!s->refs)
		return true;
	if (*s->refs == 1) {
		free(s->refs);
		s->refs = NULL;
		return true;
	}
	v = malloc(s->n * sizeof(*v));
	if (!v)
		return false;
	memcpy(v, s->v, s->n * sizeof(*v));
	--*s->refs;
	s->refs = NULL;
	s->v = v;
	s->cap = s->n;
	return true;
}

/* Index of the first interval whose end is above addr. */
static size_t space_lower(const struct pm_space *s, uint64_t addr)
{
	return sorted_first_above(s->v, s->n, sizeof(s->v[0]), offsetof(struct pm_ival, end), addr);
}

static uint32_t space_find(const struct pm_space *s, uint64_t addr)
{
	size_t i = space_lower(s, addr);

	if (i < s->n && s->v[i].start <= addr)
		return s->v[i].map;
	return PM_NO_MAPPING;
}

/*
 * Puts [start, end) -> map into the space, cutting what it overlaps.
 * map == PM_NO_MAPPING only removes the range. Returns false when out of
 * memory; *replaced is set when something was cut.
 */
static bool space_insert(struct pm_space *s, uint64_t start, uint64_t end, uint32_t map,
			 bool *replaced)
{
	size_t i = space_lower(s, start), j = i;
	struct pm_ival left = { 0, 0, PM_NO_MAPPING }, right = { 0, 0, PM_NO_MAPPING };
	size_t add = 0, k;

	*replaced = false;
	if (!space_own(s))
		return false;
	s->version++;
	while (j < s->n && s->v[j].start < end)
		j++;
	/* intervals i..j-1 overlap [start, end) */
	if (j > i) {
		*replaced = true;
		if (s->v[i].start < start) {
			left = s->v[i];
			left.end = start;
		}
		if (s->v[j - 1].end > end) {
			right = s->v[j - 1];
			right.start = end;
		}
	}
	add = (left.map != PM_NO_MAPPING) + (map != PM_NO_MAPPING) + (right.map != PM_NO_MAPPING);
	/*
	 * A space's first intervals exactly: vec_reserve's 16 would be 384
	 * bytes for each process of a profile's mappings (one process each,
	 * conv symbolize) or of a recording with many one-mapping processes.
	 */
	if (!(s->cap ? vec_reserve : vec_reserve_exact)((void **)&s->v, &s->cap,
							  s->n - (j - i) + add, sizeof(*s->v)))
		return false;
	if (s->n > j) /* nothing to move in an empty space (v may still be NULL) */
		memmove(s->v + i + add, s->v + j, (s->n - j) * sizeof(*s->v));
	s->n = s->n - (j - i) + add;
	k = i;
	if (left.map != PM_NO_MAPPING)
		s->v[k++] = left;
	if (map != PM_NO_MAPPING) {
		s->v[k].start = start;
		s->v[k].end = end;
		s->v[k].map = map;
		k++;
	}
	if (right.map != PM_NO_MAPPING)
		s->v[k++] = right;
	return true;
}

/* ---- processes and threads ---- */

static struct pm_proc_int *proc_new(struct procmap *pm, uint32_t pid, uint32_t ppid,
				    const struct pm_space *copy_from)
{
	struct pm_proc_int *p;

	if (!vec_reserve((void **)&pm->procs, &pm->cap_procs, pm->nr_procs + 1, sizeof(*pm->procs)))
		return NULL;
	p = &pm->procs[pm->nr_procs];
	memset(p, 0, sizeof(*p));
	p->pub.index = (uint32_t)pm->nr_procs;
	p->pub.pid = pid;
	p->pub.ppid = ppid;
	p->pub.comm = "";
	p->prev = PM_NONE;
	if (copy_from && copy_from->n) {
		p->space.v = malloc(copy_from->n * sizeof(*p->space.v));
		if (!p->space.v)
			return NULL;
		memcpy(p->space.v, copy_from->v, copy_from->n * sizeof(*p->space.v));
		p->space.n = p->space.cap = copy_from->n;
	}
	if (!hmap_put(&pm->pid2proc, pid, p->pub.index)) {
		free(p->space.v);
		return NULL;
	}
	pm->nr_procs++;
	pm->st.processes++;
	return p;
}

static struct pm_proc_int *proc_get(struct procmap *pm, uint32_t pid)
{
	uint64_t *v = hmap_get(&pm->pid2proc, pid);

	return v ? &pm->procs[*v] : NULL;
}

/* The current process of pid, created (with an empty space) when unknown. */
static struct pm_proc_int *proc_get_or_new(struct procmap *pm, uint32_t pid)
{
	struct pm_proc_int *p = proc_get(pm, pid);

	if (!p) {
		p = proc_new(pm, pid, pid, NULL);
		if (p && pid == 0) {
			/* perf names the idle task so */
			p->comm_id = strtab_intern_cstr(&pm->strs, "swapper");
			p->pub.comm = strtab_get(&pm->strs, p->comm_id);
		}
	}
	return p;
}

static void proc_set_comm(struct procmap *pm, struct pm_proc_int *p, uint32_t comm_id)
{
	p->comm_id = comm_id;
	p->pub.comm = strtab_get(&pm->strs, comm_id);
}

static struct pm_thread *thread_get(struct procmap *pm, uint32_t tid)
{
	uint64_t *v = hmap_get(&pm->tid2thr, tid);

	return v ? &pm->thr[*v] : NULL;
}

static struct pm_thread *thread_set(struct procmap *pm, uint32_t tid, uint32_t pid,
				    uint32_t comm_id)
{
	struct pm_thread *t = thread_get(pm, tid);

	if (!t) {
		if (!vec_reserve((void **)&pm->thr, &pm->cap_thr, pm->nr_thr + 1, sizeof(*pm->thr)))
			return NULL;
		if (!hmap_put(&pm->tid2thr, tid, pm->nr_thr))
			return NULL;
		t = &pm->thr[pm->nr_thr++];
		pm->st.threads++;
	}
	t->tid = tid;
	t->pid = pid;
	t->comm_id = comm_id;
	t->proc_at = SIZE_MAX;
	return t;
}

/* ---- build-id table ---- */

/* A module's name as perf keys it: basename without .ko and compression suffixes, '-' as '_'. */
static size_t module_name(const char *path, char *out, size_t outsz)
{
	const char *b = strrchr(path, '/');
	size_t n, k = 0;
	static const char *const sfx[] = { ".ko.xz", ".ko.gz", ".ko.zst", ".ko" };

	b = b ? b + 1 : path;
	if (*b == '[')
		b++;
	n = strlen(b);
	if (n && b[n - 1] == ']')
		n--;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		size_t sl = strlen(sfx[i]);

		if (n > sl && !memcmp(b + n - sl, sfx[i], sl)) {
			n -= sl;
			break;
		}
	}
	for (size_t i = 0; i < n && k + 1 < outsz; i++)
		out[k++] = b[i] == '-' ? '_' : b[i];
	out[k] = '\0';
	return k;
}

static bool is_kernel_name(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, "[kernel.kallsyms]", 17) ||
	       (n >= 7 && !strcmp(name + n - 7, "vmlinux")) || strstr(name, "/vmlinux") != NULL;
}

/* The key under which a build-id table entry or a mapping is matched. */
static uint32_t bid_key(struct procmap *pm, bool kernel_space, const char *name)
{
	char buf[300];

	if (kernel_space) {
		if (is_kernel_name(name))
			return strtab_intern_cstr(&pm->strs, "[kernel]");
		buf[0] = 'm';
		buf[1] = ':';
		module_name(name, buf + 2, sizeof(buf) - 2);
		return strtab_intern_cstr(&pm->strs, buf);
	}
	return strtab_intern_cstr(&pm->strs, name);
}

void procmap_add_build_ids(struct procmap *pm, const struct rdr_build_id *ids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct rdr_build_id *b = &ids[i];
		unsigned mode = b->misc & PERF_MISC_CPUMODE_MASK;
		uint32_t key;
		uint64_t *v;
		struct pm_bid *e;

		if (!b->filename || !b->size ||
		    (mode != PERF_MISC_KERNEL && mode != PERF_MISC_USER && mode != 0))
			continue; /* guest entries belong to another machine */
		key = bid_key(pm, mode == PERF_MISC_KERNEL, b->filename);
		if (key == STRTAB_NONE)
			continue;
		v = hmap_get(&pm->bid_by_key, key);
		if (v) {
			e = &pm->bids[*v];
			if (!e->ambiguous && (e->size != b->size || memcmp(e->id, b->id, b->size))) {
				e->ambiguous = true;
				pm->st.build_id_ambiguous++;
			}
			continue;
		}
		if (!vec_reserve((void **)&pm->bids, &pm->cap_bids, pm->nr_bids + 1, sizeof(*pm->bids)) ||
		    !hmap_put(&pm->bid_by_key, key, pm->nr_bids))
			return;
		e = &pm->bids[pm->nr_bids++];
		memset(e, 0, sizeof(*e));
		e->size = b->size > PM_BUILD_ID_MAX ? PM_BUILD_ID_MAX : b->size;
		memcpy(e->id, b->id, e->size);
		e->path = mode == PERF_MISC_KERNEL || b->filename[0] != '/'
				  ? STRTAB_NONE
				  : strtab_intern_cstr(&pm->strs, b->filename);
	}
}

static void mapping_bid_from_table(struct procmap *pm, struct pm_mapping *m)
{
	uint32_t key;
	uint64_t *v;
	const struct pm_bid *e;

	if (m->bid_source != PM_BID_NONE || m->kind == PM_KIND_ANON || m->kind == PM_KIND_BPF)
		return;
	key = bid_key(pm, m->proc == PM_KERNEL_PROC, m->path);
	v = key == STRTAB_NONE ? NULL : hmap_get(&pm->bid_by_key, key);
	if (!v)
		return;
	e = &pm->bids[*v];
	/* an ambiguous path cannot be trusted for any one mapping */
	if (e->ambiguous)
		return;
	memcpy(m->build_id, e->id, e->size);
	m->build_id_size = e->size;
	m->bid_source = PM_BID_TABLE;
}

/* ---- build-ids of files on this machine ---- */

#define TRUST_CHECKS 32 /* recorded build-ids compared with the files here, at most */

/*
 * Whether this machine's files are the recording's: it was made here (the
 * caller's same_machine) and no build-id the recording holds for a file
 * that is here differs from that file's (a package upgraded since, or a
 * copy of another machine's recording under the same hostname).
 */
static bool trust_files(struct procmap *pm)
{
	uint8_t id[BUILDID_MAX];
	size_t len, checked = 0;

	if (pm->trust != PM_TRUST_UNKNOWN)
		return pm->trust == PM_TRUST_YES;
	pm->trust = pm->opts.same_machine ? PM_TRUST_YES : PM_TRUST_NO;
	for (size_t i = 0; i < pm->nr_bids && pm->trust == PM_TRUST_YES && checked < TRUST_CHECKS;
	     i++) {
		const struct pm_bid *e = &pm->bids[i];

		if (e->path == STRTAB_NONE || e->ambiguous ||
		    buildid_from_path(strtab_get(&pm->strs, e->path), id, &len, NULL) != CONV_E_OK)
			continue;
		checked++;
		if (len != e->size || memcmp(id, e->id, len))
			pm->trust = PM_TRUST_NO;
	}
	return pm->trust == PM_TRUST_YES;
}

/*
 * Whether the file at the mapping's path is the file that was mapped: for
 * MMAP2, the same device, inode and (where the file system tells it) inode
 * generation; a file replaced since has another inode, or the same number
 * in another generation. MMAP records name no inode: the mapping must at
 * least start inside the file (its length may run past the end: ld.so
 * maps a library's whole span, .bss included, with the first segment).
 * Either way the file must not have been written after the recording was
 * (its mtime: a copy written over it in place keeps the inode; not its
 * ctime, which perf record's hard link into ~/.debug moves).
 */
static bool file_is_mapped_one(const struct procmap *pm, const struct pm_mapping *m, int fd,
			       const struct stat *st)
{
	unsigned int gen;
	uint64_t mtime_ns = (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;

	if (!S_ISREG(st->st_mode) || (pm->opts.recorded_by_ns && mtime_ns > pm->opts.recorded_by_ns))
		return false;
	if (!m->has_inode)
		return m->pgoff < (uint64_t)st->st_size;
	if (major(st->st_dev) != m->maj || minor(st->st_dev) != m->min ||
	    (uint64_t)st->st_ino != m->ino)
		return false;
	/* FS_IOC_GETVERSION: file systems without generations (ENOTTY) leave the inode's word */
	if (m->ino_generation && ioctl(fd, FS_IOC_GETVERSION, &gen) == 0 &&
	    (uint64_t)gen != m->ino_generation)
		return false;
	return true;
}

/* The same device, inode and generation, or neither names one (MMAP records). */
static bool same_inode(const struct pm_mapping *a, const struct pm_mapping *b)
{
	return a->has_inode == b->has_inode && a->maj == b->maj && a->min == b->min &&
	       a->ino == b->ino && a->ino_generation == b->ino_generation;
}

/*
 * Looks at the file at m's path: when it is the mapped one, m takes its
 * identity from it, the file's GNU build-id or, without one (a plain `go
 * build` writes only Go's own note), the file itself: perf, too, reads the
 * file at the recorded path for an object without a build-id. A file
 * without the inode to show it (MMAP) is counted apart.
 */
static void mapping_check_file(struct procmap *pm, struct pm_mapping *m)
{
	uint8_t id[BUILDID_MAX];
	size_t len = 0;
	struct stat st;
	enum conv_err err;
	/* a regular file only: the recording names the path (a FIFO, /dev/watchdog) */
	int fd = ropen_regular(m->path, false);

	if (fd < 0) {
		m->path_check = errno == ENOENT || errno == ENOTDIR ? PM_PATH_MISSING : PM_PATH_UNREADABLE;
		return;
	}
	if (fstat(fd, &st) != 0 || !file_is_mapped_one(pm, m, fd, &st)) {
		m->path_check = PM_PATH_CHANGED;
		close(fd);
		return;
	}
	close(fd);
	err = buildid_from_path(m->path, id, &len, NULL);
	if ((err != CONV_E_OK && err != CONV_E_NOTFOUND) || len > PM_BUILD_ID_MAX) {
		m->path_check = PM_PATH_UNREADABLE; /* no ELF file (a jitdump's marker mapping) */
		return;
	}
	memcpy(m->build_id, id, len);
	m->build_id_size = (uint8_t)len;
	m->bid_source = pm->opts.buildid_from_disk ? PM_BID_DISK
			: m->has_inode		   ? PM_BID_PATH
						   : PM_BID_PATH_UNVERIFIED;
	m->path_check = PM_PATH_OK;
}

/*
 * A mapped file's identity from the file at its recorded path, when the
 * recording has no build-id for it: with --buildid-from-disk (the user says
 * the recording was made here), or when the recording names this machine
 * and its known build-ids match. Either way only a file that is the mapped
 * one (file_is_mapped_one). A path's answer is kept for its other mappings
 * of the same file.
 */
static void mapping_bid_from_path(struct procmap *pm, struct pm_mapping *m)
{
	uint32_t pid;
	uint64_t *v;

	if (m->bid_source != PM_BID_NONE || m->kind != PM_KIND_FILE || !m->exec ||
	    m->path[0] != '/')
		return;
	if (!pm->opts.buildid_from_disk && !trust_files(pm)) {
		m->path_check = pm->opts.same_machine ? PM_PATH_DIFFERS : PM_PATH_ELSEWHERE;
		return;
	}
	pid = strtab_intern_cstr(&pm->strs, m->path);
	if (pid == STRTAB_NONE)
		return;
	v = hmap_get(&pm->path_bid, pid);
	if (v) {
		const struct pm_mapping *src = &pm->maps[*v - 1];

		/* the same file for this mapping too (another process may have mapped an older one) */
		if (same_inode(src, m) && src->pgoff <= m->pgoff) {
			memcpy(m->build_id, src->build_id, src->build_id_size);
			m->build_id_size = src->build_id_size;
			m->bid_source = src->bid_source;
			m->path_check = src->path_check;
			return;
		}
	}
	mapping_check_file(pm, m);
	/* a failed insert only means the file is read again for its next mapping */
	if (!v)
		(void)hmap_put(&pm->path_bid, pid, 1 + (uint64_t)m->id);
}

/* ---- mappings ---- */

static enum pm_kind classify(bool kernel_space, const char *name, const char **dso,
			     struct procmap *pm)
{
	char buf[300];

	if (kernel_space) {
		if (is_kernel_name(name)) {
			*dso = "[kernel.kallsyms]";
			return PM_KIND_KERNEL;
		}
		buf[0] = '[';
		module_name(name, buf + 1, sizeof(buf) - 2);
		strcat(buf, "]");
		*dso = strtab_get(&pm->strs, strtab_intern_cstr(&pm->strs, buf));
		return PM_KIND_MODULE;
	}
	*dso = name;
	if (!strcmp(name, "[vdso]") || !strcmp(name, "[vdso32]") || !strcmp(name, "[vdsox32]") ||
	    !strcmp(name, "[vsyscall]"))
		return PM_KIND_VDSO;
	/* perf's is_anon_memory() and is_no_dso_memory() */
	if (!strcmp(name, "//anon") || !strncmp(name, "/dev/zero", 9) ||
	    !strncmp(name, "/anon_hugepage", 14) || !strncmp(name, "[stack", 6) ||
	    !strncmp(name, "/SYSV", 5) || !strcmp(name, "[heap]") || !strncmp(name, "[anon", 5) ||
	    !name[0])
		return PM_KIND_ANON;
	return PM_KIND_FILE;
}

static struct pm_mapping *mapping_new(struct procmap *pm, uint32_t proc, uint64_t start,
				      uint64_t len, uint64_t pgoff, const char *path, uint64_t time,
				      bool kernel_space)
{
	struct pm_mapping *m;
	uint32_t path_id;

	if (!vec_reserve((void **)&pm->maps, &pm->cap_maps, pm->nr_maps + 1, sizeof(*pm->maps)))
		return NULL;
	path_id = strtab_intern_cstr(&pm->strs, path ? path : "");
	if (path_id == STRTAB_NONE)
		return NULL;
	m = &pm->maps[pm->nr_maps];
	memset(m, 0, sizeof(*m));
	m->id = (uint32_t)pm->nr_maps;
	m->proc = proc;
	m->start = start;
	m->limit = len > UINT64_MAX - start ? UINT64_MAX : start + len;
	m->pgoff = pgoff;
	m->path = strtab_get(&pm->strs, path_id);
	m->time = time;
	m->kind = classify(kernel_space, m->path, &m->dso, pm);
	/*
	 * bit 55 set is the kernel's half (arm64's TTBR1, x86-64's upper half):
	 * a "user" mapping there (a kernel map some recorders give a pid) says
	 * nothing of the user address width
	 */
	if (!kernel_space && m->limit > pm->user_highest && !(m->limit >> 55))
		pm->user_highest = m->limit;
	/*
	 * The vDSO's bytes are its ELF image from offset 0, whatever pgoff the
	 * record holds (perf's map__new sets it to 0 too), so that its file
	 * offsets are offsets into the image.
	 */
	if (m->kind == PM_KIND_VDSO)
		m->pgoff = 0;
	pm->nr_maps++;
	pm->st.mappings++;
	return m;
}

static enum conv_err apply_mmap(struct procmap *pm, const struct rdr_event *ev)
{
	const struct rdr_mmap *mm = &ev->u.mmap;
	bool kernel_space = mm->pid == PID_KERNEL;
	struct pm_proc_int *p = NULL;
	struct pm_space *space;
	struct pm_mapping *m;
	bool replaced;
	uint32_t proc = PM_KERNEL_PROC;
	unsigned mode = ev->misc & PERF_MISC_CPUMODE_MASK;

	if (mode == PERF_MISC_GUEST_KERNEL || mode == PERF_MISC_GUEST_USER)
		return CONV_E_OK; /* another machine's maps */
	if (!mm->len)
		return CONV_E_OK;
	if (ev->misc & PERF_MISC_PROC_MAP_PARSE_TIMEOUT)
		pm->st.maps_timeout++;
	if (!kernel_space) {
		p = proc_get_or_new(pm, mm->pid);
		if (!p)
			return CONV_E_NOMEM;
		proc = p->pub.index;
	}
	m = mapping_new(pm, proc, mm->start, mm->len, mm->pgoff, mm->filename,
			ev->has_time ? ev->time : 0, kernel_space);
	if (!m)
		return CONV_E_NOMEM;
	m->prot = mm->prot;
	m->flags = mm->flags;
	if (mm->is_mmap2)
		m->exec = (mm->prot & PROT_EXEC_BIT) != 0;
	else
		m->exec = !(ev->misc & PERF_MISC_MMAP_DATA);
	/* perf writes the kernel map with prot 0; kernel code is code */
	if (m->kind == PM_KIND_KERNEL || m->kind == PM_KIND_MODULE || m->kind == PM_KIND_VDSO)
		m->exec = true;
	if (m->kind == PM_KIND_ANON && m->exec) {
		/* executable anonymous memory is JIT code; perf names it after the mapping's pid */
		char jname[40];

		snprintf(jname, sizeof(jname), "[JIT] tid %u", (unsigned)mm->pid);
		m->kind = PM_KIND_JIT;
		m->dso = strtab_get(&pm->strs, strtab_intern_cstr(&pm->strs, jname));
		m->jit_pid = mm->pid;
	}
	if (mm->is_mmap2 && !mm->has_build_id) {
		m->has_inode = true;
		m->maj = mm->maj;
		m->min = mm->min;
		m->ino = mm->ino;
		m->ino_generation = mm->ino_generation;
	}
	if (mm->has_build_id) {
		m->build_id_size = mm->build_id_size;
		memcpy(m->build_id, mm->build_id, mm->build_id_size);
		m->bid_source = PM_BID_MMAP2;
	} else {
		mapping_bid_from_table(pm, m);
		/* now, not at the end: the symbolizer finds an object when its first frame comes */
		mapping_bid_from_path(pm, m);
	}
	if (p && p->comm_changed && m->exec && m->kind == PM_KIND_FILE && !pm->seen_exec_flag) {
		/* pre-3.16 perf has no exec flag: a COMM naming a binary, then its MMAP, is an exec */
		const char *base = strrchr(m->path, '/');

		p->comm_changed = false;
		base = base ? base + 1 : m->path;
		if (p->pub.comm[0] && !strncmp(base, p->pub.comm, strlen(p->pub.comm))) {
			struct pm_proc_int *np;
			uint32_t comm_id = p->comm_id, gen = p->pub.generation, ppid = p->pub.ppid;

			p->pub.exited = true;
			np = proc_new(pm, mm->pid, ppid, NULL);
			if (!np)
				return CONV_E_NOMEM;
			proc_set_comm(pm, np, comm_id);
			np->pub.generation = gen + 1;
			pm->st.exec_generations++;
			p = np;
			m->proc = np->pub.index;
		}
	}
	if (!kernel_space && m->kind == PM_KIND_FILE)
		jit_note_dump(pm, mm->pid, m->path);
	space = kernel_space ? &pm->kspace : &p->space;
	if (!space_insert(space, m->start, m->limit, m->id, &replaced))
		return CONV_E_NOMEM;
	if (replaced)
		pm->st.mappings_replaced++;
	return CONV_E_OK;
}

static enum conv_err apply_comm(struct procmap *pm, const struct rdr_event *ev)
{
	const struct rdr_comm *c = &ev->u.comm;
	uint32_t comm_id = strtab_intern_cstr(&pm->strs, c->comm ? c->comm : "");
	struct pm_proc_int *p;

	if (comm_id == STRTAB_NONE)
		return CONV_E_NOMEM;
	if (c->exec) {
		struct pm_proc_int *old = proc_get(pm, c->pid);
		uint32_t gen = old ? old->pub.generation + 1 : 0;
		uint32_t ppid = old ? old->pub.ppid : c->pid;
		uint32_t prev = old ? old->pub.index : PM_NONE;

		pm->seen_exec_flag = true;
		if (old)
			old->pub.exited = true;
		p = proc_new(pm, c->pid, ppid, NULL);
		if (!p)
			return CONV_E_NOMEM;
		p->pub.generation = gen;
		p->prev = prev;
		if (old)
			pm->st.exec_generations++;
		proc_set_comm(pm, p, comm_id);
	} else {
		p = proc_get_or_new(pm, c->pid);
		if (!p)
			return CONV_E_NOMEM;
		if (c->tid == c->pid) {
			if (p->comm_id && p->comm_id != comm_id && p->space.n)
				p->comm_changed = true;
			proc_set_comm(pm, p, comm_id);
		} else if (!p->comm_id) {
			proc_set_comm(pm, p, comm_id);
		}
	}
	return thread_set(pm, c->tid, c->pid, comm_id) ? CONV_E_OK : CONV_E_NOMEM;
}

static enum conv_err apply_fork(struct procmap *pm, const struct rdr_event *ev)
{
	const struct rdr_fork_exit *f = &ev->u.fork_exit;
	const struct pm_thread *parent_thr = thread_get(pm, f->ptid);
	uint32_t comm_id = parent_thr ? parent_thr->comm_id : 0;

	if (f->pid != f->ppid) {
		/* a new process: a copy of the parent's address space */
		struct pm_proc_int *parent = proc_get_or_new(pm, f->ppid);
		struct pm_proc_int *child;
		uint32_t parent_idx;

		if (!parent)
			return CONV_E_NOMEM;
		if (!comm_id)
			comm_id = parent->comm_id;
		parent_idx = parent->pub.index;
		child = proc_new(pm, f->pid, f->ppid, NULL);
		if (!child)
			return CONV_E_NOMEM;
		/* proc_new may have moved the array: the parent is found again by index */
		parent = &pm->procs[parent_idx];
		if (parent != child && !space_share(&child->space, &parent->space))
			return CONV_E_NOMEM;
		proc_set_comm(pm, child, comm_id);
	} else if (!proc_get(pm, f->pid)) {
		struct pm_proc_int *p = proc_get_or_new(pm, f->pid);

		if (!p)
			return CONV_E_NOMEM;
		if (comm_id)
			proc_set_comm(pm, p, comm_id);
	}
	return thread_set(pm, f->tid, f->pid, comm_id) ? CONV_E_OK : CONV_E_NOMEM;
}

static void apply_exit(struct procmap *pm, const struct rdr_event *ev)
{
	const struct rdr_fork_exit *f = &ev->u.fork_exit;
	struct pm_proc_int *p;

	if (f->pid != f->tid)
		return;
	p = proc_get(pm, f->pid);
	/* kept in the pid table: samples of this round may still come after the exit */
	if (p)
		p->pub.exited = true;
}

static enum conv_err apply_ksymbol(struct procmap *pm, const struct rdr_event *ev)
{
	const struct rdr_ksymbol *k = &ev->u.ksymbol;
	struct pm_mapping *m;
	bool replaced;

	if (!k->len)
		return CONV_E_OK;
	if (k->flags & 1u) /* PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER */
		return space_insert(&pm->kspace, k->addr, k->addr + k->len, PM_NO_MAPPING,
				    &replaced)
			       ? CONV_E_OK
			       : CONV_E_NOMEM;
	m = mapping_new(pm, PM_KERNEL_PROC, k->addr, k->len, k->addr, k->name,
			ev->has_time ? ev->time : 0, false);
	if (!m)
		return CONV_E_NOMEM;
	m->kind = PM_KIND_BPF;
	m->exec = true;
	m->dso = m->path;
	if (!space_insert(&pm->kspace, m->start, m->limit, m->id, &replaced))
		return CONV_E_NOMEM;
	if (replaced)
		pm->st.mappings_replaced++;
	return CONV_E_OK;
}

enum conv_err procmap_feed(struct procmap *pm, const struct rdr_event *ev)
{
	switch (ev->type) {
	case PERF_REC_MMAP:
	case PERF_REC_MMAP2:
		return apply_mmap(pm, ev);
	case PERF_REC_COMM:
		return apply_comm(pm, ev);
	case PERF_REC_FORK:
		return apply_fork(pm, ev);
	case PERF_REC_EXIT:
		apply_exit(pm, ev);
		return CONV_E_OK;
	case PERF_REC_KSYMBOL:
		return apply_ksymbol(pm, ev);
	case PERF_REC_HEADER_BUILD_ID:
		if (ev->u.build_id)
			procmap_add_build_ids(pm, ev->u.build_id, 1);
		return CONV_E_OK;
	default:
		return CONV_E_OK;
	}
}

/* ---- JIT symbols ---- */

static struct pm_jit *jit_entry(struct procmap *pm, uint32_t pid)
{
	uint64_t *v = hmap_get(&pm->jit_by_pid, pid);
	struct pm_jit *j;

	if (v)
		return &pm->jits[*v];
	if (!vec_reserve((void **)&pm->jits, &pm->cap_jits, pm->nr_jits + 1, sizeof(*pm->jits)) ||
	    !hmap_put(&pm->jit_by_pid, pid, pm->nr_jits))
		return NULL;
	j = &pm->jits[pm->nr_jits++];
	memset(j, 0, sizeof(*j));
	j->pid = pid;
	return j;
}

/* An MMAP of jit-<pid>.dump is how a runtime announces its jitdump (perf's marker). */
static void jit_note_dump(struct procmap *pm, uint32_t pid, const char *path)
{
	const char *base = strrchr(path, '/');
	struct pm_jit *j;

	base = base ? base + 1 : path;
	if (strncmp(base, "jit-", 4) || !strstr(base, ".dump"))
		return;
	j = jit_entry(pm, pid);
	if (j && !j->dump_path && !j->loaded)
		j->dump_path = strdup(path);
}

static const struct jit_table *jit_table_of(struct procmap *pm, uint32_t pid)
{
	struct pm_jit *j = jit_entry(pm, pid);
	const char *dir = pm->opts.jit_dir ? pm->opts.jit_dir : "/tmp";
	unsigned flags = pm->opts.jit_any_owner ? JIT_LOAD_ANY_OWNER : 0;
	struct jit_stats js;
	enum conv_err err;

	if (!j)
		return NULL;
	if (j->loaded)
		return &j->table;
	j->loaded = true;
	jit_table_init(&j->table);
	memset(&js, 0, sizeof(js));
	err = jit_load_perf_map(&j->table, dir, pid, flags, &js, NULL);
	if (err == CONV_E_OK)
		pm->st.jit_maps_loaded++;
	else if (err != CONV_E_NOTFOUND)
		pm->st.jit_load_failures++;
	if (j->dump_path) {
		/* where the recording saw it, else the same name in the JIT directory */
		err = jit_load_jitdump(&j->table, j->dump_path, flags, &js, NULL);
		if (err == CONV_E_NOTFOUND) {
			const char *base = strrchr(j->dump_path, '/');
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", dir, base ? base + 1 : j->dump_path);
			err = jit_load_jitdump(&j->table, path, flags, &js, NULL);
		}
		if (err == CONV_E_OK || err == CONV_E_TRUNCATED)
			pm->st.jit_dumps_loaded++;
		else if (err != CONV_E_NOTFOUND)
			pm->st.jit_load_failures++;
	}
	pm->st.jit_entries += j->table.nr;
	/* most pids have no JIT files: keep no string table or arena block for them */
	if (!j->table.nr)
		jit_table_release(&j->table);
	return &j->table;
}

/* ---- resolution ---- */

enum ctx { CTX_KERNEL, CTX_USER, CTX_GUEST, CTX_HV };

/*
 * exact: addr is where the thread was (the sampled IP, or the user IP where
 * the kernel was entered), not a return address, so it is not moved back
 * into the call instruction.
 *
 * entry: the first user address after kernel frames (the user IP saved at
 * kernel entry). perf writes the COMM of an exec when the new image
 * replaces the old address space, but the execve call has not returned:
 * a sample taken in the kernel until it does (loading the new binary)
 * still holds the caller's user IP, in the old image. So an entry address
 * that the new generation does not map is looked up in the generation its
 * exec replaced (perf keeps the old maps until new ones overlap them, and
 * names these samples alike).
 */
static bool push_frame(struct procmap *pm, size_t *n, const struct pm_proc_int *p, enum ctx ctx,
		       uint64_t addr, bool exact, bool entry)
{
	struct pm_frame *f;
	uint32_t map = PM_NO_MAPPING;

	if (!vec_reserve((void **)&pm->frames, &pm->cap_frames, *n + 1, sizeof(*pm->frames)))
		return false;
	f = &pm->frames[(*n)++];
	f->addr = exact ? addr : addr - 1;
	f->flags = *n == 1 ? PM_FRAME_LEAF : 0;
	f->file_offset = 0;
	pm->st.frames++;
	if (ctx == CTX_KERNEL) {
		f->flags |= PM_FRAME_KERNEL;
		map = space_find(&pm->kspace, f->addr);
	} else if (ctx == CTX_USER) {
		map = space_find(&p->space, f->addr);
		if (map == PM_NO_MAPPING && entry && p->prev != PM_NONE) {
			map = space_find(&pm->procs[p->prev].space, f->addr);
			if (map != PM_NO_MAPPING)
				pm->st.frames_exec_window++;
		}
	} else if (ctx == CTX_GUEST) {
		f->flags |= PM_FRAME_GUEST;
		pm->st.frames_guest++;
	}
	f->mapping = map;
	f->jit = NULL;
	if (ctx == CTX_USER && (map == PM_NO_MAPPING || pm->maps[map].kind == PM_KIND_JIT)) {
		/* JIT code: named by the perf map of the pid that mapped it (perf's rule) */
		uint32_t jpid = map == PM_NO_MAPPING ? p->pub.pid : pm->maps[map].jit_pid;
		const struct jit_table *t = jit_table_of(pm, jpid);

		f->jit = t ? jit_lookup(t, f->addr) : NULL;
		if (!f->jit && map == PM_NO_MAPPING && jpid != p->pub.pid) {
			t = jit_table_of(pm, p->pub.pid);
			f->jit = t ? jit_lookup(t, f->addr) : NULL;
		}
		if (f->jit) {
			f->flags |= PM_FRAME_JIT;
			pm->st.frames_jit++;
		}
	}
	if (map == PM_NO_MAPPING) {
		pm->st.frames_unmapped++;
	} else {
		struct pm_mapping *m = &pm->maps[map];

		f->file_offset = f->addr - m->start + m->pgoff;
		m->frames++;
		if (*n == 1)
			m->samples++;
		pm->st.frames_resolved++;
	}
	return true;
}

static enum ctx ctx_of_cpumode(unsigned mode)
{
	switch (mode) {
	case PERF_MISC_KERNEL:
		return CTX_KERNEL;
	case PERF_MISC_GUEST_KERNEL:
	case PERF_MISC_GUEST_USER:
		return CTX_GUEST;
	case PERF_MISC_HYPERVISOR:
		return CTX_HV;
	default:
		return CTX_USER;
	}
}

enum conv_err procmap_resolve(struct procmap *pm, const struct rdr_event *ev,
			      const struct pm_frame **frames, size_t *nr, uint32_t *proc)
{
	return procmap_resolve_exact(pm, ev, NULL, frames, nr, proc);
}

enum conv_err procmap_resolve_exact(struct procmap *pm, const struct rdr_event *ev,
				    const uint64_t *exact, const struct pm_frame **frames, size_t *nr,
				    uint32_t *proc)
{
	const struct rdr_sample *s = &ev->u.sample;
	struct pm_proc_int *p;
	size_t n = 0;
	enum ctx ctx = ctx_of_cpumode(ev->misc & PERF_MISC_CPUMODE_MASK);
	bool has_ip = (s->sample_type & PERF_SAMPLE_IP) != 0;
	bool chain_leaf_pending = has_ip; /* the chain's first address repeats the IP */
	bool have_leaf = false;
	bool kernel_frames = false, user_entry = false;

	*frames = NULL;
	*nr = 0;
	p = proc_get(pm, s->pid);
	if (!p) {
		pm->st.samples_unknown_pid++;
		p = proc_get_or_new(pm, s->pid);
		if (!p)
			return CONV_E_NOMEM;
	}
	*proc = p->pub.index;
	p->pub.samples++;
	pm->st.samples++;
	if (has_ip) {
		if (!push_frame(pm, &n, p, ctx, s->ip, true, false))
			return CONV_E_NOMEM;
		have_leaf = true;
		kernel_frames = ctx == CTX_KERNEL;
	}
	for (uint64_t i = 0; i < s->callchain_nr; i++) {
		uint64_t a = s->callchain[i];

		if (a >= PERF_CONTEXT_MAX) {
			if (a == PERF_CONTEXT_KERNEL)
				ctx = CTX_KERNEL;
			else if (a == PERF_CONTEXT_USER) {
				/*
				 * after kernel frames, the first user address is the user
				 * IP saved at kernel entry: an interrupted or faulting
				 * instruction (exact), or the one after a syscall
				 */
				user_entry = kernel_frames;
				ctx = CTX_USER;
			}
			else if (a == PERF_CONTEXT_HV)
				ctx = CTX_HV;
			else if (a == PERF_CONTEXT_GUEST || a == PERF_CONTEXT_GUEST_KERNEL ||
				 a == PERF_CONTEXT_GUEST_USER)
				ctx = CTX_GUEST;
			else if (a == PERF_CONTEXT_USER_DEFERRED)
				i++; /* its cookie */
			continue;
		}
		if (chain_leaf_pending) {
			chain_leaf_pending = false;
			continue;
		}
		if (a == 0)
			continue; /* user chains may end with a 0 entry */
		{
			bool entry = user_entry && ctx == CTX_USER;
			bool at = !have_leaf || entry || (exact && (exact[i / 64] >> (i % 64) & 1));

			if (!push_frame(pm, &n, p, ctx, a, at, entry))
				return CONV_E_NOMEM;
		}
		have_leaf = true;
		user_entry = false;
		kernel_frames = kernel_frames || ctx == CTX_KERNEL;
	}
	*frames = pm->frames;
	*nr = n;
	return CONV_E_OK;
}

/* ---- finish and queries ---- */

void procmap_finish(struct procmap *pm)
{
	uint8_t id[BUILDID_MAX], vdso_id[BUILDID_MAX];
	size_t len, image_size, vdso_len = 0;
	const void *image;
	int vdso = -1; /* the running vDSO's build-id: read once, when a mapping needs it (-1: not yet) */

	memset(pm->st.frames_by_bid, 0, sizeof(pm->st.frames_by_bid));
	for (size_t i = 0; i < pm->nr_maps; i++) {
		struct pm_mapping *m = &pm->maps[i];

		mapping_bid_from_table(pm, m);
		mapping_bid_from_path(pm, m);
		if (m->bid_source == PM_BID_NONE && pm->opts.buildid_from_disk &&
		    pm->opts.running_kernel && m->kind == PM_KIND_KERNEL &&
		    buildid_from_notes_file(pm->opts.kernel_notes ? pm->opts.kernel_notes
								  : "/sys/kernel/notes",
					    id, &len) == CONV_E_OK &&
		    len <= PM_BUILD_ID_MAX) {
			memcpy(m->build_id, id, len);
			m->build_id_size = (uint8_t)len;
			m->bid_source = PM_BID_DISK;
		}
		if (m->bid_source == PM_BID_NONE && pm->opts.buildid_from_disk &&
		    pm->opts.running_kernel && m->kind == PM_KIND_VDSO && !strcmp(m->path, "[vdso]")) {
			if (vdso < 0)
				vdso = buildid_running_vdso(&image, &image_size, vdso_id, &vdso_len) ==
						       CONV_E_OK &&
				       vdso_len <= PM_BUILD_ID_MAX;
			if (vdso) {
				memcpy(m->build_id, vdso_id, vdso_len);
				m->build_id_size = (uint8_t)vdso_len;
				m->bid_source = PM_BID_DISK;
			}
		}
		pm->st.frames_by_bid[m->bid_source] += m->frames;
	}
}

void procmap_set_running_kernel(struct procmap *pm, bool running)
{
	pm->opts.running_kernel = running;
}

void procmap_set_same_machine(struct procmap *pm, bool same)
{
	if (pm->opts.same_machine == same)
		return;
	pm->opts.same_machine = same;
	pm->trust = PM_TRUST_UNKNOWN;
	/* answers given under the other verdict */
	hmap_release(&pm->path_bid);
	hmap_init(&pm->path_bid);
}

bool procmap_path_is_identity(const struct pm_mapping *m)
{
	return !m->build_id_size && m->path_check == PM_PATH_OK;
}

bool procmap_same_file(const struct pm_mapping *a, const struct pm_mapping *b)
{
	return !strcmp(a->path, b->path) && same_inode(a, b);
}

uint64_t procmap_user_highest(const struct procmap *pm)
{
	return pm->user_highest;
}

size_t procmap_mapping_count(const struct procmap *pm)
{
	return pm->nr_maps;
}

const struct pm_mapping *procmap_mapping(const struct procmap *pm, uint32_t id)
{
	return id < pm->nr_maps ? &pm->maps[id] : NULL;
}

size_t procmap_proc_count(const struct procmap *pm)
{
	return pm->nr_procs;
}

const struct pm_proc *procmap_proc(const struct procmap *pm, uint32_t index)
{
	return index < pm->nr_procs ? &pm->procs[index].pub : NULL;
}

const char *procmap_thread_name(const struct procmap *pm, uint32_t tid)
{
	uint64_t *v = hmap_get(&pm->tid2thr, tid);

	return v ? strtab_get(&pm->strs, pm->thr[*v].comm_id) : NULL;
}

bool procmap_space_key(const struct procmap *pm, uint32_t pid, struct pm_space_key *key)
{
	const uint64_t *v = hmap_get(&pm->pid2proc, pid);
	const struct pm_proc_int *p;

	if (!v)
		return false;
	p = &pm->procs[*v];
	key->proc = p->pub.index;
	key->version = p->space.version;
	key->kversion = pm->kspace.version;
	return true;
}

/* Whether procmap_resolve may look a frame of the sample up in the kernel's space. */
static bool sample_has_kernel(const struct rdr_event *ev)
{
	const struct rdr_sample *s = &ev->u.sample;

	if ((ev->misc & PERF_MISC_CPUMODE_MASK) == PERF_MISC_KERNEL)
		return true;
	for (uint64_t i = 0; i < s->callchain_nr; i++)
		if (s->callchain[i] == PERF_CONTEXT_KERNEL)
			return true;
	return false;
}

void procmap_sample_ctx(struct procmap *pm, const struct rdr_event *sample, struct pm_sample_ctx *ctx)
{
	const struct rdr_sample *s = &sample->u.sample;
	const uint64_t *v = hmap_get(&pm->tid2thr, s->tid);
	struct pm_thread *t = v ? &pm->thr[*v] : NULL;
	const struct pm_proc_int *p;

	ctx->comm = t ? t->comm_id : PM_NO_COMM;
	if (t && t->pid == s->pid && t->proc_at == pm->nr_procs) {
		p = &pm->procs[t->proc];
	} else {
		v = hmap_get(&pm->pid2proc, s->pid);
		p = v ? &pm->procs[*v] : NULL;
		if (p && t && t->pid == s->pid) {
			t->proc = p->pub.index;
			t->proc_at = pm->nr_procs;
		}
	}
	ctx->has_proc = p != NULL;
	ctx->key.proc = p ? p->pub.index : 0;
	ctx->key.version = p ? p->space.version : 0;
	ctx->key.kversion = sample_has_kernel(sample) ? pm->kspace.version : 0;
}

void procmap_count_sample(struct procmap *pm, uint32_t proc)
{
	if (proc < pm->nr_procs) {
		pm->procs[proc].pub.samples++;
		pm->st.samples++;
	}
}

uint32_t procmap_lookup(const struct procmap *pm, uint32_t pid, uint64_t addr)
{
	const uint64_t *v = hmap_get(&pm->pid2proc, pid);

	return v ? space_find(&pm->procs[*v].space, addr) : PM_NO_MAPPING;
}

const struct pm_space *procmap_space(const struct procmap *pm, uint32_t pid)
{
	const uint64_t *v = hmap_get(&pm->pid2proc, pid);

	return v ? &pm->procs[*v].space : NULL;
}

uint32_t procmap_space_lookup(const struct pm_space *s, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	size_t i = space_lower(s, addr);

	if (i < s->n && s->v[i].start <= addr) {
		*lo = s->v[i].start;
		*hi = s->v[i].end;
		return s->v[i].map;
	}
	*lo = *hi = 0;
	return PM_NO_MAPPING;
}

uint32_t procmap_thread_comm(const struct procmap *pm, uint32_t tid)
{
	uint64_t *v = hmap_get(&pm->tid2thr, tid);

	return v ? pm->thr[*v].comm_id : PM_NO_COMM;
}

const char *procmap_comm_str(const struct procmap *pm, uint32_t comm)
{
	return comm == PM_NO_COMM ? NULL : strtab_get(&pm->strs, comm);
}

const struct pm_stats *procmap_stats(const struct procmap *pm)
{
	return &pm->st;
}

const char *procmap_bid_source_name(enum pm_bid_source s)
{
	switch (s) {
	case PM_BID_MMAP2:
		return "mmap2";
	case PM_BID_TABLE:
		return "build_id_table";
	case PM_BID_DISK:
		return "disk";
	case PM_BID_PATH:
		return "path";
	case PM_BID_PATH_UNVERIFIED:
		return "path_unverified";
	default:
		return "none";
	}
}

/*
 * Symbolization job. Objects are the files frames point into, keyed by
 * build-id; without one by path, and when the process model showed the
 * file at the path to be the mapped one, by path and inode (such an
 * object's files are read at its path); each registered
 * address is (object, file offset). symjob_run() handles objects on worker
 * threads: each worker opens one object's files, resolves all of its
 * addresses and keeps the results with strings in the object's own string
 * table, so workers share nothing but the index of the next object. The
 * kernel is resolved from kallsyms.
 */
#include "pipeline/symjob.h"
#include "pipeline/objtab.h"

#include "core/vec.h"

#include "buildid/buildid.h"
#include "buildid/debuginfod.h"
#include "buildid/locate.h"
#include "core/hidx.h"
#include "core/hmap.h"
#include "core/strtab.h"
#include "procmap/procmap.h"
#include "symbolize/kallsyms.h"
#include "symbolize/symbolize.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum obj_kind { OBJ_USER, OBJ_KERNEL };

#define SYMJOB_MAX_THREADS 64

struct sj_addr {
	uint32_t obj;
	uint64_t f_off;  /* offset in the mapped file (user) or the address (kernel); or as mode says */
	uint64_t pgoff;  /* the mapping's file offset, for segment choice */
	uint64_t hits;
	uint8_t mode;    /* enum symjob_addr_mode: what f_off is */
	struct symjob_result res;
};

/*
 * The files found for an object. Their paths are kept in the job's path
 * table, each once and as long as it is: an input names as many objects as
 * it has bytes for (an MMAP2 record and a sample each), so what an object
 * keeps must stay near the size of those records.
 */
struct located {
	const char *debug, *runtime; /* in symjob.paths; valid when have_debug, have_runtime */
	bool have_debug, have_runtime;
	bool debug_has_dwarf;
	bool dfd_debug, dfd_exec; /* requested from debuginfod */
	bool dynsym_only;         /* no debug file: the runtime binary's own symbols stand in */
	enum symsrc src;
};

struct sj_obj {
	enum obj_kind kind;
	struct located loc;
	uint8_t bid[PM_BUILD_ID_MAX];
	uint8_t bid_len;
	/*
	 * recorded without a build-id (bid_len 0): the GNU build-id of the
	 * runtime file found for it, so that frames left unnamed (--no-symbolize)
	 * still say which file can name them later; file_bid_len 0 for none
	 */
	uint8_t file_bid[PM_BUILD_ID_MAX];
	uint8_t file_bid_len;
	const char *path;   /* as recorded */
	uint32_t map;       /* the first mapping of it (user objects) */
	bool by_path;       /* no build-id, the file at the path is it (procmap_path_is_identity) */
	bool outside_dir;   /* a -d DIR file for its path lay outside DIR (loc_stats.outside_dir) */
	bool vdso;          /* mapped as the vDSO */
	int mem_fd;         /* >= 0: the running vDSO's image, opened as /proc/self/fd/N */
	uint32_t *addrs;    /* addr ids of this object */
	size_t nr_addrs, cap_addrs;
	struct strtab *strs; /* result strings (filled by one worker), made with the first one */
	struct sym_frame *frames; /* result frames of all its addresses */
	size_t nr_frames;
	/*
	 * per frame its function's number (in funcs; job-wide from symjob_finish
	 * on), NULL when out of memory; funcs name their strings by their ids in
	 * strs until symjob_finish gathers them in symjob.funcs
	 */
	uint32_t *frame_funcs;
	struct symjob_function *funcs;
	size_t nr_funcs;
	enum symsrc src;
	bool found;
	uint64_t hits;
	uint64_t unresolved_hits, unnormalized_hits;
	const char *dfd_reason; /* why debuginfod did not help, or NULL */
};

struct symjob {
	struct symjob_opts o;
	const struct procmap *pm;
	/*
	 * hash of (build-id or path) -> obj indexes, compared by obj_matches:
	 * equal hashes are kept side by side, so objects whose keys collide
	 * (build-ids are the input's to choose) cost a comparison each, not a
	 * search of every object
	 */
	struct hidx obj_idx;
	struct sj_obj *objs;
	size_t nr_objs, cap_objs;
	uint32_t *obj_of_map; /* mapping id -> object index (SYMJOB_NONE: no file; MAP_UNSEEN) */
	size_t cap_obj_of_map;
	struct sj_addr *addrs;
	size_t nr_addrs, cap_addrs;
	/*
	 * (object, key, mode) -> addr id: one table for all objects, not one
	 * each, whose first slots (half a KiB) an input naming many objects
	 * with an address or two each would pay per object.
	 */
	struct hidx addr_idx;
	struct objtab *tab;       /* the run's objects (symjob_opts.objects, or own_tab) */
	struct objtab *own_tab;   /* this job's alone (budget 0) when the run gave none */
	const struct kallsyms *ks; /* from tab while resolve_kernel uses it */
	struct objtab_ent *ks_ent;
	bool ks_loaded;
	uint64_t ks_shift; /* recorded kernel address - kallsyms address */
	struct symjob_missing *missing;
	size_t nr_missing;
	struct symjob_missing *unres; /* objects with unresolved frames */
	size_t nr_unres;
	struct strtab mstrs; /* strings of missing entries */
	struct strtab paths; /* located files' paths (the reading thread's until symjob_start) */
	atomic_size_t next_obj; /* in order[] */
	bool started, finished; /* symjob_start, symjob_finish were called */
	pthread_t th[SYMJOB_MAX_THREADS];
	unsigned nr_th;         /* workers running beside the caller */
	uint32_t *order;        /* objects, costliest first (NULL: index order) */
	struct symjob_stats st;
	struct dfd_client *dfd; /* NULL when symbolization is off */
	bool vmlinux_asked;     /* the kernel's debug file was asked of debuginfod (or found here) */
	struct loc_stats lstats;
	uint64_t adds;
	struct symjob_function *funcs; /* every object's, string numbers job-wide (symjob_finish) */
	size_t nr_funcs;
	size_t nr_strs;                /* string numbers given: every object's strs */
};

static void *worker(void *arg);
static void join_workers(struct symjob *j);

/*
 * The debuginfod counters of the statistics, from the client's. A request
 * that ended NOTFOUND while no server could be asked (offline, none
 * configured) was not found in a cache only: counted apart, not as a
 * server's "not found".
 */
static void copy_dfd_stats(struct symjob *j)
{
	const struct dfd_stats *ds = dfd_stats(j->dfd);
	bool servers = dfd_server_count(j->dfd) != 0;

	j->st.dfd_servers = dfd_server_count(j->dfd);
	j->st.dfd_fetched = ds->fetched;
	j->st.dfd_cache_hits = ds->cache_hits + ds->system_cache_hits;
	j->st.dfd_not_found = (servers ? ds->not_found : 0) + ds->negative_hits;
	j->st.dfd_not_asked = servers ? 0 : ds->not_found;
	j->st.dfd_errors = ds->errors + ds->bad_build_id + ds->too_large + ds->no_space;
	j->st.dfd_bytes = ds->bytes;
	j->st.dfd_servers_down = ds->servers_down;
	j->st.dfd_skipped = ds->skipped;
	j->st.dfd_untrusted = ds->untrusted;
}

static void dfd_progress_cb(void *ctx, const struct dfd_progress *p)
{
	struct symjob *j = ctx;
	struct symjob_progress sp = { 0 };

	/* the progress shows the counters the statistics will hold, so the two agree */
	copy_dfd_stats(j);
	sp.build_id = p->build_id;
	sp.received = p->received;
	sp.total = p->total;
	sp.active = p->active;
	sp.queued = p->queued;
	sp.done = p->event == DFD_EV_DONE;
	sp.waited_ms = p->waited_ms;
	sp.st = &j->st;
	j->o.progress(j->o.progress_ctx, &sp);
}

const struct dfd_server *symjob_dfd_server(const struct symjob *j, size_t i)
{
	return j->dfd ? dfd_server_at(j->dfd, i) : NULL;
}

enum conv_err symjob_new(struct symjob **out, const struct symjob_opts *o, const struct procmap *pm,
			 struct conv_diag *diag)
{
	struct symjob *j = calloc(1, sizeof(*j));

	*out = NULL;
	if (!j)
		return CONV_E_NOMEM;
	if (o)
		j->o = *o;
	j->pm = pm;
	j->tab = j->o.objects;
	if (!j->tab) {
		if (objtab_new(&j->own_tab, 0) != CONV_E_OK) {
			free(j);
			return CONV_E_NOMEM;
		}
		j->tab = j->own_tab;
	}
	hidx_init(&j->obj_idx);
	hidx_init(&j->addr_idx);
	strtab_init(&j->mstrs);
	strtab_init(&j->paths);
	if (!j->o.no_symbolize) {
		struct dfd_opts d = { 0 };
		enum conv_err err;

		d.urls = j->o.debuginfod_urls;
		d.nr_urls = j->o.nr_debuginfod_urls;
		d.cache_dir = j->o.cache_dir;
		d.offline = j->o.offline;
		d.max_size = j->o.max_download;
		d.timeout_s = j->o.timeout_s;
		d.deadline_s = j->o.deadline_s;
		if (j->o.progress) {
			d.progress = dfd_progress_cb;
			d.progress_ctx = j;
		}
		err = dfd_new(&j->dfd, &d, diag);
		if (err) {
			symjob_free(j);
			return err;
		}
	}
	*out = j;
	return CONV_E_OK;
}

void symjob_free(struct symjob *j)
{
	if (!j)
		return;
	/* started and not finished (the caller failed in between): the workers end by themselves */
	join_workers(j);
	for (size_t i = 0; i < j->nr_objs; i++) {
		if (j->objs[i].mem_fd >= 0)
			close(j->objs[i].mem_fd);
		free(j->objs[i].addrs);
		if (j->objs[i].strs)
			strtab_release(j->objs[i].strs);
		free(j->objs[i].strs);
		free(j->objs[i].frames);
		free(j->objs[i].frame_funcs);
		free(j->objs[i].funcs);
	}
	free(j->objs);
	free(j->funcs);
	free(j->addrs);
	hidx_release(&j->addr_idx);
	free(j->missing);
	free(j->unres);
	free(j->order);
	hidx_release(&j->obj_idx);
	free(j->obj_of_map);
	objtab_free(j->own_tab);
	strtab_release(&j->mstrs);
	strtab_release(&j->paths);
	dfd_free(j->dfd);
	free(j);
}

static uint64_t key_hash(const void *p, size_t n)
{
	return hmap_fingerprint(p, n).lo;
}

static bool obj_matches(const struct symjob *j, const struct sj_obj *ob, enum obj_kind kind,
			const struct pm_mapping *m)
{
	if (ob->kind != kind)
		return false;
	if (kind == OBJ_KERNEL)
		return true;
	if (m->build_id_size)
		return ob->bid_len == m->build_id_size && !memcmp(ob->bid, m->build_id, ob->bid_len);
	if (ob->bid_len || strcmp(ob->path, m->path) || ob->by_path != procmap_path_is_identity(m))
		return false;
	/* a file at one path over time: each inode its own object */
	return !ob->by_path || procmap_same_file(procmap_mapping(j->pm, ob->map), m);
}

static enum symsrc src_of(enum loc_source s)
{
	switch (s) {
	case LOC_ORIGINAL:
		return SYMSRC_LOCAL;
	case LOC_DEBUG_DIR:
		return SYMSRC_DEBUG_DIR;
	case LOC_SYSTEM:
		return SYMSRC_SYSTEM;
	case LOC_PERF_CACHE:
		return SYMSRC_PERF_CACHE;
	case LOC_DEBUGLINK:
		return SYMSRC_DEBUGLINK;
	default:
		return SYMSRC_UNRESOLVED;
	}
}

/* path kept in the job's path table; NULL when out of memory (the file is then not used). */
static const char *keep_path(struct symjob *j, const char *path)
{
	uint32_t id = strtab_intern_cstr(&j->paths, path);

	return id == STRTAB_NONE ? NULL : strtab_get(&j->paths, id);
}

/*
 * The running kernel's vDSO stands in for a recorded one with its build-id:
 * perf keeps a copy only in its ~/.debug cache (none with record -N), and
 * this process maps the very image. Its .dynsym is the vDSO's whole symbol
 * table, so it counts as found (not as a stand-in for missing debug info).
 */
static bool locate_running_vdso(struct symjob *j, struct sj_obj *ob)
{
	struct located *l = &ob->loc;
	char path[40];
	int fd;

	if (!ob->vdso || !ob->bid_len ||
	    buildid_running_vdso_fd(ob->bid, ob->bid_len, &fd) != CONV_E_OK)
		return false;
	ob->mem_fd = fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	l->runtime = keep_path(j, path);
	l->have_runtime = l->runtime != NULL;
	return l->have_runtime;
}

/*
 * Finds an object's files on this machine as soon as it is first seen, and
 * asks debuginfod for what is missing, so downloads overlap the reading.
 */
/* The build-id of the runtime file found for an object recorded without one (sj_obj.file_bid). */
static void located_file_build_id(struct sj_obj *ob)
{
	uint8_t bid[BUILDID_MAX];
	size_t len = 0;

	ob->file_bid_len = 0;
	if (ob->bid_len || !ob->loc.have_runtime ||
	    buildid_from_path(ob->loc.runtime, bid, &len, NULL) != CONV_E_OK || !len ||
	    len > sizeof(ob->file_bid))
		return;
	memcpy(ob->file_bid, bid, len);
	ob->file_bid_len = (uint8_t)len;
}

static void locate(struct symjob *j, struct sj_obj *ob)
{
	struct located *l = &ob->loc;
	struct loc_opts lo = { 0 };
	struct loc_result r;
	uint64_t outside = j->lstats.outside_dir;

	lo.debug_dirs = j->o.debug_dirs;
	lo.nr_debug_dirs = j->o.nr_debug_dirs;
	/*
	 * Without a build-id only the process model can show that the file at
	 * the recorded path is the one that was mapped (same machine, same
	 * inode, unchanged): then it gives the object that file's build-id, or,
	 * when it has none, the file itself (by_path).
	 */
	lo.use_original_path = ob->bid_len > 0 || ob->by_path;
	if (loc_find_debug(&lo, ob->bid, ob->bid_len, ob->path, &r, &j->lstats, NULL) == CONV_E_OK &&
	    (l->debug = keep_path(j, r.path)) != NULL) {
		l->have_debug = true;
		l->debug_has_dwarf = r.has_debug_info;
		l->src = src_of(r.source);
	}
	if (loc_find_binary(&lo, ob->bid, ob->bid_len, ob->path, &r, &j->lstats, NULL) == CONV_E_OK &&
	    (l->runtime = keep_path(j, r.path)) != NULL) {
		l->have_runtime = true;
	} else if (locate_running_vdso(j, ob) && !l->have_debug) {
		l->debug = l->runtime;
		l->have_debug = true;
		l->src = SYMSRC_LOCAL; /* an image on this machine, like a local binary */
	}
	located_file_build_id(ob);
	ob->outside_dir = j->lstats.outside_dir != outside;
	if (j->dfd && ob->bid_len) {
		if (!l->have_debug || !l->debug_has_dwarf)
			l->dfd_debug = dfd_request(j->dfd, ob->bid, ob->bid_len, DFD_DEBUGINFO) ==
				       CONV_E_OK;
		if (!l->have_runtime)
			l->dfd_exec = dfd_request(j->dfd, ob->bid, ob->bid_len, DFD_EXECUTABLE) ==
				      CONV_E_OK;
		if (l->dfd_debug || l->dfd_exec)
			dfd_poll(j->dfd, 0);
	}
	/* no symbols file: the binary's own .dynsym still names exported functions */
	if (!l->have_debug && l->have_runtime) {
		l->debug = l->runtime;
		l->have_debug = true;
		l->dynsym_only = true;
		l->src = SYMSRC_LOCAL;
	}
}

/*
 * --no-symbolize: only the recorded binary itself (build-id checked), for
 * its program headers: frames keep ELF addresses a later symbolizer can use.
 */
static void locate_runtime(struct symjob *j, struct sj_obj *ob)
{
	struct loc_opts lo = { 0 };
	struct loc_result r;

	lo.debug_dirs = j->o.debug_dirs;
	lo.nr_debug_dirs = j->o.nr_debug_dirs;
	lo.use_original_path = ob->bid_len > 0 || ob->by_path; /* as in locate() */
	if (loc_find_binary(&lo, ob->bid, ob->bid_len, ob->path, &r, &j->lstats, NULL) == CONV_E_OK &&
	    (ob->loc.runtime = keep_path(j, r.path)) != NULL) {
		ob->loc.have_runtime = true;
	} else {
		locate_running_vdso(j, ob);
	}
	located_file_build_id(ob);
}

/* Collects what debuginfod brought (or had in a cache). */
static void fetched(struct symjob *j, struct sj_obj *ob)
{
	struct located *l = &ob->loc;
	const char *path;
	struct conv_diag d;
	enum conv_err e = CONV_E_NOTFOUND;

	memset(&d, 0, sizeof(d));
	if (l->dfd_debug) {
		e = dfd_wait(j->dfd, ob->bid, ob->bid_len, DFD_DEBUGINFO, &path, &d);
		/* what went wrong with the server, for the unresolved-objects reason */
		if (e != CONV_E_OK && e != CONV_E_NOTFOUND && d.msg[0])
			ob->dfd_reason = strtab_get(&j->mstrs, strtab_intern_cstr(&j->mstrs, d.msg));
		else if (e == CONV_E_NOTFOUND && !dfd_server_count(j->dfd))
			/* what was tried and what would help: no server heard of it */
			ob->dfd_reason = j->o.offline
				? "no debug info found here; no debuginfod server was asked "
				  "(--offline): try -d DIR, or --debuginfod URL without --offline"
				: "no debug info found here; no debuginfod server was asked "
				  "(none configured): try -d DIR or --debuginfod URL";
		else if (e == CONV_E_NOTFOUND)
			ob->dfd_reason = "debuginfod: not found on any server";
	}
	if (l->dfd_debug && e == CONV_E_OK && (!l->have_debug || !l->debug_has_dwarf) &&
	    (path = keep_path(j, path)) != NULL) {
		l->debug = path;
		l->have_debug = true;
		l->debug_has_dwarf = true;
		l->dynsym_only = false;
		l->src = SYMSRC_DEBUGINFOD;
	}
	if (l->dfd_exec &&
	    dfd_wait(j->dfd, ob->bid, ob->bid_len, DFD_EXECUTABLE, &path, NULL) == CONV_E_OK &&
	    (path = keep_path(j, path)) != NULL) {
		l->runtime = path;
		l->have_runtime = true;
		/* an executable with symbols is better than nothing when no debug info came */
		if (!l->have_debug || (!l->debug_has_dwarf && l->src != SYMSRC_DEBUGINFOD)) {
			l->debug = path;
			l->have_debug = true;
			l->src = SYMSRC_DEBUGINFOD;
		}
	}
}

/*
 * Asks debuginfod for the kernel's debug file as soon as the kernel has
 * frames, beside the user objects' requests, unless one with DWARF is
 * here (open_vmlinux waits for it). Asked only when a worker reached the
 * kernel, it went out after every user object's request had ended: a
 * silent server cost one more --timeout for it (issue 31).
 */
static void request_vmlinux(struct symjob *j)
{
	struct loc_opts lo = { 0 };
	struct loc_result r;
	const struct pm_mapping *k = NULL;

	if (!j->dfd || j->vmlinux_asked)
		return;
	for (uint32_t i = 0; i < procmap_mapping_count(j->pm); i++) {
		const struct pm_mapping *m = procmap_mapping(j->pm, i);

		if (m->kind == PM_KIND_KERNEL)
			k = m; /* the last one, as resolve_kernel takes */
	}
	if (!k || !k->build_id_size || !k->pgoff)
		return; /* not known yet: symjob_start asks again */
	j->vmlinux_asked = true;
	lo.debug_dirs = j->o.debug_dirs;
	lo.nr_debug_dirs = j->o.nr_debug_dirs;
	if (loc_find_debug(&lo, k->build_id, k->build_id_size, NULL, &r, &j->lstats, NULL) == CONV_E_OK &&
	    r.has_debug_info)
		return;
	if (dfd_request(j->dfd, k->build_id, k->build_id_size, DFD_DEBUGINFO) == CONV_E_OK)
		dfd_poll(j->dfd, 0);
}

/* The object a mapping's frames belong to; SYMJOB_NONE for memory without a file. */
static uint32_t obj_for(struct symjob *j, const struct pm_mapping *m)
{
	enum obj_kind kind;
	uint64_t h;
	struct hidx_iter it;
	struct sj_obj *ob;
	bool by_path = false;

	switch (m->kind) {
	case PM_KIND_FILE:
	case PM_KIND_VDSO:
		kind = OBJ_USER;
		if (m->kind == PM_KIND_VDSO && !m->build_id_size)
			return SYMJOB_NONE;
		by_path = m->kind == PM_KIND_FILE && procmap_path_is_identity(m);
		h = m->build_id_size ? key_hash(m->build_id, m->build_id_size)
				     : key_hash(m->path, strlen(m->path)) ^
					       (by_path ? 2 ^ (m->ino * 0x9e3779b97f4a7c15ull) : 1);
		break;
	case PM_KIND_KERNEL:
	case PM_KIND_MODULE:
		kind = OBJ_KERNEL;
		h = 0x6b65726e656cull; /* one object: kallsyms covers the kernel and modules */
		break;
	default:
		return SYMJOB_NONE;
	}
	for (uint32_t v = hidx_first(&j->obj_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&j->obj_idx, &it))
		if (obj_matches(j, &j->objs[v], kind, m))
			return v;
	if (j->nr_objs >= SYMJOB_NONE - 1 ||
	    !vec_reserve((void **)&j->objs, &j->cap_objs, j->nr_objs + 1, sizeof(*j->objs)) ||
	    !hidx_add(&j->obj_idx, h, (uint32_t)j->nr_objs))
		return SYMJOB_NONE;
	ob = &j->objs[j->nr_objs];
	memset(ob, 0, sizeof(*ob));
	ob->kind = kind;
	ob->bid_len = m->build_id_size;
	memcpy(ob->bid, m->build_id, m->build_id_size);
	ob->path = m->path;
	ob->map = m->id;
	ob->by_path = by_path;
	ob->vdso = m->kind == PM_KIND_VDSO;
	ob->mem_fd = -1;
	/* no ob->strs until a worker keeps a string: most objects of a big input have none */
	if (kind == OBJ_USER && !j->o.no_symbolize)
		locate(j, ob);
	else if (kind == OBJ_USER)
		locate_runtime(j, ob);
	else if (!j->o.no_symbolize)
		request_vmlinux(j);
	return (uint32_t)j->nr_objs++;
}

#define MAP_UNSEEN (SYMJOB_NONE - 1)

/*
 * The object of a mapping, looked up once per mapping (by build-id or path)
 * the first time one of its addresses is added.
 */
static uint32_t obj_of_mapping(struct symjob *j, uint32_t mapping, const struct pm_mapping *m)
{
	if (mapping >= j->cap_obj_of_map) {
		size_t old = j->cap_obj_of_map;

		if (!vec_reserve((void **)&j->obj_of_map, &j->cap_obj_of_map, (size_t)mapping + 1,
				 sizeof(uint32_t)))
			return obj_for(j, m);
		for (size_t i = old; i < j->cap_obj_of_map; i++)
			j->obj_of_map[i] = MAP_UNSEEN;
	}
	if (j->obj_of_map[mapping] == MAP_UNSEEN)
		j->obj_of_map[mapping] = obj_for(j, m);
	return j->obj_of_map[mapping];
}

uint32_t symjob_object_files(struct symjob *j, uint32_t mapping, const char **runtime,
			     const char **debug)
{
	const struct pm_mapping *m = procmap_mapping(j->pm, mapping);
	uint32_t oi;
	struct located *l;
	const char *path;

	*runtime = *debug = NULL;
	oi = m ? obj_of_mapping(j, mapping, m) : SYMJOB_NONE;
	if (oi == SYMJOB_NONE || j->objs[oi].kind != OBJ_USER)
		return SYMJOB_NONE;
	l = &j->objs[oi].loc;
	if (!l->have_runtime && l->dfd_exec &&
	    dfd_wait(j->dfd, j->objs[oi].bid, j->objs[oi].bid_len, DFD_EXECUTABLE, &path, NULL) ==
		    CONV_E_OK &&
	    (path = keep_path(j, path)) != NULL) {
		l->runtime = path;
		l->have_runtime = true;
	}
	*runtime = l->have_runtime ? l->runtime : NULL;
	*debug = l->have_debug && !l->dynsym_only ? l->debug : NULL;
	return oi;
}

/* Registers key (a file offset, the kernel's address, or as mode says) in mapping's object. */
static uint32_t add_addr(struct symjob *j, uint32_t mapping, uint64_t f_off, enum symjob_addr_mode mode)
{
	const struct pm_mapping *m = procmap_mapping(j->pm, mapping);
	uint64_t key, h;
	struct hidx_iter it;
	uint32_t oi;
	struct sj_obj *ob;
	struct sj_addr *a;

	if (!m)
		return SYMJOB_NONE;
	/* keep downloads moving while the file is read */
	if (j->dfd && !(++j->adds & 0xffff))
		dfd_poll(j->dfd, 0);
	oi = obj_of_mapping(j, mapping, m);
	if (oi == SYMJOB_NONE || (mode != SYMJOB_FILE_OFFSET && j->objs[oi].kind == OBJ_KERNEL))
		return SYMJOB_NONE;
	ob = &j->objs[oi];
	/* kernel objects are keyed by the runtime address itself */
	key = ob->kind == OBJ_KERNEL ? f_off - m->pgoff + m->start : f_off;
	h = hmap_mix(hmap_mix(hmap_hash(key), mode), oi);
	for (uint32_t v = hidx_first(&j->addr_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&j->addr_idx, &it))
		if (j->addrs[v].f_off == key && j->addrs[v].mode == mode && j->addrs[v].obj == oi)
			return v;
	if (j->nr_addrs >= SYMJOB_NONE - 1 ||
	    !vec_reserve((void **)&j->addrs, &j->cap_addrs, j->nr_addrs + 1, sizeof(*j->addrs)) ||
	    /* an object's first address exactly: many objects have one or two */
	    !(ob->cap_addrs ? vec_reserve : vec_reserve_exact)((void **)&ob->addrs, &ob->cap_addrs,
								 ob->nr_addrs + 1, sizeof(*ob->addrs)))
		return SYMJOB_NONE;
	a = &j->addrs[j->nr_addrs];
	memset(a, 0, sizeof(*a));
	a->obj = oi;
	a->f_off = key;
	a->pgoff = m->pgoff;
	a->mode = (uint8_t)mode;
	if (!hidx_add(&j->addr_idx, h, (uint32_t)j->nr_addrs))
		return SYMJOB_NONE;
	ob->addrs[ob->nr_addrs++] = (uint32_t)j->nr_addrs;
	return (uint32_t)j->nr_addrs++;
}

uint32_t symjob_add(struct symjob *j, uint32_t mapping, uint64_t f_off)
{
	return add_addr(j, mapping, f_off, SYMJOB_FILE_OFFSET);
}

uint32_t symjob_add_as(struct symjob *j, uint32_t mapping, uint64_t value, enum symjob_addr_mode mode)
{
	return add_addr(j, mapping, value, mode);
}

/* An address's ELF virtual address, from what it was registered by. */
/* The ELF address of value, which is what mode says (in a mapping at file offset pgoff). */
static bool value_va(struct sym_file *f, unsigned mode, uint64_t value, uint64_t pgoff, uint64_t *va)
{
	switch (mode) {
	case SYMJOB_ELF_VA:
		*va = value;
		return true;
	case SYMJOB_IMAGE_OFFSET:
		return sym_file_image_va(f, value, va);
	default:
		return sym_file_normalize(f, value, pgoff, va);
	}
}

static bool addr_va(struct sym_file *f, const struct sj_addr *a, uint64_t *va)
{
	return value_va(f, a->mode, a->f_off, a->pgoff, va);
}

void symjob_hit(struct symjob *j, uint32_t addr_id, uint64_t n)
{
	if (addr_id < j->nr_addrs)
		j->addrs[addr_id].hits += n;
}

/* ---- locating files ---- */

/* ---- resolving ---- */

/*
 * The copies in an object's strings of the strings of one open file's
 * results, by the source string's address: those stay where they are while
 * the file is open (its cached results point at them too), and most of an
 * object's addresses name a function, a file already seen (cc1: 38.6 k
 * addresses, three strings each, interned one by one before).
 */
#define STR_MEMO 1024

struct str_memo {
	const char *src[STR_MEMO];
	const char *dst[STR_MEMO];
	uint32_t id[STR_MEMO];
};

/*
 * What a worker keeps while it copies one object's results: the frames'
 * and their numbers' capacities, and the object's functions by
 * (function, system_name, file, start_line) string ids.
 */
struct sj_copy {
	struct str_memo *memo; /* NULL: every string interned */
	size_t cap_frames, cap_frame_funcs, cap_funcs;
	struct hidx func_idx;
};

static void copy_init(struct sj_copy *c)
{
	memset(c, 0, sizeof(*c));
	c->memo = calloc(1, sizeof(*c->memo));
	hidx_init(&c->func_idx);
}

static void copy_release(struct sj_copy *c)
{
	free(c->memo);
	hidx_release(&c->func_idx);
}

/* s copied into ob's strings (through m, NULL: none), its id there in *id (STRTAB_NONE: none). */
static const char *keep_str(struct sj_obj *ob, struct str_memo *m, const char *s, uint32_t *id)
{
	size_t i = (size_t)(((uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull) >> 54);

	if (m && m->src[i] == s) {
		*id = m->id[i];
		return m->dst[i];
	}
	*id = STRTAB_NONE;
	if (!ob->strs) {
		ob->strs = malloc(sizeof(*ob->strs));
		if (!ob->strs)
			return "";
		strtab_init(ob->strs);
	}
	*id = strtab_intern_cstr(ob->strs, s);
	if (m && *id != STRTAB_NONE) {
		m->src[i] = s;
		m->dst[i] = strtab_get(ob->strs, *id);
		m->id[i] = *id;
	}
	return strtab_get(ob->strs, *id);
}

/* The number of ob's function fn (string ids in ob->strs), added on first sight; SYMJOB_NONE: none. */
static uint32_t func_number(struct sj_obj *ob, struct sj_copy *c, const struct symjob_function *fn)
{
	uint64_t h = hmap_mix(hmap_mix(hmap_mix(hmap_hash(fn->function), fn->system_name), fn->file),
			      fn->start_line);
	struct hidx_iter it;

	for (uint32_t v = hidx_first(&c->func_idx, h, &it); v != HIDX_NONE;
	     v = hidx_next(&c->func_idx, &it))
		if (!memcmp(&ob->funcs[v], fn, sizeof(*fn)))
			return v;
	if (ob->nr_funcs >= SYMJOB_NONE - 1 ||
	    !vec_reserve((void **)&ob->funcs, &c->cap_funcs, ob->nr_funcs + 1, sizeof(*ob->funcs)) ||
	    !hidx_add(&c->func_idx, h, (uint32_t)ob->nr_funcs))
		return SYMJOB_NONE;
	ob->funcs[ob->nr_funcs] = *fn;
	return (uint32_t)ob->nr_funcs++;
}

static void copy_frames(struct sj_obj *ob, struct sj_copy *c, struct symjob_result *r,
			const struct sym_result *sr)
{
	size_t base = ob->nr_frames;

	if (!sr->nr || !vec_reserve((void **)&ob->frames, &c->cap_frames, base + sr->nr,
				    sizeof(*ob->frames)))
		return;
	/* once out of room, the object's frames go without numbers (callers intern their strings) */
	if ((base == 0 || ob->frame_funcs) &&
	    !vec_reserve((void **)&ob->frame_funcs, &c->cap_frame_funcs, base + sr->nr,
			 sizeof(*ob->frame_funcs))) {
		free(ob->frame_funcs);
		ob->frame_funcs = NULL;
	}
	for (uint32_t i = 0; i < sr->nr; i++) {
		struct sym_frame fr = sr->frames[i];
		struct symjob_function fn;

		/* the sym_file's strings die with it: keep copies */
		fr.function = keep_str(ob, c->memo, fr.function, &fn.function);
		fr.system_name = keep_str(ob, c->memo, fr.system_name, &fn.system_name);
		fr.file = keep_str(ob, c->memo, fr.file, &fn.file);
		fn.start_line = fr.start_line;
		ob->frames[base + i] = fr;
		if (ob->frame_funcs)
			ob->frame_funcs[base + i] =
				fn.function == STRTAB_NONE || fn.system_name == STRTAB_NONE ||
						fn.file == STRTAB_NONE
					? SYMJOB_NONE
					: func_number(ob, c, &fn);
	}
	ob->nr_frames = base + sr->nr;
	r->nr = sr->nr;
	/* frames are pointed at after all are copied (the array may move) */
	r->frames = (const struct sym_frame *)(uintptr_t)(base + 1);
}

/*
 * dwz-compressed debug info names an alternate file by build-id; libdw only
 * looks next to the debug file and in /usr/lib/debug, so look where conv
 * looks for any debug file. Debuginfod is not asked from a worker thread (its
 * client is single-threaded): a missing alt file costs only some names.
 */
static void attach_alt(struct symjob *j, struct sym_file *f)
{
	const uint8_t *abid;
	size_t alen;
	struct loc_opts lo = { 0 };
	struct loc_result r;
	struct loc_stats ls = { 0 };

	if (!sym_file_missing_alt(f, &abid, &alen))
		return;
	lo.debug_dirs = j->o.debug_dirs;
	lo.nr_debug_dirs = j->o.nr_debug_dirs;
	if (loc_find_debug(&lo, abid, alen, NULL, &r, &ls, NULL) == CONV_E_OK)
		sym_file_set_alt(f, r.path);
}

static enum sym_name_form name_form(const struct symjob *j)
{
	return j->o.full_signatures ? SYM_NAME_FULL : SYM_NAME_PERF;
}

/* plan: the object's addresses, wanted of its symbol file for the run's later pass. */
static void plan_user(struct symjob *j, struct sj_obj *ob)
{
	const struct located *lp = &ob->loc;
	struct objtab_want *w;

	if (j->o.no_symbolize || j->tab == j->own_tab || !lp->have_debug || !ob->nr_addrs ||
	    !(w = malloc(ob->nr_addrs * sizeof(*w))))
		return; /* without the plan, that pass looks them up all the same, only slower */
	for (size_t i = 0; i < ob->nr_addrs; i++) {
		const struct sj_addr *a = &j->addrs[ob->addrs[i]];

		w[i].value = a->f_off;
		w[i].pgoff = a->pgoff;
		w[i].mode = a->mode;
	}
	objtab_sym_want(j->tab, lp->debug, lp->have_runtime ? lp->runtime : NULL, name_form(j), w,
			ob->nr_addrs);
	free(w);
}

/* What later inputs will ask of f (objtab_sym_want), looked up while it is open: cached for them. */
static void lookup_wanted(struct objtab_ent *held, struct sym_file *f)
{
	const struct objtab_want *w;
	size_t n = objtab_sym_wants(held, &w);

	for (size_t i = 0; i < n; i++) {
		struct sym_result sr;
		uint64_t va;

		if (value_va(f, w[i].mode, w[i].value, w[i].pgoff, &va))
			sym_file_lookup(f, va, &sr);
	}
}

static void resolve_user(struct symjob *j, struct sj_obj *ob)
{
	const struct located *lp = &ob->loc;
	struct sym_file *f = NULL;
	struct objtab_ent *held;
	struct sj_copy c;
	enum symsrc src = lp->src;
	bool fresh;

	if (j->o.no_symbolize) {
		/* addresses only: the ELF address of each frame from the binary's program headers */
		if (!lp->have_runtime ||
		    !(held = objtab_sym_get(j->tab, lp->runtime, lp->runtime, name_form(j), &f, &fresh)))
			return;
		for (size_t i = 0; i < ob->nr_addrs; i++) {
			struct sj_addr *a = &j->addrs[ob->addrs[i]];
			uint64_t va;

			if (addr_va(f, a, &va)) {
				a->res.normalized = true;
				a->res.elf_va = va;
			}
		}
		objtab_put(j->tab, held);
		return;
	}
	if (!lp->have_debug ||
	    !(held = objtab_sym_get(j->tab, lp->debug, lp->have_runtime ? lp->runtime : NULL,
				    name_form(j), &f, &fresh)))
		return;
	copy_init(&c);
	/* the binary's exported symbols are a stand-in, not debug info: it stays listed as missing */
	ob->found = !lp->dynsym_only;
	if (fresh)
		attach_alt(j, f); /* an open file kept from an earlier input has its alt file already */
	ob->src = src;
	for (size_t i = 0; i < ob->nr_addrs; i++) {
		struct sj_addr *a = &j->addrs[ob->addrs[i]];
		struct sym_result sr;
		uint64_t va;

		if (!addr_va(f, a, &va)) {
			a->res.src = SYMSRC_UNRESOLVED;
			continue;
		}
		a->res.normalized = true;
		a->res.elf_va = va;
		if (sym_file_lookup(f, va, &sr) != CONV_E_OK || sr.how == SYM_NONE) {
			a->res.src = SYMSRC_UNRESOLVED;
			continue;
		}
		a->res.src = sr.how == SYM_SYMTAB ? SYMSRC_SYMTAB : src;
		copy_frames(ob, &c, &a->res, &sr);
	}
	copy_release(&c);
	lookup_wanted(held, f);
	objtab_put(j->tab, held);
}

static void resolve_kernel(struct symjob *j, struct sj_obj *ob);

/*
 * A guess of an object's symbolization time in microseconds, to hand out
 * the costliest first: the workers finish together when one object does
 * not wait at the end of the list (longest processing time first). The
 * rates were measured here on the benchmark recording's objects: debug info
 * ~10 ms per MB of (compressed) debug file to open and index, plus lookups;
 * a symbol table 0.6 us an address; kallsyms ~10 ms to load. Only the order
 * depends on it, never an answer.
 */
static uint64_t obj_cost(const struct sj_obj *ob)
{
	struct stat st;

	if (ob->kind == OBJ_KERNEL)
		return 10000 + ob->nr_addrs;
	if (!ob->loc.have_debug)
		return 0;
	if (ob->loc.debug_has_dwarf && !ob->loc.dynsym_only && stat(ob->loc.debug, &st) == 0)
		return (uint64_t)st.st_size / 100 + 2 * ob->nr_addrs;
	return 500 + ob->nr_addrs * 6 / 10;
}

struct obj_rank {
	uint64_t cost;
	uint32_t obj;
};

static int rank_cmp(const void *a, const void *b)
{
	const struct obj_rank *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

/* order[]: the objects by guessed cost, highest first; on failure the index order stays. */
static void order_objects(struct symjob *j)
{
	struct obj_rank *r = malloc((j->nr_objs ? j->nr_objs : 1) * sizeof(*r));
	uint32_t *o = malloc((j->nr_objs ? j->nr_objs : 1) * sizeof(*o));

	if (!r || !o) {
		free(r);
		free(o);
		return;
	}
	for (size_t i = 0; i < j->nr_objs; i++) {
		r[i].cost = obj_cost(&j->objs[i]);
		r[i].obj = (uint32_t)i;
	}
	qsort(r, j->nr_objs, sizeof(*r), rank_cmp);
	for (size_t i = 0; i < j->nr_objs; i++)
		o[i] = r[i].obj;
	free(r);
	free(j->order);
	j->order = o;
}

static void *worker(void *arg)
{
	struct symjob *j = arg;

	for (;;) {
		size_t i = atomic_fetch_add(&j->next_obj, 1);

		if (i >= j->nr_objs)
			break;
		if (j->order)
			i = j->order[i];
		if (j->objs[i].kind == OBJ_USER && j->o.plan)
			plan_user(j, &j->objs[i]);
		else if (j->objs[i].kind == OBJ_USER)
			resolve_user(j, &j->objs[i]);
		else if (!j->o.no_symbolize && !j->o.plan)
			resolve_kernel(j, &j->objs[i]); /* one object (kernel and modules): one worker */
	}
	return NULL;
}

/* Kernel symbols: --kallsyms, perf's cached copy, or /proc/kallsyms of this very kernel. */
static void load_kallsyms(struct symjob *j, uint64_t text_addr, const uint8_t *bid, size_t bid_len)
{
	char path[4096];
	const char *home = getenv("HOME");
	char hex[2 * PM_BUILD_ID_MAX + 1];

	if (j->o.kallsyms && (j->ks_ent = objtab_kallsyms_get(j->tab, j->o.kallsyms, &j->ks)) != NULL) {
		j->ks_loaded = true;
	} else if (bid_len && home) {
		buildid_hex(bid, bid_len, hex);
		snprintf(path, sizeof(path), "%s/.debug/[kernel.kallsyms]/%s/kallsyms", home, hex);
		if ((j->ks_ent = objtab_kallsyms_get(j->tab, path, &j->ks)) != NULL)
			j->ks_loaded = true;
	}
	if (!j->ks_loaded && j->o.running_kernel) {
		uint8_t run[BUILDID_MAX];
		size_t rlen;

		/* only the very kernel that was recorded (build-id equal when the file has one) */
		if (!bid_len || (buildid_from_notes_file("/sys/kernel/notes", run, &rlen) == CONV_E_OK &&
				 rlen == bid_len && !memcmp(run, bid, rlen))) {
			if ((j->ks_ent = objtab_kallsyms_get(j->tab, "/proc/kallsyms", &j->ks)) != NULL)
				j->ks_loaded = true;
		}
	}
	/* KASLR: the recording says where _text was; kallsyms says where it is now */
	if (j->ks_loaded && j->ks->text && text_addr)
		j->ks_shift = text_addr - j->ks->text;
}

/*
 * A vmlinux with DWARF, found by the kernel's build-id (locally or from
 * debuginfod): names, lines and inline frames for the kernel image. Its
 * addresses are link-time ones; the recording's _text mapping gives the
 * KASLR slide.
 */
static struct sym_file *open_vmlinux(struct symjob *j, const uint8_t *bid, size_t len,
				     uint64_t text_addr, uint64_t *slide, enum symsrc *src,
				     struct objtab_ent **held)
{
	bool fresh;

	struct loc_opts lo = { 0 };
	struct loc_result r;
	const char *path = NULL;
	struct sym_file *f = NULL;
	uint64_t t;

	if (!len || !text_addr)
		return NULL;
	lo.debug_dirs = j->o.debug_dirs;
	lo.nr_debug_dirs = j->o.nr_debug_dirs;
	if (loc_find_debug(&lo, bid, len, NULL, &r, &j->lstats, NULL) == CONV_E_OK &&
	    r.has_debug_info) {
		path = r.path;
		*src = src_of(r.source);
	}
	if (!path && j->dfd && dfd_request(j->dfd, bid, len, DFD_DEBUGINFO) == CONV_E_OK) {
		if (dfd_wait(j->dfd, bid, len, DFD_DEBUGINFO, &path, NULL) != CONV_E_OK)
			path = NULL;
		*src = SYMSRC_DEBUGINFOD;
	}
	if (!path || !(*held = objtab_sym_get(j->tab, path, NULL, name_form(j), &f, &fresh)))
		return NULL;
	if (!sym_file_has_dwarf(f) || (!sym_file_symbol_addr(f, "_text", &t) &&
				       !sym_file_symbol_addr(f, "_stext", &t))) {
		objtab_put(j->tab, *held);
		*held = NULL;
		return NULL;
	}
	*slide = text_addr - t;
	return f;
}

static void resolve_kernel(struct symjob *j, struct sj_obj *ob)
{
	uint64_t text_addr = 0, kstart = 0, klimit = 0, slide = 0;
	const uint8_t *bid = NULL;
	size_t bid_len = 0;
	struct sym_file *vml;
	struct objtab_ent *vml_held = NULL;
	struct sj_copy c;
	enum symsrc vsrc = SYMSRC_UNRESOLVED;

	for (uint32_t i = 0; i < procmap_mapping_count(j->pm); i++) {
		const struct pm_mapping *m = procmap_mapping(j->pm, i);

		if (m->kind == PM_KIND_KERNEL) {
			text_addr = m->pgoff;
			kstart = m->start;
			klimit = m->limit;
			bid = m->build_id;
			bid_len = m->build_id_size;
		}
	}
	vml = open_vmlinux(j, bid, bid_len, text_addr, &slide, &vsrc, &vml_held);
	/* the vmlinux's strings, then kallsyms' (both stay put until the end of this object) */
	copy_init(&c);
	if (vml) {
		ob->found = true;
		ob->src = vsrc;
		for (size_t i = 0; i < ob->nr_addrs; i++) {
			struct sj_addr *a = &j->addrs[ob->addrs[i]];
			struct sym_result sr;

			if (a->f_off < kstart || a->f_off >= klimit)
				continue; /* modules: kallsyms below */
			a->res.elf_va = a->f_off - slide;
			a->res.normalized = true;
			if (sym_file_lookup(vml, a->res.elf_va, &sr) == CONV_E_OK && sr.nr) {
				a->res.src = vsrc;
				copy_frames(ob, &c, &a->res, &sr);
			}
		}
		objtab_put(j->tab, vml_held);
		/* a later allocation may take a closed file's addresses */
		if (c.memo)
			memset(c.memo, 0, sizeof(*c.memo));
	}
	load_kallsyms(j, text_addr, bid, bid_len);
	if (!j->ks_loaded) {
		copy_release(&c);
		return;
	}
	if (!ob->found)
		ob->src = SYMSRC_KALLSYMS;
	ob->found = true;
	for (size_t i = 0; i < ob->nr_addrs; i++) {
		struct sj_addr *a = &j->addrs[ob->addrs[i]];
		const struct ksym *k;
		struct sym_frame fr;
		struct sym_result sr;

		if (a->res.nr)
			continue; /* resolved from vmlinux */
		k = kallsyms_lookup(j->ks, a->f_off - j->ks_shift);
		a->res.elf_va = a->f_off;
		if (!k) {
			a->res.src = SYMSRC_UNRESOLVED;
			continue;
		}
		memset(&fr, 0, sizeof(fr));
		fr.function = kallsyms_str(j->ks, k->name);
		fr.system_name = fr.function;
		fr.file = "";
		sr.how = SYM_SYMTAB;
		sr.nr = 1;
		sr.frames = &fr;
		a->res.src = SYMSRC_KALLSYMS;
		copy_frames(ob, &c, &a->res, &sr);
	}
	copy_release(&c);
	/* the names are copied: the run's table keeps kallsyms for later inputs, or lets it go */
	objtab_put(j->tab, j->ks_ent);
	j->ks_ent = NULL;
	j->ks = NULL;
}

enum conv_err symjob_run(struct symjob *j, struct conv_diag *diag)
{
	symjob_start(j);
	return symjob_finish(j, diag);
}

void symjob_start(struct symjob *j)
{
	unsigned n = j->o.jobs ? j->o.jobs : (unsigned)sysconf(_SC_NPROCESSORS_ONLN);

	if (j->started)
		return;
	j->started = true;
	if (n < 1)
		n = 1;
	if (n > SYMJOB_MAX_THREADS)
		n = SYMJOB_MAX_THREADS;
	if (!j->o.no_symbolize) {
		for (size_t i = 0; i < j->nr_objs && !j->vmlinux_asked; i++)
			if (j->objs[i].kind == OBJ_KERNEL)
				request_vmlinux(j); /* before the waits below, not after them */
		for (size_t i = 0; i < j->nr_objs; i++)
			if (j->objs[i].kind == OBJ_USER)
				fetched(j, &j->objs[i]);
		if (j->dfd)
			copy_dfd_stats(j);
	}
	/* --no-symbolize too: program headers give ELF addresses */
	if (n > 1)
		order_objects(j);
	atomic_store(&j->next_obj, 0);
	/* the caller's thread is the last worker, from symjob_finish on */
	for (unsigned i = 1; i < n; i++)
		if (pthread_create(&j->th[j->nr_th], NULL, worker, j) == 0)
			j->nr_th++;
}

/* Waits for the workers started by symjob_start. */
static void join_workers(struct symjob *j)
{
	for (unsigned i = 0; i < j->nr_th; i++)
		pthread_join(j->th[i], NULL);
	j->nr_th = 0;
}

/*
 * Why an object without a build-id has no names, from what the process
 * model found at its path, and what would help: its binaries from the
 * recording machine (-d DIR), or the word that the files here are the
 * recorded ones (--buildid-from-disk; the checks of each file stay).
 * debuginfod needs a build-id to ask for.
 */
static const char *no_bid_reason(const struct symjob *j, const struct sj_obj *ob)
{
	const struct pm_mapping *m = procmap_mapping(j->pm, ob->map);

	if (ob->by_path)
		return "no symbols in the file at its recorded path: -d DIR with its debug file";
	if (ob->outside_dir)
		return "no build-id recorded, and -d DIR/<its path> leads out of DIR (`..` or a symlink): "
		       "not read without a build-id to prove it";
	switch (m ? m->path_check : PM_PATH_UNTRIED) {
	case PM_PATH_ELSEWHERE:
		return "no build-id recorded, and the recording does not name this machine: -d DIR with "
		       "its binaries, or --buildid-from-disk if the files here are the recorded ones";
	case PM_PATH_DIFFERS:
		return "no build-id recorded, and the files here differ from the recording's "
		       "(build-ids): -d DIR with the recorded binaries";
	case PM_PATH_MISSING:
		return "no build-id recorded, and no file at its recorded path here: -d DIR with the "
		       "recorded binary";
	case PM_PATH_CHANGED:
		return "no build-id recorded, and the file at its path was replaced or written after "
		       "the recording: -d DIR with the recorded binary";
	case PM_PATH_UNREADABLE:
		return "no build-id recorded, and the file at its path is not a readable ELF file";
	default:
		return "no build-id recorded, and no matching file here";
	}
}

/*
 * Makes the objects' string and function numbers job-wide: an object's
 * come after those of the objects before it. Its functions are gathered in
 * symjob.funcs; out of memory, results keep no numbers (funcs NULL).
 */
static void number_results(struct symjob *j)
{
	size_t nf = 0, ns = 0;

	for (size_t i = 0; i < j->nr_objs; i++)
		nf += j->objs[i].nr_funcs;
	j->funcs = nf ? malloc(nf * sizeof(*j->funcs)) : NULL;
	for (size_t i = 0; i < j->nr_objs; i++) {
		struct sj_obj *ob = &j->objs[i];

		if (!j->funcs || !ob->strs) {
			free(ob->frame_funcs);
			ob->frame_funcs = NULL;
		}
		for (size_t k = 0; ob->frame_funcs && k < ob->nr_frames; k++)
			if (ob->frame_funcs[k] != SYMJOB_NONE)
				ob->frame_funcs[k] += (uint32_t)j->nr_funcs;
		for (size_t k = 0; j->funcs && k < ob->nr_funcs; k++) {
			struct symjob_function *fn = &j->funcs[j->nr_funcs++];

			*fn = ob->funcs[k];
			fn->function += (uint32_t)ns;
			fn->system_name += (uint32_t)ns;
			fn->file += (uint32_t)ns;
		}
		free(ob->funcs);
		ob->funcs = NULL;
		ns += ob->strs ? ob->strs->count : 0;
	}
	j->nr_strs = ns;
}

enum conv_err symjob_finish(struct symjob *j, struct conv_diag *diag)
{
	(void)diag;
	/* once: the results' frame indexes are turned into pointers below */
	if (j->finished)
		return CONV_E_OK;
	j->finished = true;
	symjob_start(j);
	worker(j);
	join_workers(j);
	number_results(j);
	/* frame pointers were stored as 1-based indexes while arrays could move */
	for (size_t i = 0; i < j->nr_addrs; i++) {
		struct sj_addr *a = &j->addrs[i];
		struct sj_obj *ob = &j->objs[a->obj];

		if (a->res.nr) {
			uintptr_t k = (uintptr_t)a->res.frames - 1;

			a->res.frames = ob->frames + k;
			a->res.funcs = ob->frame_funcs ? ob->frame_funcs + k : NULL;
		}
		j->st.frames_by_src[a->res.src] += a->hits;
		if (a->res.nr > 1)
			j->st.inline_frames += a->res.nr - 1;
		if (!a->res.normalized && ob->kind == OBJ_USER && ob->found)
			j->st.normalize_failed++;
		ob->hits += a->hits;
		if (a->res.src == SYMSRC_UNRESOLVED) {
			ob->unresolved_hits += a->hits;
			if (!a->res.normalized)
				ob->unnormalized_hits += a->hits;
		}
	}
	j->st.objects = j->nr_objs;
	j->st.addresses = j->nr_addrs;
	free(j->missing);
	j->nr_missing = 0;
	j->missing = calloc(j->nr_objs ? j->nr_objs : 1, sizeof(*j->missing));
	if (!j->missing)
		return CONV_E_NOMEM;
	for (size_t i = 0; i < j->nr_objs; i++) {
		struct sj_obj *ob = &j->objs[i];
		char hex[2 * PM_BUILD_ID_MAX + 1];

		if (ob->found) {
			j->st.objects_found++;
			continue;
		}
		buildid_hex(ob->bid, ob->bid_len, hex);
		j->missing[j->nr_missing].build_id =
			strtab_get(&j->mstrs, strtab_intern_cstr(&j->mstrs, hex));
		j->missing[j->nr_missing].path = ob->kind == OBJ_KERNEL ? "[kernel.kallsyms]" : ob->path;
		j->missing[j->nr_missing].frames = ob->hits;
		j->missing[j->nr_missing].reason = "no debug info or symbols found";
		j->nr_missing++;
	}
	free(j->unres);
	j->nr_unres = 0;
	j->unres = calloc(j->nr_objs ? j->nr_objs : 1, sizeof(*j->unres));
	if (!j->unres)
		return CONV_E_NOMEM;
	for (size_t i = 0; i < j->nr_objs; i++) {
		struct sj_obj *ob = &j->objs[i];
		struct symjob_missing *m = &j->unres[j->nr_unres];
		char hex[2 * PM_BUILD_ID_MAX + 1];

		if (!ob->unresolved_hits)
			continue;
		buildid_hex(ob->bid, ob->bid_len, hex);
		m->build_id = strtab_get(&j->mstrs, strtab_intern_cstr(&j->mstrs, hex));
		m->path = ob->kind == OBJ_KERNEL ? "[kernel.kallsyms]" : ob->path;
		m->frames = ob->unresolved_hits;
		if (j->o.no_symbolize)
			m->reason = "--no-symbolize";
		else if (!ob->found && ob->kind == OBJ_KERNEL)
			m->reason = "no kernel symbols (vmlinux, --kallsyms, or the running kernel's)";
		else if (!ob->found && ob->dfd_reason)
			m->reason = ob->dfd_reason;
		else if (!ob->found)
			m->reason = ob->bid_len ? "no debug info or symbols found for its build-id"
						: no_bid_reason(j, ob);
		else if (ob->unnormalized_hits)
			m->reason = "debug info found, but not the binary: its program headers are needed";
		else
			m->reason = "no symbol at these addresses";
		j->nr_unres++;
	}
	return CONV_E_OK;
}

size_t symjob_unresolved_count(const struct symjob *j)
{
	return j->nr_unres;
}

const struct symjob_missing *symjob_unresolved_at(const struct symjob *j, size_t i)
{
	return i < j->nr_unres ? &j->unres[i] : NULL;
}

void symjob_set_running_kernel(struct symjob *j, bool running)
{
	j->o.running_kernel = running;
}

const struct symjob_result *symjob_get(const struct symjob *j, uint32_t addr_id)
{
	return addr_id < j->nr_addrs ? &j->addrs[addr_id].res : NULL;
}

struct objtab *symjob_objects(const struct symjob *j)
{
	return j->tab;
}

size_t symjob_file_build_id(const struct symjob *j, uint32_t mapping, const uint8_t **bid)
{
	const struct sj_obj *ob;

	*bid = NULL;
	if (mapping >= j->cap_obj_of_map || j->obj_of_map[mapping] >= j->nr_objs)
		return 0;
	ob = &j->objs[j->obj_of_map[mapping]];
	*bid = ob->file_bid;
	return ob->file_bid_len;
}

const struct symjob_function *symjob_function(const struct symjob *j, uint32_t id)
{
	return id < j->nr_funcs ? &j->funcs[id] : NULL;
}

size_t symjob_function_count(const struct symjob *j)
{
	return j->nr_funcs;
}

size_t symjob_string_count(const struct symjob *j)
{
	return j->nr_strs;
}

const struct symjob_stats *symjob_stats(const struct symjob *j)
{
	return &j->st;
}

size_t symjob_missing_count(const struct symjob *j)
{
	return j->nr_missing;
}

const struct symjob_missing *symjob_missing_at(const struct symjob *j, size_t i)
{
	return i < j->nr_missing ? &j->missing[i] : NULL;
}

const char *symjob_src_name(enum symsrc s)
{
	static const char *const names[SYMSRC__COUNT] = {
		[SYMSRC_UNRESOLVED] = "unresolved", [SYMSRC_LOCAL] = "local",
		[SYMSRC_DEBUG_DIR] = "debug_dir",   [SYMSRC_SYSTEM] = "usr_lib_debug",
		[SYMSRC_PERF_CACHE] = "perf_cache", [SYMSRC_DEBUGLINK] = "debuglink",
		[SYMSRC_DEBUGINFOD] = "debuginfod", [SYMSRC_SYMTAB] = "symtab_only",
		[SYMSRC_KALLSYMS] = "kallsyms",     [SYMSRC_JIT] = "jit_map",
	};

	return (unsigned)s < SYMSRC__COUNT ? names[s] : "unknown";
}

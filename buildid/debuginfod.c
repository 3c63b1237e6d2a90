/*
 * debuginfod client over one libcurl multi handle.
 *
 * Why not libdebuginfod: it blocks per build-id (its parallelism is across
 * servers, not across files), it is dlopen'ed by libdwfl behind our back
 * whenever DEBUGINFOD_URLS is set, and Debian links it against a second curl
 * stack (gnutls). Here many build-ids are in flight at once, every answer is
 * verified before it enters the cache, and the environment variables keep
 * the meaning the debuginfod client gives them.
 *
 * A request moves QUEUED -> ACTIVE (one transfer to servers[r->server]) ->
 * DONE. A failed transfer either moves the request on to the next server or
 * finishes it; the result of a request that tried several servers is the
 * most actionable failure seen (see dfd_wait() in the header). A server
 * that refused, could not be reached or stayed silent for --timeout is
 * given up for the run (struct dfd_srv): requests skip it, and its
 * transfers it has not answered yet are cut, so that a dead server costs
 * one --timeout, not one per request or per round of max_parallel.
 */
#include "buildid/debuginfod.h"

#include "core/cleanup.h"
#include "core/clock.h"

#include "buildid/buildid.h"
#include "core/hmap.h"
#include "core/io.h"

#include <curl/curl.h>

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define DFD_DEFAULT_TIMEOUT_S 90
#define DFD_DEFAULT_MAX_SIZE (4ull << 30) /* larger than any debug file we know of */
#define DFD_DEFAULT_MAX_TIME_S 1800
#define DFD_DEFAULT_DEADLINE_S 300
#define DFD_DEFAULT_NEGATIVE_TTL_S 600
/*
 * Transfers in flight. Each holds a socket and a temporary file (registered
 * in core/cleanup.h's 64 slots, beside the outputs' temp files), so 32 stays
 * within those and far under the 1024 descriptors a process gets by default,
 * while a system-wide recording's unknown objects (23 in issue 31's) go out
 * at once: with 8, a server slow to answer cost a round of waiting per 8.
 */
#define DFD_DEFAULT_PARALLEL 32
/* How often dfd_wait() reports that it is still waiting (DFD_EV_WAIT). */
#define DFD_WAIT_TICK_MS 100
#define DFD_DEFAULT_MAX_IN_FLIGHT (1ull << 30)
#define DFD_DEFAULT_MIN_FREE (256ull << 20)
/* free space is looked at again each time a download grows by this much */
#define DFD_FREE_CHECK_STEP (4ull << 20)
/* How often an entry another process is downloading is tried again. */
#define DFD_BUSY_RETRY_MS 50L
/*
 * A transfer slower than this for timeout_s seconds is given up, as the
 * debuginfod client does ("at least 100K per timeout seconds"): a server
 * dripping bytes is bounded by the same --timeout as a silent one.
 */
#define DFD_LOW_SPEED_BPS (100L * 1024)
/* Enough for a server behind a load balancer and a mirror; more is a loop. */
#define DFD_MAX_REDIRS 5L
/*
 * A temporary file older than this was left by a conv that crashed; a live
 * transfer is bounded by max_time_s, which is far shorter by default.
 */
#define DFD_STALE_TMP_S (24L * 3600)
#define DFD_NONE UINT32_MAX

/*
 * libcurl is loaded (dlopen) when the first client with a server is made,
 * not linked: with its dependencies (TLS, SSH, LDAP, Kerberos, IDN: 31 of
 * the 38 libraries conv loaded) it cost every run 14 ms before main (a
 * program linking conv's other libraries starts in 15 ms, with libcurl in
 * 29 ms), and most runs download nothing.
 */
struct curl_api {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *e, CURLoption opt, ...);
	CURLcode (*easy_getinfo)(CURL *e, CURLINFO info, ...);
	CURLcode (*easy_pause)(CURL *e, int bitmask);
	void (*easy_cleanup)(CURL *e);
	const char *(*easy_strerror)(CURLcode code);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_add_handle)(CURLM *m, CURL *e);
	CURLMcode (*multi_remove_handle)(CURLM *m, CURL *e);
	CURLMcode (*multi_perform)(CURLM *m, int *running);
	CURLMcode (*multi_poll)(CURLM *m, struct curl_waitfd extra[], unsigned n, int timeout_ms,
				int *numfds);
	CURLMsg *(*multi_info_read)(CURLM *m, int *left);
	CURLMcode (*multi_cleanup)(CURLM *m);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
	/* libcurl's own URL parser: a redirect's target is compared as libcurl will connect to it */
	CURLU *(*url)(void);
	void (*url_cleanup)(CURLU *u);
	CURLUcode (*url_set)(CURLU *u, CURLUPart part, const char *content, unsigned int flags);
	CURLUcode (*url_get)(CURLU *u, CURLUPart part, char **content, unsigned int flags);
	void (*free)(void *p);
};

static struct curl_api cu;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static char cu_error[256]; /* empty when libcurl was loaded */

static void cu_load(void)
{
	static const struct {
		const char *name;
		size_t off;
	} fns[] = {
		{ "curl_global_init", offsetof(struct curl_api, global_init) },
		{ "curl_global_cleanup", offsetof(struct curl_api, global_cleanup) },
		{ "curl_easy_init", offsetof(struct curl_api, easy_init) },
		{ "curl_easy_setopt", offsetof(struct curl_api, easy_setopt) },
		{ "curl_easy_getinfo", offsetof(struct curl_api, easy_getinfo) },
		{ "curl_easy_pause", offsetof(struct curl_api, easy_pause) },
		{ "curl_easy_cleanup", offsetof(struct curl_api, easy_cleanup) },
		{ "curl_easy_strerror", offsetof(struct curl_api, easy_strerror) },
		{ "curl_multi_init", offsetof(struct curl_api, multi_init) },
		{ "curl_multi_add_handle", offsetof(struct curl_api, multi_add_handle) },
		{ "curl_multi_remove_handle", offsetof(struct curl_api, multi_remove_handle) },
		{ "curl_multi_perform", offsetof(struct curl_api, multi_perform) },
		{ "curl_multi_poll", offsetof(struct curl_api, multi_poll) },
		{ "curl_multi_info_read", offsetof(struct curl_api, multi_info_read) },
		{ "curl_multi_cleanup", offsetof(struct curl_api, multi_cleanup) },
		{ "curl_slist_append", offsetof(struct curl_api, slist_append) },
		{ "curl_slist_free_all", offsetof(struct curl_api, slist_free_all) },
		{ "curl_url", offsetof(struct curl_api, url) },
		{ "curl_url_cleanup", offsetof(struct curl_api, url_cleanup) },
		{ "curl_url_set", offsetof(struct curl_api, url_set) },
		{ "curl_url_get", offsetof(struct curl_api, url_get) },
		{ "curl_free", offsetof(struct curl_api, free) },
	};
	struct curl_api api;
	/* the library itself: the one the build's headers are of (CMake passes its SONAME) */
	void *h = dlopen(CONV_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(cu_error, sizeof(cu_error), "cannot load %s: %s", CONV_CURL_SONAME,
			 dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *f = dlsym(h, fns[i].name);

		if (!f) {
			snprintf(cu_error, sizeof(cu_error), "%s has no %s", CONV_CURL_SONAME,
				 fns[i].name);
			return;
		}
		/* POSIX: a function's address from dlsym converts to a function pointer */
		memcpy((char *)&api + fns[i].off, &f, sizeof(f));
	}
	cu = api; /* the handle stays open: the functions are used until exit */
}

enum req_state { REQ_QUEUED, REQ_ACTIVE, REQ_DONE };

struct dfd_xfer;

struct dfd_req {
	uint8_t bid[BUILDID_MAX];
	size_t bid_len;
	enum dfd_kind kind;
	enum req_state state;
	char hex[2 * BUILDID_MAX + 1];
	uint32_t hash_next;    /* next request with the same hash, DFD_NONE at the end */
	struct dfd_req *qnext; /* queue link while QUEUED */
	size_t server;         /* server being tried, or next to try */
	struct dfd_xfer *xfer; /* while ACTIVE */
	bool network;          /* went to the queue, so its end is reported as DFD_EV_DONE */
	bool swept;            /* its entry's directory was swept of orphans (first transfer) */
	enum conv_err worst;   /* most actionable failure so far; NOTFOUND = only 404s */
	enum conv_err result;  /* when DONE */
	char *path;            /* when DONE and OK: malloc'd */
	char *msg;             /* message of `worst` or of the result: malloc'd */
	int lock_fd1;          /* its cache entry's lock file + 1, open from the first try; 0: none */
	bool locked;           /* that lock (flock) is held */
	long busy_left;        /* held elsewhere when ms_left was this: flock again at DFD_BUSY_RETRY_MS less */
	bool untrusted;        /* counted in untrusted: part of its entry was not trusted */
};

/* Why a transfer was ended by conv rather than by the server or libcurl. */
enum xfer_stop {
	XS_NONE,
	XS_TOO_LARGE, /* over max_size */
	XS_NOT_ELF,   /* the first bytes are not an ELF file's */
	XS_NO_SPACE,  /* the cache's file system is (nearly) full */
	XS_IO,        /* writing the temporary file failed (io_errno) */
};

/* One transfer in flight: the request's bytes to one server. */
struct dfd_xfer {
	struct dfd_client *c;
	struct dfd_req *r;
	CURL *easy;
	int dfd;           /* the entry's directory (checked by entry_open), where tmp is */
	int fd;
	char *tmp;         /* temporary file, removed unless renamed into place */
	unsigned redirects; /* followed so far (same origin only, at most DFD_MAX_REDIRS) */
	int cleanup;       /* its slot in core/cleanup.h's list (-1: none) */
	char *url;         /* asked now: the request's, or where the server redirected it */
	uint64_t received; /* body bytes */
	uint64_t total;    /* Content-Length of the 200 answer, 0 = unknown */
	uint64_t reported; /* received at the last DFD_EV_DATA */
	enum xfer_stop stopped; /* why we ended the transfer ourselves, if we did */
	uint8_t head[4];   /* the body's first bytes: ELF or not */
	int io_errno;      /* XS_IO: the temporary file's write error */
	bool paused;       /* waits for bytes in flight to fall below max_in_flight */
	bool answered;     /* the server sent a status line (or, file://, bytes) */
	bool to_deadline;  /* its whole-transfer limit is what was left before the deadline */
	uint64_t seq;      /* start order: the oldest transfer is never paused */
	uint64_t free_checked; /* received when free space was last looked at */
	uint64_t free_bytes;   /* free then, when too little */
	uint64_t others_bytes; /* what the other transfers still expected to write then */
	char errbuf[CURL_ERROR_SIZE];
};

/* A server and what became of it in this run. */
struct dfd_srv {
	struct dfd_server pub;
	char why[160]; /* pub.why once given up */
};

struct dfd_client {
	char **urls; /* base URLs without trailing '/' */
	size_t nr_urls;
	struct dfd_srv *srv; /* nr_urls of them, when a server can be asked */
	bool newly_down;     /* a server was given up: cut its unanswered transfers */
	int64_t wait_since;  /* CLOCK_MONOTONIC ns since callers wait without a break; 0: not */
	int64_t wait_told;   /* when the last DFD_EV_WAIT was emitted */
	bool in_wait;        /* inside dfd_wait(): every event says how long it has waited */
	char *cache;     /* conv's cache root */
	char *sys_cache; /* debuginfod's client cache, NULL when absent or the same as ours */
	int root_fd;     /* conv's cache root, opened once (cache_root); -1: not yet */
	uid_t root_uid;  /* its owner, who can replace any entry anyway: trusted */
	int sys_fd;      /* the client cache's root; -1: not open (sys_tried: could not be) */
	bool sys_tried;
	uid_t sys_uid;
	uid_t euid;
	bool offline;
	long timeout_s, max_time_s, neg_ttl_s;
	uint64_t (*clock_ns)(void); /* what the deadline is measured on (dfd_opts.clock_ns) */
	uint64_t deadline;          /* on clock_ns: no transfer runs past it */
	uint64_t max_size;
	uint64_t max_in_flight; /* body bytes on disk of all transfers in flight */
	uint64_t min_free;      /* bytes left free on the cache's file system */
	mode_t dir_mode; /* of entry directories, from the cache root's (files: its rw bits); 0: not looked at yet */
	unsigned max_parallel;
	void (*progress)(void *ctx, const struct dfd_progress *p);
	void *progress_ctx;

	CURLM *multi; /* NULL when offline or without servers: no socket ever */
	bool curl_inited;
	struct curl_slist *headers;

	struct dfd_req **reqs;
	size_t nr_reqs, alloc_reqs;
	struct hmap index; /* hash(build-id, kind) -> index of the first request + 1 */
	struct dfd_req *qhead, *qtail;
	unsigned nr_queued, nr_active;
	struct dfd_xfer **active; /* max_parallel slots, NULL = free */
	uint64_t in_flight;       /* sum of the active transfers' received bytes */
	uint64_t next_seq;        /* start order of transfers: the oldest is never paused */

	struct dfd_stats st;
};

static const char *const kind_names[] = { [DFD_DEBUGINFO] = "debuginfo",
					  [DFD_EXECUTABLE] = "executable" };

/* ---- small helpers ---- */

static char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *str_printf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* An environment variable, with "" treated as unset (as the debuginfod client does). */
static const char *env_get(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* A positive decimal from the environment, or 0 when unset or not a number. */
static uint64_t env_u64(const char *name)
{
	const char *v = env_get(name);
	char *end;
	unsigned long long x;

	if (!v || !isdigit((unsigned char)*v))
		return 0;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end)
		return 0;
	return (uint64_t)x;
}

/*
 * The most seconds a limit may be: libcurl refuses timeouts over INT_MAX
 * milliseconds (about 24 days; a transfer would fail to start), and more
 * would also overflow the deadline's arithmetic. Longer means no limit.
 */
#define DFD_MAX_SECONDS ((long)(INT_MAX / 1000))

static long within_max(long v)
{
	return v > DFD_MAX_SECONDS ? DFD_MAX_SECONDS : v;
}

static long env_seconds(const char *name)
{
	uint64_t v = env_u64(name);

	return v > (uint64_t)DFD_MAX_SECONDS ? DFD_MAX_SECONDS : (long)v;
}

static void set_msg(char **dst, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_msg(char **dst, const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(*dst);
	*dst = strdup(buf); /* NULL on OOM only loses the message */
}

/* Creates every missing directory of path (mode 0700: a cache made by conv is its user's). */
static int mkdir_p(const char *path)
{
	char *p = strdup(path);
	int ret = 0;

	if (!p)
		return ENOMEM;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char saved = *s;

		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			ret = errno;
			break;
		}
		*s = saved;
		if (!saved)
			break;
	}
	free(p);
	return ret;
}

/* ---- the cache's directories ---- */

/*
 * A cache may be shared with other users (a 1777 or 2775 directory), and
 * conv may run as root over it: whatever another user put there must not
 * make conv write, truncate or chmod a file outside the cache, nor hand out
 * a file that user can change. So, as git treats its lockfiles and the
 * debuginfod client its cache:
 *   - every entry is reached relative to descriptors of the cache root and
 *     of the entry's directory, opened O_NOFOLLOW: a symbolic link is never
 *     followed, a FIFO or device never opened;
 *   - an entry's directory or file is trusted only when it belongs to this
 *     user, to root or to the cache root's owner (who can replace any entry
 *     anyway), and a directory only when others cannot swap its files (not
 *     writable by group or others, or sticky); anything else is passed over
 *     and counted (dfd_stats.untrusted);
 *   - only files conv has just made (O_CREAT | O_EXCL, temporary, then
 *     renamed into place) are ever written or chmod'ed; an existing file is
 *     never opened for writing.
 */

/* Owners whose files are trusted: this user, root, and the owner of the directory they are in. */
static bool owner_trusted(const struct dfd_client *c, uid_t uid, uid_t root_owner)
{
	return uid == c->euid || uid == 0 || uid == root_owner;
}

/*
 * Opens conv's cache root once (made first, 0700, when create), and takes
 * the access of its entries from it as the user left it: a root made
 * private (conv's default) keeps them private, one opened to a group or to
 * all (a cache shared by users, or filled by one for others to read) opens
 * them alike, whatever the umask of the run that wrote them. errno-style.
 */
static int cache_root(struct dfd_client *c, bool create)
{
	struct stat st;
	int fd, e;

	if (c->root_fd >= 0)
		return 0;
	if (create && (e = mkdir_p(c->cache)) != 0)
		return e;
	/* the root itself is the user's choice (it may be a symlink to another disk) */
	fd = open(c->cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		return e;
	}
	c->root_fd = fd;
	c->root_uid = st.st_uid;
	/* setgid too: a group's cache keeps giving its entries the group */
	c->dir_mode = (st.st_mode & 02777) | 0700;
	/* sticky where others may write: they may add files, never replace this user's */
	if (st.st_mode & 022)
		c->dir_mode |= S_ISVTX;
	return 0;
}

enum ent_open { ENT_OK, ENT_ABSENT, ENT_UNTRUSTED, ENT_ERROR };

/*
 * Opens directory name under root (owned by root_owner), made first with
 * mode when create (and mode set past the umask if this call made it), and
 * checks that it can be trusted; why (n bytes) says why not. ours: in conv's
 * cache, where a directory of this user's that others could write without
 * the sticky bit (made before conv set it) is given it; the client cache is
 * never changed. *err: errno of ENT_ERROR.
 */
static enum ent_open dir_open_at(const struct dfd_client *c, int root, uid_t root_owner, const char *name,
				 bool create, mode_t mode, bool ours, int *out, int *err, char *why, size_t n)
{
	struct stat st;
	bool made = false;
	int fd;

	*out = -1;
	*err = 0;
	if (create) {
		if (mkdirat(root, name, mode) == 0)
			made = true;
		else if (errno != EEXIST) {
			*err = errno;
			return ENT_ERROR;
		}
	}
	fd = openat(root, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		if (errno == ENOENT && !create)
			return ENT_ABSENT;
		if (errno == ELOOP || errno == ENOTDIR) {
			/* O_DIRECTORY | O_NOFOLLOW on a link says ENOTDIR */
			bool link = fstatat(root, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);

			snprintf(why, n, "%s", link ? "is a symbolic link" : "is not a directory");
			return ENT_UNTRUSTED;
		}
		return ENT_ERROR;
	}
	if (fstat(fd, &st) != 0) {
		*err = errno;
		close(fd);
		return ENT_ERROR;
	}
	if (!owner_trusted(c, st.st_uid, root_owner)) {
		snprintf(why, n, "belongs to uid %lu (not this user, root or the cache's owner)",
			 (unsigned long)st.st_uid);
		close(fd);
		return ENT_UNTRUSTED;
	}
	if (made && st.st_uid == c->euid) {
		(void)fchmod(fd, mode); /* past the umask */
	} else if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX) &&
		   (!ours || st.st_uid != c->euid || fchmod(fd, (st.st_mode & 07777) | S_ISVTX) != 0)) {
		/* others could rename its files away and put theirs in their place */
		snprintf(why, n, "is writable by others (mode %04o) without the sticky bit",
			 (unsigned)(st.st_mode & 07777));
		close(fd);
		return ENT_UNTRUSTED;
	}
	*out = fd;
	return ENT_OK;
}

/* r's directory in conv's cache (made, and the cache root with it, when create). */
static enum ent_open entry_open(struct dfd_client *c, const struct dfd_req *r, bool create, int *out,
				int *err, char *why, size_t n)
{
	int e = cache_root(c, create);

	*out = -1;
	*err = e;
	if (e)
		return e == ENOENT && !create ? ENT_ABSENT : ENT_ERROR;
	return dir_open_at(c, c->root_fd, c->root_uid, r->hex, create, c->dir_mode, true, out, err, why, n);
}

/* Counts r in untrusted once, however many parts of its entry were passed over. */
static void note_untrusted(struct dfd_client *c, struct dfd_req *r)
{
	if (r->untrusted)
		return;
	r->untrusted = true;
	c->st.untrusted++;
}

/*
 * A name for the open file fd that opens that very file (/proc/self/fd/N),
 * for the readers that take a path; without /proc, fallback (whose file was
 * just checked to be fd's).
 */
static const char *fd_name(int fd, char *buf, size_t n, const char *fallback)
{
	snprintf(buf, n, "/proc/self/fd/%d", fd);
	return access(buf, F_OK) == 0 ? buf : fallback;
}

/*
 * Makes a temporary file .conv-KIND.XXXXXX in r's directory dfd (registered
 * in core/cleanup.h: removed if a signal stops conv), checked to be there: the
 * name reaches it through the cache root's path. Returns the fd, -1 with errno.
 */
static int tmp_make(struct dfd_client *c, const struct dfd_req *r, int dfd, char **tmp, int *slot)
{
	struct stat a, b;
	int fd, e;

	*slot = -1;
	*tmp = str_printf("%s/%s/.conv-%s.XXXXXX", c->cache, r->hex, kind_names[r->kind]);
	if (!*tmp) {
		errno = ENOMEM;
		return -1;
	}
	fd = cleanup_mkostemp(*tmp, O_CLOEXEC, slot);
	if (fd < 0) {
		e = errno;
		free(*tmp);
		*tmp = NULL;
		errno = e;
		return -1;
	}
	if (fstat(fd, &a) != 0 || fstatat(dfd, strrchr(*tmp, '/') + 1, &b, AT_SYMLINK_NOFOLLOW) != 0 ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		/* the path led elsewhere than the directory checked: not ours to unlink by name */
		close(fd);
		cleanup_drop(*slot);
		*slot = -1;
		free(*tmp);
		*tmp = NULL;
		errno = EXDEV;
		return -1;
	}
	return fd;
}

/* The wall clock: what a file's mtime is on. */
static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The monotonic clock: what waits and polls are timed with (a step of the wall clock moves no wait). */
static int64_t mono_ns(void)
{
	return (int64_t)clock_now_ns();
}

/* A negative entry written less than ttl ago; one from the future is stale (clock moved). */
static bool is_fresh(const struct stat *st, long ttl)
{
	int64_t mtime = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	int64_t age = wall_ns() - mtime;

	return ttl > 0 && age >= 0 && age < (int64_t)ttl * 1000000000;
}

/* ---- cache entries ---- */

enum entry_state { ENTRY_ABSENT, ENTRY_VALID, ENTRY_EMPTY, ENTRY_BAD, ENTRY_UNTRUSTED };

/*
 * Whether name in r's directory dfd, under the root at root_path owned by
 * root_owner, is a regular file of a trusted owner (else ENTRY_UNTRUSTED,
 * never opened) and an ELF file carrying exactly the request's GNU build-id.
 */
static enum entry_state entry_probe(const struct dfd_client *c, int dfd, const char *root_path,
				    uid_t root_owner, const char *name, const struct dfd_req *r,
				    struct stat *st)
{
	uint8_t id[BUILDID_MAX];
	size_t len = 0;
	struct stat o;
	char proc[40];
	const char *p;
	char *full;
	bool ok;
	int fd;

	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) != 0)
		return ENTRY_ABSENT;
	if (!S_ISREG(st->st_mode) || !owner_trusted(c, st->st_uid, root_owner))
		return ENTRY_UNTRUSTED;
	if (st->st_size == 0)
		return ENTRY_EMPTY;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return ENTRY_ABSENT;
	if (fstat(fd, &o) != 0 || o.st_dev != st->st_dev || o.st_ino != st->st_ino) {
		close(fd); /* replaced since it was looked at */
		return ENTRY_UNTRUSTED;
	}
	full = str_printf("%s/%s/%s", root_path, r->hex, name);
	p = fd_name(fd, proc, sizeof(proc), full);
	ok = p && buildid_from_path(p, id, &len, NULL) == CONV_E_OK && len == r->bid_len &&
	     memcmp(id, r->bid, len) == 0 && buildid_elf_intact(p);
	free(full);
	close(fd);
	return ok ? ENTRY_VALID : p ? ENTRY_BAD : ENTRY_ABSENT;
}

static char *entry_path(const char *root, const struct dfd_req *r, const char *suffix)
{
	return str_printf("%s/%s/%s%s", root, r->hex, kind_names[r->kind], suffix);
}

/*
 * Removes temporary files a run killed mid-download left in one entry
 * directory. With the entry's lock held (kind not NULL) this user's of that
 * kind are removed whatever their age: only the lock's holder writes them,
 * so any there are a dead holder's. Otherwise only those older than any
 * live transfer can be. Only regular files are removed (unlinkat: a link
 * is removed itself, never what it names).
 */
static void sweep_tmp(const struct dfd_client *c, int dfd, const char *kind)
{
	int d2 = dup(dfd);
	DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
	struct dirent *e;
	time_t now = time(NULL);
	size_t klen = kind ? strlen(kind) : 0;

	if (!d) {
		if (d2 >= 0)
			close(d2);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		bool orphan;

		if (strncmp(e->d_name, ".conv-", 6) != 0)
			continue;
		orphan = kind && !strncmp(e->d_name + 6, kind, klen) && e->d_name[6 + klen] == '.';
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    ((orphan && st.st_uid == c->euid) || now - st.st_mtime > DFD_STALE_TMP_S))
			unlinkat(dfd, e->d_name, 0);
	}
	closedir(d);
}

/* ---- request bookkeeping ---- */

static uint64_t req_hash(const uint8_t *bid, size_t len, enum dfd_kind kind)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a, then mixed */

	for (size_t i = 0; i < len; i++)
		h = (h ^ bid[i]) * 0x100000001b3ull;
	return hmap_hash(h ^ ((uint64_t)kind << 56) ^ len);
}

static struct dfd_req *req_find(const struct dfd_client *c, const uint8_t *bid, size_t len,
				enum dfd_kind kind)
{
	const uint64_t *v = hmap_get(&c->index, req_hash(bid, len, kind));
	uint32_t i = v ? (uint32_t)(*v - 1) : DFD_NONE;

	while (i != DFD_NONE) {
		struct dfd_req *r = c->reqs[i];

		if (r->kind == kind && r->bid_len == len && !memcmp(r->bid, bid, len))
			return r;
		i = r->hash_next;
	}
	return NULL;
}

static void emit(struct dfd_client *c, enum dfd_event ev, const struct dfd_req *r,
		 const struct dfd_xfer *x)
{
	struct dfd_progress p;

	if (!c->progress)
		return;
	memset(&p, 0, sizeof(p));
	p.event = ev;
	p.build_id = r->hex;
	p.kind = r->kind;
	p.url = x ? c->urls[r->server] : NULL;
	p.received = x ? x->received : 0;
	p.total = x ? x->total : 0;
	p.result = r->result;
	p.active = c->nr_active;
	p.queued = c->nr_queued;
	if (c->in_wait && c->wait_since) {
		int64_t ms = (mono_ns() - c->wait_since) / 1000000;

		p.waited_ms = ms > 0 ? (uint64_t)ms : 1;
	}
	c->progress(c->progress_ctx, &p);
}

/* Closes the request's lock file, letting go of the lock if held. */
static void req_lock_close(struct dfd_req *r)
{
	if (r->lock_fd1)
		close(r->lock_fd1 - 1);
	r->lock_fd1 = 0;
	r->locked = false;
}

static void req_finish(struct dfd_client *c, struct dfd_req *r, enum conv_err result, char *path)
{
	/* the entry is in place (or known missing): other processes waiting for it may look */
	req_lock_close(r);
	r->state = REQ_DONE;
	r->result = result;
	r->path = path;
	if (result == CONV_E_OK) {
		free(r->msg);
		r->msg = NULL;
	}
	if (r->network)
		emit(c, DFD_EV_DONE, r, NULL);
}

static void queue_push(struct dfd_client *c, struct dfd_req *r, bool front)
{
	r->state = REQ_QUEUED;
	r->network = true;
	if (front) {
		r->qnext = c->qhead;
		c->qhead = r;
		if (!c->qtail)
			c->qtail = r;
	} else {
		r->qnext = NULL;
		if (c->qtail)
			c->qtail->qnext = r;
		else
			c->qhead = r;
		c->qtail = r;
	}
	c->nr_queued++;
}

static struct dfd_req *queue_pop(struct dfd_client *c)
{
	struct dfd_req *r = c->qhead;

	if (!r)
		return NULL;
	c->qhead = r->qnext;
	if (!c->qhead)
		c->qtail = NULL;
	r->qnext = NULL;
	c->nr_queued--;
	return r;
}

/* Moves a queued request to the front: the caller is blocked on it. */
static void queue_bump(struct dfd_client *c, struct dfd_req *r)
{
	struct dfd_req *prev = NULL;

	for (struct dfd_req *q = c->qhead; q; prev = q, q = q->qnext) {
		if (q != r)
			continue;
		if (!prev)
			return;
		prev->qnext = r->qnext;
		if (c->qtail == r)
			c->qtail = prev;
		c->nr_queued--;
		queue_push(c, r, true);
		return;
	}
}

/*
 * Opens the entry's lock file once (r->lock_fd1): a busy entry is tried
 * again every round with one flock. Made here (O_EXCL, and then given the
 * entry's access), or an existing one opened read-only without following
 * a link: only a regular file of a trusted owner is locked (one of another
 * user's could be held by that user for ever; the download then goes on
 * without a lock, its rename into place being atomic all the same).
 */
static bool req_lock_open(struct dfd_client *c, struct dfd_req *r)
{
	char name[32], why[160];
	struct stat st;
	int dfd, err, fd;

	if (r->lock_fd1)
		return true;
	if (entry_open(c, r, true, &dfd, &err, why, sizeof(why)) != ENT_OK)
		return false;
	snprintf(name, sizeof(name), ".lock-%s", kind_names[r->kind]);
	/* read access is enough for flock: a run that may only read the cache still waits its turn */
	fd = openat(dfd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		(void)fchmod(fd, c->dir_mode & 0666); /* made just now, by this process */
	} else if (errno == EEXIST || errno == EACCES || errno == EROFS) {
		fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 && errno == ELOOP)
			note_untrusted(c, r);
		if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
				!owner_trusted(c, st.st_uid, c->root_uid))) {
			note_untrusted(c, r);
			close(fd);
			fd = -1;
		}
	}
	close(dfd);
	if (fd < 0)
		return false;
	r->lock_fd1 = fd + 1;
	return true;
}

/*
 * Removes the entry found in state s in directory dfd (torn by a crash or a
 * full disk, replaced by hand, or an old negative entry), under its lock:
 * without it, the lock's holder may just have renamed a good file there.
 * Held elsewhere: left to that holder, whose download replaces it.
 */
static void remove_entry(struct dfd_client *c, struct dfd_req *r, int dfd, enum entry_state s)
{
	const char *name = kind_names[r->kind];
	bool mine = r->locked;
	struct stat st;

	if (!mine && (!req_lock_open(c, r) || flock(r->lock_fd1 - 1, LOCK_EX | LOCK_NB) != 0))
		return;
	/* probed under this lock already when it was held then; else looked at again under it */
	if ((mine || entry_probe(c, dfd, c->cache, c->root_uid, name, r, &st) == s) &&
	    unlinkat(dfd, name, 0) == 0 && s == ENTRY_BAD)
		c->st.corrupt_cache_removed++;
	if (!mine)
		(void)flock(r->lock_fd1 - 1, LOCK_UN);
}

/* Whether the debuginfod client's cache (read-only) holds r: *path then malloc'd. */
static bool sys_lookup(struct dfd_client *c, struct dfd_req *r, char **path)
{
	struct stat st;
	char why[160];
	int dfd, err;
	enum ent_open e;
	enum entry_state s;

	*path = NULL;
	if (!c->sys_cache)
		return false;
	if (c->sys_fd < 0 && !c->sys_tried) {
		c->sys_tried = true;
		c->sys_fd = open(c->sys_cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (c->sys_fd >= 0 && fstat(c->sys_fd, &st) == 0) {
			c->sys_uid = st.st_uid;
		} else if (c->sys_fd >= 0) {
			close(c->sys_fd);
			c->sys_fd = -1;
		}
	}
	if (c->sys_fd < 0)
		return false;
	e = dir_open_at(c, c->sys_fd, c->sys_uid, r->hex, false, 0, false, &dfd, &err, why, sizeof(why));
	if (e == ENT_UNTRUSTED)
		note_untrusted(c, r);
	if (e != ENT_OK)
		return false;
	/* Read-only: a bad or empty entry there belongs to another program. */
	s = entry_probe(c, dfd, c->sys_cache, c->sys_uid, kind_names[r->kind], r, &st);
	close(dfd);
	if (s == ENTRY_UNTRUSTED)
		note_untrusted(c, r);
	if (s != ENTRY_VALID)
		return false;
	*path = entry_path(c->sys_cache, r, "");
	return true;
}

/* Ends r: its entry's directory in conv's cache is not trusted (why), so nothing is stored or read there. */
static void finish_untrusted(struct dfd_client *c, struct dfd_req *r, const char *why)
{
	note_untrusted(c, r);
	set_msg(&r->msg, "cache entry %s/%s %s: not trusted, not used", c->cache, r->hex, why);
	req_finish(c, r, CONV_E_IO, NULL);
}

/*
 * Answers a request from the caches if possible. Returns true when the
 * request is finished.
 */
static bool lookup_caches(struct dfd_client *c, struct dfd_req *r)
{
	struct stat st;
	char why[160] = "", missing[32];
	char *p = NULL;
	int dfd = -1, err;
	enum ent_open e = entry_open(c, r, false, &dfd, &err, why, sizeof(why));
	enum entry_state s = ENTRY_ABSENT;

	if (e == ENT_OK) {
		s = entry_probe(c, dfd, c->cache, c->root_uid, kind_names[r->kind], r, &st);
		if (s == ENTRY_VALID) {
			close(dfd);
			p = entry_path(c->cache, r, "");
			if (!p) {
				req_finish(c, r, CONV_E_NOMEM, NULL);
				return true;
			}
			c->st.cache_hits++;
			req_finish(c, r, CONV_E_OK, p);
			return true;
		}
		if (s == ENTRY_EMPTY && c->neg_ttl_s > 0 && is_fresh(&st, c->neg_ttl_s)) {
			/*
			 * An empty entry is the debuginfod client's own negative entry
			 * (a cache shared through DEBUGINFOD_CACHE_PATH): honour it.
			 */
			close(dfd);
			c->st.negative_hits++;
			set_msg(&r->msg, "%s/%s: recently not found (debuginfod negative entry)", r->hex,
				kind_names[r->kind]);
			req_finish(c, r, CONV_E_NOTFOUND, NULL);
			return true;
		}
		/* another user's file, or a link: left, and replaced by the download's rename */
		if (s == ENTRY_UNTRUSTED)
			note_untrusted(c, r);
		if (s == ENTRY_BAD || s == ENTRY_EMPTY)
			remove_entry(c, r, dfd, s); /* and fetched again */
	}

	if (sys_lookup(c, r, &p)) {
		if (dfd >= 0)
			close(dfd);
		c->st.system_cache_hits++;
		req_finish(c, r, CONV_E_OK, p);
		return true;
	}

	snprintf(missing, sizeof(missing), "%s.missing", kind_names[r->kind]);
	if (dfd >= 0 && c->neg_ttl_s > 0 && fstatat(dfd, missing, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISREG(st.st_mode) || !owner_trusted(c, st.st_uid, c->root_uid)) {
			note_untrusted(c, r); /* ignored; a new one is renamed over it */
		} else if (is_fresh(&st, c->neg_ttl_s)) {
			close(dfd);
			c->st.negative_hits++;
			set_msg(&r->msg, "%s/%s: not found on any server within the last %lds",
				r->hex, kind_names[r->kind], c->neg_ttl_s);
			req_finish(c, r, CONV_E_NOTFOUND, NULL);
			return true;
		}
	}
	if (dfd >= 0)
		close(dfd);

	if (e == ENT_UNTRUSTED) {
		finish_untrusted(c, r, why);
		return true;
	}
	if (c->offline || !c->multi) {
		c->st.not_found++;
		set_msg(&r->msg, "%s/%s: not cached and %s", r->hex, kind_names[r->kind],
			c->offline ? "offline" : "no debuginfod servers are configured");
		req_finish(c, r, CONV_E_NOTFOUND, NULL);
		return true;
	}
	return false;
}

/*
 * Remembers "every server said 404" so the next run does not ask again: a
 * new file renamed over KIND.missing (its date is the entry's), never an
 * existing one opened.
 */
static void write_negative(struct dfd_client *c, struct dfd_req *r)
{
	char why[160], name[32];
	char *tmp = NULL;
	int dfd, err, fd, slot;

	if (entry_open(c, r, true, &dfd, &err, why, sizeof(why)) != ENT_OK)
		return;
	fd = tmp_make(c, r, dfd, &tmp, &slot);
	if (fd >= 0) {
		const char *base = strrchr(tmp, '/') + 1;

		(void)fchmod(fd, c->dir_mode & 0666);
		snprintf(name, sizeof(name), "%s.missing", kind_names[r->kind]);
		if (close(fd) != 0 || renameat(dfd, base, dfd, name) != 0)
			unlinkat(dfd, base, 0);
		cleanup_drop(slot);
	}
	free(tmp);
	close(dfd);
}

/* ---- transfers ---- */

/* Milliseconds left before the client's deadline (0 or less: passed). */
static long ms_left(const struct dfd_client *c)
{
	uint64_t now = c->clock_ns();

	return now >= c->deadline ? -(long)((now - c->deadline) / 1000000u)
				  : (long)((c->deadline - now) / 1000000u);
}

/* Bytes conv may use on the file system of fd; UINT64_MAX when unknown (no reason to stop). */
static uint64_t fs_free(int fd)
{
	struct statvfs v;

	if (fstatvfs(fd, &v) != 0)
		return UINT64_MAX;
	return (uint64_t)v.f_bavail * v.f_frsize;
}

/* What the other transfers in flight still expect to write (their Content-Length less what came). */
static uint64_t others_due(const struct dfd_client *c, const struct dfd_xfer *x)
{
	uint64_t due = 0;

	for (unsigned i = 0; i < c->max_parallel; i++) {
		const struct dfd_xfer *y = c->active[i];

		if (y && y != x && y->total > y->received)
			due += y->total - y->received;
	}
	return due;
}

/*
 * Whether x can store `more` bytes, after what the other transfers still
 * expect to write, and leave min_free on the cache's file system: two large
 * files that fit only one at a time fail at the second's first bytes, not
 * hundreds of MB into it. Looked at on the first body bytes (with
 * Content-Length, for the whole file) and then each DFD_FREE_CHECK_STEP
 * bytes, not per write.
 */
static bool xfer_space_ok(struct dfd_xfer *x, uint64_t more)
{
	uint64_t f = fs_free(x->fd), others = others_due(x->c, x), need = x->c->min_free + others;

	x->free_checked = x->received;
	if (f == UINT64_MAX || (need >= x->c->min_free && f >= need && f - need >= more))
		return true;
	x->free_bytes = f;
	x->others_bytes = others;
	x->stopped = XS_NO_SPACE;
	return false;
}

/* The active transfer started first: it is never paused, so the others never wait for ever. */
static bool xfer_is_oldest(const struct dfd_client *c, const struct dfd_xfer *x)
{
	for (unsigned i = 0; i < c->max_parallel; i++)
		if (c->active[i] && c->active[i]->seq < x->seq)
			return false;
	return true;
}

static size_t on_body(char *data, size_t size, size_t n, void *ud)
{
	struct dfd_xfer *x = ud;
	struct dfd_client *c = x->c;
	size_t len = size * n;
	long code = 0;

	x->answered = true; /* file:// has no headers */
	cu.easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 300 && code < 400)
		return len; /* a redirect's own body: what it points to is followed by xfer_follow */
	if (c->in_flight + len > c->max_in_flight && !xfer_is_oldest(c, x)) {
		/* libcurl keeps these bytes and hands them over again once resumed */
		if (!x->paused) {
			x->paused = true;
			c->st.paused++;
		}
		return CURL_WRITEFUNC_PAUSE;
	}
	c->st.bytes += len;
	if (c->max_size && (x->received > c->max_size || len > c->max_size - x->received)) {
		x->stopped = XS_TOO_LARGE; /* a server that ignored X-DEBUGINFOD-MAXSIZE and Content-Length */
		return 0;
	}
	/* what cannot be the ELF file asked for is not stored: stopped at its first bytes */
	for (size_t i = 0; x->received + i < sizeof(x->head) && i < len; i++)
		x->head[x->received + i] = (uint8_t)data[i];
	if (x->received < sizeof(x->head) && x->received + len >= sizeof(x->head) &&
	    memcmp(x->head, "\177ELF", 4) != 0) {
		x->stopped = XS_NOT_ELF;
		return 0;
	}
	if ((x->received == 0 || x->received - x->free_checked >= DFD_FREE_CHECK_STEP) &&
	    !xfer_space_ok(x, x->total > x->received + len ? x->total - x->received : len))
		return 0;
	x->io_errno = io_write_all(x->fd, data, len, NULL);
	if (x->io_errno) {
		x->stopped = XS_IO;
		return 0;
	}
	x->received += len;
	c->in_flight += len;
	if (c->in_flight > c->st.in_flight_peak)
		c->st.in_flight_peak = c->in_flight;
	return len;
}

/* Checks Content-Length of a 200 answer before any body byte is stored. */
static size_t on_header(char *buf, size_t size, size_t n, void *ud)
{
	static const char name[] = "content-length:";
	struct dfd_xfer *x = ud;
	size_t len = size * n, i = sizeof(name) - 1;
	long code = 0;
	uint64_t v = 0;

	x->answered = true; /* a status line or a header: the server is there */
	if (len <= i || strncasecmp(buf, name, i) != 0)
		return len;
	cu.easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200)
		return len; /* a redirect's or an error's own length */
	while (i < len && (buf[i] == ' ' || buf[i] == '\t'))
		i++;
	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		unsigned d = (unsigned)(buf[i] - '0');

		v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
	}
	x->total = v;
	if (x->c->max_size && v > x->c->max_size) {
		x->stopped = XS_TOO_LARGE;
		return 0;
	}
	return len;
}

static void xfer_free(struct dfd_xfer *x)
{
	if (!x)
		return;
	if (x->fd >= 0)
		close(x->fd);
	if (x->tmp)
		unlinkat(x->dfd, strrchr(x->tmp, '/') + 1, 0);
	cleanup_drop(x->cleanup);
	if (x->dfd >= 0)
		close(x->dfd);
	free(x->tmp);
	free(x->url);
	free(x);
}

/*
 * The whole transfer's limit: its own, or what is left before the deadline
 * if less (then x->to_deadline: libcurl's timer, not ours, says when it
 * passed, and it may fire a millisecond before our clock would).
 */
static long xfer_time_ms(const struct dfd_client *c, struct dfd_xfer *x)
{
	long left = ms_left(c);

	/* 0 would mean no limit at all: a transfer started at the deadline still ends */
	if (left < 1)
		left = 1;
	x->to_deadline = left < c->max_time_s * 1000L;
	return x->to_deadline ? left : c->max_time_s * 1000L;
}

static bool easy_setup(struct dfd_client *c, struct dfd_xfer *x)
{
	CURL *e = x->easy;
	bool ok = true;

#define SET(opt, val) ok = ok && cu.easy_setopt(e, opt, val) == CURLE_OK
	SET(CURLOPT_URL, x->url);
	SET(CURLOPT_PRIVATE, x);
	SET(CURLOPT_ERRORBUFFER, x->errbuf);
	SET(CURLOPT_NOSIGNAL, 1L);
	/* file:// is accepted from the user (hermetic mirrors) */
#if LIBCURL_VERSION_NUM >= 0x075500
	SET(CURLOPT_PROTOCOLS_STR, "http,https,file");
#else
	SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS | CURLPROTO_FILE));
#endif
	/* redirects are followed by xfer_follow, only to the server's own origin */
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	/* Error bodies (404 pages) never reach the file; the status decides. */
	SET(CURLOPT_FAILONERROR, 1L);
	SET(CURLOPT_USERAGENT, "conv (debuginfod client)");
	SET(CURLOPT_CONNECTTIMEOUT, c->timeout_s);
	SET(CURLOPT_LOW_SPEED_LIMIT, DFD_LOW_SPEED_BPS);
	SET(CURLOPT_LOW_SPEED_TIME, c->timeout_s);
	SET(CURLOPT_TIMEOUT_MS, xfer_time_ms(c, x));
	if (c->max_size) {
		curl_off_t m = c->max_size > (uint64_t)INT64_MAX ? (curl_off_t)INT64_MAX
								 : (curl_off_t)c->max_size;

		SET(CURLOPT_MAXFILESIZE_LARGE, m);
	}
	if (c->headers)
		SET(CURLOPT_HTTPHEADER, c->headers);
	SET(CURLOPT_WRITEFUNCTION, on_body);
	SET(CURLOPT_WRITEDATA, x);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_HEADERDATA, x);
#undef SET
	return ok;
}

/*
 * Starts a transfer of r from servers[r->server]. On failure the request is
 * not touched and the error (IO or NOMEM) is returned with r->msg set.
 */
static enum conv_err xfer_start(struct dfd_client *c, struct dfd_req *r)
{
	struct dfd_xfer *x = calloc(1, sizeof(*x));
	char why[160];
	enum ent_open eo;
	unsigned slot;
	int e;

	if (!x)
		return CONV_E_NOMEM;
	x->c = c;
	x->r = r;
	x->dfd = -1;
	x->fd = -1;
	x->cleanup = -1;
	eo = entry_open(c, r, true, &x->dfd, &e, why, sizeof(why));
	if (eo == ENT_UNTRUSTED) {
		/* made by another user since the caches were looked at */
		note_untrusted(c, r);
		set_msg(&r->msg, "cache entry %s/%s %s: not trusted, not used", c->cache, r->hex, why);
		xfer_free(x);
		return CONV_E_IO;
	}
	if (eo != ENT_OK) {
		if (e == ENOMEM)
			goto nomem;
		set_msg(&r->msg, "cannot create cache directory %s/%s: %s", c->cache, r->hex, strerror(e));
		xfer_free(x);
		return CONV_E_IO;
	}
	if (!r->swept)
		sweep_tmp(c, x->dfd, r->locked ? kind_names[r->kind] : NULL);
	r->swept = true;
	/* removed if a signal stops conv mid-download */
	x->fd = tmp_make(c, r, x->dfd, &x->tmp, &x->cleanup);
	if (x->fd < 0) {
		e = errno;
		if (e == ENOMEM)
			goto nomem;
		set_msg(&r->msg, "cannot create a file in the cache: %s/%s: %s", c->cache, r->hex,
			strerror(e));
		xfer_free(x);
		return CONV_E_IO;
	}
	x->url = str_printf("%s/buildid/%s/%s", c->urls[r->server], r->hex, kind_names[r->kind]);
	if (!x->url)
		goto nomem;
	x->easy = cu.easy_init();
	if (!x->easy)
		goto nomem;
	if (!easy_setup(c, x) || cu.multi_add_handle(c->multi, x->easy) != CURLM_OK) {
		cu.easy_cleanup(x->easy);
		goto nomem;
	}
	for (slot = 0; c->active[slot]; slot++)
		;
	c->active[slot] = x;
	x->seq = c->next_seq++;
	c->nr_active++;
	c->st.transfers++;
	c->srv[r->server].pub.transfers++;
	r->xfer = x;
	r->state = REQ_ACTIVE;
	emit(c, DFD_EV_START, r, x);
	return CONV_E_OK;

nomem:
	xfer_free(x);
	set_msg(&r->msg, "out of memory starting a transfer");
	return CONV_E_NOMEM;
}

/* Rank of a failure for reporting: the higher, the more useful to the user. */
static int fail_rank(enum conv_err e)
{
	switch (e) {
	case CONV_E_LIMIT:
		return 3;
	case CONV_E_FORMAT:
		return 2;
	case CONV_E_NET:
		return 1;
	default:
		return 0;
	}
}

enum lock_state { LOCK_HELD, LOCK_BUSY, LOCK_ANSWERED };

static bool req_skip_down(struct dfd_client *c, struct dfd_req *r);

/*
 * One process downloads a cache entry while others sharing the cache wait
 * for it: an flock on CACHE/HEX/.lock-KIND, which the kernel releases when
 * its holder ends, however it ends (kill -9 included). Once held, the
 * caches are looked at again: the entry, or a fresh negative answer, may
 * have come from the process that held it (LOCK_ANSWERED: the request is
 * finished). A lock that cannot be made at all is no reason not to
 * download: LOCK_HELD then.
 */
static enum lock_state req_lock(struct dfd_client *c, struct dfd_req *r)
{
	if (!req_lock_open(c, r))
		return LOCK_HELD;
	if (flock(r->lock_fd1 - 1, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK)
			return LOCK_BUSY;
		req_lock_close(r);
		return LOCK_HELD;
	}
	r->locked = true;
	return lookup_caches(c, r) ? LOCK_ANSWERED : LOCK_HELD;
}

/*
 * Past the deadline a request is not sent (again), also not while another
 * process holds its entry: it ends with its most useful failure so far, or
 * as not asked.
 */
static bool req_past_deadline(struct dfd_client *c, struct dfd_req *r, long left)
{
	if (left > 0)
		return false;
	c->st.deadline++;
	if (r->worst == CONV_E_OK || r->worst == CONV_E_NOTFOUND) {
		c->st.errors++;
		set_msg(&r->msg, "not asked: the symbolization deadline (--symbolize-deadline) had passed");
		req_finish(c, r, CONV_E_NET, NULL);
	} else {
		req_finish(c, r, r->worst, NULL);
	}
	return true;
}

/*
 * Starts queued requests while slots are free; one whose entry another
 * process is downloading goes to the back of the queue, tried again next
 * round.
 */
static void start_queued(struct dfd_client *c)
{
	struct dfd_req *r;
	size_t n = c->nr_queued;
	long left = ms_left(c); /* one clock read a round */

	while (n-- && c->nr_active < c->max_parallel && (r = queue_pop(c)) != NULL) {
		enum conv_err err;
		enum lock_state ls;

		/*
		 * past the deadline, a last look at the caches (no lock needed to
		 * read): the process holding the entry may have put it in place
		 */
		if (left <= 0 && (lookup_caches(c, r) || req_past_deadline(c, r, left)))
			continue;
		/* its servers given up meanwhile: ended without a transfer (and without the lock) */
		if (!req_skip_down(c, r)) {
			req_finish(c, r, r->worst, NULL);
			continue;
		}
		/* held elsewhere a moment ago: not flock'ed again on every call (steps come often) */
		if (r->busy_left && left > r->busy_left - DFD_BUSY_RETRY_MS) {
			queue_push(c, r, false);
			continue;
		}
		ls = req_lock(c, r);
		if (ls == LOCK_BUSY) {
			r->busy_left = left;
			queue_push(c, r, false);
			continue;
		}
		if (ls == LOCK_ANSWERED)
			continue;
		err = xfer_start(c, r);
		if (err != CONV_E_OK)
			req_finish(c, r, err, NULL);
	}
}

/*
 * Checks the downloaded file and renames it into place. Returns its outcome;
 * a failure is described in msg.
 */
static enum conv_err xfer_commit(struct dfd_client *c, struct dfd_xfer *x, char **path, char *msg,
				 size_t msg_size)
{
	struct dfd_req *r = x->r;
	uint8_t id[BUILDID_MAX];
	size_t len = 0;
	char hex[2 * BUILDID_MAX + 1];
	enum conv_err err;
	char *final, missing[32], proc[40];
	const char *name = kind_names[r->kind], *tp = fd_name(x->fd, proc, sizeof(proc), x->tmp);
	int fd;

	/* the file written, through its descriptor */
	err = buildid_from_path(tp, id, &len, NULL);
	if (err != CONV_E_OK || len != r->bid_len || memcmp(id, r->bid, len) != 0) {
		c->st.bad_build_id++;
		if (err == CONV_E_OK) {
			buildid_hex(id, len, hex);
			snprintf(msg, msg_size, "%s: sent a file with build-id %s", x->url, hex);
		} else {
			snprintf(msg, msg_size, "%s: sent %s", x->url,
				 err == CONV_E_NOTFOUND ? "an ELF file without a GNU build-id"
							: "something that is not ELF");
		}
		return CONV_E_FORMAT;
	}
	if (!buildid_elf_intact(tp)) {
		c->st.bad_build_id++;
		snprintf(msg, msg_size, "%s: sent an ELF file cut short (its headers point past its end)",
			 x->url);
		return CONV_E_FORMAT;
	}
	fd = x->fd;
	x->fd = -1;
	(void)fchmod(fd, c->dir_mode & 0666); /* made by this process (O_EXCL) */
	/* on the disk before it is renamed into place: a crash must not leave a named but empty entry */
	if (fsync(fd) != 0) {
		int e = errno;

		close(fd);
		snprintf(msg, msg_size, "writing %s: %s", x->tmp, strerror(e));
		return CONV_E_IO;
	}
	if (close(fd) != 0) {
		snprintf(msg, msg_size, "writing %s: %s", x->tmp, strerror(errno));
		return CONV_E_IO;
	}
	final = entry_path(c->cache, r, "");
	if (!final) {
		snprintf(msg, msg_size, "out of memory");
		return CONV_E_NOMEM;
	}
	/* over whatever is there: a link or another user's file is replaced, never followed */
	if (renameat(x->dfd, strrchr(x->tmp, '/') + 1, x->dfd, name) != 0) {
		snprintf(msg, msg_size, "cannot rename into %s: %s", final, strerror(errno));
		free(final);
		return CONV_E_IO;
	}
	free(x->tmp);
	x->tmp = NULL; /* renamed: xfer_free() must not unlink it */
	cleanup_drop(x->cleanup);
	x->cleanup = -1;
	snprintf(missing, sizeof(missing), "%s.missing", name);
	unlinkat(x->dfd, missing, 0);
	*path = final;
	c->st.fetched++;
	return CONV_E_OK;
}

/* What one finished transfer means for its request; msg describes a failure. */
static enum conv_err xfer_outcome(struct dfd_client *c, struct dfd_xfer *x, CURLcode res,
				  long code, char **path, char *msg, size_t msg_size)
{
	bool is_file = !strncasecmp(x->url, "file:", 5);

	if (x->stopped == XS_TOO_LARGE || res == CURLE_FILESIZE_EXCEEDED ||
	    (res == CURLE_HTTP_RETURNED_ERROR && code == 406)) {
		c->st.too_large++;
		if (c->max_size)
			snprintf(msg, msg_size, "%s: larger than the limit of %llu bytes", x->url,
				 (unsigned long long)c->max_size);
		else
			snprintf(msg, msg_size, "%s: refused as too large (HTTP 406)", x->url);
		return CONV_E_LIMIT;
	}
	if (x->stopped == XS_NOT_ELF) {
		c->st.bad_build_id++;
		snprintf(msg, msg_size, "%s: sent something that is not ELF (stopped at its first bytes)", x->url);
		return CONV_E_FORMAT;
	}
	if (x->stopped == XS_NO_SPACE) {
		c->st.no_space++;
		snprintf(msg, msg_size, "%s: not stored: %llu bytes free in the cache's file system, "
			 "%llu kept free, %llu due to other downloads (%s)", x->url,
			 (unsigned long long)x->free_bytes, (unsigned long long)c->min_free,
			 (unsigned long long)x->others_bytes, x->total ? "the file would not fit" : "nearly full");
		return CONV_E_IO;
	}
	if (x->stopped == XS_IO) {
		snprintf(msg, msg_size, "writing %s: %s", x->tmp, strerror(x->io_errno));
		return CONV_E_IO;
	}
	if (res == CURLE_OK && (code == 200 || (is_file && code == 0)))
		return xfer_commit(c, x, path, msg, msg_size);
	if ((res == CURLE_HTTP_RETURNED_ERROR && code == 404) ||
	    (is_file && res == CURLE_FILE_COULDNT_READ_FILE)) {
		snprintf(msg, msg_size, "%s: not found", x->url);
		return CONV_E_NOTFOUND;
	}
	c->st.errors++;
	if (res == CURLE_OPERATION_TIMEDOUT &&
	    (ms_left(c) <= 0 || (x->to_deadline && !strncmp(x->errbuf, "Operation timed out", 19)))) {
		c->st.deadline++;
		snprintf(msg, msg_size, "%s: timed out at the symbolization deadline (--symbolize-deadline)",
			 x->url);
	} else if (res == CURLE_OPERATION_TIMEDOUT && !strncmp(x->errbuf, "Operation too slow", 18) &&
		   !x->answered) {
		/* the words the summary gives the server, which is given up for it */
		snprintf(msg, msg_size, "%s: did not answer within %ld s (--timeout)", x->url, c->timeout_s);
	} else if (res == CURLE_OPERATION_TIMEDOUT && !strncmp(x->errbuf, "Operation too slow", 18)) {
		snprintf(msg, msg_size, "%s: timed out: under %ld KiB/s for %ld s (--timeout), %llu bytes received",
			 x->url, DFD_LOW_SPEED_BPS / 1024, c->timeout_s, (unsigned long long)x->received);
	} else if (res == CURLE_OK || res == CURLE_HTTP_RETURNED_ERROR)
		snprintf(msg, msg_size, "%s: HTTP %ld", x->url, code);
	else if ((res == CURLE_OUT_OF_MEMORY || (int)res == 100 /* CURLE_TOO_LARGE, libcurl 8.6 */) &&
		 !x->received)
		/* libcurl before 8.6 reports a header over its 100 KiB limit as out of memory */
		snprintf(msg, msg_size, "%s: response header too large (libcurl: %.80s)", x->url,
			 x->errbuf[0] ? x->errbuf : cu.easy_strerror(res));
	else
		snprintf(msg, msg_size, "%s: %.200s", x->url,
			 x->errbuf[0] ? x->errbuf : cu.easy_strerror(res));
	return CONV_E_NET;
}

/* Bytes in flight went down: paused transfers go on (each looks at the cap again). */
static void resume_paused(struct dfd_client *c)
{
	for (unsigned i = 0; i < c->max_parallel; i++) {
		struct dfd_xfer *x = c->active[i];

		if (x && x->paused) {
			x->paused = false;
			/* may hand the kept bytes to on_body at once, which may pause x again */
			cu.easy_pause(x->easy, CURLPAUSE_CONT);
		}
	}
}

/* ---- servers given up ---- */

/*
 * Whether a finished transfer shows that its server is not there for this
 * run, and why in words (for the summary: "did not answer within 3 s"): it
 * refused the connection, could not be reached, or said nothing (or next to
 * nothing) for --timeout. Every request it would get next would cost the
 * same wait. A 404, an HTTP error, a bad file, the whole-transfer limit and
 * the deadline say nothing of the server's health (or are ours).
 */
static enum dfd_down xfer_down(const struct dfd_client *c, const struct dfd_xfer *x, CURLcode res,
			       long os_errno, char *why, size_t n)
{
	switch (res) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		snprintf(why, n, "could not be resolved");
		return DFD_DOWN_UNREACHABLE;
	case CURLE_COULDNT_CONNECT:
		if (os_errno == ECONNREFUSED)
			snprintf(why, n, "refused the connection");
		else
			snprintf(why, n, "could not be reached (%.80s)",
				 os_errno ? strerror((int)os_errno) : x->errbuf);
		return DFD_DOWN_UNREACHABLE;
	case CURLE_OPERATION_TIMEDOUT:
		/* libcurl's words for the whole-transfer limit (CURLOPT_TIMEOUT_MS) */
		if (ms_left(c) <= 0 || !strncmp(x->errbuf, "Operation timed out", 19))
			return DFD_UP;
		if (!x->answered) {
			snprintf(why, n, "did not answer within %ld s", c->timeout_s);
			return DFD_DOWN_TIMEOUT;
		}
		snprintf(why, n, "sent under %ld KiB/s for %ld s", DFD_LOW_SPEED_BPS / 1024, c->timeout_s);
		return DFD_DOWN_SLOW;
	default:
		return DFD_UP;
	}
}

static void server_give_up(struct dfd_client *c, size_t s, enum dfd_down d, const char *why)
{
	struct dfd_srv *v = &c->srv[s];

	if (d == DFD_UP || v->pub.down != DFD_UP)
		return;
	v->pub.down = d;
	snprintf(v->why, sizeof(v->why), "%s", why);
	v->pub.why = v->why;
	c->st.servers_down++;
	c->newly_down = true;
}

/*
 * A request that the server given up at r->server was not asked (skipped),
 * or whose unanswered transfer to it was cut: a failure of the request.
 */
static void req_note_down(struct dfd_client *c, struct dfd_req *r, bool skipped)
{
	struct dfd_srv *v = &c->srv[r->server];
	const char *how = skipped ? "not asked" : "cut unanswered";

	if (skipped) {
		v->pub.skipped++;
		c->st.skipped++;
	}
	/* NET, not NOTFOUND: no negative entry says "not found" of a file never asked for */
	if (r->worst == CONV_E_OK || fail_rank(CONV_E_NET) > fail_rank(r->worst)) {
		r->worst = CONV_E_NET;
		set_msg(&r->msg, "%s: %s: given up in this run, it %s", c->urls[r->server], how, v->why);
	}
}

/* Moves r past the servers given up, from r->server on. Returns whether one is left to ask. */
static bool req_skip_down(struct dfd_client *c, struct dfd_req *r)
{
	for (; r->server < c->nr_urls && c->srv[r->server].pub.down != DFD_UP; r->server++)
		req_note_down(c, r, true);
	return r->server < c->nr_urls;
}

/* ---- the end of a transfer ---- */

/* Takes a finished or cut transfer out of the multi handle and out of its slot. */
static void xfer_release(struct dfd_client *c, struct dfd_xfer *x)
{
	cu.multi_remove_handle(c->multi, x->easy);
	cu.easy_cleanup(x->easy);
	x->easy = NULL;
	for (unsigned i = 0; i < c->max_parallel; i++)
		if (c->active[i] == x)
			c->active[i] = NULL;
	c->nr_active--;
	c->in_flight -= x->received;
	resume_paused(c);
	x->r->xfer = NULL;
}

/* r's transfer to its server failed with out (msg says how): the next server still asked, or r's end. */
static void req_next_server(struct dfd_client *c, struct dfd_req *r, enum conv_err out, const char *msg)
{
	enum conv_err err;

	if (r->worst == CONV_E_OK || fail_rank(out) > fail_rank(r->worst)) {
		r->worst = out;
		set_msg(&r->msg, "%s", msg);
	}
	r->server++;
	if (req_skip_down(c, r)) {
		if (req_past_deadline(c, r, ms_left(c)))
			return;
		err = xfer_start(c, r);
		if (err != CONV_E_OK)
			req_finish(c, r, err, NULL);
		return;
	}
	if (r->worst == CONV_E_NOTFOUND) {
		c->st.not_found++;
		set_msg(&r->msg, "%s/%s: not found on %zu server%s", r->hex, kind_names[r->kind],
			c->nr_urls, c->nr_urls == 1 ? "" : "s");
		if (c->neg_ttl_s > 0)
			write_negative(c, r);
	}
	req_finish(c, r, r->worst, NULL);
}

/* One part of a URL as libcurl parses it (default port filled in), malloc'd; NULL: none. */
static char *url_part(CURLU *u, CURLUPart part)
{
	char *v = NULL, *dup;

	if (cu.url_get(u, part, &v, part == CURLUPART_PORT ? CURLU_DEFAULT_PORT : 0) != CURLUE_OK)
		return NULL;
	dup = v ? strdup(v) : NULL;
	cu.free(v);
	return dup;
}

/* Scheme, host, port and IPv6 zone of url, by libcurl's parser; false if it cannot parse it. */
static bool url_origin(const char *url, char *parts[4])
{
	static const CURLUPart which[4] = { CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT,
					    CURLUPART_ZONEID };
	CURLU *u = cu.url();
	bool ok;

	memset(parts, 0, 4 * sizeof(*parts));
	if (!u)
		return false;
	ok = cu.url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK;
	for (int i = 0; ok && i < 4; i++)
		parts[i] = url_part(u, which[i]);
	cu.url_cleanup(u);
	return ok && parts[0] && parts[1] && parts[2];
}

bool dfd_same_origin(const char *server, const char *url)
{
	char *a[4], *b[4];
	bool same;

	pthread_once(&cu_once, cu_load);
	if (cu_error[0])
		return false;
	same = url_origin(server, a) && url_origin(url, b) && !strcasecmp(a[0], b[0]) &&
	       !strcasecmp(a[1], b[1]) && !strcmp(a[2], b[2]) &&
	       (a[3] ? b[3] && !strcmp(a[3], b[3]) : !b[3]);
	for (int i = 0; i < 4; i++) {
		free(a[i]);
		free(b[i]);
	}
	return same;
}

/*
 * A 3xx answer: its target is asked next, on the same handle, when it is on
 * the server's own scheme, host and port (a server must not make conv ask
 * another machine, an internal address, or anything over plain http after
 * https), at most DFD_MAX_REDIRS times a transfer. Returns 1 when the
 * transfer goes on, 0 when the answer had no target (an HTTP error then),
 * -1 when it is refused (msg says where it pointed).
 */
static int xfer_follow(struct dfd_client *c, struct dfd_xfer *x, char *msg, size_t msg_size)
{
	const char *server = c->urls[x->r->server];
	char *loc = NULL, *next;
	bool ok = true;

	if (cu.easy_getinfo(x->easy, CURLINFO_REDIRECT_URL, &loc) != CURLE_OK || !loc)
		return 0;
	if (!dfd_same_origin(server, loc)) {
		snprintf(msg, msg_size, "%s: redirected to %.200s: not followed (not %s's scheme, host and port)",
			 x->url, loc, server);
		return -1;
	}
	if (x->redirects >= DFD_MAX_REDIRS) {
		snprintf(msg, msg_size, "%s: more than %ld redirects (the last to %.200s)", x->url,
			 DFD_MAX_REDIRS, loc);
		return -1;
	}
	next = strdup(loc); /* loc belongs to the handle until its next transfer */
	if (!next) {
		snprintf(msg, msg_size, "out of memory following a redirect");
		return -1;
	}
	cu.multi_remove_handle(c->multi, x->easy);
	ok = cu.easy_setopt(x->easy, CURLOPT_URL, next) == CURLE_OK &&
	     cu.easy_setopt(x->easy, CURLOPT_TIMEOUT_MS, xfer_time_ms(c, x)) == CURLE_OK;
	free(x->url);
	x->url = next;
	x->redirects++;
	x->total = 0;
	if (!ok || cu.multi_add_handle(c->multi, x->easy) != CURLM_OK) {
		snprintf(msg, msg_size, "%s: cannot follow the redirect (out of memory)", x->url);
		return -1;
	}
	return 1;
}

/* Sorts out one finished transfer: a redirect followed, commit, next server, or the request's end. */
static void xfer_done(struct dfd_client *c, struct dfd_xfer *x, CURLcode res)
{
	struct dfd_req *r = x->r;
	enum conv_err out;
	enum dfd_down down = DFD_UP;
	long code = 0, os_errno = 0;
	char *path = NULL;
	char msg[512], why[160] = "";
	int follow = 0;

	msg[0] = '\0';
	cu.easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &code);
	cu.easy_getinfo(x->easy, CURLINFO_OS_ERRNO, &os_errno);
	if (res == CURLE_OK && code >= 300 && code < 400 && (follow = xfer_follow(c, x, msg, sizeof(msg))) > 0)
		return;
	xfer_release(c, x);
	if (follow < 0) {
		c->st.errors++;
		out = CONV_E_NET; /* this request's: the server is there, and asked again for others */
	} else {
		out = xfer_outcome(c, x, res, code, &path, msg, sizeof(msg));
		if (out == CONV_E_NET)
			down = xfer_down(c, x, res, os_errno, why, sizeof(why));
	}
	xfer_free(x);
	server_give_up(c, r->server, down, why);

	if (out == CONV_E_OK) {
		req_finish(c, r, CONV_E_OK, path);
		return;
	}
	if (out == CONV_E_IO || out == CONV_E_NOMEM) {
		/* Local trouble: another server would not help. */
		set_msg(&r->msg, "%s", msg);
		req_finish(c, r, out, NULL);
		return;
	}
	req_next_server(c, r, out, msg);
}

/* Ends the queued requests that have no server left to ask (the others wait for a slot). */
static void queue_drop_down(struct dfd_client *c)
{
	struct dfd_req *q = c->qhead, *keep = NULL, *tail = NULL;

	c->qhead = c->qtail = NULL;
	while (q) {
		struct dfd_req *next = q->qnext;

		q->qnext = NULL;
		if (req_skip_down(c, q)) {
			if (tail)
				tail->qnext = q;
			else
				keep = q;
			tail = q;
		} else {
			c->nr_queued--;
			req_finish(c, q, q->worst, NULL);
		}
		q = next;
	}
	c->qhead = keep;
	c->qtail = tail;
}

/*
 * Cuts the transfers that a server just given up has not answered yet:
 * started a moment after the one that timed out, they would only wait out
 * the rest of the same silence. Those it is answering go on.
 */
static void cut_down(struct dfd_client *c)
{
	c->newly_down = false;
	for (unsigned i = 0; i < c->max_parallel; i++) {
		struct dfd_xfer *x = c->active[i];
		struct dfd_req *r;

		if (!x || x->answered || c->srv[x->r->server].pub.down == DFD_UP)
			continue;
		r = x->r;
		xfer_release(c, x);
		xfer_free(x);
		c->st.errors++;
		req_note_down(c, r, false);
		/* a new transfer may take any free slot: one to a server still asked, left alone */
		req_next_server(c, r, CONV_E_NET, r->msg ? r->msg : "given up");
	}
	queue_drop_down(c);
}

static void reap(struct dfd_client *c)
{
	CURLMsg *m;
	int left;

	while ((m = cu.multi_info_read(c->multi, &left)) != NULL) {
		char *p = NULL;
		CURLcode res = m->data.result;

		if (m->msg != CURLMSG_DONE)
			continue;
		cu.easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &p);
		if (p)
			xfer_done(c, (void *)p, res);
	}
}

static void report_data(struct dfd_client *c)
{
	if (!c->progress)
		return;
	for (unsigned i = 0; i < c->max_parallel; i++) {
		struct dfd_xfer *x = c->active[i];

		if (x && x->received != x->reported) {
			x->reported = x->received;
			emit(c, DFD_EV_DATA, x->r, x);
		}
	}
}

static void perform(struct dfd_client *c)
{
	int running;

	if (cu.multi_perform(c->multi, &running) != CURLM_OK) {
		/*
		 * libcurl itself failed (out of memory): end what is in flight
		 * rather than wait on transfers that may never move again. Each
		 * failure moves a request to its next server, so this ends.
		 */
		for (unsigned i = 0; i < c->max_parallel; i++)
			if (c->active[i])
				xfer_done(c, c->active[i], CURLE_OUT_OF_MEMORY);
	}
	reap(c);
	if (c->newly_down)
		cut_down(c);
}

/* One round: start what fits, let curl work (waiting up to wait_ms), reap. */
static void step(struct dfd_client *c, int wait_ms)
{
	if (!c->multi)
		return;
	start_queued(c);
	if (!c->nr_active) {
		/* only entries other processes are downloading: look again shortly */
		if (c->nr_queued && wait_ms > 0)
			nanosleep(&(struct timespec){ 0, DFD_BUSY_RETRY_MS * 1000 * 1000 }, NULL);
		return;
	}
	perform(c);
	start_queued(c);
	if (c->nr_active && wait_ms > 0) {
		cu.multi_poll(c->multi, NULL, 0, wait_ms, NULL);
		perform(c);
		start_queued(c);
	}
	report_data(c);
}

/* ---- public API ---- */

static bool url_ok(const char *u)
{
	return !strncasecmp(u, "http://", 7) || !strncasecmp(u, "https://", 8) ||
	       !strncasecmp(u, "file://", 7);
}

static enum conv_err add_url(struct dfd_client *c, const char *u, size_t len,
			     struct conv_diag *diag, const char *from)
{
	char *s;

	while (len > 0 && u[len - 1] == '/')
		len--; /* "/buildid" is appended */
	s = strndup(u, len);
	if (!s)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	if (!url_ok(s)) {
		enum conv_err e = conv_fail(diag, CONV_E_INVAL, UINT64_MAX,
					    "%s: debuginfod URL '%s' is not http://, https:// or "
					    "file://",
					    from, s);
		free(s);
		return e;
	}
	c->urls[c->nr_urls++] = s;
	return CONV_E_OK;
}

static enum conv_err set_urls(struct dfd_client *c, const struct dfd_opts *o,
			      struct conv_diag *diag)
{
	const char *env = o->nr_urls ? NULL : env_get("DEBUGINFOD_URLS");
	size_t n = o->nr_urls;
	enum conv_err err;

	if (env) {
		n = 0;
		for (const char *p = env; *p;) {
			while (*p && isspace((unsigned char)*p))
				p++;
			if (*p)
				n++;
			while (*p && !isspace((unsigned char)*p))
				p++;
		}
	}
	if (!n)
		return CONV_E_OK;
	c->urls = calloc(n, sizeof(*c->urls));
	if (!c->urls)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	if (!env) {
		for (size_t i = 0; i < n; i++)
			if ((err = add_url(c, o->urls[i], strlen(o->urls[i]), diag, "--debuginfod")))
				return err;
		return CONV_E_OK;
	}
	for (const char *p = env; *p;) {
		const char *start;

		while (*p && isspace((unsigned char)*p))
			p++;
		start = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (p > start && (err = add_url(c, start, (size_t)(p - start), diag,
						"DEBUGINFOD_URLS")))
			return err;
	}
	return CONV_E_OK;
}

/* conv's cache root and the debuginfod client's (read-only) one. */
static enum conv_err set_caches(struct dfd_client *c, const struct dfd_opts *o,
				struct conv_diag *diag)
{
	const char *dcp = env_get("DEBUGINFOD_CACHE_PATH");
	const char *xdg = env_get("XDG_CACHE_HOME");
	const char *home = env_get("HOME");
	struct stat a, b;

	/* The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored. */
	if (xdg && xdg[0] != '/')
		xdg = NULL;
	if (o->cache_dir && *o->cache_dir)
		c->cache = strdup(o->cache_dir);
	else if (dcp)
		c->cache = strdup(dcp);
	else if (xdg)
		c->cache = str_printf("%s/conv", xdg);
	else if (home)
		c->cache = str_printf("%s/.cache/conv", home);
	else
		return conv_fail(diag, CONV_E_INVAL, UINT64_MAX,
				 "no cache directory: give one or set HOME");
	if (!c->cache)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");

	if (dcp)
		c->sys_cache = strdup(dcp);
	else if (home && (c->sys_cache = str_printf("%s/.debuginfod_client_cache", home)) &&
		 stat(c->sys_cache, &a) == 0 && S_ISDIR(a.st_mode))
		; /* the deprecated location wins while it exists, as in the client */
	else {
		free(c->sys_cache);
		c->sys_cache = NULL;
		if (xdg)
			c->sys_cache = str_printf("%s/debuginfod_client", xdg);
		else if (home)
			c->sys_cache = str_printf("%s/.cache/debuginfod_client", home);
		else
			return CONV_E_OK;
	}
	if (!c->sys_cache)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	/* Shared on purpose (cache_dir = DEBUGINFOD_CACHE_PATH): it is simply ours. */
	if (!strcmp(c->sys_cache, c->cache) ||
	    (stat(c->sys_cache, &a) == 0 && stat(c->cache, &b) == 0 && a.st_dev == b.st_dev &&
	     a.st_ino == b.st_ino)) {
		free(c->sys_cache);
		c->sys_cache = NULL;
	}
	return CONV_E_OK;
}

enum conv_err dfd_new(struct dfd_client **out, const struct dfd_opts *o, struct conv_diag *diag)
{
	struct dfd_client *c;
	enum conv_err err;
	uint64_t v;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	hmap_init(&c->index);
	c->offline = o->offline;
	c->timeout_s = o->timeout_s > 0 ? within_max(o->timeout_s) : env_seconds("DEBUGINFOD_TIMEOUT");
	if (c->timeout_s <= 0)
		c->timeout_s = DFD_DEFAULT_TIMEOUT_S;
	c->max_time_s = o->max_time_s > 0 ? within_max(o->max_time_s) : env_seconds("DEBUGINFOD_MAXTIME");
	if (c->max_time_s <= 0)
		c->max_time_s = DFD_DEFAULT_MAX_TIME_S;
	c->clock_ns = o->clock_ns ? o->clock_ns : clock_now_ns;
	c->deadline = c->clock_ns() +
		      (uint64_t)(o->deadline_s > 0 ? within_max(o->deadline_s) : DFD_DEFAULT_DEADLINE_S) * 1000000000u;
	c->max_size = o->max_size ? o->max_size : env_u64("DEBUGINFOD_MAXSIZE");
	if (!c->max_size)
		c->max_size = DFD_DEFAULT_MAX_SIZE; /* a server cannot fill the disk */
	c->neg_ttl_s = o->negative_ttl_s ? o->negative_ttl_s : DFD_DEFAULT_NEGATIVE_TTL_S;
	c->max_parallel = o->max_parallel ? o->max_parallel : DFD_DEFAULT_PARALLEL;
	c->max_in_flight = o->max_in_flight ? o->max_in_flight : DFD_DEFAULT_MAX_IN_FLIGHT;
	c->min_free = o->min_free ? o->min_free : DFD_DEFAULT_MIN_FREE;
	c->progress = o->progress;
	c->progress_ctx = o->progress_ctx;
	c->root_fd = -1;
	c->sys_fd = -1;
	c->euid = geteuid();

	if ((err = set_urls(c, o, diag)) || (err = set_caches(c, o, diag)))
		goto fail;
	if (c->offline || !c->nr_urls)
		goto done; /* no curl at all: not even its wakeup socketpair */

	c->active = calloc(c->max_parallel, sizeof(*c->active));
	c->srv = calloc(c->nr_urls, sizeof(*c->srv));
	if (!c->active || !c->srv) {
		err = conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < c->nr_urls; i++)
		c->srv[i].pub.url = c->urls[i];
	pthread_once(&cu_once, cu_load);
	if (cu_error[0]) {
		err = conv_fail(diag, CONV_E_NET, UINT64_MAX, "%s", cu_error);
		goto fail;
	}
	if (c->max_size) {
		char h[64];

		v = c->max_size;
		snprintf(h, sizeof(h), "X-DEBUGINFOD-MAXSIZE: %llu", (unsigned long long)v);
		c->headers = cu.slist_append(NULL, h);
		if (!c->headers) {
			err = conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
			goto fail;
		}
	}
	if (cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		err = conv_fail(diag, CONV_E_NET, UINT64_MAX, "cannot initialise libcurl");
		goto fail;
	}
	c->curl_inited = true;
	c->multi = cu.multi_init();
	if (!c->multi) {
		err = conv_fail(diag, CONV_E_NET, UINT64_MAX, "cannot create a libcurl multi handle");
		goto fail;
	}
done:
	*out = c;
	return CONV_E_OK;
fail:
	dfd_free(c);
	return err;
}

void dfd_free(struct dfd_client *c)
{
	if (!c)
		return;
	for (unsigned i = 0; c->active && i < c->max_parallel; i++) {
		struct dfd_xfer *x = c->active[i];

		if (!x)
			continue;
		cu.multi_remove_handle(c->multi, x->easy);
		cu.easy_cleanup(x->easy);
		xfer_free(x); /* unlinks the partial download */
	}
	free(c->active);
	free(c->srv);
	if (c->multi)
		cu.multi_cleanup(c->multi);
	if (c->headers)
		cu.slist_free_all(c->headers);
	if (c->curl_inited)
		cu.global_cleanup();
	for (size_t i = 0; i < c->nr_reqs; i++) {
		req_lock_close(c->reqs[i]); /* or the lock would outlive the client */
		free(c->reqs[i]->path);
		free(c->reqs[i]->msg);
		free(c->reqs[i]);
	}
	free(c->reqs);
	hmap_release(&c->index);
	for (size_t i = 0; i < c->nr_urls; i++)
		free(c->urls[i]);
	free(c->urls);
	if (c->root_fd >= 0)
		close(c->root_fd);
	if (c->sys_fd >= 0)
		close(c->sys_fd);
	free(c->cache);
	free(c->sys_cache);
	free(c);
}

static enum conv_err request(struct dfd_client *c, const uint8_t *bid, size_t len,
			     enum dfd_kind kind, struct dfd_req **out)
{
	struct dfd_req *r;
	uint64_t h, *head;

	if (!len || len > BUILDID_MAX || (kind != DFD_DEBUGINFO && kind != DFD_EXECUTABLE))
		return CONV_E_INVAL;
	if ((r = req_find(c, bid, len, kind)) != NULL) {
		*out = r;
		return CONV_E_OK;
	}
	if (c->nr_reqs >= DFD_NONE - 1)
		return CONV_E_LIMIT;
	if (c->nr_reqs == c->alloc_reqs) {
		size_t n = c->alloc_reqs ? 2 * c->alloc_reqs : 64;
		struct dfd_req **p = realloc(c->reqs, n * sizeof(*p));

		if (!p)
			return CONV_E_NOMEM;
		c->reqs = p;
		c->alloc_reqs = n;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return CONV_E_NOMEM;
	memcpy(r->bid, bid, len);
	r->bid_len = len;
	r->kind = kind;
	buildid_hex(bid, len, r->hex);
	h = req_hash(bid, len, kind);
	head = hmap_get(&c->index, h);
	r->hash_next = head ? (uint32_t)(*head - 1) : DFD_NONE;
	if (!hmap_put(&c->index, h, c->nr_reqs + 1)) {
		free(r);
		return CONV_E_NOMEM;
	}
	c->reqs[c->nr_reqs++] = r;
	c->st.requests++;
	r->worst = CONV_E_OK;
	if (!lookup_caches(c, r))
		queue_push(c, r, false);
	*out = r;
	return CONV_E_OK;
}

enum conv_err dfd_request(struct dfd_client *c, const uint8_t *bid, size_t len, enum dfd_kind kind)
{
	struct dfd_req *r;

	return request(c, bid, len, kind, &r);
}

bool dfd_poll(struct dfd_client *c, int timeout_ms)
{
	int64_t deadline = mono_ns() + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;

	c->wait_since = 0; /* the caller does other work between polls: not a wait */
	for (;;) {
		int64_t left = (deadline - mono_ns()) / 1000000;

		step(c, left > 0 ? (int)left : 0);
		if (!c->nr_active && !c->nr_queued)
			return false;
		if (mono_ns() >= deadline)
			return true;
	}
}

enum conv_err dfd_wait(struct dfd_client *c, const uint8_t *bid, size_t len, enum dfd_kind kind,
		       const char **path, struct conv_diag *diag)
{
	struct dfd_req *r = NULL;
	enum conv_err err;

	if (path)
		*path = NULL;
	err = request(c, bid, len, kind, &r);
	if (err != CONV_E_OK)
		return conv_fail(diag, err, UINT64_MAX, "debuginfod request: %s",
				 conv_strerror(err));
	if (r->state == REQ_QUEUED)
		queue_bump(c, r);
	/*
	 * Transfers end by themselves (speed floor, total time, deadline), and
	 * requests waiting for another process's download end at the deadline,
	 * so this terminates. The caller is told every tick what it waits for.
	 */
	if (r->state != REQ_DONE && !c->wait_since)
		c->wait_since = mono_ns();
	c->in_wait = true;
	while (r->state != REQ_DONE) {
		int64_t t;

		step(c, DFD_WAIT_TICK_MS);
		t = mono_ns();
		if (r->state != REQ_DONE && t - c->wait_told >= DFD_WAIT_TICK_MS * 1000000LL) {
			c->wait_told = t;
			emit(c, DFD_EV_WAIT, r, NULL);
		}
	}
	c->in_wait = false;
	if (!c->nr_active && !c->nr_queued)
		c->wait_since = 0; /* nothing left: a later wait starts its own count */
	if (r->result != CONV_E_OK)
		return conv_fail(diag, r->result, UINT64_MAX, "%s",
				 r->msg ? r->msg : conv_strerror(r->result));
	if (path)
		*path = r->path;
	return CONV_E_OK;
}

const struct dfd_stats *dfd_stats(const struct dfd_client *c)
{
	return &c->st;
}

size_t dfd_server_count(const struct dfd_client *c)
{
	/* c->multi exists exactly when a server can be asked (dfd_new) */
	return c->multi ? c->nr_urls : 0;
}

const struct dfd_server *dfd_server_at(const struct dfd_client *c, size_t i)
{
	return i < dfd_server_count(c) ? &c->srv[i].pub : NULL;
}

/*
 * debuginfod client: fetches debug info and executables by GNU build-id
 * from debuginfod servers (GET URL/buildid/HEX/debuginfo|executable), many
 * build-ids at once over one libcurl multi handle, into an on-disk cache.
 *
 * Lookup order for one (build-id, kind):
 *   1. conv's cache      CACHE/HEX/debuginfo|executable (validated: ELF with
 *                        that GNU build-id; a bad entry is removed, refetched)
 *   2. debuginfod's      $DEBUGINFOD_CACHE_PATH, ~/.debuginfod_client_cache,
 *      client cache      $XDG_CACHE_HOME/debuginfod_client or
 *                        ~/.cache/debuginfod_client, same layout, read-only
 *                        (a bad entry there is ignored, never touched)
 *   3. negative entry    CACHE/HEX/KIND.missing younger than negative_ttl_s
 *   4. the servers       in order; the first verified answer wins, a 404 (or
 *                        a wrong or non-ELF body) moves on to the next server
 *
 * A server that refuses the connection, cannot be reached, or sends nothing
 * (or under 100 KiB/s) for timeout_s is given up for the client's lifetime:
 * requests skip it (for the next server, or they end CONV_E_NET), and the
 * transfers it has not answered yet are cut. Requests go out as soon as they
 * are made, up to max_parallel at once, so a dead server costs about one
 * timeout_s in all. dfd_server_at() tells which servers were given up, why.
 *
 * Downloads go to a temporary file CACHE/HEX/.conv-KIND.XXXXXX and are
 * renamed into place only after verification, so no reader ever sees a
 * partial or wrong file. When every server answered 404, KIND.missing is
 * written (a temporary file renamed into place) so that the next run does
 * not ask again for negative_ttl_s.
 *
 * A cache may be shared with other users, and conv may run as root: every
 * entry is reached through descriptors of the cache root and the entry's
 * directory without following a symbolic link; only directories and files
 * of this user, root or the cache root's owner are trusted (a directory
 * also only when others cannot replace its files: not writable by them, or
 * sticky); only files conv has just made are written or chmod'ed. An entry
 * directory that is not trusted ends its requests CONV_E_IO ("not trusted,
 * not used": nothing is read or stored there); a file that is not trusted
 * in a trusted directory is passed over and replaced by the download. Both
 * are counted in dfd_stats.untrusted.
 *
 * A redirect is followed only to the server's own scheme, host and port
 * (dfd_same_origin), at most 5 times a transfer; any other fails that
 * transfer (CONV_E_NET, the message says where it pointed).
 *
 * One thread uses a client at a time. The library never prints: progress is
 * reported through an optional callback, outcomes through dfd_stats().
 */
#ifndef CONV_BUILDID_DEBUGINFOD_H
#define CONV_BUILDID_DEBUGINFOD_H

#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conv_diag;
struct dfd_client;

enum dfd_kind {
	DFD_DEBUGINFO,  /* a file with .debug_* sections (split debug or unstripped) */
	DFD_EXECUTABLE, /* the binary with its loadable segments */
};

enum dfd_event {
	DFD_EV_START, /* a transfer to one server began */
	DFD_EV_DATA,  /* body bytes arrived (at most once per transfer and dfd_poll step) */
	DFD_EV_DONE,  /* a request that needed the network is finished */
	DFD_EV_WAIT,  /* dfd_wait() is still waiting (each 100 ms): waited_ms, active, queued */
};

/* Passed to the progress callback; every pointer is valid during the call only. */
struct dfd_progress {
	enum dfd_event event;
	const char *build_id; /* lowercase hex */
	enum dfd_kind kind;
	const char *url;      /* server base URL; NULL for DFD_EV_DONE and DFD_EV_WAIT */
	uint64_t received;    /* body bytes of this transfer so far */
	uint64_t total;       /* Content-Length of this transfer, 0 = unknown */
	enum conv_err result; /* DFD_EV_DONE: what dfd_wait() will return */
	unsigned active;      /* transfers in flight */
	unsigned queued;      /* requests waiting for a transfer slot */
	uint64_t waited_ms;   /* inside dfd_wait() (DFD_EV_WAIT and any other event): how long
				 callers have waited, over consecutive dfd_wait() calls (a
				 dfd_poll() or nothing left pending ends the count); else 0 */
};

/*
 * Options; strings are copied by dfd_new(). Zero means "default" for every
 * number, and the defaults follow the debuginfod client's environment so
 * that conv behaves like debuginfod-find on the same machine.
 */
struct dfd_opts {
	const char *const *urls; /* --debuginfod URL...; nr_urls == 0: $DEBUGINFOD_URLS
				    (space-separated); none at all: no network */
	size_t nr_urls;
	const char *cache_dir;   /* NULL: $DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/conv,
				    else $HOME/.cache/conv; created when first written */
	bool offline;            /* never open a socket: caches only */
	long timeout_s;          /* abort a transfer that receives under 100 KiB/s for this long,
				    as the debuginfod client does (and the connect timeout);
				    0: $DEBUGINFOD_TIMEOUT, else 90 */
	long max_time_s;         /* whole-transfer limit; 0: $DEBUGINFOD_MAXTIME, else 1800 */
	/*
	 * every transfer ends this long after the client is made, whatever the
	 * server does (the symbolization phase's deadline): later ones are not
	 * started; 0: 300
	 */
	long deadline_s;
	uint64_t max_size;       /* largest file accepted; sent as X-DEBUGINFOD-MAXSIZE;
				    0: $DEBUGINFOD_MAXSIZE, else 4 GiB */
	long negative_ttl_s;     /* how long "all servers said 404" is remembered;
				    0: 600 (debuginfod's cache_miss_s); < 0: never */
	unsigned max_parallel;   /* transfers in flight; 0: 32 */
	/*
	 * body bytes all transfers in flight may hold on disk; past it, a
	 * transfer waits (paused) until another one ends, except the oldest,
	 * so that one file up to max_size always gets through: at most
	 * max_in_flight + one file is on disk at once; 0: 1 GiB
	 */
	uint64_t max_in_flight;
	/*
	 * bytes left free on the cache's file system: a download that would
	 * eat into them (by its Content-Length, or as it grows) is stopped and
	 * removed, and its request ends CONV_E_IO; 0: 256 MiB
	 */
	uint64_t min_free;
	/*
	 * the clock deadline_s is measured on, in ns (monotonic); NULL:
	 * CLOCK_MONOTONIC. A test passes its own to step past the deadline
	 * without waiting for it.
	 */
	uint64_t (*clock_ns)(void);
	/* Called from dfd_poll()/dfd_wait(); must not call back into the client. NULL: none. */
	void (*progress)(void *ctx, const struct dfd_progress *p);
	void *progress_ctx;
};

/*
 * Counters. "Requests" are distinct (build-id, kind) pairs; "transfers" are
 * HTTP requests (one per server tried). A request that succeeds or is not
 * found adds one to exactly one of fetched, cache_hits, system_cache_hits,
 * negative_hits, not_found; failures are counted per transfer (errors,
 * too_large, bad_build_id), so one request can add to several of them.
 */
struct dfd_stats {
	uint64_t requests;              /* distinct (build-id, kind) pairs asked for */
	uint64_t transfers;             /* transfers started (one per server tried) */
	uint64_t fetched;               /* requests answered by a verified download */
	uint64_t cache_hits;            /* requests answered by conv's cache */
	uint64_t system_cache_hits;     /* requests answered by debuginfod's client cache */
	uint64_t negative_hits;         /* requests answered NOTFOUND by a fresh .missing entry */
	uint64_t not_found;             /* requests that ended NOTFOUND otherwise (404 everywhere,
					   no servers, offline miss) */
	uint64_t errors;                /* transfers that failed: connection, timeout, HTTP 5xx,
					   truncated body, too many redirects or one elsewhere */
	uint64_t bytes;                 /* body bytes received, including discarded bodies */
	uint64_t bad_build_id;          /* transfers whose body was not ELF or had another build-id */
	uint64_t too_large;             /* transfers refused (406) or aborted over max_size */
	uint64_t deadline;              /* transfers cut, or not started, by the deadline */
	uint64_t no_space;              /* transfers stopped to keep min_free on the cache's disk */
	uint64_t paused;                /* times a transfer waited for room under max_in_flight */
	uint64_t in_flight_peak;        /* most body bytes on disk for transfers in flight at once */
	uint64_t corrupt_cache_removed; /* entries of conv's cache removed by validation */
	uint64_t servers_down;          /* servers given up (see dfd_server_at) */
	uint64_t skipped;               /* requests a server given up was not asked (a transfer
					   of one it had not answered yet is cut: in errors) */
	uint64_t untrusted;             /* requests whose cache entry (its directory, file, lock
					   or negative entry, in either cache) was passed over as
					   not trusted: another user's, a link, not a regular file */
};

/* Why a server was given up for the rest of the run. */
enum dfd_down {
	DFD_UP,               /* still asked */
	DFD_DOWN_TIMEOUT,     /* sent nothing for timeout_s (not even a status line) */
	DFD_DOWN_SLOW,        /* answered, then sent under 100 KiB/s for timeout_s */
	DFD_DOWN_UNREACHABLE, /* refused the connection, or could not be resolved or reached */
};

/* One configured server and what became of it; owned by the client. */
struct dfd_server {
	const char *url;    /* base URL, as asked (trailing '/' removed) */
	enum dfd_down down;
	const char *why;    /* when down: in words, e.g. "did not answer within 3 s"; else NULL */
	uint64_t transfers; /* transfers started to it */
	uint64_t skipped;   /* requests not asked once it was given up */
};

/*
 * Creates a client; nothing is read, written or connected yet, and with
 * offline or without URLs libcurl is not even initialised.
 * CONV_E_INVAL: a URL is not http://, https:// or file://, or no cache
 * directory can be derived (no cache_dir and no HOME); CONV_E_NOMEM;
 * CONV_E_NET: libcurl could not be initialised.
 */
enum conv_err dfd_new(struct dfd_client **out, const struct dfd_opts *o, struct conv_diag *diag);

/* Aborts transfers in flight (their temporary files are removed) and frees c; NULL is fine. */
void dfd_free(struct dfd_client *c);

/*
 * Asks for one file; requests are deduplicated by (build-id, kind). The
 * caches are consulted at once (a hit or a fresh negative entry finishes
 * the request here); otherwise the request is queued and its transfers
 * start in dfd_poll() or dfd_wait(). The build-id is copied.
 * CONV_E_INVAL: len is 0 or above BUILDID_MAX, or kind is unknown; CONV_E_NOMEM;
 * CONV_E_LIMIT: 2^32 - 2 distinct requests already.
 * Anything else about the file is reported by dfd_wait().
 */
enum conv_err dfd_request(struct dfd_client *c, const uint8_t *bid, size_t len, enum dfd_kind kind);

/*
 * Drives transfers for up to timeout_ms (0: one non-blocking step).
 * Returns true while requests are queued or in flight.
 */
bool dfd_poll(struct dfd_client *c, int timeout_ms);

/*
 * Requests the file if that was not done yet, moves it to the front of the
 * queue and drives all transfers until this one is finished.
 * *path (may be NULL) receives the file, owned by the client and valid
 * until dfd_free(), or NULL on failure. Returns:
 *   CONV_E_OK
 *   CONV_E_NOTFOUND  every server said 404, a fresh negative entry, no
 *                    servers, or offline and not cached
 *   CONV_E_LIMIT     over max_size (406 or aborted)
 *   CONV_E_FORMAT    a server sent a non-ELF file or another build-id
 *   CONV_E_NET       connection, timeout, HTTP error, truncated body
 *   CONV_E_IO        the cache directory cannot be written, or its file system
 *                    has too little free space (min_free), or the entry's
 *                    directory there is not trusted (see above)
 *   CONV_E_INVAL, CONV_E_NOMEM as for dfd_request()
 * When several servers failed differently the first of LIMIT, FORMAT, NET
 * in this order wins (the most actionable for the user); diag (if not NULL)
 * then names the server and the cause.
 */
enum conv_err dfd_wait(struct dfd_client *c, const uint8_t *bid, size_t len, enum dfd_kind kind,
		       const char **path, struct conv_diag *diag);

/* The client's counters, updated as requests finish; owned by the client. */
const struct dfd_stats *dfd_stats(const struct dfd_client *c);

/*
 * How many servers requests can go to: 0 when offline or none is configured
 * (then a request the caches cannot answer ends NOTFOUND without any server
 * having been asked, and callers should not say "not found on a server").
 */
size_t dfd_server_count(const struct dfd_client *c);

/* Server i (< dfd_server_count) in the order asked, or NULL; updated as transfers end. */
const struct dfd_server *dfd_server_at(const struct dfd_client *c, size_t i);

/*
 * Whether url has server's scheme, host and port (the only redirects
 * followed), as libcurl parses them: scheme and host in any case, a port
 * left out is the scheme's default, user info and path play no part, an
 * IPv6 literal's zone must match. False when either cannot be parsed or
 * libcurl cannot be loaded.
 */
bool dfd_same_origin(const char *server, const char *url);

#endif

/*
 * libFuzzer target for the debuginfod client's handling of what it receives
 * (buildid/debuginfod.h): the downloaded body and the HTTP answer around it,
 * and the entries it finds in its caches.
 *
 * The checks that matter are static in debuginfod.c (on_header: the
 * Content-Length cap; on_body: the size cap while receiving; xfer_outcome /
 * xfer_commit: status, ELF and build-id verification, rename into place;
 * entry_probe / lookup_caches: validation of cache entries), so they are
 * driven through the public API, the way conv meets them:
 *
 * Input: one control byte, then the payload.
 *   bits 0-1  where the payload is met
 *             0  a file:// mirror serves it as the body
 *             1  an HTTP server on 127.0.0.1 (a thread of this process)
 *                sends it as its whole answer: status line, headers, body
 *             2  it is already in conv's cache (offline client)
 *             3  it is in the debuginfod client's cache (offline, read-only)
 *   bit 2     kind: debuginfo or executable
 *   bit 3     ask for another build-id than the body's (one bit flipped)
 *   bits 4-5  max_size: none, the body's size, one byte less, 64 bytes
 *   bit 6     a second server after the first: a file:// mirror without it
 *   bit 7     negative_ttl_s < 0 (no negative entries)
 * The build-id asked for is the body's GNU build-id (buildid_from_mem),
 * else a fixed one. For HTTP the body is what follows the first blank line.
 *
 * Checked, from what the header promises:
 *   - the result is one dfd_wait() documents; OK gives a path inside conv's
 *     cache (or the client cache) holding a whole ELF file
 *     (buildid_elf_intact) with exactly that build-id, within max_size; a
 *     refused body is never left in conv's cache;
 *   - for the file:// mirror and the caches, the outcome is exactly the one
 *     the bytes call for (OK iff the build-ids match, the file is whole and
 *     it fits);
 *   - a request that ends OK or NOTFOUND is counted in exactly one of
 *     fetched, cache_hits, system_cache_hits, negative_hits, not_found, and
 *     one that fails otherwise in none;
 *   - no temporary download (.conv-*) is left behind; the client cache is
 *     never written to.
 * Every call starts from empty caches (they are emptied after each input).
 *
 * Network: curl is pointed at a proxy on a closed port for every host but
 * 127.0.0.1 (ALL_PROXY, NO_PROXY), so a redirect elsewhere fails at once
 * instead of resolving names; the client's timeouts are a few seconds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "fuzz_common.h"

#include "buildid/buildid.h"
#include "buildid/debuginfod.h"
#include "core/err.h"

#include <curl/curl.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

volatile uint64_t fuzz_sink;

enum { SRC_FILE, SRC_HTTP, SRC_CACHE, SRC_SYSCACHE };

static char root[4096], srv[4200], empty_srv[4200], cache[4200], syscache[4200];
static char file_url[4300], empty_url[4300], http_url[64];

/* ---- files ---- */

static void rm_tree(const char *path, bool keep_top)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)) != NULL) {
			char p[8192];
			struct stat st;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
			if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
				rm_tree(p, false);
			else
				unlink(p);
		}
		closedir(d);
	}
	if (!keep_top)
		rmdir(path);
}

static void write_file(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[8192];
	int fd;

	FUZZ_CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(n == 0 || write(fd, p, n) == (ssize_t)n);
	close(fd);
}

/* The file's bytes equal p[0..n). */
static bool same_file(const char *path, const uint8_t *p, size_t n)
{
	uint8_t buf[4096];
	size_t off = 0;
	ssize_t k;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool same = true;

	if (fd < 0)
		return false;
	while ((k = read(fd, buf, sizeof(buf))) > 0) {
		if ((size_t)k > n - off || memcmp(buf, p + off, (size_t)k)) {
			same = false;
			break;
		}
		off += (size_t)k;
	}
	close(fd);
	return same && k == 0 && off == n;
}

/* Whether dir holds a file whose name starts with prefix. */
static bool has_prefixed(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while ((e = readdir(d)) != NULL)
		if (!strncmp(e->d_name, prefix, strlen(prefix)))
			found = true;
	closedir(d);
	return found;
}

/* ---- the HTTP server thread ---- */

static pthread_mutex_t resp_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *resp;
static size_t resp_len;
static int listen_fd = -1;

static void serve_one(int fd)
{
	char req[8192];
	size_t got = 0;
	struct timeval tv = { .tv_sec = 0, .tv_usec = 300000 };
	uint8_t *copy;
	size_t n, off = 0;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* the request head: curl sends no body with GET */
	while (got < sizeof(req) - 1) {
		ssize_t k = recv(fd, req + got, sizeof(req) - 1 - got, 0);

		if (k <= 0)
			break;
		got += (size_t)k;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	pthread_mutex_lock(&resp_lock);
	n = resp_len;
	copy = malloc(n ? n : 1);
	if (copy && n)
		memcpy(copy, resp, n);
	pthread_mutex_unlock(&resp_lock);
	while (copy && off < n) {
		ssize_t k = send(fd, copy + off, n - off, MSG_NOSIGNAL);

		if (k <= 0)
			break;
		off += (size_t)k;
	}
	free(copy);
	shutdown(fd, SHUT_WR);
	close(fd);
}

static void *server_main(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = accept(listen_fd, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		serve_one(fd);
	}
}

static void start_server(void)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	pthread_t th;
	int one = 1;

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	FUZZ_CHECK(listen_fd >= 0);
	setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	FUZZ_CHECK(bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	FUZZ_CHECK(listen(listen_fd, 64) == 0);
	FUZZ_CHECK(getsockname(listen_fd, (struct sockaddr *)&a, &alen) == 0);
	snprintf(http_url, sizeof(http_url), "http://127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
	FUZZ_CHECK(pthread_create(&th, NULL, server_main, NULL) == 0);
	pthread_detach(th);
}

/* ---- setup ---- */

static void cleanup(void)
{
	if (root[0])
		rm_tree(root, false);
}

/* Removes what earlier processes that died (crashed inputs) left in dir. */
static void sweep_dead(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char p[8192];
		long pid;

		if (sscanf(e->d_name, "conv-fuzz-dfd.%ld.", &pid) != 1 || pid <= 0)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		rm_tree(p, false);
	}
	closedir(d);
}

static void setup_once(void)
{
	const char *td = getenv("TMPDIR");

	if (root[0])
		return;
	td = td && *td ? td : "/tmp";
	sweep_dead(td);
	snprintf(root, sizeof(root), "%s/conv-fuzz-dfd.%ld.XXXXXX", td, (long)getpid());
	FUZZ_CHECK(mkdtemp(root) != NULL);
	snprintf(srv, sizeof(srv), "%s/srv", root);
	snprintf(empty_srv, sizeof(empty_srv), "%s/empty", root);
	snprintf(cache, sizeof(cache), "%s/cache", root);
	snprintf(syscache, sizeof(syscache), "%s/sys", root);
	FUZZ_CHECK(mkdir(srv, 0700) == 0 && mkdir(empty_srv, 0700) == 0 &&
		   mkdir(cache, 0700) == 0 && mkdir(syscache, 0700) == 0);
	snprintf(file_url, sizeof(file_url), "file://%s", srv);
	snprintf(empty_url, sizeof(empty_url), "file://%s", empty_srv);
	atexit(cleanup);

	/* conv's cache is given; the client cache is DEBUGINFOD_CACHE_PATH */
	setenv("DEBUGINFOD_CACHE_PATH", syscache, 1);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_MAXSIZE");
	unsetenv("DEBUGINFOD_TIMEOUT");
	unsetenv("DEBUGINFOD_MAXTIME");
	/* only 127.0.0.1 is reached directly; anything else goes to a closed port */
	setenv("ALL_PROXY", "http://127.0.0.1:9", 1);
	setenv("NO_PROXY", "127.0.0.1", 1);
	unsetenv("http_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("https_proxy");
	signal(SIGPIPE, SIG_IGN);
	/* held for the whole run: each client's init and cleanup is then only a count */
	FUZZ_CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK);
	start_server();
}

/* ---- one input ---- */

static void progress(void *ctx, const struct dfd_progress *p)
{
	(void)ctx;
	FUZZ_CHECK(p->build_id != NULL && strlen(p->build_id) % 2 == 0);
	FUZZ_CHECK(p->event == DFD_EV_DONE || p->event == DFD_EV_WAIT || p->url != NULL);
	fuzz_sink += fuzz_touch_str(p->build_id) + fuzz_touch_str(p->url) + p->received;
}

static const uint8_t *body_of(const uint8_t *p, size_t n, size_t *blen)
{
	for (size_t i = 0; i + 4 <= n; i++)
		if (!memcmp(p + i, "\r\n\r\n", 4)) {
			*blen = n - i - 4;
			return p + i + 4;
		}
	*blen = 0;
	return p + n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const kinds[] = { "debuginfo", "executable" };
	uint8_t ctl, bid[BUILDID_MAX], got[BUILDID_MAX];
	size_t bid_len = 0, got_len = 0, n, blen;
	const uint8_t *payload, *body;
	bool has_id, match, fits, intact = true;
	int src, kind;
	uint64_t max_size = 0, sum;
	struct dfd_opts o;
	struct dfd_client *c = NULL;
	const struct dfd_stats *st;
	struct conv_diag diag;
	const char *path = NULL;
	const char *urls[2];
	char hex[2 * BUILDID_MAX + 1], dir[8400], entry[8500], sysentry[8500];
	enum conv_err err;

	if (size < 1)
		return 0;
	setup_once();
	ctl = data[0];
	payload = data + 1;
	n = size - 1;
	src = ctl & 3;
	kind = (ctl >> 2) & 1;
	body = src == SRC_HTTP ? body_of(payload, n, &blen) : payload;
	if (src != SRC_HTTP)
		blen = n;

	has_id = buildid_from_mem(body, blen, bid, &bid_len, NULL) == CONV_E_OK;
	if (!has_id) {
		memset(bid, 0x11, 20);
		bid_len = 20;
	}
	if (ctl & 8)
		bid[0] ^= 1;
	match = has_id && !(ctl & 8);
	switch ((ctl >> 4) & 3) {
	case 1:
		max_size = blen ? blen : 1;
		break;
	case 2:
		max_size = blen > 1 ? blen - 1 : 1;
		break;
	case 3:
		max_size = 64;
		break;
	default:
		break;
	}
	fits = !max_size || blen <= max_size;
	buildid_hex(bid, bid_len, hex);

	/* place the payload */
	switch (src) {
	case SRC_FILE:
		snprintf(dir, sizeof(dir), "%s/buildid", srv);
		FUZZ_CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST);
		snprintf(dir, sizeof(dir), "%s/buildid/%s", srv, hex);
		write_file(dir, kinds[kind], payload, n);
		break;
	case SRC_HTTP:
		pthread_mutex_lock(&resp_lock);
		resp = (uint8_t *)(uintptr_t)payload;
		resp_len = n;
		pthread_mutex_unlock(&resp_lock);
		break;
	case SRC_CACHE:
		snprintf(dir, sizeof(dir), "%s/%s", cache, hex);
		write_file(dir, kinds[kind], payload, n);
		break;
	default:
		snprintf(dir, sizeof(dir), "%s/%s", syscache, hex);
		write_file(dir, kinds[kind], payload, n);
		break;
	}
	snprintf(entry, sizeof(entry), "%s/%s/%s", cache, hex, kinds[kind]);
	snprintf(sysentry, sizeof(sysentry), "%s/%s/%s", syscache, hex, kinds[kind]);
	/* a file cut short (headers or sections past its end) is refused too */
	if (src != SRC_HTTP) {
		char placed[8500];

		snprintf(placed, sizeof(placed), "%s/%s", dir, kinds[kind]);
		intact = buildid_elf_intact(placed);
	}
	match = match && intact;

	memset(&o, 0, sizeof(o));
	urls[0] = src == SRC_HTTP ? http_url : file_url;
	urls[1] = empty_url;
	o.urls = urls;
	o.nr_urls = (ctl & 64) ? 2 : 1;
	o.cache_dir = cache;
	o.offline = src == SRC_CACHE || src == SRC_SYSCACHE;
	o.timeout_s = 2;
	o.max_time_s = 5;
	o.max_size = max_size;
	o.negative_ttl_s = (ctl & 128) ? -1 : 0;
	o.max_parallel = 2;
	o.progress = progress;
	memset(&diag, 0, sizeof(diag));
	FUZZ_CHECK(dfd_new(&c, &o, &diag) == CONV_E_OK);

	err = dfd_wait(c, bid, bid_len, kind ? DFD_EXECUTABLE : DFD_DEBUGINFO, &path, &diag);
	st = dfd_stats(c);
	FUZZ_CHECK(err == CONV_E_OK || err == CONV_E_NOTFOUND || err == CONV_E_LIMIT ||
		   err == CONV_E_FORMAT || err == CONV_E_NET || err == CONV_E_IO);
	FUZZ_CHECK(memchr(diag.msg, 0, sizeof(diag.msg)) != NULL);
	FUZZ_CHECK((err == CONV_E_OK) == (path != NULL));
	FUZZ_CHECK(st->requests == 1);
	sum = st->fetched + st->cache_hits + st->system_cache_hits + st->negative_hits +
	      st->not_found;
	FUZZ_CHECK(sum == (err == CONV_E_OK || err == CONV_E_NOTFOUND ? 1u : 0u));
	if (err == CONV_E_OK) {
		/* what is handed out is ELF with exactly the build-id asked for */
		FUZZ_CHECK(buildid_from_path(path, got, &got_len, NULL) == CONV_E_OK);
		FUZZ_CHECK(got_len == bid_len && !memcmp(got, bid, bid_len));
		FUZZ_CHECK(buildid_elf_intact(path));
		FUZZ_CHECK(!strcmp(path, entry) || (src == SRC_SYSCACHE && !strcmp(path, sysentry)));
		if (src != SRC_HTTP)
			FUZZ_CHECK(same_file(path, body, blen));
		if (src == SRC_FILE || src == SRC_HTTP) {
			struct stat sb;

			FUZZ_CHECK(st->fetched == 1);
			FUZZ_CHECK(stat(path, &sb) == 0);
			FUZZ_CHECK(!max_size || (uint64_t)sb.st_size <= max_size);
		}
	} else {
		/* a refused download never reaches the cache */
		struct stat sb;

		if (src == SRC_FILE || src == SRC_HTTP)
			FUZZ_CHECK(stat(entry, &sb) != 0);
	}
	switch (src) {
	case SRC_FILE:
		/* the bytes alone decide */
		if (!fits)
			FUZZ_CHECK(err == CONV_E_LIMIT);
		else
			FUZZ_CHECK(err == (match ? CONV_E_OK : CONV_E_FORMAT));
		FUZZ_CHECK(err != CONV_E_FORMAT || st->bad_build_id >= 1);
		break;
	case SRC_CACHE:
		FUZZ_CHECK(err == (match ? CONV_E_OK : CONV_E_NOTFOUND));
		if (!match && n > 0) /* a bad entry is removed so that it is fetched again */
			FUZZ_CHECK(st->corrupt_cache_removed == 1 && access(entry, F_OK) != 0);
		break;
	case SRC_SYSCACHE:
		FUZZ_CHECK(err == (match ? CONV_E_OK : CONV_E_NOTFOUND));
		/* read-only: whatever it holds stays as it was */
		FUZZ_CHECK(same_file(sysentry, payload, n));
		break;
	default:
		break;
	}
	snprintf(dir, sizeof(dir), "%s/%s", cache, hex);
	FUZZ_CHECK(!has_prefixed(dir, ".conv-"));
	dfd_free(c);
	FUZZ_CHECK(!has_prefixed(dir, ".conv-"));

	pthread_mutex_lock(&resp_lock);
	resp = NULL;
	resp_len = 0;
	pthread_mutex_unlock(&resp_lock);
	rm_tree(srv, true);
	rm_tree(cache, true);
	rm_tree(syscache, true);
	return 0;
}

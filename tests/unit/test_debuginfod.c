/*
 * debuginfod client tests. Two tiny ELF files are compiled at test time
 * (cc -g -Wl,--build-id), served by tests/tools/fake_debuginfod.py on
 * 127.0.0.1, and fetched through every fault the fake server can inject;
 * each case checks the error code, the counter, the server's request log
 * (/__stats) and that nothing partial is left in the cache.
 *
 * Environment: PYTHON (default python3), CC (default cc), FAKE_DEBUGINFOD
 * (path of the script; default found from __FILE__). Without a compiler or
 * without python the network cases are skipped, not failed.
 *
 * With CONV_REAL_DEBUGINFOD_URL set, only the real-server group runs: it
 * fetches the files listed in CONV_REAL_DEBUGINFOD_EXPECT ("KIND:PATH ...",
 * KIND debuginfo or executable) from that server and compares them byte for
 * byte (tests/conformance/test_debuginfod_server.sh sets both).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "buildid/buildid.h"
#include "buildid/debuginfod.h"
#include "core/dbuf.h"
#include "tests/unit/testutil.h"

#include <curl/curl.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef FAKE_DEBUGINFOD_PY
#define FAKE_DEBUGINFOD_PY NULL
#endif

struct elf_file {
	char path[PATH_MAX];
	uint8_t id[BUILDID_MAX];
	size_t len;
	char hex[2 * BUILDID_MAX + 1];
};

struct fake {
	pid_t pid;
	int stdin_fd; /* the server exits when this closes */
	char url[64];
};

static struct {
	char tmp[PATH_MAX];
	bool have_elves;
	struct elf_file a, b;
	bool have_server;
	struct fake srv;   /* serves a and b */
	struct fake empty; /* serves nothing: 404 for all */
	char dead_url[64]; /* nothing listens there */
	unsigned cases;
} g;

/* ---- small helpers ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static bool read_all(const char *path, struct dbuf *out)
{
	char buf[65536];
	FILE *f = fopen(path, "rb");
	size_t n;

	dbuf_init(out, 0);
	if (!f)
		return false;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		dbuf_append(out, buf, n);
	fclose(f);
	return !out->err;
}

static bool same_file(const char *a, const char *b)
{
	struct dbuf x, y;
	bool same = read_all(a, &x) && read_all(b, &y) && x.len == y.len &&
		    !memcmp(x.data, y.data, x.len);

	dbuf_release(&x);
	dbuf_release(&y);
	return same;
}

static void copy_file(const char *src, const char *dst)
{
	struct dbuf d;

	assert_true(read_all(src, &d));
	write_file(dst, d.data, d.len);
	dbuf_release(&d);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* A cache directory no test used before (created by the client when needed). */
static void fresh_dir(char *out, size_t size, const char *what)
{
	tu_strf(out, size, "%s/%s-%u", g.tmp, what, ++g.cases);
}

static void entry(char *out, size_t size, const char *cache, const char *hex, const char *name)
{
	tu_strf(out, size, "%s/%s/%s", cache, hex, name);
}

/* Counts ".conv-*" temporary files anywhere below the cache (two levels). */
static unsigned tmp_files_left(const char *cache)
{
	DIR *d = opendir(cache), *sub;
	struct dirent *e, *f;
	unsigned n = 0;
	char p[PATH_MAX];

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		tu_strf(p, sizeof(p), "%s/%s", cache, e->d_name);
		if (!(sub = opendir(p)))
			continue;
		while ((f = readdir(sub)) != NULL)
			n += !strncmp(f->d_name, ".conv-", 6);
		closedir(sub);
	}
	closedir(d);
	return n;
}

/* Open sockets of this process: proof that offline mode never made one. */
static unsigned count_sockets(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char p[64], link[64];
		ssize_t k;

		tu_strf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
		k = readlink(p, link, sizeof(link) - 1);
		if (k > 0) {
			link[k] = '\0';
			n += !strncmp(link, "socket:", 7);
		}
	}
	closedir(d);
	return n;
}

/* ---- the fake server ---- */

static size_t http_sink(char *data, size_t size, size_t n, void *ud)
{
	dbuf_append(ud, data, size * n);
	return size * n;
}

static long http_get(const char *url, struct dbuf *out)
{
	CURL *e = curl_easy_init();
	long code = 0;

	dbuf_init(out, 1 << 20);
	if (!e)
		return 0;
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(e, CURLOPT_TIMEOUT, 10L);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, http_sink);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, out);
	if (curl_easy_perform(e) == CURLE_OK)
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(e);
	dbuf_putc(out, '\0');
	return code;
}

static void srv_cmd(const struct fake *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void srv_cmd(const struct fake *f, const char *fmt, ...)
{
	char url[512];
	size_t n = strlen(f->url);
	struct dbuf b;
	va_list ap;

	memcpy(url, f->url, n + 1);
	va_start(ap, fmt);
	vsnprintf(url + n, sizeof(url) - n, fmt, ap);
	va_end(ap);
	assert_int_equal(http_get(url, &b), 200);
	dbuf_release(&b);
}

static void srv_reset(const struct fake *f)
{
	srv_cmd(f, "/__reset");
}

static void srv_fault(const struct fake *f, const char *id, const char *kind, const char *arg)
{
	srv_cmd(f, "/__fault?id=%s&kind=%s&arg=%s", id, kind, arg ? arg : "");
}

/* A number from /__stats: key "requests" or "max_concurrent", or a path's count. */
static long srv_stat(const struct fake *f, const char *key)
{
	char url[128], pat[256];
	struct dbuf b;
	const char *from, *p;
	long v = -1;

	tu_strf(url, sizeof(url), "%s/__stats", f->url);
	assert_int_equal(http_get(url, &b), 200);
	from = (const char *)b.data;
	if (key[0] == '/') {
		/* paths also appear under "maxsize"; count only the "paths" object */
		from = strstr(from, "\"paths\": {");
		assert_non_null(from);
	}
	tu_strf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(from, pat);
	v = p ? strtol(p + strlen(pat), NULL, 10) : 0;
	dbuf_release(&b);
	return v;
}

static long srv_path(const struct fake *f, const char *hex, const char *kind)
{
	char path[256];

	tu_strf(path, sizeof(path), "/buildid/%s/%s", hex, kind);
	return srv_stat(f, path);
}

static bool srv_start(struct fake *f, const char *dir)
{
	const char *py = getenv("PYTHON") ? getenv("PYTHON") : "python3";
	const char *script = getenv("FAKE_DEBUGINFOD") ? getenv("FAKE_DEBUGINFOD")
						       : FAKE_DEBUGINFOD_PY;
	char guess[PATH_MAX], line[64] = "";
	int in[2], out[2];
	size_t got = 0;
	int port = 0;

	if (!script) {
		/* __FILE__ is .../tests/unit/test_debuginfod.c */
		const char *s = strstr(__FILE__, "unit/test_debuginfod.c");

		if (!s)
			return false;
		tu_strf(guess, sizeof(guess), "%.*stools/fake_debuginfod.py",
			 (int)(s - __FILE__), __FILE__);
		script = guess;
	}
	if (pipe(in) || pipe(out))
		return false;
	f->pid = fork();
	if (f->pid < 0)
		return false;
	if (f->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execlp(py, py, script, "--dir", dir, "--port", "0", "--lifetime", "180",
		       "--exit-on-stdin-eof", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f->stdin_fd = in[1];
	/* "PORT n\n" within 10 s, or no server */
	while (got < sizeof(line) - 1 && !strchr(line, '\n')) {
		struct pollfd p = { .fd = out[0], .events = POLLIN };
		ssize_t k;

		if (poll(&p, 1, 10000) <= 0)
			break;
		k = read(out[0], line + got, sizeof(line) - 1 - got);
		if (k <= 0)
			break;
		got += (size_t)k;
		line[got] = '\0';
	}
	close(out[0]);
	if (sscanf(line, "PORT %d", &port) != 1 || port <= 0) {
		close(f->stdin_fd);
		kill(f->pid, SIGKILL);
		waitpid(f->pid, NULL, 0);
		f->pid = 0;
		return false;
	}
	tu_strf(f->url, sizeof(f->url), "http://127.0.0.1:%d", port);
	return true;
}

static void srv_stop(struct fake *f)
{
	if (f->pid <= 0)
		return;
	close(f->stdin_fd);
	kill(f->pid, SIGTERM);
	waitpid(f->pid, NULL, 0);
	f->pid = 0;
}

/* A port nothing listens on: bind one, then close it. */
static void make_dead_url(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		tu_strf(g.dead_url, sizeof(g.dead_url), "http://127.0.0.1:%u", ntohs(sa.sin_port));
	else
		tu_strf(g.dead_url, sizeof(g.dead_url), "http://127.0.0.1:1");
	if (fd >= 0)
		close(fd);
}

/* ---- fixtures ---- */

static bool build_elf(struct elf_file *e, const char *name, const char *src)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char c_path[PATH_MAX];

	tu_strf(c_path, sizeof(c_path), "%s/%s.c", g.tmp, name);
	tu_strf(e->path, sizeof(e->path), "%s/%s", g.tmp, name);
	write_file(c_path, src, strlen(src));
	char g_flag[] = "-g", o0[] = "-O0", bid[] = "-Wl,--build-id", o[] = "-o";
	char *argv[] = { (char *)cc, g_flag, o0, bid, o, e->path, c_path, NULL };
	if (tu_run(argv) != 0)
		return false;
	if (buildid_from_path(e->path, e->id, &e->len, NULL) != CONV_E_OK)
		return false;
	buildid_hex(e->id, e->len, e->hex);
	return true;
}

static void serve_elf(const char *root, const struct elf_file *e)
{
	char p[PATH_MAX];

	tu_strf(p, sizeof(p), "%s/%s", root, e->hex);
	tu_mkdirs(p, 0700);
	entry(p, sizeof(p), root, e->hex, "debuginfo");
	copy_file(e->path, p);
	entry(p, sizeof(p), root, e->hex, "executable");
	copy_file(e->path, p);
}

static void clean_env(void)
{
	static const char *const vars[] = { "DEBUGINFOD_URLS",	 "DEBUGINFOD_CACHE_PATH",
					    "DEBUGINFOD_TIMEOUT", "DEBUGINFOD_MAXSIZE",
					    "DEBUGINFOD_MAXTIME", "http_proxy",
					    "https_proxy",	 "HTTPS_PROXY",
					    "all_proxy",	 "ALL_PROXY" };
	char p[PATH_MAX];

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	/* Never look at the real user's caches: they would make results depend on the machine. */
	tu_strf(p, sizeof(p), "%s/home", g.tmp);
	setenv("HOME", p, 1);
	tu_strf(p, sizeof(p), "%s/xdg", g.tmp);
	setenv("XDG_CACHE_HOME", p, 1);
}

static int group_setup(void **state)
{
	char srvdir[PATH_MAX], emptydir[PATH_MAX];
	(void)state;

	signal(SIGPIPE, SIG_IGN);
	if (!tu_tmpdir_make(g.tmp, sizeof(g.tmp), "test_debuginfod"))
		return -1;
	clean_env();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	g.have_elves = build_elf(&g.a, "a", "int main(void) { return 0; }\n") &&
		       build_elf(&g.b, "b", "static int f(int x) { return x + 1; }\n"
					    "int main(void) { return f(1) - 2; }\n");
	if (!g.have_elves)
		return 0;
	assert_string_not_equal(g.a.hex, g.b.hex);
	tu_strf(srvdir, sizeof(srvdir), "%s/served", g.tmp);
	tu_strf(emptydir, sizeof(emptydir), "%s/served-empty", g.tmp);
	serve_elf(srvdir, &g.a);
	serve_elf(srvdir, &g.b);
	tu_mkdirs(emptydir, 0700);
	g.have_server = srv_start(&g.srv, srvdir) && srv_start(&g.empty, emptydir);
	make_dead_url();
	return 0;
}

/* The real-server group needs no compiler and no fake server. */
static int real_setup(void **state)
{
	(void)state;

	if (!tu_tmpdir_make(g.tmp, sizeof(g.tmp), "test_debuginfod"))
		return -1;
	clean_env();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	srv_stop(&g.srv);
	srv_stop(&g.empty);
	curl_global_cleanup();
	tu_tmpdir_drop(g.tmp);
	return 0;
}

#define NEED_ELVES()                                                                   \
	do {                                                                           \
		if (!g.have_elves)                                                     \
			skip();                                                        \
	} while (0)
#define NEED_SERVER()                                                                  \
	do {                                                                           \
		if (!g.have_elves || !g.have_server)                                   \
			skip();                                                        \
	} while (0)

static void opts_init(struct dfd_opts *o, const char *const *urls, size_t n, const char *cache)
{
	memset(o, 0, sizeof(*o));
	o->urls = urls;
	o->nr_urls = n;
	o->cache_dir = cache;
	o->timeout_s = 5;
	o->max_time_s = 30;
}

/* Options over a cache directory of its own (cache: PATH_MAX bytes). */
static void fresh_opts(struct dfd_opts *o, const char *const *urls, size_t n, char *cache)
{
	fresh_dir(cache, PATH_MAX, "cache");
	opts_init(o, urls, n, cache);
}

static struct dfd_client *client(const struct dfd_opts *o)
{
	struct dfd_client *c = NULL;
	struct conv_diag d;

	assert_int_equal(dfd_new(&c, o, &d), CONV_E_OK);
	assert_non_null(c);
	return c;
}

static enum conv_err fetch(struct dfd_client *c, const struct elf_file *e, enum dfd_kind kind,
			   const char **path)
{
	struct conv_diag d = { 0 };
	enum conv_err err;

	assert_int_equal(dfd_request(c, e->id, e->len, kind), CONV_E_OK);
	err = dfd_wait(c, e->id, e->len, kind, path, &d);
	if (err != CONV_E_OK)
		assert_true(d.msg[0] != '\0'); /* every failure says why */
	return err;
}

/* ---- cases ---- */

struct events {
	unsigned start, data, done, wait;
	uint64_t waited_ms; /* the most a DFD_EV_WAIT said */
	enum conv_err last;
};

static void on_progress(void *ctx, const struct dfd_progress *p)
{
	struct events *ev = ctx;

	assert_non_null(p->build_id);
	if (p->event == DFD_EV_START) {
		assert_non_null(p->url);
		ev->start++;
	} else if (p->event == DFD_EV_DATA) {
		assert_true(p->received > 0);
		ev->data++;
	} else if (p->event == DFD_EV_WAIT) {
		assert_null(p->url);
		assert_true(p->waited_ms > 0);
		if (p->waited_ms > ev->waited_ms)
			ev->waited_ms = p->waited_ms;
		ev->wait++;
	} else {
		ev->done++;
		ev->last = p->result;
	}
}

static void test_fetch_verify_cache(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX], want[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	const char *path = NULL;
	struct events ev = { 0 };
	double t0;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	fresh_opts(&o, urls, 1, cache);
	o.progress = on_progress;
	o.progress_ctx = &ev;
	c = client(&o);
	t0 = now_s();
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	print_message("fetch of %s: %.0f ms\n", g.a.hex, (now_s() - t0) * 1e3);
	entry(want, sizeof(want), cache, g.a.hex, "debuginfo");
	assert_string_equal(path, want);
	assert_true(same_file(path, g.a.path));
	assert_int_equal(fetch(c, &g.a, DFD_EXECUTABLE, &path), CONV_E_OK);
	entry(want, sizeof(want), cache, g.a.hex, "executable");
	assert_string_equal(path, want);
	assert_int_equal(dfd_stats(c)->fetched, 2);
	assert_int_equal(dfd_stats(c)->requests, 2);
	assert_int_equal(dfd_stats(c)->transfers, 2);
	assert_true(dfd_stats(c)->bytes >= 2 * 1000);
	assert_int_equal(ev.start, 2);
	assert_int_equal(ev.done, 2);
	assert_int_equal(ev.last, CONV_E_OK);
	assert_int_equal(tmp_files_left(cache), 0);
	assert_int_equal(srv_path(&g.srv, g.a.hex, "debuginfo"), 1);
	/* without a max_size the 4 GiB default limit is sent (a server cannot fill the disk) */
	{
		char url[128];
		struct dbuf b;

		tu_strf(url, sizeof(url), "%s/__stats", g.srv.url);
		http_get(url, &b);
		assert_non_null(strstr((const char *)b.data, "\"4294967296\""));
		assert_non_null(strstr((const char *)b.data, "\"user_agent\": \"conv"));
		dbuf_release(&b);
	}
	dfd_free(c);

	/* a new client finds both in the cache and asks nobody */
	srv_reset(&g.srv);
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_int_equal(fetch(c, &g.a, DFD_EXECUTABLE, &path), CONV_E_OK);
	assert_int_equal(dfd_stats(c)->cache_hits, 2);
	assert_int_equal(dfd_stats(c)->fetched, 0);
	assert_int_equal(dfd_stats(c)->transfers, 0);
	assert_int_equal(srv_stat(&g.srv, "requests"), 0);
	dfd_free(c);
}

static void test_dedup(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	const char *p1 = NULL, *p2 = NULL;
	int rounds = 0;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	fresh_opts(&o, urls, 1, cache);
	c = client(&o);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(dfd_request(c, g.a.id, g.a.len, DFD_DEBUGINFO), CONV_E_OK);
		assert_int_equal(dfd_request(c, g.b.id, g.b.len, DFD_DEBUGINFO), CONV_E_OK);
	}
	while (dfd_poll(c, 200))
		assert_true(++rounds < 100);
	assert_int_equal(dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &p1, NULL), CONV_E_OK);
	assert_int_equal(dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &p2, NULL), CONV_E_OK);
	assert_ptr_equal(p1, p2);
	assert_int_equal(dfd_stats(c)->requests, 2);
	assert_int_equal(dfd_stats(c)->fetched, 2);
	assert_int_equal(srv_stat(&g.srv, "requests"), 2);
	assert_false(dfd_poll(c, 0));
	dfd_free(c);
}

enum counter { C_NONE, C_NOT_FOUND, C_ERRORS, C_TOO_LARGE, C_BAD_ID, C_FETCHED };

static uint64_t counter(const struct dfd_stats *s, enum counter k)
{
	switch (k) {
	case C_NOT_FOUND:
		return s->not_found;
	case C_ERRORS:
		return s->errors;
	case C_TOO_LARGE:
		return s->too_large;
	case C_BAD_ID:
		return s->bad_build_id;
	case C_FETCHED:
		return s->fetched;
	default:
		return 0;
	}
}

struct fault_case {
	const char *fault, *arg;
	long timeout_s;
	uint64_t max_size;
	enum conv_err want;
	enum counter count;
	long min_requests, max_requests; /* at the server, for the build-id's path */
};

static void test_faults(void **state)
{
	static const struct fault_case cases[] = {
		{ "404", NULL, 5, 0, CONV_E_NOTFOUND, C_NOT_FOUND, 1, 1 },
		{ "406", NULL, 5, 0, CONV_E_LIMIT, C_TOO_LARGE, 1, 1 },
		{ "none", NULL, 5, 100, CONV_E_LIMIT, C_TOO_LARGE, 1, 1 }, /* real 406 by header */
		{ "500", NULL, 5, 0, CONV_E_NET, C_ERRORS, 1, 1 },
		{ "503", NULL, 5, 0, CONV_E_NET, C_ERRORS, 1, 1 },
		{ "drop", NULL, 5, 0, CONV_E_NET, C_ERRORS, 1, 2 },
		{ "truncate", NULL, 5, 0, CONV_E_NET, C_ERRORS, 1, 1 },
		{ "stall", "10", 2, 0, CONV_E_NET, C_ERRORS, 1, 1 },
		{ "wrong", NULL, 5, 0, CONV_E_FORMAT, C_BAD_ID, 1, 1 },
		{ "garbage", NULL, 5, 0, CONV_E_FORMAT, C_BAD_ID, 1, 1 },
		{ "huge", NULL, 5, 1 << 20, CONV_E_LIMIT, C_TOO_LARGE, 1, 1 },
		/* zeros are not ELF: stopped at their first bytes, before any limit */
		{ "hugenolen", NULL, 5, 1 << 20, CONV_E_FORMAT, C_BAD_ID, 1, 1 },
		/* an ELF start followed by zeros passes that check: the size limit stops it */
		{ "hugeelf", NULL, 5, 1 << 20, CONV_E_LIMIT, C_TOO_LARGE, 1, 1 },
		{ "redirect_loop", NULL, 5, 0, CONV_E_NET, C_ERRORS, 6, 6 },
		/* 2 KiB/s is under the 100 KiB/s floor: given up after --timeout, not waited out */
		{ "drip", "0.5:1024", 1, 0, CONV_E_NET, C_ERRORS, 1, 1 },
		/* these must still succeed */
		{ "redirect", NULL, 5, 0, CONV_E_OK, C_FETCHED, 1, 1 },
		{ "drip", "0.3:4096", 5, 0, CONV_E_OK, C_FETCHED, 1, 1 },
		{ "delay", "0.2", 5, 0, CONV_E_OK, C_FETCHED, 1, 1 },
	};
	const char *urls[] = { g.srv.url };
	(void)state;

	NEED_SERVER();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fault_case *fc = &cases[i];
		char cache[PATH_MAX], p[PATH_MAX];
		struct dfd_opts o;
		struct dfd_client *c;
		const struct dfd_stats *s;
		struct conv_diag d = { 0 };
		const char *path = (const char *)1;
		enum conv_err err;
		struct events ev = { 0 };
		long n;
		double t0;

		srv_reset(&g.srv);
		srv_fault(&g.srv, g.a.hex, fc->fault, fc->arg);
		fresh_opts(&o, urls, 1, cache);
		o.timeout_s = fc->timeout_s;
		o.max_size = fc->max_size;
		o.progress = on_progress;
		o.progress_ctx = &ev;
		c = client(&o);
		t0 = now_s();
		err = dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, &d);
		print_message("fault %-13s -> %-26s %5.0f ms  %s\n", fc->fault,
			      conv_strerror(err), (now_s() - t0) * 1e3, err ? d.msg : path);
		assert_int_equal(err, fc->want);
		assert_int_equal(ev.done, 1);
		assert_int_equal(ev.last, err);
		if (!strcmp(fc->fault, "drip") && fc->want == CONV_E_OK)
			assert_true(ev.data >= 2); /* a slow body is reported as it arrives */
		if (!strcmp(fc->fault, "drip") && fc->want != CONV_E_OK) {
			assert_non_null(strstr(d.msg, "KiB/s"));
			assert_true(now_s() - t0 < fc->timeout_s + 3); /* not the 8 s the body takes */
		}
		s = dfd_stats(c);
		assert_int_equal(counter(s, fc->count), 1);
		for (enum counter k = C_NOT_FOUND; k <= C_FETCHED; k++)
			if (k != fc->count)
				assert_int_equal(counter(s, k), 0);
		n = srv_path(&g.srv, g.a.hex, "debuginfo");
		assert_in_range(n, fc->min_requests, fc->max_requests);
		entry(p, sizeof(p), cache, g.a.hex, "debuginfo");
		if (err == CONV_E_OK) {
			assert_string_equal(path, p);
			assert_true(same_file(p, g.a.path));
		} else {
			assert_null(path);
			assert_false(exists(p));
		}
		assert_int_equal(tmp_files_left(cache), 0);
		entry(p, sizeof(p), cache, g.a.hex, "debuginfo.missing");
		assert_int_equal(exists(p), err == CONV_E_NOTFOUND);
		if (fc->max_size) {
			char url[128], want[64];
			struct dbuf b;

			tu_strf(url, sizeof(url), "%s/__stats", g.srv.url);
			http_get(url, &b);
			tu_strf(want, sizeof(want), "/debuginfo\": \"%llu\"",
				 (unsigned long long)fc->max_size);
			assert_non_null(strstr((const char *)b.data, want));
			dbuf_release(&b);
		}
		dfd_free(c);
	}
	srv_reset(&g.srv);
}

/* A transfer in flight when the client is freed leaves nothing behind. */
static void test_free_aborts(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	int rounds = 0;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	srv_fault(&g.srv, g.a.hex, "stall", "5");
	fresh_opts(&o, urls, 1, cache);
	c = client(&o);
	assert_int_equal(dfd_request(c, g.a.id, g.a.len, DFD_DEBUGINFO), CONV_E_OK);
	while (srv_path(&g.srv, g.a.hex, "debuginfo") < 1 && rounds++ < 50)
		assert_true(dfd_poll(c, 50));
	assert_true(dfd_poll(c, 100));
	assert_int_equal(tmp_files_left(cache), 1); /* the download is under way */
	dfd_free(c);
	assert_int_equal(tmp_files_left(cache), 0);
	srv_reset(&g.srv);
}

/* DEBUGINFOD_MAXSIZE and DEBUGINFOD_TIMEOUT apply when the options leave them at 0. */
static void test_env_limits(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	struct conv_diag d = { 0 };
	const char *path;
	double t0;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	setenv("DEBUGINFOD_MAXSIZE", "100", 1);
	fresh_opts(&o, urls, 1, cache);
	c = client(&o);
	assert_int_equal(dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, &d), CONV_E_LIMIT);
	assert_non_null(strstr(d.msg, "limit of 100 bytes"));
	dfd_free(c);
	unsetenv("DEBUGINFOD_MAXSIZE");

	setenv("DEBUGINFOD_TIMEOUT", "1", 1);
	srv_fault(&g.srv, g.a.hex, "stall", "5");
	o.timeout_s = 0;
	c = client(&o);
	t0 = now_s();
	assert_int_equal(dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, &d), CONV_E_NET);
	assert_true(now_s() - t0 < 4.0); /* not the 5 s of opts_init(), not the default 90 */
	dfd_free(c);
	unsetenv("DEBUGINFOD_TIMEOUT");
	srv_reset(&g.srv);
}

/*
 * Seconds past any use (LONG_MAX: what strtol gives on overflow) are
 * capped where libcurl takes them: the file still arrives.
 */
static void test_huge_seconds(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	struct conv_diag d = { 0 };
	const char *path = NULL;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	fresh_opts(&o, urls, 1, cache);
	o.deadline_s = LONG_MAX;
	o.timeout_s = LONG_MAX;
	o.max_time_s = LONG_MAX;
	c = client(&o);
	if (dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, &d) != CONV_E_OK)
		fail_msg("%s", d.msg);
	assert_non_null(path);
	assert_int_equal(dfd_stats(c)->deadline, 0);
	dfd_free(c);

	/* a year from the environment as well (libcurl refuses over INT_MAX ms) */
	setenv("DEBUGINFOD_MAXTIME", "31536000", 1);
	setenv("DEBUGINFOD_TIMEOUT", "31536000", 1);
	fresh_dir(cache, sizeof(cache), "cache");
	o.timeout_s = 0;
	o.max_time_s = 0;
	c = client(&o);
	if (dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, &d) != CONV_E_OK)
		fail_msg("%s", d.msg);
	dfd_free(c);
	unsetenv("DEBUGINFOD_MAXTIME");
	unsetenv("DEBUGINFOD_TIMEOUT");
}

static const uint8_t unknown_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
					 7,    8,    9,    10,   11, 12, 13, 14, 15, 16 };

/* Sets path's mtime (and atime) to age_s seconds before now; negative: after now. */
static void age_file(const char *path, long age_s)
{
	struct timespec t[2];

	assert_int_equal(clock_gettime(CLOCK_REALTIME, &t[0]), 0);
	t[0].tv_sec -= age_s;
	t[1] = t[0];
	assert_int_equal(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0);
}

/*
 * One client asked once for unknown_id, which no server has: a 404 (or a
 * remembered one); its counts, after it is freed.
 */
static struct dfd_stats ask_unknown(const struct dfd_opts *o, enum dfd_kind kind)
{
	struct dfd_client *c = client(o);
	struct dfd_stats st;

	assert_int_equal(dfd_wait(c, unknown_id, sizeof(unknown_id), kind, NULL, NULL),
			 CONV_E_NOTFOUND);
	st = *dfd_stats(c);
	dfd_free(c);
	return st;
}

/* A negative-cache case: options over a fresh cache, unknown_id in hex, its path on the server. */
struct negcase {
	const char *urls[1];
	struct dfd_opts o;
	char cache[PATH_MAX], hex[64], path[256];
	char entry[PATH_MAX]; /* the cache's negative entry, after negative_kept() */
};

static void negative_start(struct negcase *n)
{
	srv_reset(&g.srv);
	n->urls[0] = g.srv.url;
	buildid_hex(unknown_id, sizeof(unknown_id), n->hex);
	tu_strf(n->path, sizeof(n->path), "/buildid/%s/debuginfo", n->hex);
	fresh_opts(&n->o, n->urls, 1, n->cache);
}

/* Whether the cache holds a negative entry for unknown_id (its path in n->entry). */
static bool negative_kept(struct negcase *n)
{
	entry(n->entry, sizeof(n->entry), n->cache, n->hex, "debuginfo.missing");
	return exists(n->entry);
}

static void test_negative_cache(void **state)
{
	struct negcase n;
	struct dfd_stats st;
	(void)state;

	NEED_SERVER();
	negative_start(&n);
	st = ask_unknown(&n.o, DFD_DEBUGINFO);
	assert_int_equal(st.not_found, 1);
	assert_true(negative_kept(&n));
	assert_int_equal(srv_stat(&g.srv, n.path), 1);

	/* within the TTL: answered without the network */
	st = ask_unknown(&n.o, DFD_DEBUGINFO);
	assert_int_equal(st.negative_hits, 1);
	assert_int_equal(st.not_found, 0);
	assert_int_equal(st.transfers, 0);
	assert_int_equal(srv_stat(&g.srv, n.path), 1);

	/* the other kind is a different question */
	st = ask_unknown(&n.o, DFD_EXECUTABLE);
	assert_int_equal(st.negative_hits, 0);

	/* negative_ttl_s < 0: 404s are not remembered */
	fresh_dir(n.cache, sizeof(n.cache), "cache");
	n.o.negative_ttl_s = -1;
	ask_unknown(&n.o, DFD_DEBUGINFO);
	assert_false(negative_kept(&n));

	/* a 404 and a 500: not "missing", so nothing is remembered */
	{
		const char *two[] = { g.empty.url, g.srv.url };
		struct conv_diag d = { 0 };
		struct dfd_client *c;

		srv_fault(&g.srv, n.hex, "500", NULL);
		fresh_opts(&n.o, two, 2, n.cache);
		c = client(&n.o);
		assert_int_equal(dfd_wait(c, unknown_id, sizeof(unknown_id), DFD_DEBUGINFO, NULL,
					  &d),
				 CONV_E_NET);
		assert_non_null(strstr(d.msg, "HTTP 500"));
		assert_int_equal(dfd_stats(c)->errors, 1);
		assert_int_equal(dfd_stats(c)->not_found, 0);
		dfd_free(c);
		assert_false(negative_kept(&n));
	}
	srv_reset(&g.srv);
}

/*
 * A negative entry's age is its mtime against the real-time clock: set
 * into the past (or the future) here, each case 30 s or more from the
 * TTL's edge, so that no sleep is needed and a slow run cannot cross it.
 */
static void test_negative_cache_age(void **state)
{
	struct negcase n;
	struct dfd_stats st;
	(void)state;

	NEED_SERVER();
	negative_start(&n);
	n.o.negative_ttl_s = 60;
	ask_unknown(&n.o, DFD_DEBUGINFO);
	assert_true(negative_kept(&n));
	assert_int_equal(srv_stat(&g.srv, n.path), 1);

	/* within the TTL: answered without the network */
	age_file(n.entry, 30);
	st = ask_unknown(&n.o, DFD_DEBUGINFO);
	assert_int_equal(st.negative_hits, 1);
	assert_int_equal(st.transfers, 0);
	assert_int_equal(srv_stat(&g.srv, n.path), 1);

	/* after the TTL: asked again, and remembered anew */
	age_file(n.entry, 90);
	st = ask_unknown(&n.o, DFD_DEBUGINFO);
	assert_int_equal(st.negative_hits, 0);
	assert_int_equal(st.not_found, 1);
	assert_int_equal(srv_stat(&g.srv, n.path), 2);
	st = ask_unknown(&n.o, DFD_DEBUGINFO);
	assert_int_equal(st.negative_hits, 1);
	assert_int_equal(srv_stat(&g.srv, n.path), 2);

	/* from the future (the clock was set back): stale, asked again */
	age_file(n.entry, -3600);
	st = ask_unknown(&n.o, DFD_DEBUGINFO);
	assert_int_equal(st.negative_hits, 0);
	assert_int_equal(st.not_found, 1);
	assert_int_equal(srv_stat(&g.srv, n.path), 3);
	srv_reset(&g.srv);
}

/* Holds (or only opens) the lock another process would hold on a's debuginfo entry; returns its fd. */
static int entry_lock(const char *cache, bool take)
{
	char dir[PATH_MAX], p[PATH_MAX];
	int fd;

	tu_strf(dir, sizeof(dir), "%s/%s", cache, g.a.hex);
	tu_mkdirs(dir, 0700);
	tu_strf(p, sizeof(p), "%s/.lock-debuginfo", dir);
	fd = open(p, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	if (take)
		assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	return fd;
}

static void test_corrupt_cache(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX], p[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	const char *path;
	static const char junk[] = "this is not an ELF file at all";
	int held;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	fresh_opts(&o, urls, 1, cache);
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	dfd_free(c);
	entry(p, sizeof(p), cache, g.a.hex, "debuginfo");

	/* garbage, then another build-id's ELF: both removed and fetched again */
	for (int round = 0; round < 2; round++) {
		if (round == 0)
			write_file(p, junk, sizeof(junk));
		else
			copy_file(g.b.path, p);
		c = client(&o);
		assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
		assert_int_equal(dfd_stats(c)->corrupt_cache_removed, 1);
		assert_int_equal(dfd_stats(c)->fetched, 1);
		assert_int_equal(dfd_stats(c)->cache_hits, 0);
		assert_true(same_file(p, g.a.path));
		dfd_free(c);
		assert_int_equal(srv_path(&g.srv, g.a.hex, "debuginfo"), 2 + round);
	}

	/*
	 * offline, a corrupt entry is still removed, and the answer is "not
	 * found"; but only under its lock: a process holding it may just have
	 * renamed a good file there. Held elsewhere, it is left to that holder.
	 */
	write_file(p, junk, sizeof(junk));
	o.offline = true;
	held = entry_lock(cache, true);
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_NOTFOUND);
	assert_int_equal(dfd_stats(c)->corrupt_cache_removed, 0);
	assert_true(exists(p));
	dfd_free(c);
	close(held);
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_NOTFOUND);
	assert_int_equal(dfd_stats(c)->corrupt_cache_removed, 1);
	assert_false(exists(p));
	dfd_free(c);

	/* an empty entry is the debuginfod client's negative entry (shared cache) */
	write_file(p, "", 0);
	o.offline = false;
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_NOTFOUND);
	assert_int_equal(dfd_stats(c)->negative_hits, 1);
	assert_int_equal(dfd_stats(c)->corrupt_cache_removed, 0);
	dfd_free(c);
	assert_int_equal(srv_path(&g.srv, g.a.hex, "debuginfo"), 3);
}

static void test_system_cache(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX], sys[PATH_MAX], p[PATH_MAX], want[PATH_MAX], xdg[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	const char *path;
	static const char junk[] = "junk";
	struct stat before, after;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	fresh_dir(sys, sizeof(sys), "syscache");
	tu_strf(p, sizeof(p), "%s/%s", sys, g.b.hex);
	tu_mkdirs(p, 0700);
	entry(want, sizeof(want), sys, g.b.hex, "debuginfo");
	copy_file(g.b.path, want);
	tu_strf(p, sizeof(p), "%s/%s", sys, g.a.hex);
	tu_mkdirs(p, 0700);
	entry(p, sizeof(p), sys, g.a.hex, "debuginfo");
	write_file(p, junk, sizeof(junk));
	assert_int_equal(stat(p, &before), 0);
	setenv("DEBUGINFOD_CACHE_PATH", sys, 1);

	fresh_opts(&o, urls, 1, cache);
	c = client(&o);
	assert_int_equal(fetch(c, &g.b, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_string_equal(path, want);
	assert_int_equal(dfd_stats(c)->system_cache_hits, 1);
	/* a bad entry there is ignored and left alone */
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_int_equal(strncmp(path, cache, strlen(cache)), 0);
	assert_int_equal(dfd_stats(c)->fetched, 1);
	assert_int_equal(dfd_stats(c)->corrupt_cache_removed, 0);
	dfd_free(c);
	assert_int_equal(stat(p, &after), 0);
	assert_int_equal(after.st_size, before.st_size);
	assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
	tu_strf(p, sizeof(p), "%s/%s", cache, g.b.hex);
	assert_false(exists(p)); /* nothing copied into ours */
	assert_int_equal(srv_stat(&g.srv, "requests"), 1);

	/* offline still reads it */
	o.offline = true;
	c = client(&o);
	assert_int_equal(fetch(c, &g.b, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_int_equal(dfd_stats(c)->system_cache_hits, 1);
	dfd_free(c);

	/* defaults: no cache_dir and DEBUGINFOD_CACHE_PATH set means that is our cache */
	o.offline = false;
	o.cache_dir = NULL;
	srv_reset(&g.srv);
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_EXECUTABLE, &path), CONV_E_OK);
	entry(want, sizeof(want), sys, g.a.hex, "executable");
	assert_string_equal(path, want);
	assert_int_equal(fetch(c, &g.b, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_int_equal(dfd_stats(c)->cache_hits, 1);
	dfd_free(c);
	unsetenv("DEBUGINFOD_CACHE_PATH");

	/* defaults: $XDG_CACHE_HOME/conv, and $XDG_CACHE_HOME/debuginfod_client read-only */
	tu_strf(xdg, sizeof(xdg), "%s/xdg-%u", g.tmp, ++g.cases);
	setenv("XDG_CACHE_HOME", xdg, 1);
	tu_strf(p, sizeof(p), "%s/debuginfod_client/%s", xdg, g.b.hex);
	tu_mkdirs(p, 0700);
	tu_strf(p, sizeof(p), "%s/debuginfod_client/%s/executable", xdg, g.b.hex);
	copy_file(g.b.path, p);
	c = client(&o);
	assert_int_equal(fetch(c, &g.b, DFD_EXECUTABLE, &path), CONV_E_OK);
	assert_string_equal(path, p);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	tu_strf(want, sizeof(want), "%s/conv/%s/debuginfo", xdg, g.a.hex);
	assert_string_equal(path, want);
	dfd_free(c);
	clean_env();
}

static void test_offline(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	const char *path;
	unsigned sockets;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	fresh_opts(&o, urls, 1, cache);
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	dfd_free(c);
	srv_reset(&g.srv);

	sockets = count_sockets();
	o.offline = true;
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_int_equal(fetch(c, &g.b, DFD_DEBUGINFO, &path), CONV_E_NOTFOUND);
	assert_false(dfd_poll(c, 100));
	assert_int_equal(count_sockets(), sockets);
	assert_int_equal(dfd_stats(c)->cache_hits, 1);
	assert_int_equal(dfd_stats(c)->not_found, 1);
	assert_int_equal(dfd_stats(c)->transfers, 0);
	dfd_free(c);

	/* no URLs anywhere: the same, and DEBUGINFOD_URLS="" counts as none */
	setenv("DEBUGINFOD_URLS", "", 1);
	opts_init(&o, NULL, 0, cache);
	c = client(&o);
	assert_int_equal(fetch(c, &g.b, DFD_DEBUGINFO, &path), CONV_E_NOTFOUND);
	assert_int_equal(count_sockets(), sockets);
	dfd_free(c);
	unsetenv("DEBUGINFOD_URLS");
	assert_int_equal(srv_stat(&g.srv, "requests"), 0);
}

static void test_servers_in_order(void **state)
{
	char cache[PATH_MAX], env[256];
	struct dfd_opts o;
	struct dfd_client *c;
	const char *path;
	(void)state;

	NEED_SERVER();
	/* the first says 404, the second has it */
	{
		const char *urls[] = { g.empty.url, g.srv.url };

		srv_reset(&g.srv);
		srv_reset(&g.empty);
		fresh_opts(&o, urls, 2, cache);
		c = client(&o);
		assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
		assert_int_equal(dfd_stats(c)->transfers, 2);
		assert_int_equal(dfd_stats(c)->fetched, 1);
		assert_int_equal(dfd_stats(c)->not_found, 0);
		dfd_free(c);
		assert_int_equal(srv_path(&g.empty, g.a.hex, "debuginfo"), 1);
		assert_int_equal(srv_path(&g.srv, g.a.hex, "debuginfo"), 1);
	}
	/* the first is down */
	{
		const char *urls[] = { g.dead_url, g.srv.url };

		fresh_opts(&o, urls, 2, cache);
		c = client(&o);
		assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
		assert_int_equal(dfd_stats(c)->errors, 1);
		assert_int_equal(dfd_stats(c)->fetched, 1);
		dfd_free(c);
	}
	/* the first sends the wrong file: counted, and the second is asked */
	{
		const char *urls[] = { g.srv.url, g.srv.url };

		srv_reset(&g.srv);
		srv_fault(&g.srv, g.a.hex, "wrong", NULL);
		fresh_opts(&o, urls, 2, cache);
		c = client(&o);
		assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_FORMAT);
		assert_int_equal(dfd_stats(c)->bad_build_id, 2);
		dfd_free(c);
		srv_reset(&g.srv);
	}
	/* both fail differently: the most useful failure is reported */
	{
		const char *urls[] = { g.dead_url, g.empty.url, g.srv.url };
		struct conv_diag d = { 0 };

		srv_fault(&g.srv, g.a.hex, "garbage", NULL);
		fresh_opts(&o, urls, 3, cache);
		c = client(&o);
		assert_int_equal(dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, &d),
				 CONV_E_FORMAT);
		assert_non_null(strstr(d.msg, "not ELF"));
		dfd_free(c);
		srv_reset(&g.srv);
	}
	/* the same order from DEBUGINFOD_URLS */
	tu_strf(env, sizeof(env), "  %s/ \t%s  ", g.empty.url, g.srv.url);
	setenv("DEBUGINFOD_URLS", env, 1);
	srv_reset(&g.empty);
	fresh_opts(&o, NULL, 0, cache);
	c = client(&o);
	assert_int_equal(fetch(c, &g.b, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_int_equal(dfd_stats(c)->transfers, 2);
	dfd_free(c);
	assert_int_equal(srv_path(&g.empty, g.b.hex, "debuginfo"), 1);
	unsetenv("DEBUGINFOD_URLS");
}

static void test_max_parallel(void **state)
{
	enum { N = 12, PAR = 3 };
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	uint8_t ids[N][20];
	int rounds = 0;
	double t0;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	srv_fault(&g.srv, "*", "delay", "0.25");
	fresh_opts(&o, urls, 1, cache);
	o.max_parallel = PAR;
	c = client(&o);
	t0 = now_s();
	for (int i = 0; i < N; i++) {
		memset(ids[i], 0x40 + i, sizeof(ids[i]));
		assert_int_equal(dfd_request(c, ids[i], sizeof(ids[i]), DFD_DEBUGINFO), CONV_E_OK);
	}
	while (dfd_poll(c, 100))
		assert_true(++rounds < 200);
	print_message("%d requests, %d at a time, 0.25 s each: %.0f ms\n", N, PAR,
		      (now_s() - t0) * 1e3);
	for (int i = 0; i < N; i++)
		assert_int_equal(dfd_wait(c, ids[i], sizeof(ids[i]), DFD_DEBUGINFO, NULL, NULL),
				 CONV_E_NOTFOUND);
	assert_int_equal(dfd_stats(c)->not_found, N);
	assert_int_equal(srv_stat(&g.srv, "requests"), N);
	assert_int_equal(srv_stat(&g.srv, "max_concurrent"), PAR);
	dfd_free(c);
	srv_reset(&g.srv);
}

/*
 * Downloads in flight share max_in_flight bytes on disk: past it a transfer
 * waits (paused) until another ends, except the oldest, so they hold at most
 * the cap plus one file, and every file still arrives intact.
 */
static void test_in_flight_cap(void **state)
{
	enum { CAP = 4096 };
	const struct elf_file *files[] = { &g.a, &g.b };
	const enum dfd_kind kinds[] = { DFD_DEBUGINFO, DFD_EXECUTABLE };
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	const struct dfd_stats *s;
	uint64_t largest = 0;
	struct stat st;
	(void)state;

	NEED_SERVER();
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(stat(files[i]->path, &st), 0);
		assert_true((uint64_t)st.st_size > CAP); /* else nothing would have to wait */
		if ((uint64_t)st.st_size > largest)
			largest = (uint64_t)st.st_size;
	}
	for (int capped = 1; capped >= 0; capped--) {
		srv_reset(&g.srv);
		srv_fault(&g.srv, "*", "drip", "0.02:2048");
		fresh_opts(&o, urls, 1, cache);
		o.max_parallel = 4;
		o.max_in_flight = capped ? CAP : 0;
		c = client(&o);
		for (size_t i = 0; i < 4; i++)
			assert_int_equal(dfd_request(c, files[i / 2]->id, files[i / 2]->len, kinds[i % 2]),
					 CONV_E_OK);
		for (size_t i = 0; i < 4; i++) {
			const char *path = NULL;

			assert_int_equal(fetch(c, files[i / 2], kinds[i % 2], &path), CONV_E_OK);
			assert_true(same_file(path, files[i / 2]->path));
		}
		s = dfd_stats(c);
		print_message("cap %s: %llu pauses, at most %llu bytes in flight (largest file %llu)\n",
			      capped ? "4 KiB" : "default", (unsigned long long)s->paused,
			      (unsigned long long)s->in_flight_peak, (unsigned long long)largest);
		assert_int_equal(s->fetched, 4);
		if (capped) {
			assert_true(s->paused >= 1);
			assert_true(s->in_flight_peak <= CAP + largest);
		} else {
			assert_int_equal(s->paused, 0);
		}
		assert_int_equal(srv_stat(&g.srv, "requests"), 4);
		assert_int_equal(tmp_files_left(cache), 0);
		dfd_free(c);
	}
	srv_reset(&g.srv);
}

/*
 * A download that would leave less than min_free on the cache's file system
 * is stopped at its first bytes and removed; no other server is asked (the
 * disk would be as full for its answer).
 */
static void test_min_free(void **state)
{
	const char *urls[] = { g.srv.url, g.srv.url };
	char cache[PATH_MAX], p[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	struct conv_diag d = { 0 };
	const char *path = (const char *)1;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	fresh_opts(&o, urls, 2, cache);
	o.min_free = UINT64_MAX / 4; /* more than any disk has */
	c = client(&o);
	assert_int_equal(dfd_request(c, g.a.id, g.a.len, DFD_DEBUGINFO), CONV_E_OK);
	assert_int_equal(dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, &d), CONV_E_IO);
	print_message("%s\n", d.msg);
	assert_null(path);
	assert_non_null(strstr(d.msg, "free"));
	assert_non_null(strstr(d.msg, ", 0 due to other downloads")); /* the only one */
	assert_int_equal(dfd_stats(c)->no_space, 1);
	assert_true(dfd_stats(c)->bytes < (1u << 20));
	assert_int_equal(srv_path(&g.srv, g.a.hex, "debuginfo"), 1);
	entry(p, sizeof(p), cache, g.a.hex, "debuginfo");
	assert_false(exists(p));
	entry(p, sizeof(p), cache, g.a.hex, "debuginfo.missing");
	assert_false(exists(p));
	assert_int_equal(tmp_files_left(cache), 0);
	dfd_free(c);

	/* the default keeps 256 MiB: on a disk with room, the same file is stored */
	fresh_opts(&o, urls, 1, cache);
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_int_equal(dfd_stats(c)->no_space, 0);
	dfd_free(c);
	srv_reset(&g.srv);
}

/*
 * Temporary files in an entry's directory: with the entry's lock held, the
 * kind's own are a killed holder's and go whatever their age; another kind's
 * fresh one may be a live download and stays; one a day old goes.
 */
static void test_orphan_tmp(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX], dir[PATH_MAX], mine[PATH_MAX], other[PATH_MAX], old[PATH_MAX];
	struct timespec times[2] = { { 0, 0 }, { 0, 0 } };
	struct dfd_opts o;
	struct dfd_client *c;
	const char *path = NULL;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	fresh_dir(cache, sizeof(cache), "cache");
	tu_strf(dir, sizeof(dir), "%s/%s", cache, g.a.hex);
	tu_mkdirs(dir, 0700);
	tu_strf(mine, sizeof(mine), "%s/.conv-debuginfo.AbC123", dir);
	tu_strf(other, sizeof(other), "%s/.conv-executable.AbC123", dir);
	tu_strf(old, sizeof(old), "%s/.conv-executable.Old456", dir);
	write_file(mine, "partial", 7);
	write_file(other, "partial", 7);
	write_file(old, "partial", 7);
	times[0].tv_sec = times[1].tv_sec = time(NULL) - 2 * 24 * 3600;
	assert_int_equal(utimensat(AT_FDCWD, old, times, 0), 0);
	opts_init(&o, urls, 1, cache);
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_false(exists(mine));
	assert_true(exists(other));
	assert_false(exists(old));
	dfd_free(c);
	srv_reset(&g.srv);
}

/*
 * A request whose entry another process is downloading waits for it, but
 * not past the deadline: it ends then, not asked, without a request; and
 * it looks at the cache once more first.
 */
/*
 * The deadline's clock for test_busy_deadline (dfd_opts.clock_ns): it
 * moves only when the test says, or by 250 ms a reading while fake_step,
 * so that a deadline passes at once without a wait.
 */
static uint64_t fake_ns = 1000000000u;
static bool fake_step;

static uint64_t fake_clock(void)
{
	if (fake_step)
		fake_ns += 250000000u;
	return fake_ns;
}

static void test_busy_deadline(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX], p[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	struct conv_diag d = { 0 };
	const char *path = NULL;
	int held;
	double t0;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	fresh_dir(cache, sizeof(cache), "cache");
	held = entry_lock(cache, true);
	opts_init(&o, urls, 1, cache);
	o.deadline_s = 1;
	o.clock_ns = fake_clock;
	fake_step = true;
	c = client(&o);
	t0 = now_s();
	assert_int_equal(dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, &d), CONV_E_NET);
	print_message("entry held elsewhere, deadline 1 s: %.0f ms: %s\n", (now_s() - t0) * 1e3, d.msg);
	assert_true(now_s() - t0 < 3);
	assert_non_null(strstr(d.msg, "deadline"));
	assert_int_equal(dfd_stats(c)->deadline, 1);
	assert_int_equal(srv_path(&g.srv, g.a.hex, "debuginfo"), 0);
	dfd_free(c);

	/*
	 * Past the deadline, a request still waiting looks at the cache once
	 * more: the holder puts its download in place, and the deadline passes
	 * before it lets go.
	 */
	fake_step = false;
	c = client(&o);
	assert_int_equal(dfd_request(c, g.a.id, g.a.len, DFD_DEBUGINFO), CONV_E_OK);
	(void)dfd_poll(c, 0); /* tried: held elsewhere */
	entry(p, sizeof(p), cache, g.a.hex, "debuginfo");
	copy_file(g.a.path, p);
	fake_ns += 1100000000u; /* past the deadline */
	assert_int_equal(dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, &d), CONV_E_OK);
	assert_string_equal(path, p);
	assert_int_equal(dfd_stats(c)->cache_hits, 1);
	assert_int_equal(dfd_stats(c)->deadline, 0);
	assert_int_equal(srv_path(&g.srv, g.a.hex, "debuginfo"), 0);
	dfd_free(c);
	close(held);
}

/* A client freed with a download in flight lets go of the entry's lock. */
static void test_free_unlocks(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	int fd;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	srv_fault(&g.srv, g.a.hex, "delay", "5");
	fresh_opts(&o, urls, 1, cache);
	c = client(&o);
	assert_int_equal(dfd_request(c, g.a.id, g.a.len, DFD_DEBUGINFO), CONV_E_OK);
	assert_true(dfd_poll(c, 0)); /* the lock is taken, the transfer started */
	fd = entry_lock(cache, false);
	assert_int_not_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	dfd_free(c);
	assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), 0);
	close(fd);
	srv_reset(&g.srv);
}

/* dfd_wait() moves its request to the front of the queue. */
static void test_wait_jumps_queue(void **state)
{
	enum { N = 6 };
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	uint8_t ids[N][20];
	const char *path;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	srv_fault(&g.srv, "*", "delay", "0.2");
	fresh_opts(&o, urls, 1, cache);
	o.max_parallel = 1;
	c = client(&o);
	for (int i = 0; i < N; i++) {
		memset(ids[i], 0x10 + i, sizeof(ids[i]));
		assert_int_equal(dfd_request(c, ids[i], sizeof(ids[i]), DFD_DEBUGINFO), CONV_E_OK);
	}
	assert_true(dfd_poll(c, 0)); /* the first one is on its way */
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	/* the one in flight finished first; the other five still wait */
	assert_int_equal(srv_stat(&g.srv, "requests"), 2);
	dfd_free(c);
	srv_reset(&g.srv);
}

static void test_file_url(void **state)
{
	char mock[PATH_MAX], url[PATH_MAX + 8], cache[PATH_MAX], p[PATH_MAX];
	const char *urls[] = { url };
	struct dfd_opts o;
	struct dfd_client *c;
	const char *path;
	(void)state;

	NEED_ELVES();
	fresh_dir(mock, sizeof(mock), "mock");
	tu_strf(p, sizeof(p), "%s/buildid", mock);
	serve_elf(p, &g.a);
	tu_strf(url, sizeof(url), "file://%s", mock);
	fresh_opts(&o, urls, 1, cache);
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_true(same_file(path, g.a.path));
	assert_int_equal(fetch(c, &g.b, DFD_DEBUGINFO, &path), CONV_E_NOTFOUND);
	assert_int_equal(dfd_stats(c)->not_found, 1);
	dfd_free(c);
}

static void test_bad_arguments(void **state)
{
	const char *bad[] = { "ftp://example.com" };
	const char *good[] = { "http://127.0.0.1:9" };
	struct dfd_opts o;
	struct dfd_client *c = NULL;
	struct conv_diag d = { 0 };
	uint8_t big[BUILDID_MAX + 1] = { 0 };
	char cache[PATH_MAX];
	(void)state;

	fresh_opts(&o, bad, 1, cache);
	assert_int_equal(dfd_new(&c, &o, &d), CONV_E_INVAL);
	assert_null(c);
	assert_non_null(strstr(d.msg, "ftp://"));

	setenv("DEBUGINFOD_URLS", "http://ok gopher://no", 1);
	opts_init(&o, NULL, 0, cache);
	assert_int_equal(dfd_new(&c, &o, &d), CONV_E_INVAL);
	assert_non_null(strstr(d.msg, "DEBUGINFOD_URLS"));
	unsetenv("DEBUGINFOD_URLS");

	/* no cache_dir, no DEBUGINFOD_CACHE_PATH, no XDG_CACHE_HOME, no HOME */
	unsetenv("HOME");
	unsetenv("XDG_CACHE_HOME");
	opts_init(&o, good, 1, NULL);
	assert_int_equal(dfd_new(&c, &o, &d), CONV_E_INVAL);
	clean_env();

	opts_init(&o, good, 1, cache);
	c = client(&o);
	assert_int_equal(dfd_request(c, big, 0, DFD_DEBUGINFO), CONV_E_INVAL);
	assert_int_equal(dfd_request(c, big, sizeof(big), DFD_DEBUGINFO), CONV_E_INVAL);
	assert_int_equal(dfd_request(c, big, 20, (enum dfd_kind)7), CONV_E_INVAL);
	assert_int_equal(dfd_wait(c, big, 0, DFD_DEBUGINFO, NULL, &d), CONV_E_INVAL);
	assert_false(dfd_poll(c, 0));
	dfd_free(c);
	dfd_free(NULL);
}

/* ---- against a real debuginfod (tests/conformance/test_debuginfod_server.sh) ---- */

static void test_real_server(void **state)
{
	const char *url = getenv("CONV_REAL_DEBUGINFOD_URL");
	const char *expect = getenv("CONV_REAL_DEBUGINFOD_EXPECT");
	const char *urls[] = { url };
	char cache[PATH_MAX], list[8192], p[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	struct conv_diag d = { 0 };
	const char *path;
	unsigned checked = 0;
	(void)state;

	assert_non_null(url);
	assert_non_null(expect);
	fresh_dir(cache, sizeof(cache), "real-cache");
	opts_init(&o, urls, 1, cache);
	tu_strf(list, sizeof(list), "%s", expect);
	for (char *save = NULL, *tok = strtok_r(list, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		char *file = strchr(tok, ':');
		struct elf_file e;
		enum dfd_kind kind;
		double t0;

		assert_non_null(file);
		*file++ = '\0';
		kind = !strcmp(tok, "executable") ? DFD_EXECUTABLE : DFD_DEBUGINFO;
		assert_int_equal(buildid_from_path(file, e.id, &e.len, NULL), CONV_E_OK);
		buildid_hex(e.id, e.len, e.hex);
		c = client(&o);
		t0 = now_s();
		assert_int_equal(dfd_wait(c, e.id, e.len, kind, &path, &d), CONV_E_OK);
		print_message("real debuginfod: %s/%s in %.0f ms (%s)\n", e.hex, tok,
			      (now_s() - t0) * 1e3, file);
		assert_true(same_file(path, file));
		assert_int_equal(dfd_stats(c)->fetched, 1);
		dfd_free(c);
		/* and from the cache the second time */
		c = client(&o);
		assert_int_equal(dfd_wait(c, e.id, e.len, kind, &path, &d), CONV_E_OK);
		assert_int_equal(dfd_stats(c)->cache_hits, 1);
		dfd_free(c);
		/* too large for a tiny limit: the server answers 406 */
		{
			char small[PATH_MAX];

			fresh_dir(small, sizeof(small), "real-cache");
			o.cache_dir = small;
			o.max_size = 100;
			c = client(&o);
			assert_int_equal(dfd_wait(c, e.id, e.len, kind, &path, &d), CONV_E_LIMIT);
			assert_int_equal(dfd_stats(c)->too_large, 1);
			assert_int_equal(tmp_files_left(small), 0);
			dfd_free(c);
			o.cache_dir = cache;
			o.max_size = 0;
		}
		checked++;
	}
	assert_true(checked > 0);

	/* an id it has never seen: 404, remembered */
	c = client(&o);
	assert_int_equal(dfd_wait(c, unknown_id, sizeof(unknown_id), DFD_DEBUGINFO, &path, &d),
			 CONV_E_NOTFOUND);
	assert_int_equal(dfd_stats(c)->not_found, 1);
	dfd_free(c);
	buildid_hex(unknown_id, sizeof(unknown_id), list);
	entry(p, sizeof(p), cache, list, "debuginfo.missing");
	assert_true(exists(p));
	assert_int_equal(tmp_files_left(cache), 0);
}

/* ---- servers given up (issue 31) ---- */

/*
 * A server that takes connections (the kernel completes them into the
 * backlog) and never answers: what a hung debuginfod looks like from here.
 */
static int silent_server(char *url, size_t n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 128), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	tu_strf(url, n, "http://127.0.0.1:%u", ntohs(sa.sin_port));
	return fd;
}

static void fake_ids(uint8_t (*ids)[20], int n, int seed)
{
	for (int i = 0; i < n; i++)
		memset(ids[i], seed + i, sizeof(ids[i]));
}

/*
 * A silent server costs one --timeout, not one per round of max_parallel:
 * the first transfers time out together, the server is given up, the
 * queued requests are not sent; the client says which server, and why.
 */
static void test_silent_given_up(void **state)
{
	enum { N = 6, PAR = 2 };
	char url[64], cache[PATH_MAX], p[PATH_MAX], hex[41];
	const char *urls[] = { url };
	struct dfd_opts o;
	struct dfd_client *c;
	const struct dfd_server *sv;
	struct events ev = { 0 };
	uint8_t ids[N][20];
	struct conv_diag d = { 0 };
	double t0, took;
	int fd = silent_server(url, sizeof(url));
	(void)state;

	fresh_opts(&o, urls, 1, cache);
	o.timeout_s = 1;
	o.max_parallel = PAR;
	o.progress = on_progress;
	o.progress_ctx = &ev;
	c = client(&o);
	fake_ids(ids, N, 0x60);
	t0 = now_s();
	for (int i = 0; i < N; i++)
		assert_int_equal(dfd_request(c, ids[i], sizeof(ids[i]), DFD_DEBUGINFO), CONV_E_OK);
	for (int i = 0; i < N; i++) {
		memset(&d, 0, sizeof(d));
		assert_int_equal(dfd_wait(c, ids[i], sizeof(ids[i]), DFD_DEBUGINFO, NULL, &d), CONV_E_NET);
		/* the first ones timed out; the rest were not sent, and say so */
		if (i >= PAR)
			assert_non_null(strstr(d.msg, "not asked"));
	}
	took = now_s() - t0;
	print_message("%d requests, %d at a time, to a silent server, --timeout 1: %.0f ms, %llu transfers\n",
		      N, PAR, took * 1e3, (unsigned long long)dfd_stats(c)->transfers);
	/* a hang guard with margin: each round of waiting would add a whole second */
	assert_true(took < 2.5);
	assert_int_equal(dfd_stats(c)->transfers, PAR);
	assert_int_equal(dfd_stats(c)->errors, PAR);
	assert_int_equal(dfd_stats(c)->servers_down, 1);
	assert_int_equal(dfd_stats(c)->skipped, N - PAR);
	assert_int_equal(dfd_stats(c)->not_found, 0);
	sv = dfd_server_at(c, 0);
	assert_non_null(sv);
	assert_null(dfd_server_at(c, 1));
	assert_string_equal(sv->url, url);
	assert_int_equal(sv->down, DFD_DOWN_TIMEOUT);
	assert_string_equal(sv->why, "did not answer within 1 s");
	assert_int_equal(sv->transfers, PAR);
	assert_int_equal(sv->skipped, N - PAR);
	/* what was waited for was reported while waiting, and for how long (the requests went out before) */
	assert_true(ev.wait > 0);
	assert_in_range(ev.waited_ms, 500, (uint64_t)(took * 1e3) + 1);
	assert_int_equal(ev.done, N);
	/* never asked is not "not found": no negative entry */
	for (int i = 0; i < N; i++) {
		buildid_hex(ids[i], sizeof(ids[i]), hex);
		entry(p, sizeof(p), cache, hex, "debuginfo.missing");
		assert_false(exists(p));
	}
	assert_int_equal(tmp_files_left(cache), 0);
	dfd_free(c);
	close(fd);
}

/*
 * A silent server first in the list does not keep a live one from
 * serving: given up once, every request goes to the second, whose files
 * arrive; requests sent to the silent one meanwhile are cut and moved on.
 */
static void test_dead_beside_live(void **state)
{
	enum { N = 6 };
	char url[64], cache[PATH_MAX];
	const char *urls[] = { url, g.srv.url };
	struct dfd_opts o;
	struct dfd_client *c;
	uint8_t ids[N][20];
	const char *path;
	double t0, took;
	int fd = silent_server(url, sizeof(url));
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	fresh_opts(&o, urls, 2, cache);
	o.timeout_s = 1;
	o.max_parallel = 4;
	c = client(&o);
	fake_ids(ids, N, 0x70);
	t0 = now_s();
	for (int i = 0; i < N; i++)
		assert_int_equal(dfd_request(c, ids[i], sizeof(ids[i]), DFD_DEBUGINFO), CONV_E_OK);
	assert_int_equal(dfd_request(c, g.a.id, g.a.len, DFD_DEBUGINFO), CONV_E_OK);
	assert_int_equal(dfd_request(c, g.b.id, g.b.len, DFD_EXECUTABLE), CONV_E_OK);
	assert_int_equal(dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, NULL), CONV_E_OK);
	assert_true(same_file(path, g.a.path));
	assert_int_equal(dfd_wait(c, g.b.id, g.b.len, DFD_EXECUTABLE, &path, NULL), CONV_E_OK);
	assert_true(same_file(path, g.b.path));
	for (int i = 0; i < N; i++)
		/* 404 at the live one, never answered by the other: not "not found" */
		assert_int_equal(dfd_wait(c, ids[i], sizeof(ids[i]), DFD_DEBUGINFO, NULL, NULL), CONV_E_NET);
	took = now_s() - t0;
	print_message("silent + live server, %d requests: %.0f ms\n", N + 2, took * 1e3);
	assert_true(took < 2.5); /* one --timeout, not one per round */
	assert_int_equal(dfd_server_at(c, 0)->down, DFD_DOWN_TIMEOUT);
	assert_int_equal(dfd_server_at(c, 1)->down, DFD_UP);
	assert_true(dfd_server_at(c, 0)->transfers <= 4);
	assert_int_equal(dfd_server_at(c, 1)->transfers, N + 2);
	assert_int_equal(dfd_stats(c)->fetched, 2);
	/* the live one was asked for each once */
	assert_int_equal(srv_stat(&g.srv, "requests"), N + 2);
	dfd_free(c);
	close(fd);
	srv_reset(&g.srv);
}

/* A refused connection gives the server up too; a 404 does not. */
static void test_refused_and_404(void **state)
{
	enum { N = 4 };
	char cache[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	uint8_t ids[N][20];
	struct conv_diag d = { 0 };
	(void)state;

	NEED_SERVER();
	{
		const char *urls[] = { g.dead_url };

		fresh_opts(&o, urls, 1, cache);
		o.max_parallel = 1;
		c = client(&o);
		fake_ids(ids, N, 0x80);
		for (int i = 0; i < N; i++)
			assert_int_equal(dfd_request(c, ids[i], sizeof(ids[i]), DFD_DEBUGINFO), CONV_E_OK);
		for (int i = 0; i < N; i++)
			assert_int_equal(dfd_wait(c, ids[i], sizeof(ids[i]), DFD_DEBUGINFO, NULL, &d),
					 CONV_E_NET);
		assert_non_null(strstr(d.msg, "refused the connection"));
		assert_int_equal(dfd_stats(c)->transfers, 1);
		assert_int_equal(dfd_server_at(c, 0)->down, DFD_DOWN_UNREACHABLE);
		assert_string_equal(dfd_server_at(c, 0)->why, "refused the connection");
		assert_int_equal(dfd_server_at(c, 0)->skipped, N - 1);
		dfd_free(c);
	}
	{
		const char *urls[] = { g.empty.url };

		srv_reset(&g.empty);
		fresh_opts(&o, urls, 1, cache);
		o.max_parallel = 1;
		c = client(&o);
		for (int i = 0; i < N; i++)
			assert_int_equal(dfd_request(c, ids[i], sizeof(ids[i]), DFD_DEBUGINFO), CONV_E_OK);
		for (int i = 0; i < N; i++)
			assert_int_equal(dfd_wait(c, ids[i], sizeof(ids[i]), DFD_DEBUGINFO, NULL, NULL),
					 CONV_E_NOTFOUND);
		assert_int_equal(dfd_stats(c)->servers_down, 0);
		assert_int_equal(dfd_server_at(c, 0)->down, DFD_UP);
		assert_int_equal(srv_stat(&g.empty, "requests"), N);
		dfd_free(c);
	}
}

/*
 * A server that answers some requests and then stops answering: what it
 * sent is kept, the one it did not answer gives it up, and what comes next
 * goes to the next server (here none: not asked). A transfer cut by the
 * deadline (--symbolize-deadline) is the run's limit, not the server's
 * fault: the server stays up.
 */
static void test_answers_then_silent(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX];
	struct dfd_opts o;
	struct dfd_client *c;
	uint8_t x[20];
	char xhex[41];
	const char *path;
	struct conv_diag d = { 0 };
	(void)state;

	NEED_SERVER();
	fake_ids(&x, 1, 0x90);
	buildid_hex(x, sizeof(x), xhex);
	srv_reset(&g.srv);
	srv_fault(&g.srv, xhex, "delay", "4");
	fresh_opts(&o, urls, 1, cache);
	o.timeout_s = 1;
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_int_equal(fetch(c, &g.a, DFD_EXECUTABLE, &path), CONV_E_OK);
	assert_int_equal(dfd_wait(c, x, sizeof(x), DFD_DEBUGINFO, NULL, &d), CONV_E_NET);
	assert_int_equal(dfd_server_at(c, 0)->down, DFD_DOWN_TIMEOUT);
	memset(&d, 0, sizeof(d));
	assert_int_equal(dfd_wait(c, g.b.id, g.b.len, DFD_DEBUGINFO, &path, &d), CONV_E_NET);
	assert_non_null(strstr(d.msg, "not asked"));
	assert_non_null(strstr(d.msg, "did not answer within 1 s"));
	assert_int_equal(srv_path(&g.srv, g.b.hex, "debuginfo"), 0);
	/* what it sent before stays good */
	assert_int_equal(dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, NULL), CONV_E_OK);
	assert_true(same_file(path, g.a.path));
	dfd_free(c);

	/* the deadline cuts the same silence: the server is not given up for it */
	fresh_opts(&o, urls, 1, cache);
	o.timeout_s = 10;
	o.deadline_s = 1;
	c = client(&o);
	assert_int_equal(dfd_wait(c, x, sizeof(x), DFD_DEBUGINFO, NULL, NULL), CONV_E_NET);
	assert_int_equal(dfd_stats(c)->deadline, 1);
	assert_int_equal(dfd_server_at(c, 0)->down, DFD_UP);
	assert_int_equal(dfd_stats(c)->servers_down, 0);
	dfd_free(c);
	srv_reset(&g.srv);
}

/* ---- redirects and a hostile cache ---- */

/* The origin comparison every redirect goes through. */
static void test_same_origin(void **state)
{
	static const struct {
		const char *server, *url;
		bool same;
	} cases[] = {
		{ "http://127.0.0.1:8002", "http://127.0.0.1:8002/buildid/ab/debuginfo", true },
		{ "http://127.0.0.1:8002", "HTTP://127.0.0.1:8002/x", true },
		{ "http://Debuginfod.Example.ORG", "http://debuginfod.example.org/x", true },
		{ "http://debuginfod.example.org", "http://debuginfod.example.org:80/x", true },
		{ "https://debuginfod.example.org/prefix", "https://debuginfod.example.org:443/other", true },
		{ "http://127.0.0.1:8002", "http://user:pw@127.0.0.1:8002/x", true },
		{ "http://u@127.0.0.1:8002", "http://127.0.0.1:8002/x", true },
		{ "http://[::1]:8002", "http://[::1]:8002/x", true },
		{ "http://[::1]", "http://[::1]:80/x", true },
		{ "http://127.0.0.1:8002", "http://127.0.0.1:8003/x", false },
		{ "http://127.0.0.1:8002", "http://127.0.0.2:8002/x", false },
		{ "http://127.0.0.1:8002", "http://localhost:8002/x", false },
		{ "https://h.example", "http://h.example/x", false },
		{ "https://h.example:8443", "http://h.example:8443/x", false },
		{ "http://h.example", "https://h.example/x", false },
		{ "http://h.example", "http://h.example:443/x", false },
		{ "https://h.example", "https://h.example:80/x", false },
		/* what precedes '@' is user info, not the host */
		{ "http://127.0.0.1:8002", "http://127.0.0.1:8002@evil.example/x", false },
		{ "http://127.0.0.1:8002", "http://evil.example#@127.0.0.1:8002/", false },
		{ "http://[::1]:8002", "http://[::2]:8002/x", false },
		{ "http://[::1]:8002", "http://127.0.0.1:8002/x", false },
		{ "http://[fe80::1%25eth0]:8002", "http://[fe80::1%25eth0]:8002/x", true },
		{ "http://[fe80::1%25eth0]:8002", "http://[fe80::1%25eth1]:8002/x", false },
		{ "http://[fe80::1%25eth0]:8002", "http://[fe80::1]:8002/x", false },
		{ "http://h.example", "file:///etc/passwd", false },
		{ "http://h.example", "ftp://h.example/x", false },
		{ "http://h.example", "not a url", false },
		{ "http://h.example", "", false },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool same = dfd_same_origin(cases[i].server, cases[i].url);

		if (same != cases[i].same)
			print_error("%s vs %s: %s, want %s\n", cases[i].server, cases[i].url,
				    same ? "same" : "other", cases[i].same ? "same" : "other");
		assert_int_equal(same, cases[i].same);
	}
}

/* A listening socket on 127.0.0.1 that nothing is meant to connect to; its port in *port. */
static int listener(unsigned *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* Connections made to listener fd so far (accepted and closed). */
static unsigned connections(int fd)
{
	unsigned n = 0;
	int c;

	while ((c = accept(fd, NULL, NULL)) >= 0) {
		close(c);
		n++;
	}
	return n;
}

/*
 * A redirect to another port of 127.0.0.1 (a listener there) is refused
 * without a connection to it, the message saying where it pointed; one to
 * the server's own origin, written out in full, is followed.
 */
static void test_redirect_origin(void **state)
{
	const char *urls[] = { g.srv.url };
	char cache[PATH_MAX], arg[256], p[PATH_MAX], want[128];
	struct dfd_opts o;
	struct dfd_client *c;
	struct conv_diag d = { 0 };
	const char *path = NULL;
	unsigned port;
	int lfd = listener(&port);
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	tu_strf(arg, sizeof(arg), "http://127.0.0.1:%u/__file/{id}/{kind}", port);
	srv_fault(&g.srv, g.a.hex, "redirect_to", arg);
	fresh_opts(&o, urls, 1, cache);
	c = client(&o);
	assert_int_equal(dfd_request(c, g.a.id, g.a.len, DFD_DEBUGINFO), CONV_E_OK);
	assert_int_equal(dfd_wait(c, g.a.id, g.a.len, DFD_DEBUGINFO, &path, &d), CONV_E_NET);
	print_message("redirect elsewhere: %s\n", d.msg);
	tu_strf(want, sizeof(want), "redirected to http://127.0.0.1:%u/__file/%s/debuginfo", port,
		g.a.hex);
	assert_non_null(strstr(d.msg, want));
	assert_non_null(strstr(d.msg, "not followed"));
	assert_int_equal(dfd_stats(c)->errors, 1);
	assert_int_equal(dfd_stats(c)->fetched, 0);
	assert_int_equal(dfd_server_at(c, 0)->down, DFD_UP); /* the server is there */
	dfd_free(c);
	assert_int_equal(connections(lfd), 0);
	assert_int_equal(srv_path(&g.srv, g.a.hex, "debuginfo"), 1);
	entry(p, sizeof(p), cache, g.a.hex, "debuginfo");
	assert_false(exists(p));
	assert_int_equal(tmp_files_left(cache), 0);

	/* the server's own origin, in full: followed */
	srv_reset(&g.srv);
	tu_strf(arg, sizeof(arg), "%s/__file/{id}/{kind}", g.srv.url);
	srv_fault(&g.srv, g.a.hex, "redirect_to", arg);
	fresh_opts(&o, urls, 1, cache);
	c = client(&o);
	assert_int_equal(fetch(c, &g.a, DFD_DEBUGINFO, &path), CONV_E_OK);
	assert_true(same_file(path, g.a.path));
	assert_int_equal(dfd_stats(c)->fetched, 1);
	assert_int_equal(dfd_stats(c)->errors, 0);
	dfd_free(c);
	assert_int_equal(srv_stat(&g.srv, "requests"), 2); /* the request and its target */
	assert_int_equal(connections(lfd), 0);
	close(lfd);
	srv_reset(&g.srv);
}

struct victim {
	char path[PATH_MAX];
	char data[64];
};

static void victim_make(struct victim *v, const char *dir, const char *name)
{
	tu_strf(v->path, sizeof(v->path), "%s/%s", dir, name);
	tu_strf(v->data, sizeof(v->data), "victim %s: must stay as it is\n", name);
	write_file(v->path, v->data, strlen(v->data));
	assert_int_equal(chmod(v->path, 0600), 0);
}

static void victim_check(const struct victim *v)
{
	struct stat st;
	struct dbuf b;

	assert_int_equal(lstat(v->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_true(read_all(v->path, &b));
	assert_int_equal(b.len, strlen(v->data));
	assert_memory_equal(b.data, v->data, b.len);
	dbuf_release(&b);
}

static void plant_link(const char *target, const char *dir, const char *name)
{
	char p[PATH_MAX];

	tu_strf(p, sizeof(p), "%s/%s", dir, name);
	assert_int_equal(symlink(target, p), 0);
}

/*
 * Links planted in a cache others write (1777): the lock, the negative
 * entry and the file itself pointing at files of the user running conv,
 * and an entry directory that is a link to a directory holding a valid
 * file. Nothing they point at changes; the links are replaced or left, the
 * linked directory is never used. (As root, with another user's files:
 * tests/conformance/test_cache_hostile.py.)
 */
static void test_hostile_links(void **state)
{
	const char *urls[] = { g.srv.url };
	const char *kinds[] = { "debuginfo", "executable" };
	char cache[PATH_MAX], vdir[PATH_MAX], sdir[PATH_MAX], dir[PATH_MAX], p[PATH_MAX], hex[64];
	struct victim lock, missing, file, inside;
	struct dfd_opts o;
	struct dfd_client *c;
	struct conv_diag d = { 0 };
	const char *path = NULL;
	struct stat st;
	(void)state;

	NEED_SERVER();
	srv_reset(&g.srv);
	fresh_dir(vdir, sizeof(vdir), "victims");
	tu_mkdirs(vdir, 0700);
	assert_int_equal(chmod(vdir, 0700), 0);
	victim_make(&lock, vdir, "lock");
	victim_make(&missing, vdir, "missing");
	victim_make(&file, vdir, "file");
	fresh_dir(sdir, sizeof(sdir), "secret");
	tu_mkdirs(sdir, 0700);
	assert_int_equal(chmod(sdir, 0700), 0);
	tu_strf(p, sizeof(p), "%s/debuginfo", sdir);
	copy_file(g.b.path, p);
	assert_int_equal(chmod(p, 0600), 0);
	victim_make(&inside, sdir, "executable.missing");

	fresh_dir(cache, sizeof(cache), "cache");
	tu_mkdirs(cache, 0700);
	assert_int_equal(chmod(cache, 01777), 0);
	/* a's entry: every name conv opens, a link */
	tu_strf(dir, sizeof(dir), "%s/%s", cache, g.a.hex);
	tu_mkdirs(dir, 0700);
	for (int k = 0; k < 2; k++) {
		char name[64];

		tu_strf(name, sizeof(name), ".lock-%s", kinds[k]);
		plant_link(lock.path, dir, name);
		tu_strf(name, sizeof(name), "%s.missing", kinds[k]);
		plant_link(missing.path, dir, name);
		plant_link(file.path, dir, kinds[k]);
	}
	/* b's entry: a link to a directory with b's debug file in it */
	plant_link(sdir, cache, g.b.hex);
	/* an unknown build-id's: the marker a 404 writes, a link */
	buildid_hex(unknown_id, sizeof(unknown_id), hex);
	tu_strf(p, sizeof(p), "%s/%s", cache, hex);
	tu_mkdirs(p, 0700);
	plant_link(missing.path, p, "debuginfo.missing");

	opts_init(&o, urls, 1, cache);
	c = client(&o);
	for (int k = 0; k < 2; k++) {
		assert_int_equal(fetch(c, &g.a, k ? DFD_EXECUTABLE : DFD_DEBUGINFO, &path), CONV_E_OK);
		assert_true(same_file(path, g.a.path));
		assert_int_equal(lstat(path, &st), 0);
		assert_true(S_ISREG(st.st_mode)); /* the link replaced, not followed */
		assert_int_equal(st.st_mode & 0777, 0666); /* the cache's access: made by conv */
	}
	assert_int_equal(dfd_stats(c)->fetched, 2);
	assert_int_equal(dfd_stats(c)->cache_hits, 0);
	assert_int_equal(dfd_stats(c)->untrusted, 2);
	assert_int_equal(dfd_wait(c, g.b.id, g.b.len, DFD_DEBUGINFO, &path, &d), CONV_E_IO);
	print_message("linked entry directory: %s\n", d.msg);
	assert_non_null(strstr(d.msg, "is a symbolic link"));
	assert_non_null(strstr(d.msg, "not trusted"));
	assert_int_equal(dfd_wait(c, unknown_id, sizeof(unknown_id), DFD_DEBUGINFO, NULL, NULL),
			 CONV_E_NOTFOUND);
	assert_int_equal(dfd_stats(c)->untrusted, 4);
	assert_int_equal(dfd_stats(c)->not_found, 1);
	assert_int_equal(dfd_stats(c)->negative_hits, 0);
	dfd_free(c);
	/* b was not asked for: nothing can be stored for it */
	assert_int_equal(srv_path(&g.srv, g.b.hex, "debuginfo"), 0);
	tu_strf(p, sizeof(p), "%s/%s/debuginfo.missing", cache, hex);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode)); /* a new marker renamed over the link */

	/* offline, the linked directory's valid file is still not a hit */
	o.offline = true;
	c = client(&o);
	assert_int_equal(fetch(c, &g.b, DFD_DEBUGINFO, &path), CONV_E_IO);
	assert_int_equal(fetch(c, &g.b, DFD_EXECUTABLE, &path), CONV_E_IO);
	assert_int_equal(dfd_stats(c)->cache_hits, 0);
	assert_int_equal(dfd_stats(c)->negative_hits, 0);
	dfd_free(c);

	victim_check(&lock);
	victim_check(&missing);
	victim_check(&file);
	victim_check(&inside);
	tu_strf(p, sizeof(p), "%s/debuginfo", sdir);
	assert_true(same_file(p, g.b.path));
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	{
		DIR *dd = opendir(sdir);
		struct dirent *e;
		unsigned n = 0;

		assert_non_null(dd);
		while ((e = readdir(dd)) != NULL)
			n += e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, ".."));
		closedir(dd);
		assert_int_equal(n, 2); /* nothing added there (no lock, no temporary file) */
	}
	srv_reset(&g.srv);
}

int main(void)
{
	const struct CMUnitTest fake[] = {
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_file_url),
		cmocka_unit_test(test_fetch_verify_cache),
		cmocka_unit_test(test_dedup),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_free_aborts),
		cmocka_unit_test(test_env_limits),
		cmocka_unit_test(test_negative_cache),
		cmocka_unit_test(test_negative_cache_age),
		cmocka_unit_test(test_corrupt_cache),
		cmocka_unit_test(test_system_cache),
		cmocka_unit_test(test_offline),
		cmocka_unit_test(test_servers_in_order),
		cmocka_unit_test(test_max_parallel),
		cmocka_unit_test(test_wait_jumps_queue),
		cmocka_unit_test(test_in_flight_cap),
		cmocka_unit_test(test_min_free),
		cmocka_unit_test(test_orphan_tmp),
		cmocka_unit_test(test_huge_seconds),
		cmocka_unit_test(test_busy_deadline),
		cmocka_unit_test(test_free_unlocks),
		cmocka_unit_test(test_same_origin),
		cmocka_unit_test(test_redirect_origin),
		cmocka_unit_test(test_hostile_links),
		/* last: their silent answers leave the fake server's threads asleep for a while */
		cmocka_unit_test(test_silent_given_up),
		cmocka_unit_test(test_dead_beside_live),
		cmocka_unit_test(test_refused_and_404),
		cmocka_unit_test(test_answers_then_silent),
	};
	const struct CMUnitTest real[] = {
		cmocka_unit_test(test_real_server),
	};

	if (getenv("CONV_REAL_DEBUGINFOD_URL"))
		return cmocka_run_group_tests_name("debuginfod_real", real, real_setup,
						   group_teardown);
	return cmocka_run_group_tests_name("debuginfod", fake, group_setup, group_teardown);
}

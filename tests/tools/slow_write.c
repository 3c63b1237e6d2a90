/*
 * slow_write.so: an LD_PRELOAD shim for tests that slows write() on chosen
 * files, to put two writers' race in a known order.
 *
 *   SLOW_WRITE_BEFORE=TEXT  a write() to a file whose path (/proc/self/fd)
 *                           contains TEXT sleeps SLOW_WRITE_BEFORE_MS first
 *   SLOW_WRITE_AFTER=TEXT   ... sleeps SLOW_WRITE_AFTER_MS once it is done
 *   (both _MS default to 300)
 *
 * Used by tests/robust/test_atomic_outputs.py: conv writes the pprof on a
 * second thread beside the JFR, and on a nearly full disk the first write
 * to land takes the space. Holding back the pprof's write and pausing after
 * each of the JFR's keeps the JFR's temp file holding that space while the
 * pprof is written, the order a slower machine produced in CI.
 *
 * Build: cc -shared -fPIC -O2 -o slow_write.so slow_write.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void *, size_t);

/* Does fd's path contain the text in environment variable var? */
static int matches(int fd, const char *var)
{
	const char *m = getenv(var);
	char link[64], path[4096];
	ssize_t n;

	if (!m || !*m)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return 0;
	path[n] = '\0';
	return strstr(path, m) != NULL;
}

static void pause_ms(const char *var)
{
	const char *ms = getenv(var);
	long v = ms ? atol(ms) : 300;
	struct timespec ts = { v / 1000, (v % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

ssize_t write(int fd, const void *buf, size_t count)
{
	ssize_t r;

	if (!real_write)
		real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (matches(fd, "SLOW_WRITE_BEFORE"))
		pause_ms("SLOW_WRITE_BEFORE_MS");
	r = real_write(fd, buf, count);
	if (matches(fd, "SLOW_WRITE_AFTER"))
		pause_ms("SLOW_WRITE_AFTER_MS");
	return r;
}

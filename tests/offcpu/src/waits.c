/* Known waits for tests/offcpu/test_offcpu.py (issue 21: off-CPU time).
 *
 * usage: waits [OUT.json]
 *
 * main calls, in this order:
 *   wait_sleep()  N_WAITS x clock_nanosleep(WAIT_MS)
 *   wait_pipe()   N_WAITS x a blocking read() of a pipe that a second thread
 *                 (pipe_writer, which sleeps in writer_sleep) fills WAIT_MS
 *                 after each read began
 *   burn()        a CPU loop of BURN_MS, no system call inside
 * and prints {"wait_sleep_ns":..., "wait_pipe_ns":..., "burn_ns":..., ...}
 * to OUT.json (or stdout): the time spent inside each blocking system call
 * (CLOCK_MONOTONIC read just before and just after it), summed per function,
 * and burn's whole loop.
 *
 * The system calls are made by an inline `syscall` instruction in the
 * waiting function itself, not through a libc wrapper: built with frame
 * pointers (-O2 -g -fno-omit-frame-pointer), a wrapper without a frame of
 * its own would hide its caller from the kernel's frame-pointer walk, and
 * the switch-out stack would not show wait_sleep / wait_pipe. x86-64 and
 * arm64; elsewhere syscall(2) (the stacks may then miss the function).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define N_WAITS 10
#define WAIT_MS 30
#define BURN_MS 300

static inline long raw_syscall4(long n, long a, long b, long c, long d)
{
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
#else
	return syscall(n, a, b, c, d);
#endif
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int pipefd[2];
static volatile uint64_t sink;

/* the writer thread's sleeps: a function of their own, so that they are
 * never counted under wait_sleep */
__attribute__((noinline)) static void writer_sleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (raw_syscall4(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, (long)&ts, (long)&ts) == -EINTR)
		;
}

static void *pipe_writer(void *arg)
{
	int rd_ready = *(int *)arg;
	char c = 'x';
	for (int i = 0; i < N_WAITS; i++) {
		char go;
		/* wait until the reader is about to read, then let it block WAIT_MS */
		if (read(rd_ready, &go, 1) != 1)
			break;
		writer_sleep(WAIT_MS);
		if (write(pipefd[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

__attribute__((noinline)) int64_t wait_sleep(void)
{
	int64_t total = 0;
	for (int i = 0; i < N_WAITS; i++) {
		struct timespec ts = { 0, WAIT_MS * 1000000L };
		int64_t t0 = now_ns();
		long r;
		do
			r = raw_syscall4(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, (long)&ts, (long)&ts);
		while (r == -EINTR);
		total += now_ns() - t0;
	}
	return total;
}

__attribute__((noinline)) int64_t wait_pipe(int go_fd)
{
	int64_t total = 0;
	for (int i = 0; i < N_WAITS; i++) {
		char c = 'g';
		if (write(go_fd, &c, 1) != 1)
			abort();
		int64_t t0 = now_ns();
		long r;
		do
			r = raw_syscall4(SYS_read, pipefd[0], (long)&c, 1, 0);
		while (r == -EINTR);
		total += now_ns() - t0;
		if (r != 1)
			abort();
	}
	return total;
}

__attribute__((noinline)) int64_t burn(void)
{
	int64_t t0 = now_ns(), end = t0 + BURN_MS * 1000000LL, t;
	uint64_t x = 88172645463325252ull;
	do {
		for (int i = 0; i < 100000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		t = now_ns();
	} while (t < end);
	sink = x;
	return t - t0;
}

int main(int argc, char **argv)
{
	int go[2];
	pthread_t th;
	if (pipe(pipefd) || pipe(go)) {
		perror("pipe");
		return 2;
	}
	if (pthread_create(&th, NULL, pipe_writer, &go[0])) {
		fprintf(stderr, "pthread_create failed\n");
		return 2;
	}
	int64_t s = wait_sleep();
	int64_t p = wait_pipe(go[1]);
	int64_t b = burn();
	pthread_join(th, NULL);

	FILE *out = argc > 1 ? fopen(argv[1], "w") : stdout;
	if (!out) {
		perror(argv[1]);
		return 2;
	}
	fprintf(out,
		"{\"wait_sleep_ns\": %lld, \"wait_pipe_ns\": %lld, \"burn_ns\": %lld, "
		"\"waits\": %d, \"wait_ms\": %d, \"burn_ms\": %d, \"pid\": %ld}\n",
		(long long)s, (long long)p, (long long)b, N_WAITS, WAIT_MS, BURN_MS, (long)getpid());
	return out == stdout ? (fflush(out) != 0) : (fclose(out) != 0);
}

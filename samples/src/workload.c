/*
 * workload.c - the program recorded in samples/perf.data (see ../README.md).
 *
 *   workload [N]     2 threads, each N rounds of work (default 1500), and one
 *                    fork + exec of this same binary as "workload child"
 *   workload child N the exec'd process: N/8 rounds in one thread, then exit
 *
 * The work is a fixed amount of arithmetic (no clocks), about 0.4 s of CPU
 * in all on a current x86-64 core. What each part is there for:
 *   - 2 worker threads    samples with pid != tid, named threads (COMM)
 *   - lib_work()          samples in libwork.so, a second user object
 *   - scramble()          always inlined into hash_block(): DWARF describes
 *                         it as an inlined subroutine, so a symbolizer that
 *                         reads inline info shows it as its own frame
 *   - noinline chain      call chains 5+ user frames deep
 *   - fork + exec self    FORK, COMM (exec) and new MMAP records; a second
 *                         process with its own mappings of the same files
 * It prints nothing.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

uint64_t lib_work(uint64_t seed, unsigned rounds); /* libwork.so */

#define BLOCK 20000 /* iterations per call in each of the two halves */

static volatile uint64_t sink; /* keeps results alive past the optimizer */

/* splitmix64's finalizer, always inlined: no frame of its own at run time. */
static inline __attribute__((always_inline)) uint64_t scramble(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The executable's hot loop; its samples are in the inlined scramble(). */
__attribute__((noinline)) static uint64_t hash_block(uint64_t x)
{
	for (unsigned i = 0; i < BLOCK; i++)
		x = scramble(x + i);
	return x;
}

/* One round: half in this executable, half in the shared library. */
__attribute__((noinline)) static uint64_t one_round(uint64_t x)
{
	x = hash_block(x);
	return lib_work(x, BLOCK);
}

__attribute__((noinline)) static void run_rounds(unsigned rounds, uint64_t seed)
{
	uint64_t x = seed;

	for (unsigned r = 0; r < rounds; r++)
		x = one_round(x);
	sink += x;
}

struct job {
	unsigned id, rounds;
};

static void *worker(void *arg)
{
	const struct job *j = arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%u", j->id);
	pthread_setname_np(pthread_self(), name);
	run_rounds(j->rounds, 0x9e3779b97f4a7c15ULL * (j->id + 1));
	return NULL;
}

/* Re-runs this same binary as "workload child N" (fork, then exec). */
static pid_t spawn_child(unsigned rounds)
{
	char self[4096], arg[16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	if (n < 0)
		return -1;
	self[n] = '\0';
	snprintf(arg, sizeof(arg), "%u", rounds);
	pid = fork();
	if (pid == 0) {
		/* by its real path, so that the new COMM is "workload", not "exe" */
		execl(self, "workload", "child", arg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

int main(int argc, char **argv)
{
	struct job jobs[2];
	pthread_t t[2];
	unsigned rounds;
	pid_t child;
	int status = 0;

	if (argc > 1 && strcmp(argv[1], "child") == 0) {
		rounds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 1500;
		run_rounds(rounds / 8 ? rounds / 8 : 1, 42);
		return 0;
	}
	rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1500;
	for (unsigned i = 0; i < 2; i++) {
		jobs[i] = (struct job){ .id = i + 1, .rounds = rounds };
		if (pthread_create(&t[i], NULL, worker, &jobs[i]) != 0) {
			fprintf(stderr, "workload: pthread_create failed\n");
			return 1;
		}
	}
	child = spawn_child(rounds);
	for (unsigned i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (child > 0)
		waitpid(child, &status, 0);
	return child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/*
 * Burns CPU in a named worker thread ("tramp-worker") reached through
 * libtramp.so's tramp_call, and in the main thread ("tramp-main"), for the
 * seconds given (default 0.4). Built with frame pointers.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

void tramp_call(void (*fn)(void));

static double g_seconds = 0.4;
static volatile unsigned long g_sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn(void)
{
	double end = now() + g_seconds;
	unsigned long x = 1;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
	g_sink = x;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "tramp-worker");
	tramp_call(burn);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc > 1)
		g_seconds = atof(argv[1]);
	pthread_setname_np(pthread_self(), "tramp-main");
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	tramp_call(burn);
	pthread_join(t, NULL);
	return 0;
}

#include "core/cleanup.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };

static _Atomic int slot_state[CLEANUP_SLOTS];
static char slot_path[CLEANUP_SLOTS][4096];
static void (*_Atomic cleanup_hook)(int sig);
static atomic_int stopping; /* cleanup_run has begun: no new file */
static atomic_int creating; /* threads inside cleanup_mkostemp */

/*
 * Registers path; returns its slot, -1 when none is free or the path is
 * too long. Only inside cleanup_mkostemp's window, which cleanup_run waits
 * for: a slot filled outside it could be skipped while being filled.
 */
static int cleanup_add(const char *path)
{
	size_t n = strlen(path);

	if (n >= sizeof(slot_path[0]))
		return -1;
	for (int i = 0; i < CLEANUP_SLOTS; i++) {
		int expected = SLOT_FREE;

		if (!atomic_compare_exchange_strong(&slot_state[i], &expected, SLOT_FILLING))
			continue;
		memcpy(slot_path[i], path, n + 1);
		/* the path is whole before a handler may read it */
		atomic_store(&slot_state[i], SLOT_READY);
		return i;
	}
	return -1;
}

int cleanup_mkostemp(char *tmpl, int flags, int *slot)
{
	sigset_t all, old;
	int fd = -1;

	*slot = -1;
	/* this thread: no handler between making the file and registering it */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* other threads: cleanup_run waits while creating is not 0, or this sees stopping */
	atomic_fetch_add(&creating, 1);
	if (atomic_load(&stopping)) {
		errno = EINTR;
	} else {
		fd = mkostemp(tmpl, flags);
		if (fd >= 0)
			*slot = cleanup_add(tmpl);
	}
	atomic_fetch_sub(&creating, 1);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return fd;
}

void cleanup_drop(int slot)
{
	if (slot >= 0 && slot < CLEANUP_SLOTS)
		atomic_store(&slot_state[slot], SLOT_FREE);
}

void cleanup_drop_path(const char *path)
{
	/*
	 * Each slot is claimed (READY -> FILLING) before its path is read: else
	 * another thread could free and refill it under the comparison. A
	 * signal meanwhile waits, as for cleanup_mkostemp, so that cleanup_run
	 * finds the slot READY again (or gone) rather than skipping it.
	 */
	atomic_fetch_add(&creating, 1);
	for (int i = 0; i < CLEANUP_SLOTS; i++) {
		int expected = SLOT_READY;

		if (!atomic_compare_exchange_strong(&slot_state[i], &expected, SLOT_FILLING))
			continue;
		atomic_store(&slot_state[i], strcmp(slot_path[i], path) ? SLOT_READY : SLOT_FREE);
	}
	atomic_fetch_sub(&creating, 1);
}

void cleanup_set_hook(void (*hook)(int sig))
{
	atomic_store(&cleanup_hook, hook);
}

void cleanup_run(int sig)
{
	void (*hook)(int) = atomic_load(&cleanup_hook);
	struct timespec ms = { 0, 1000000 };

	atomic_store(&stopping, 1);
	for (int i = 0; i < 100 && atomic_load(&creating); i++)
		nanosleep(&ms, NULL);

	if (hook)
		hook(sig);
	for (int i = 0; i < CLEANUP_SLOTS; i++)
		if (atomic_load(&slot_state[i]) == SLOT_READY)
			unlink(slot_path[i]);
}

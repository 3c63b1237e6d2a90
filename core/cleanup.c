#include "core/cleanup.h"

#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY };

static _Atomic int slot_state[CLEANUP_SLOTS];
static char slot_path[CLEANUP_SLOTS][4096];
static void (*_Atomic cleanup_hook)(int sig);

int cleanup_add(const char *path)
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

void cleanup_drop(int slot)
{
	if (slot >= 0 && slot < CLEANUP_SLOTS)
		atomic_store(&slot_state[slot], SLOT_FREE);
}

void cleanup_drop_path(const char *path)
{
	for (int i = 0; i < CLEANUP_SLOTS; i++)
		if (atomic_load(&slot_state[i]) == SLOT_READY && !strcmp(slot_path[i], path))
			atomic_store(&slot_state[i], SLOT_FREE);
}

void cleanup_set_hook(void (*hook)(int sig))
{
	atomic_store(&cleanup_hook, hook);
}

void cleanup_run(int sig)
{
	void (*hook)(int) = atomic_load(&cleanup_hook);

	if (hook)
		hook(sig);
	for (int i = 0; i < CLEANUP_SLOTS; i++)
		if (atomic_load(&slot_state[i]) == SLOT_READY)
			unlink(slot_path[i]);
}

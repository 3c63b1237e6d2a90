/*
 * Files to remove when conv is stopped by a signal: outputs' temp files,
 * downloads in flight, the --stats temp file. A CI timeout sends SIGTERM;
 * what a killed run leaves behind must not look like output.
 *
 * Registering and dropping are lock-free (any thread); cleanup_run is
 * async-signal-safe (it reads the slots, calls the hook and unlink), for
 * the signal handler cli/ installs. A file registered while no slot is
 * free is not removed on a signal: the slots hold every temp file conv has
 * open at once (a few outputs and the parallel downloads).
 */
#ifndef CONV_CORE_CLEANUP_H
#define CONV_CORE_CLEANUP_H

#define CLEANUP_SLOTS 64

/*
 * mkostemp(tmpl, flags) and its registration in one step that a signal
 * cannot split, whichever thread it comes to: the file exists registered,
 * or not at all. Returns the fd, or -1 with errno (EINTR once cleanup_run
 * has begun); *slot gets the slot (-1: none was free).
 */
int cleanup_mkostemp(char *tmpl, int flags, int *slot);
/* The file of slot (from cleanup_mkostemp; -1: nothing) is gone or renamed into place. */
void cleanup_drop(int slot);
/* The same by its path (every slot holding it). */
void cleanup_drop_path(const char *path);
/*
 * Called first by cleanup_run, with the signal: a last word (the --stats
 * record of the interrupted input). Must be async-signal-safe. NULL: none.
 */
void cleanup_set_hook(void (*hook)(int sig));
/*
 * Calls the hook, then removes every registered file: from a signal
 * handler. Files being made by other threads (cleanup_mkostemp) are
 * waited for (up to 100 ms), so that none appears after the removal.
 */
void cleanup_run(int sig);

#endif

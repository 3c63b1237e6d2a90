/*
 * Helpers of the unit tests that build programs and directory trees in a
 * temporary directory (test_debuginfod, test_locate, test_symbolize): one
 * copy instead of one per test file. They fail the running test (cmocka)
 * where a helper cannot do its job.
 */
#ifndef CONV_TESTS_TESTUTIL_H
#define CONV_TESTS_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * snprintf() that fails the test on truncation (and, being a wrapper, keeps
 * -Wformat-truncation quiet about PATH_MAX buffers that cannot overflow).
 */
void tu_strf(char *out, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Runs argv without a shell, output discarded: its exit status, 127 when it
 * could not start, -1 when it could not be waited for.
 */
int tu_run(char *const argv[]);

/* mkdir -p with the given mode; errors (mostly "exists") are left to the caller's next step. */
void tu_mkdirs(const char *path, mode_t mode);

/* A new directory NAME.XXXXXX under $TMPDIR (or /tmp) in out; false when none could be made. */
bool tu_tmpdir_make(char *out, size_t size, const char *name);

/* Removes dir and all below it, unless CONV_KEEP_TMP is set (then says where it is, on stderr). */
void tu_tmpdir_drop(const char *dir);

#endif

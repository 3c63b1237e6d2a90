/*
 * Opening a file that a recording, a profile or a debug directory names, for
 * reading, when that file may be anything: only a regular file is ever opened.
 */
#ifndef CONV_CORE_ROPEN_H
#define CONV_CORE_ROPEN_H

#include <stdbool.h>

/*
 * Opens path read-only if it is a regular file (symlinks followed unless
 * nofollow), never opening anything else: a FIFO's open waits for a writer,
 * a device's open runs its driver (opening /dev/watchdog arms it) and a
 * recording's author chooses the paths conv reads. The name is first
 * resolved with O_PATH, which opens nothing, and only a regular file found
 * so is opened, through /proc/self/fd (the same inode, whatever the path
 * names by then). Where /proc is not mounted the path is opened with
 * O_NONBLOCK after an lstat/stat showed a regular file, and the opened
 * file must be that one.
 *
 * Returns the descriptor (O_CLOEXEC), or -1 with errno set: EINVAL when the
 * path names something other than a regular file, ELOOP for a symlink when
 * nofollow, else open's or stat's errno.
 */
int ropen_regular(const char *path, bool nofollow);

/* strerror() for ropen_regular's errno, EINVAL reading "not a regular file". */
const char *ropen_strerror(int err);

#endif

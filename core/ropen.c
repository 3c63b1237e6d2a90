#include "core/ropen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* fd must be a regular file, the same one as want (when given). Closes fd when not. */
static int ropen_check(int fd, const struct stat *want)
{
	struct stat st;
	int e;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode) || (want && (st.st_dev != want->st_dev || st.st_ino != want->st_ino))) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* No /proc: stat, then open without waiting, then the opened file must be the one stat saw. */
static int ropen_by_path(const char *path, bool nofollow)
{
	int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0);
	struct stat st;

	if ((nofollow ? lstat(path, &st) : stat(path, &st)) != 0)
		return -1;
	if (S_ISLNK(st.st_mode)) {
		errno = ELOOP;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	return ropen_check(open(path, flags), &st);
}

int ropen_regular(const char *path, bool nofollow)
{
	char proc[40];
	struct stat st;
	int pfd, fd, e;

	pfd = open(path, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st) != 0) {
		e = errno;
		close(pfd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(pfd);
		/* O_PATH|O_NOFOLLOW opens a symlink itself rather than failing */
		errno = S_ISLNK(st.st_mode) ? ELOOP : EINVAL;
		return -1;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	e = errno;
	close(pfd);
	if (fd < 0 && e == ENOENT)
		return ropen_by_path(path, nofollow);
	if (fd < 0) {
		errno = e;
		return -1;
	}
	return ropen_check(fd, &st);
}

const char *ropen_strerror(int err)
{
	return err == EINVAL ? "not a regular file" : strerror(err);
}

#include "tests/unit/testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void tu_strf(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < size);
}

int tu_run(char *const argv[])
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void tu_mkdirs(const char *path, mode_t mode)
{
	char p[PATH_MAX];

	tu_strf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, mode);
		*s = '/';
	}
	mkdir(p, mode);
}

bool tu_tmpdir_make(char *out, size_t size, const char *name)
{
	const char *t = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	tu_strf(out, size, "%s/%s.XXXXXX", t, name);
	return mkdtemp(out) != NULL;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void tu_tmpdir_drop(const char *dir)
{
	if (getenv("CONV_KEEP_TMP"))
		fprintf(stderr, "kept %s\n", dir);
	else
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

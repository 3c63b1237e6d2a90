/*
 * Outputs are written to a temp file beside them and renamed into place once
 * complete and synced, so that a failed or killed run never leaves a
 * half-written file under an output's name; "-" is a temp file in $TMPDIR
 * copied to standard output. Shared by conv and conv symbolize.
 */
#include "cli/outfile.h"

#include "cli/cli.h"

#include "core/cleanup.h"
#include "core/io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Copies fd (from its start) to standard output. */
static int copy_to_stdout(int fd)
{
	char buf[65536];

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	for (;;) {
		ssize_t k = read(fd, buf, sizeof(buf));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		if (fwrite(buf, 1, (size_t)k, stdout) != (size_t)k)
			return -1;
	}
	return fflush(stdout) ? -1 : 0;
}

/*
 * The temp file an output is written to: PATH.tmp.XXXXXX beside it, so the
 * rename stays in one filesystem; for "-", an unlinked file in $TMPDIR
 * (the JFR writer seeks). -1 with errno on failure.
 */
int cli_out_open(const char *path, char *tmp, size_t n)
{
	const char *td = getenv("TMPDIR");
	int len, fd, slot;

	if (!strcmp(path, "-"))
		len = snprintf(tmp, n, "%s/conv-out.XXXXXX", td && *td ? td : "/tmp");
	else
		len = snprintf(tmp, n, "%s.tmp.XXXXXX", path);
	if (len < 0 || (size_t)len >= n) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* removed if a signal stops conv before it is renamed into place (or, for "-", unlinked) */
	fd = cleanup_mkostemp(tmp, 0, &slot);
	if (fd >= 0 && !strcmp(path, "-")) {
		unlink(tmp);
		cleanup_drop(slot);
	}
	return fd;
}

/*
 * The background flusher of an output's temp file (core/io.h): none for
 * "-", whose temp file is only copied to stdout.
 */
struct io_flush *cli_out_flusher(int fd, const char *path)
{
	return strcmp(path, "-") ? io_flush_new(fd) : NULL;
}

/*
 * Makes a finished temp file durable before it is renamed: its mode, the
 * flusher's background syncs (joined and freed here), the final fsync.
 * -1 with errno on failure.
 */
int cli_out_sync(int fd, struct io_flush *fl)
{
	int e = io_flush_finish(fl, NULL);

	if (e) {
		errno = e;
		return -1;
	}
	return fchmod(fd, 0644) || fsync(fd) ? -1 : 0;
}

/*
 * Puts a finished temp file in place (out_sync unless synced, then rename)
 * or, for "-", copies it to stdout; on failure removes it. Closes fd. -1
 * with errno on failure.
 */
int cli_out_commit(int fd, const char *tmp, const char *path, struct io_flush *fl, bool synced)
{
	int e;

	if (!strcmp(path, "-")) {
		(void)io_flush_finish(fl, NULL);
		e = copy_to_stdout(fd) ? errno : 0;
		close(fd);
		errno = e;
		return e ? -1 : 0;
	}
	if (!synced && cli_out_sync(fd, fl)) {
		e = errno;
		close(fd);
		goto fail;
	}
	if (close(fd) || rename(tmp, path)) {
		e = errno;
		goto fail;
	}
	cleanup_drop_path(tmp);
	return 0;
fail:
	unlink(tmp);
	cleanup_drop_path(tmp);
	errno = e;
	return -1;
}

/* Gives up a temp file from out_open and its flusher (errno kept). */
void cli_out_abandon(int fd, const char *tmp, const char *path, struct io_flush *fl)
{
	int e = errno;

	/* joined before the close: its thread may be syncing fd */
	(void)io_flush_finish(fl, NULL);
	close(fd);
	if (strcmp(path, "-")) {
		unlink(tmp);
		cleanup_drop_path(tmp);
	}
	errno = e;
}


/* mkdir -p: every missing directory of path; 0 or -1 with errno. */
static int cli_mkdir_p(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != 0)
			continue;
		buf[i] = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		buf[i] = i < n ? '/' : 0;
	}
	return 0;
}

int cli_out_dir(const char *cmd, const char *out, size_t nr_inputs)
{
	if (!out || nr_inputs < 2)
		return CLI_EXIT_OK;
	if (!strcmp(out, "-")) {
		fprintf(stderr, "%s: -o -: standard output holds one output; with several inputs use -o DIR\n", cmd);
		return CLI_EXIT_USAGE;
	}
	if (cli_mkdir_p(out)) {
		fprintf(stderr, "%s: cannot create %s: %s\n", cmd, out, strerror(errno));
		return CLI_EXIT_OUTPUT;
	}
	return CLI_EXIT_OK;
}

bool cli_out_base(const char *out, const char *in, bool many, char *base, size_t n)
{
	const char *slash = strrchr(in, '/');
	struct stat st;

	if (out && (many || (stat(out, &st) == 0 && S_ISDIR(st.st_mode)))) {
		size_t dl = strlen(out);

		snprintf(base, n, "%s%s%s", out, dl && out[dl - 1] == '/' ? "" : "/", slash ? slash + 1 : in);
		return true;
	}
	snprintf(base, n, "%s", out ? out : in);
	return !out;
}

const char *cli_out_name(const char *path, const char *what)
{
	return strcmp(path, "-") ? path : what;
}

int cli_out_write(const char *cmd, const char *path, const char *what,
			    enum conv_err (*fn)(void *ctx, int fd, struct io_flush *fl, struct conv_diag *d),
			    void *ctx, struct conv_diag *d)
{
	char tmp[4096];
	struct io_flush *fl;
	int fd = cli_out_open(path, tmp, sizeof(tmp));

	if (fd < 0) {
		fprintf(stderr, "%s: cannot write %s: %s\n", cmd, cli_out_name(path, what), strerror(errno));
		return -1;
	}
	fl = cli_out_flusher(fd, path);
	if (fn(ctx, fd, fl, d) != CONV_E_OK) {
		cli_out_abandon(fd, tmp, path, fl);
		return 1;
	}
	if (cli_out_commit(fd, tmp, path, fl, false)) {
		fprintf(stderr, "%s: cannot write %s: %s\n", cmd, cli_out_name(path, what), strerror(errno));
		return -1;
	}
	return 0;
}

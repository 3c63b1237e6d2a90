/*
 * Outputs are written to a temp file beside them and renamed into place once
 * complete and synced, so that a failed or killed run never leaves a
 * half-written file under an output's name. That is for regular files (and
 * names not there yet) only: "-", and a path that is there and is no
 * regular file (a device such as /dev/null, a FIFO, a socket, /dev/stdout or
 * /proc/self/fd/N, another process's pipe behind /dev/fd/N), get an unlinked
 * temp file in $TMPDIR, copied out when complete: a rename would replace the
 * node with a file (as root, /dev/null), and the JFR writer seeks back into
 * what it wrote, which a pipe cannot. The special file is opened only then,
 * so that a run that fails before writes nothing to it. Shared by conv and
 * conv symbolize.
 */
#include "cli/outfile.h"

#include "cli/cli.h"
#include "cli/text.h"

#include "core/cleanup.h"
#include "core/io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

/*
 * The descriptor a path names: /dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N, /proc/thread-self/fd/N or /proc/PID/fd/N of this
 * process; -1 for any other path. Such a path is written through the
 * descriptor itself (at its offset, with its O_APPEND), as the shell that
 * made it means, and also when it is a socket, which open(2) refuses.
 */
static int out_named_fd(const char *path)
{
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/" };
	char own[64];
	const char *num = NULL;
	char *end;
	long v;

	if (!strcmp(path, "/dev/stdout"))
		return STDOUT_FILENO;
	if (!strcmp(path, "/dev/stderr"))
		return STDERR_FILENO;
	snprintf(own, sizeof(own), "/proc/%ld/fd/", (long)getpid());
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !num; i++)
		if (!strncmp(path, dirs[i], strlen(dirs[i])))
			num = path + strlen(dirs[i]);
	if (!num && !strncmp(path, own, strlen(own)))
		num = path + strlen(own);
	if (!num || *num < '0' || *num > '9')
		return -1;
	v = strtol(num, &end, 10);
	return *end || v > INT_MAX ? -1 : (int)v;
}

bool cli_out_special(const char *path)
{
	struct stat st;

	if (!strcmp(path, "-") || out_named_fd(path) >= 0)
		return true;
	/* a name not there yet is a file to make; a directory fails as one */
	return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* Linux's terminal majors: the virtual consoles and serial lines, /dev/tty and the pseudo-terminals. */
static bool out_tty_major(unsigned int maj)
{
	return maj == 4 || maj == 5 || (maj >= 136 && maj <= 143);
}

bool cli_out_terminal(const char *path)
{
	struct stat st;
	int fd = !strcmp(path, "-") ? STDOUT_FILENO : out_named_fd(path);

	if (fd >= 0)
		return isatty(fd);
	/* stat only: opening a device to ask may be what sets it off */
	return stat(path, &st) == 0 && S_ISCHR(st.st_mode) && out_tty_major(major(st.st_rdev));
}

/* Writes all of fd (from its start) to out; 0, or -1 with errno. */
static int out_copy(int fd, int out)
{
	char buf[65536];

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	for (;;) {
		ssize_t k = read(fd, buf, sizeof(buf));
		int e;

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			return 0;
		e = io_write_all(out, buf, (size_t)k, NULL);
		if (e) {
			errno = e;
			return -1;
		}
	}
}

int cli_out_open_special(const char *path)
{
	int nfd = out_named_fd(path);
	struct stat st;

	if (nfd >= 0)
		return fcntl(nfd, F_DUPFD_CLOEXEC, 3);
	if (stat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		struct sockaddr_un sa;
		int s;

		memset(&sa, 0, sizeof(sa));
		sa.sun_family = AF_UNIX;
		if (strlen(path) >= sizeof(sa.sun_path)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(sa.sun_path, path, strlen(path));
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s >= 0 && connect(s, (const struct sockaddr *)&sa, sizeof(sa))) {
			int e = errno;

			close(s);
			errno = e;
			return -1;
		}
		return s;
	}
	return open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
}

/* Copies a finished temp file to standard output ("-") or the special file path. */
static int out_copy_out(int fd, const char *path)
{
	int out, e;

	if (!strcmp(path, "-")) {
		/* what stdio holds for stdout goes first */
		if (fflush(stdout))
			return -1;
		return out_copy(fd, STDOUT_FILENO);
	}
	out = cli_out_open_special(path);
	if (out < 0)
		return -1;
	e = out_copy(fd, out) ? errno : 0;
	if (close(out) && !e && errno != EINTR)
		e = errno;
	errno = e;
	return e ? -1 : 0;
}

int cli_out_open(const char *path, char *tmp, size_t n)
{
	const char *td = getenv("TMPDIR");
	bool special = cli_out_special(path);
	int len, fd, slot;

	if (special)
		len = snprintf(tmp, n, "%s/conv-out.XXXXXX", td && *td ? td : "/tmp");
	else
		len = snprintf(tmp, n, "%s.tmp.XXXXXX", path);
	if (len < 0 || (size_t)len >= n) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* removed if a signal stops conv before it is renamed into place (or, when special, unlinked) */
	fd = cleanup_mkostemp(tmp, 0, &slot);
	if (fd >= 0 && special) {
		unlink(tmp);
		cleanup_drop(slot);
		tmp[0] = 0; /* copied out, not renamed */
	}
	return fd;
}

/*
 * The background flusher of an output's temp file (core/io.h): none for
 * one that is only copied out (tmp ""), never made durable itself.
 */
struct io_flush *cli_out_flusher(int fd, const char *tmp)
{
	return tmp[0] ? io_flush_new(fd) : NULL;
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
 * or, when special (tmp ""), copies it out; on failure removes it. Closes
 * fd. -1 with errno on failure.
 */
int cli_out_commit(int fd, const char *tmp, const char *path, struct io_flush *fl, bool synced)
{
	int e;

	if (!tmp[0]) {
		(void)io_flush_finish(fl, NULL);
		e = out_copy_out(fd, path) ? errno : 0;
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
	(void)path;
	if (tmp[0]) {
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

bool cli_out_is_dir(const char *out)
{
	struct stat st;
	size_t n = strlen(out);

	return strcmp(out, "-") && ((n && out[n - 1] == '/') || (stat(out, &st) == 0 && S_ISDIR(st.st_mode)));
}

int cli_out_dir(const char *cmd, const char *out, size_t nr_inputs, bool make)
{
	if (!out)
		return CLI_EXIT_OK;
	if (nr_inputs > 1 && !strcmp(out, "-")) {
		fprintf(stderr, "%s: -o -: standard output holds one output; with several inputs use -o DIR/\n", cmd);
		return CLI_EXIT_USAGE;
	}
	if (!cli_out_is_dir(out)) {
		if (nr_inputs > 1) {
			/* a file name for several outputs would be a guess: -o out.pb.gz made a directory of it */
			fprintf(stderr, "%s: -o %s: several inputs need a directory: an existing one, or "
					"%s/ to have it made\n",
				cmd, out, out);
			return CLI_EXIT_USAGE;
		}
		return CLI_EXIT_OK;
	}
	if (make && cli_mkdir_p(out)) {
		fprintf(stderr, "%s: cannot create %s: %s\n", cmd, out, strerror(errno));
		return CLI_EXIT_OUTPUT;
	}
	return CLI_EXIT_OK;
}

bool cli_out_base(const char *out, const char *in, char *base, size_t n)
{
	const char *slash = strrchr(in, '/');

	if (out && cli_out_is_dir(out)) {
		size_t dl = strlen(out);

		snprintf(base, n, "%s%s%s", out, out[dl - 1] == '/' ? "" : "/", slash ? slash + 1 : in);
		return true;
	}
	snprintf(base, n, "%s", out ? out : in);
	return !out;
}

int cli_out_check(const char *path)
{
	char tmp[4096];
	struct stat st;
	int nfd = out_named_fd(path), fd;

	if (!strcmp(path, "-"))
		return 0;
	if (nfd >= 0) {
		int fl = fcntl(nfd, F_GETFL);

		if (fl < 0)
			return -1;
		if ((fl & O_ACCMODE) == O_RDONLY) {
			errno = EBADF;
			return -1;
		}
		return 0;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		/* written in place: the node itself must take writes (a socket is connected then) */
		return S_ISSOCK(st.st_mode) ? 0 : access(path, W_OK);
	/*
	 * The temp file the output will be: made and removed, which answers
	 * for a read-only filesystem, a missing directory and permissions
	 * alike (access(2) lets root "write" into /proc).
	 */
	fd = cli_out_open(path, tmp, sizeof(tmp));
	if (fd < 0)
		return -1;
	cli_out_abandon(fd, tmp, path, NULL);
	return 0;
}

const char *cli_out_name(const char *path, const char *what)
{
	return strcmp(path, "-") ? path : what;
}

void cli_out_say(const char *cmd, const char *path, const char *what, const char *why)
{
	fprintf(cli_err(), "%s: cannot write %s: %s\n", cmd, cli_out_name(path, what), why);
}

int cli_out_write(const char *cmd, const char *path, const char *what,
			    enum conv_err (*fn)(void *ctx, int fd, struct io_flush *fl, struct conv_diag *d),
			    void *ctx, struct conv_diag *d)
{
	char tmp[4096];
	struct io_flush *fl;
	int fd = cli_out_open(path, tmp, sizeof(tmp));

	if (fd < 0) {
		cli_out_say(cmd, path, what, strerror(errno));
		return -1;
	}
	fl = cli_out_flusher(fd, tmp);
	if (fn(ctx, fd, fl, d) != CONV_E_OK) {
		cli_out_abandon(fd, tmp, path, fl);
		return 1;
	}
	if (cli_out_commit(fd, tmp, path, fl, false)) {
		cli_out_say(cmd, path, what, strerror(errno));
		return -1;
	}
	return 0;
}

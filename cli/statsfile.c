#include "cli/statsfile.h"

#include "cli/outfile.h"
#include "core/cleanup.h"
#include "core/dbuf.h"
#include "core/io.h"
#include "core/json.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Records go out with one write(2) each (not stdio), so that the signal
 * hook, which writes to the same fd, never cuts one in half.
 */
static struct {
	int fd;             /* the temp file, or the special file itself (tmp ""); -1: none (no --stats, or stdout) */
	volatile sig_atomic_t io_errno; /* the first write that failed: the file is given up */
	bool to_stdout;
	char tmp[4096], path[4096];
	char pending[8192]; /* the current input's record up to its exit code */
	size_t pending_len;
	volatile sig_atomic_t armed;
} sf = { .fd = -1 };

/* Decimal digits of v (0..999) into num; async-signal-safe. */
static int statsfile_digits(char *num, int v)
{
	int n = 0;

	for (int d = 100; d; d /= 10)
		if (v >= d || d == 1 || n)
			num[n++] = (char)('0' + v / d % 10);
	return n;
}

static void statsfile_on_signal(int sig)
{
	static const char tail[] = ",\"signal\":";
	static const char end[] = ",\"outputs\":[]}\n";
	char num[8];
	ssize_t k;

	if (sf.fd < 0)
		return;
	if (sf.io_errno) {
		/* a record was cut short: no file rather than a broken one, as statsfile_close does */
		if (sf.tmp[0])
			(void)unlink(sf.tmp);
		return;
	}
	if (sf.armed) {
		k = write(sf.fd, sf.pending, sf.pending_len);
		k = write(sf.fd, num, (size_t)statsfile_digits(num, 128 + sig));
		k = write(sf.fd, tail, sizeof(tail) - 1);
		k = write(sf.fd, num, (size_t)statsfile_digits(num, sig));
		k = write(sf.fd, end, sizeof(end) - 1);
		(void)k;
	}
	if (!sf.tmp[0])
		return; /* a special file: written as it goes */
	(void)fchmod(sf.fd, 0644);
	(void)fsync(sf.fd);
	(void)rename(sf.tmp, sf.path);
}

bool statsfile_open(const char *cmd, const char *path)
{
	if (!strcmp(path, "-")) {
		sf.to_stdout = true;
		return true;
	}
	snprintf(sf.path, sizeof(sf.path), "%s", path);
	if (cli_out_special(path)) {
		/*
		 * A device, FIFO or socket: written record by record, as stdout
		 * is (a FIFO waits for its reader here); never a temp file renamed
		 * over the node.
		 */
		sf.tmp[0] = 0;
		sf.fd = cli_out_open_special(path);
		if (sf.fd < 0) {
			fprintf(stderr, "%s: cannot write %s: %s\n", cmd, path, strerror(errno));
			return false;
		}
		cleanup_set_hook(statsfile_on_signal);
		return true;
	}
	sf.fd = cli_out_open(path, sf.tmp, sizeof(sf.tmp));
	if (sf.fd < 0) {
		fprintf(stderr, "%s: cannot write %s: %s\n", cmd, path, strerror(errno));
		return false;
	}
	/*
	 * kept, not removed, when a signal stops conv: the hook completes it.
	 * The hook goes in first: a signal in between renames the file, and
	 * the removal that follows finds nothing.
	 */
	cleanup_set_hook(statsfile_on_signal);
	cleanup_drop_path(sf.tmp);
	return true;
}

static _Thread_local struct statsfile_capture *capture;

void statsfile_capture_to(struct statsfile_capture *c)
{
	capture = c;
}

void statsfile_put_captured(struct statsfile_capture *c)
{
	if (c->failed)
		statsfile_put(NULL, 0);
	else if (c->data)
		statsfile_put(c->data, c->len);
	free(c->data);
	c->data = NULL;
	c->len = 0;
}

void statsfile_put(const void *data, size_t len)
{
	if (capture) {
		free(capture->data);
		capture->data = data ? malloc(len ? len : 1) : NULL;
		capture->failed = !capture->data;
		if (capture->data)
			memcpy(capture->data, data, len);
		capture->len = len;
		return;
	}
	if (sf.to_stdout) {
		if (data)
			fwrite(data, 1, len, stdout);
		fflush(stdout);
		return;
	}
	if (sf.fd >= 0 && !sf.io_errno) {
		sigset_t all, old;

		/* the record and the end of the hook's duty for its input, with no signal between */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		/* said when the file is closed; a file short of a record is given up */
		sf.io_errno = data ? io_write_all(sf.fd, data, len, NULL) : ENOMEM;
		sf.armed = 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
}

void statsfile_record_begin(struct json *j, struct dbuf *out, const char *in, int rc)
{
	dbuf_init(out, 0);
	json_init(j, out, false);
	json_obj_begin(j);
	json_kv_str(j, "input", in);
	json_kv_u64(j, "exit_code", (uint64_t)rc);
}

void statsfile_record_end(struct json *j, struct dbuf *out)
{
	json_obj_end(j);
	dbuf_putc(out, '\n');
	statsfile_put(out->err ? NULL : out->data, out->len);
	dbuf_release(out);
}

void statsfile_arm(const char *in)
{
	struct dbuf b;

	if (sf.fd < 0 || sf.io_errno)
		return;
	sf.armed = 0;
	dbuf_init(&b, sizeof(sf.pending));
	dbuf_puts(&b, "{\"input\":");
	json_escape(&b, in, strlen(in));
	dbuf_puts(&b, ",\"exit_code\":");
	if (!b.err) {
		memcpy(sf.pending, b.data, b.len);
		sf.pending_len = b.len;
		sf.armed = 1;
	}
	dbuf_release(&b);
}

bool statsfile_close(const char *cmd)
{
	int fd = sf.fd;

	if (fd < 0)
		return true;
	sf.armed = 0;
	if (!sf.tmp[0]) {
		/* a special file, written as it went */
		int e = sf.io_errno ? sf.io_errno : close(fd) && errno != EINTR ? errno : 0;

		if (sf.io_errno)
			close(fd);
		cleanup_set_hook(NULL);
		sf.fd = -1;
		if (e)
			fprintf(stderr, "%s: cannot write %s: %s\n", cmd, sf.path, strerror(e));
		return !e;
	}
	if (sf.io_errno) {
		/* the hook, which only unlinks now, stays until the file is gone */
		cli_out_abandon(fd, sf.tmp, sf.path, NULL);
		cleanup_set_hook(NULL);
		sf.fd = -1;
		fprintf(stderr, "%s: cannot write %s: %s\n", cmd, sf.path, strerror(sf.io_errno));
		return false;
	}
	/*
	 * The hook stays until the file is in place: a signal before the
	 * rename puts it there itself (a second rename then finds nothing).
	 */
	if (cli_out_commit(fd, sf.tmp, sf.path, NULL, false)) {
		int e = errno;

		cleanup_set_hook(NULL);
		sf.fd = -1;
		fprintf(stderr, "%s: cannot write %s: %s\n", cmd, sf.path, strerror(e));
		return false;
	}
	cleanup_set_hook(NULL);
	sf.fd = -1;
	return true;
}

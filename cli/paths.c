#include "cli/paths.h"

#include "cli/cli.h"
#include "cli/text.h"
#include "core/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file named on the command line, known by what it is on the disk. */
struct cli_path {
	bool exists;      /* then dev and ino say which file, whatever the name or link */
	dev_t dev;
	ino_t ino;
	char *path;       /* not there yet: the path with its directory resolved (owned) */
	bool output;
	const char *what;
	char *name;       /* as given or made (owned) */
	size_t input;
};

/* Fills f; false when there is nothing on the disk to compare (a pipe, a terminal) or no memory. */
static bool paths_file_init(struct cli_path *f, const char *name, int fd)
{
	struct stat st;
	const char *slash = strrchr(name, '/');
	char dir[4096], real[PATH_MAX];
	size_t dl = slash ? (size_t)(slash - name) : 0;

	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name)
		return false;
	if (fd >= 0 ? fstat(fd, &st) == 0 && S_ISREG(st.st_mode) : stat(name, &st) == 0) {
		f->exists = true;
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		return true;
	}
	if (fd < 0) {
		/* to be made: a/../x and x name one file */
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash && !dl ? 1 : dl), slash ? name : ".");
		if (realpath(dir, real)) {
			size_t n = strlen(real) + strlen(slash ? slash + 1 : name) + 2;

			f->path = malloc(n);
			if (f->path)
				snprintf(f->path, n, "%s/%s", real, slash ? slash + 1 : name);
		} else {
			f->path = strdup(name);
		}
		if (f->path)
			return true;
	}
	free(f->name);
	f->name = NULL;
	return false;
}

static int paths_file_cmp(const void *a, const void *b)
{
	const struct cli_path *x = a, *y = b;

	if (x->exists != y->exists)
		return x->exists ? -1 : 1;
	if (x->exists) {
		if (x->dev != y->dev)
			return x->dev < y->dev ? -1 : 1;
		if (x->ino != y->ino)
			return x->ino < y->ino ? -1 : 1;
		return 0;
	}
	return strcmp(x->path, y->path);
}

bool cli_path_is_perf_data(const char *path)
{
	char magic[8];
	struct stat st;
	ssize_t k;
	int fd;

	/*
	 * A regular file only, and opened so as never to wait: a FIFO's open
	 * waits for a writer and its read for data, a device's read may never
	 * end (the output /dev/stdout is the pipe conv writes to).
	 */
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	do
		k = read(fd, magic, sizeof(magic));
	while (k < 0 && errno == EINTR);
	close(fd);
	return k == 8 && (!memcmp(magic, "PERFILE2", 8) || !memcmp(magic, "2ELIFREP", 8) ||
			  !memcmp(magic, "PERFFILE", 8));
}

void cli_paths_add(struct cli_paths *ps, const char *name, int fd, bool output, const char *what,
		   size_t input)
{
	if (!vec_reserve((void **)&ps->f, &ps->cap, ps->nr + 1, sizeof(*ps->f))) {
		ps->nomem = true;
		return;
	}
	if (!paths_file_init(&ps->f[ps->nr], name, fd)) {
		ps->nomem |= fd < 0; /* a pipe or terminal: nothing to compare; else no memory */
		return;
	}
	ps->f[ps->nr].output = output;
	ps->f[ps->nr].what = what;
	ps->f[ps->nr].input = input;
	ps->nr++;
}

/* The first rule a group of names for one file breaks, said; false when none. */
static bool paths_group_refused(const struct cli_path *f, size_t n, const char *cmd, char *const *inputs)
{
	const struct cli_path *o = NULL, *o2 = NULL, *in = NULL;

	for (size_t k = 0; k < n; k++) {
		if (!f[k].output)
			in = in ? in : &f[k];
		else if (!o)
			o = &f[k];
		else if (!o2)
			o2 = &f[k];
	}
	if (o && in) {
		fprintf(cli_err(), "%s: %s %s is %s %s: refusing to overwrite it\n", cmd, o->what,
			strcmp(o->name, "-") ? o->name : "(standard output)", in->what, in->name);
		return true;
	}
	if (o2 && o->input != o2->input && o->input != SIZE_MAX && o2->input != SIZE_MAX) {
		fprintf(cli_err(), "%s: %s and %s would both be written to %s: give them one at a time, "
				"each with its own -o\n",
			cmd, inputs[o->input < o2->input ? o->input : o2->input],
			inputs[o->input < o2->input ? o2->input : o->input], o->name);
		return true;
	}
	if (o2) {
		fprintf(cli_err(), "%s: %s and %s are both %s: each output needs a file of its own\n", cmd,
			o->what, o2->what, strcmp(o->name, "-") ? o->name : "standard output");
		return true;
	}
	return false;
}

int cli_paths_check(struct cli_paths *ps, const char *cmd, char *const *inputs)
{
	struct cli_path *f = ps->f;
	size_t nf = ps->nr;
	int rc = CLI_EXIT_USAGE;

	if (ps->nomem) {
		fprintf(cli_err(), "%s: out of memory\n", cmd);
		rc = CLI_EXIT_INPUT;
		goto out;
	}
	if (nf)
		qsort(f, nf, sizeof(*f), paths_file_cmp); /* f is NULL when nothing was added */
	for (size_t i = 0; i < nf;) {
		size_t e = i + 1;

		while (e < nf && !paths_file_cmp(&f[i], &f[e]))
			e++;
		if (paths_group_refused(f + i, e - i, cmd, inputs))
			goto out;
		i = e;
	}
	/* not an input here, but a recording all the same: a slip of the fingers, not a wish */
	for (size_t i = 0; i < nf; i++) {
		if (f[i].output && f[i].exists && strcmp(f[i].name, "-") && cli_path_is_perf_data(f[i].name)) {
			fprintf(cli_err(), "%s: %s %s is a perf.data recording: refusing to overwrite it\n", cmd,
				f[i].what, f[i].name);
			goto out;
		}
	}
	rc = 0;
out:
	cli_paths_release(ps);
	return rc;
}

void cli_paths_release(struct cli_paths *ps)
{
	for (size_t i = 0; i < ps->nr; i++) {
		free(ps->f[i].name);
		free(ps->f[i].path);
	}
	free(ps->f);
	memset(ps, 0, sizeof(*ps));
}

/*
 * Replays fuzz inputs through LLVMFuzzerTestOneInput without libFuzzer, so
 * that the corpus and the regression files run under CTest in the ordinary
 * (ASan + UBSan) test build.
 *
 * usage: fuzz_replay_<target> FILE|DIR...
 * A directory is replayed file by file: its direct entries, in name order
 * (subdirectories and hidden files are skipped). Prints one line per file and
 * a summary line.
 * A bad input crashes the process (the sanitizers report it); a file that
 * cannot be read is counted as failed and the exit status is 1.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* asprintf */
#endif

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long passed, failed;

static int read_all(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return -1;
	for (;;) {
		size_t got;

		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			uint8_t *nb = realloc(buf, ncap);

			if (!nb) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return -1;
			}
			buf = nb;
			cap = ncap;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;

		free(buf);
		fclose(f);
		errno = e ? e : EIO;
		return -1;
	}
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
}

static void replay_file(const char *path)
{
	uint8_t *data = NULL;
	size_t len = 0;
	uint8_t *copy;

	if (read_all(path, &data, &len) != 0) {
		printf("FAIL %s: %s\n", path, strerror(errno));
		failed++;
		return;
	}
	/* an exact-size copy, as libFuzzer passes it, so ASan sees reads past the end */
	copy = malloc(len ? len : 1);
	if (!copy) {
		printf("FAIL %s: out of memory\n", path);
		free(data);
		failed++;
		return;
	}
	if (len)
		memcpy(copy, data, len);
	free(data);
	printf("%s (%zu bytes)\n", path, len);
	fflush(stdout);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
	passed++;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_path(const char *path, int depth)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (stat(path, &st) != 0) {
		printf("FAIL %s: %s\n", path, strerror(errno));
		failed++;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		replay_file(path);
		return;
	}
	if (depth > 0)
		return; /* one level only */
	d = opendir(path);
	if (!d) {
		printf("FAIL %s: %s\n", path, strerror(errno));
		failed++;
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue; /* ., .. and hidden files such as .gitkeep */
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			char **nn = realloc(names, ncap * sizeof(*nn));

			if (!nn)
				break;
			names = nn;
			cap = ncap;
		}
		if (asprintf(&names[n], "%s/%s", path, de->d_name) < 0)
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		replay_path(names[i], depth + 1);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		replay_path(argv[i], 0);
	printf("%lu passed, %lu failed\n", passed, failed);
	return failed ? 1 : 0;
}

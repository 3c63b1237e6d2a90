/*
 * libFuzzer target for the build-id readers (buildid/buildid.h).
 *
 * The same input is read as an ELF image (buildid_from_mem: libelf, program
 * header notes then section notes), as a file (buildid_from_path and
 * buildid_elf_intact on a memfd holding it: the checks a download or cache
 * entry gets) and as raw notes (buildid_from_notes, the layout of
 * /sys/kernel/notes), the latter both at an aligned address and one byte
 * off, since a caller may hand any buffer. The file and memory readers must
 * agree. A build-id that is found
 * must be 1..BUILDID_MAX bytes and lie inside the input, and its hex form
 * must be exactly twice as long. The input is passed as libFuzzer gives it
 * (read-only): buildid_from_mem() promises not to write to the image, and
 * libFuzzer aborts if it does.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif

#include "fuzz_common.h"

#include "buildid/buildid.h"
#include "core/err.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

volatile uint64_t fuzz_sink;

/* The id must be a copy of some bytes of the input (the note's descriptor). */
static bool inside(const uint8_t *data, size_t size, const uint8_t *id, size_t len)
{
	if (len > size)
		return false;
	for (size_t i = 0; i + len <= size; i++)
		if (!memcmp(data + i, id, len))
			return true;
	return false;
}

static uint64_t check_id(const uint8_t *data, size_t size, const uint8_t *id, size_t len)
{
	char hex[2 * BUILDID_MAX + 1];

	FUZZ_CHECK(len >= 1 && len <= BUILDID_MAX);
	buildid_hex(id, len, hex);
	FUZZ_CHECK(strlen(hex) == 2 * len);
	/* libelf may convert a note of the other byte order, but never its descriptor */
	FUZZ_CHECK(inside(data, size, id, len));
	return fuzz_touch(id, len) + hex[0];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t id[BUILDID_MAX], id2[BUILDID_MAX];
	size_t len = 0, len2 = 0;
	struct conv_diag diag;
	enum conv_err err;
	uint8_t *odd;
	uint64_t t = 0;

	memset(&diag, 0, sizeof(diag));
	memset(id, 0, sizeof(id));
	err = buildid_from_mem(data, size, id, &len, &diag);
	FUZZ_CHECK(err == CONV_E_OK || err == CONV_E_NOTFOUND || err == CONV_E_LIBELF ||
		   err == CONV_E_NOMEM);
	if (err == CONV_E_OK)
		t += check_id(data, size, id, len);
	else
		FUZZ_CHECK(diag.code == err && memchr(diag.msg, 0, sizeof(diag.msg)) != NULL);

	/* the same bytes as a file, as debuginfod checks a download */
	{
		int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
		char path[64];
		uint8_t fid[BUILDID_MAX];
		size_t flen = 0;
		enum conv_err ferr;
		bool intact;

		FUZZ_CHECK(fd >= 0);
		FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t)size);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ferr = buildid_from_path(path, fid, &flen, NULL);
		/* libelf reads a file and a buffer alike */
		FUZZ_CHECK(ferr == err);
		FUZZ_CHECK(err != CONV_E_OK || (flen == len && !memcmp(fid, id, len)));
		intact = buildid_elf_intact(path);
		FUZZ_CHECK(!intact || err != CONV_E_LIBELF); /* whole ELF is ELF */
		t += intact;
		close(fd);
	}

	len = 0;
	err = buildid_from_notes(data, size, id, &len);
	FUZZ_CHECK(err == CONV_E_OK || err == CONV_E_NOTFOUND);
	if (err == CONV_E_OK)
		t += check_id(data, size, id, len);

	/* the same notes one byte off an aligned address: same answer */
	odd = malloc(size + 1);
	if (odd) {
		enum conv_err err2;

		memcpy(odd + 1, data, size);
		err2 = buildid_from_notes(odd + 1, size, id2, &len2);
		FUZZ_CHECK(err2 == err);
		FUZZ_CHECK(err != CONV_E_OK || (len2 == len && !memcmp(id, id2, len)));
		free(odd);
	}
	fuzz_sink += t;
	return 0;
}

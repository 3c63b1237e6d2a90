/*
 * Build-id notes are found through libelf (gelf_getnote), never by parsing
 * ELF by hand: program-header notes first (what the loader and perf see),
 * section notes as a fallback for files whose program headers are stripped.
 * A note is a GNU build-id when its owner is "GNU" and its type is 3
 * (NT_GNU_BUILD_ID).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif

#include "buildid/buildid.h"

#include "core/cursor.h"
#include "core/hex.h"
#include "core/io.h"
#include "core/ropen.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <gelf.h>
#include <stdio.h>
#include <libelf.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

static const char hexdig[] = "0123456789abcdef";

void buildid_hex(const uint8_t *id, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hexdig[id[i] >> 4];
		out[2 * i + 1] = hexdig[id[i] & 15];
	}
	out[2 * len] = '\0';
}

bool buildid_from_hex(const char *hex, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = strlen(hex);

	if (!n || n % 2 || n / 2 > cap)
		return false;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	*len = n / 2;
	return true;
}

/* Looks for a GNU build-id note in one note data block. */
static bool note_scan(Elf_Data *data, uint8_t *out, size_t *len)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (off < data->d_size &&
	       (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    name_off + 4 <= data->d_size &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0 &&
		    nh.n_descsz <= BUILDID_MAX && desc_off <= data->d_size &&
		    nh.n_descsz <= data->d_size - desc_off) {
			memcpy(out, (const char *)data->d_buf + desc_off, nh.n_descsz);
			*len = nh.n_descsz;
			return true;
		}
	}
	return false;
}

static enum conv_err buildid_from_elf(Elf *elf, uint8_t *out, size_t *len, struct conv_diag *diag)
{
	size_t phnum;
	Elf_Scn *scn = NULL;

	if (elf_kind(elf) != ELF_K_ELF)
		return conv_fail(diag, CONV_E_LIBELF, UINT64_MAX, "not an ELF file");
	if (elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if (d && note_scan(d, out, len))
				return CONV_E_OK;
		}
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d = NULL;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		while ((d = elf_getdata(scn, d)) != NULL)
			if (note_scan(d, out, len))
				return CONV_E_OK;
	}
	return conv_fail(diag, CONV_E_NOTFOUND, UINT64_MAX, "no GNU build-id note");
}

enum conv_err buildid_from_mem(const void *image, size_t size, uint8_t *out, size_t *len,
			       struct conv_diag *diag)
{
	Elf *elf;
	enum conv_err err;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)(uintptr_t)image, size);
	if (!elf)
		return conv_fail(diag, CONV_E_LIBELF, UINT64_MAX, "%s", elf_errmsg(-1));
	err = buildid_from_elf(elf, out, len, diag);
	elf_end(elf);
	return err;
}

enum conv_err buildid_from_path(const char *path, uint8_t *out, size_t *len,
				struct conv_diag *diag)
{
	int fd = ropen_regular(path, false);
	Elf *elf;
	enum conv_err err;

	if (fd < 0)
		return conv_fail(diag, CONV_E_IO, UINT64_MAX, "cannot open %s: %s", path,
				 ropen_strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return conv_fail(diag, CONV_E_LIBELF, UINT64_MAX, "%s: %s", path, elf_errmsg(-1));
	}
	err = buildid_from_elf(elf, out, len, diag);
	elf_end(elf);
	close(fd);
	return err;
}

static bool range_in(uint64_t off, uint64_t size, uint64_t file)
{
	return off <= file && size <= file - off;
}

bool buildid_elf_intact(const char *path)
{
	int fd = ropen_regular(path, false);
	struct stat st;
	Elf *elf = NULL;
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	bool ok = false;
	uint64_t fsize;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0)
		goto out;
	fsize = (uint64_t)st.st_size;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		goto out;
	if (eh.e_phnum && !range_in(eh.e_phoff, (uint64_t)eh.e_phnum * eh.e_phentsize, fsize))
		goto out;
	if (eh.e_shnum && !range_in(eh.e_shoff, (uint64_t)eh.e_shnum * eh.e_shentsize, fsize))
		goto out;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			goto out;
		if (sh.sh_type != SHT_NOBITS && !range_in(sh.sh_offset, sh.sh_size, fsize))
			goto out;
	}
	ok = true;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ok;
}

/*
 * Raw note layout (ELF gABI): u32 namesz, u32 descsz, u32 type, name padded
 * to 4 bytes, desc padded to 4 bytes; repeated. Host byte order (it is the
 * running kernel's).
 */
enum conv_err buildid_from_notes(const void *notes, size_t size, uint8_t *out, size_t *len)
{
	struct cur c;

	cur_init(&c, notes, size, false);
	while (cur_remaining(&c) >= 12) {
		uint32_t namesz = cur_u32(&c), descsz = cur_u32(&c), type = cur_u32(&c);
		size_t npad = ((size_t)namesz + 3u) & ~(size_t)3u;
		size_t dpad = ((size_t)descsz + 3u) & ~(size_t)3u;
		const uint8_t *name = cur_view(&c, npad);
		const uint8_t *desc = cur_view(&c, dpad);

		if (!cur_ok(&c))
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(name, "GNU", 4) &&
		    descsz > 0 && descsz <= BUILDID_MAX) {
			memcpy(out, desc, descsz);
			*len = descsz;
			return CONV_E_OK;
		}
	}
	return CONV_E_NOTFOUND;
}

enum conv_err buildid_from_notes_file(const char *path, uint8_t *out, size_t *len)
{
	uint8_t buf[64 * 1024];
	size_t got = 0;
	int fd = ropen_regular(path, false);

	if (fd < 0)
		return CONV_E_IO;
	while (got < sizeof(buf)) {
		ssize_t k = read(fd, buf + got, sizeof(buf) - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	return buildid_from_notes(buf, got, out, len);
}

enum conv_err buildid_running_vdso(const void **image, size_t *size, uint8_t *id, size_t *len)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	unsigned long lo, hi;
	char line[512];
	enum conv_err e = CONV_E_NOTFOUND;
	FILE *f;

	if (!base)
		return CONV_E_NOTFOUND;
	/* the image's extent: its mapping, as the kernel lists it */
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return CONV_E_NOTFOUND;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base &&
		    hi > lo) {
			e = buildid_from_mem((const void *)base, hi - lo, id, len, NULL);
			*image = (const void *)base;
			*size = hi - lo;
			break;
		}
	}
	fclose(f);
	return e == CONV_E_OK ? CONV_E_OK : CONV_E_NOTFOUND;
}

enum conv_err buildid_running_vdso_fd(const uint8_t *id, size_t len, int *fd)
{
	const void *image;
	size_t size, have_len;
	uint8_t have[BUILDID_MAX];
	int mfd;

	if (buildid_running_vdso(&image, &size, have, &have_len) != CONV_E_OK || have_len != len ||
	    memcmp(have, id, len))
		return CONV_E_NOTFOUND;
	mfd = memfd_create("conv-vdso", MFD_CLOEXEC);
	if (mfd < 0)
		return CONV_E_IO;
	if (io_write_all(mfd, image, size, NULL)) {
		close(mfd);
		return CONV_E_IO;
	}
	*fd = mfd;
	return CONV_E_OK;
}

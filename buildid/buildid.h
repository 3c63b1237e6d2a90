/*
 * GNU build-ids: reading them from ELF files (with libelf) and formatting them.
 */
#ifndef CONV_BUILDID_BUILDID_H
#define CONV_BUILDID_BUILDID_H

#include "core/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest build-id kept; GNU ld writes 20 (sha1), others 8, 16 or 32. */
#define BUILDID_MAX 64

struct conv_diag;

/*
 * Reads the NT_GNU_BUILD_ID note of the ELF file at path. Go's own build-id
 * note (type 4, owner "Go") is not a GNU build-id and is ignored.
 * CONV_E_NOTFOUND: no GNU build-id; CONV_E_IO: cannot open, or not a regular
 * file (only one is ever opened: core/ropen.h); CONV_E_LIBELF: not ELF.
 */
enum conv_err buildid_from_path(const char *path, uint8_t *out, size_t *len,
				struct conv_diag *diag);

/* Same for an ELF image in memory (borrowed). */
enum conv_err buildid_from_mem(const void *image, size_t size, uint8_t *out, size_t *len,
			       struct conv_diag *diag);

/*
 * Reads the GNU build-id from raw ELF notes without an ELF header around them,
 * as the running kernel exports them in /sys/kernel/notes.
 */
enum conv_err buildid_from_notes(const void *notes, size_t size, uint8_t *out, size_t *len);
/* buildid_from_notes() on the contents of a file (e.g. /sys/kernel/notes). */
enum conv_err buildid_from_notes_file(const char *path, uint8_t *out, size_t *len);

/*
 * The vDSO the running kernel gave this process: its ELF image in memory
 * (borrowed, valid for the life of the process) and its build-id. It is the
 * image every process on this kernel maps as [vdso] (perf saves the same
 * bytes under ~/.debug/[vdso]/<build-id>/vdso). CONV_E_NOTFOUND without one.
 */
enum conv_err buildid_running_vdso(const void **image, size_t *size, uint8_t *id, size_t *len);

/*
 * An unnamed in-memory file (memfd) holding the running vDSO's image when
 * its build-id is `id`, so that code opening objects by path can open it as
 * "/proc/self/fd/<fd>". The caller closes the fd. CONV_E_NOTFOUND: no vDSO,
 * or another build-id; CONV_E_IO: the memfd could not be made.
 */
enum conv_err buildid_running_vdso_fd(const uint8_t *id, size_t len, int *fd);

/*
 * Whether the ELF file at path is whole: its program and section header
 * tables and every section with file contents lie inside the file (a
 * download or cache entry cut short passes the build-id check but not this).
 */
bool buildid_elf_intact(const char *path);

/* Lowercase hex; out must hold 2 * len + 1 bytes. */
void buildid_hex(const uint8_t *id, size_t len, char *out);
/*
 * The inverse: two hex digits (either case) a byte into out, *len bytes;
 * false for anything else, an odd or zero count, or more than cap bytes.
 */
bool buildid_from_hex(const char *hex, uint8_t *out, size_t cap, size_t *len);

#endif

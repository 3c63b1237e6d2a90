/*
 * Output files: their bytes sent to the disk while the rest is written.
 */
#ifndef CONV_CORE_IO_H
#define CONV_CORE_IO_H

#include <stdint.h>

/*
 * Starts writing [off, off + len) of fd to its device, without waiting
 * (sync_file_range SYNC_FILE_RANGE_WRITE). Why: outputs are fsync'ed before
 * they are renamed into place, and that fsync waited for the whole file at
 * the end of the run (the 90 MB benchmark's 15 MB JFR: 16 ms); started as
 * each part is written, the final fsync finds most of it done. A hint: it
 * does nothing where it cannot (a pipe, a terminal, not Linux).
 */
void io_start_writeback(int fd, uint64_t off, uint64_t len);

#endif

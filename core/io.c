#include "core/io.h"

#include <fcntl.h>

void io_start_writeback(int fd, uint64_t off, uint64_t len)
{
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
	/* errors (ESPIPE for a pipe, EINVAL for a special file) only mean no hint */
	(void)sync_file_range(fd, (off_t)off, (off_t)len, SYNC_FILE_RANGE_WRITE);
#else
	(void)fd;
	(void)off;
	(void)len;
#endif
}

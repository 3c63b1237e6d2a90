#include "pipeline/host.h"

#include <string.h>
#include <sys/utsname.h>

bool host_runs_kernel(const char *release)
{
	struct utsname u;

	return release && uname(&u) == 0 && !strcmp(u.release, release);
}

#include "pipeline/host.h"

#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

bool host_runs_kernel(const char *release)
{
	struct utsname u;

	return release && uname(&u) == 0 && !strcmp(u.release, release);
}

bool host_is_recording_machine(const char *hostname, const char *release)
{
	char name[256];

	if (!hostname || !hostname[0] || gethostname(name, sizeof(name)) != 0)
		return false;
	name[sizeof(name) - 1] = '\0';
	return !strcmp(name, hostname) && host_runs_kernel(release);
}

#include "pipeline/host.h"

#include "procmap/procmap.h"
#include "reader/perf_abi.h"
#include "reader/reader.h"

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

void host_note_record(struct procmap *pm, const struct rdr_info *info, const struct rdr_event *ev)
{
	if (ev->type != PERF_REC_HEADER_FEATURE ||
	    (ev->u.feature != PERF_FEAT_HOSTNAME && ev->u.feature != PERF_FEAT_OSRELEASE))
		return;
	procmap_set_same_machine(pm, host_is_recording_machine(info->hostname, info->osrelease));
}

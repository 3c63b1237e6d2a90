#include "pipeline/evname.h"

#include <stdio.h>
#include <string.h>

/* Event name without perf's modifier suffix (cycles:ppp -> cycles; sys:event stays). */
void evname_base(const char *name, char *out, size_t n)
{
	const char *c1 = strchr(name, ':');
	size_t len = strlen(name);

	if (c1 && !strchr(c1 + 1, ':') && !strchr(name, '/')) {
		/* one colon: a tracepoint "sys:name" has no modifier letters only */
		bool mods = c1[1] != '\0';

		for (const char *q = c1 + 1; *q; q++)
			if (!strchr("ukhHGIpPSDWe", *q))
				mods = false;
		if (mods)
			len = (size_t)(c1 - name);
	} else if (c1 && strchr(c1 + 1, ':')) {
		len = (size_t)(strrchr(name, ':') - name);
	}
	snprintf(out, n, "%.*s", (int)len, name);
}

bool evname_matches(const char *recorded, const char *wanted)
{
	char base[200];
	size_t n;

	if (!recorded || !wanted)
		return false;
	if (!strcmp(recorded, wanted))
		return true;
	/* "sys:*": every tracepoint of a system, as perf record -e takes it */
	n = strlen(wanted);
	if (n >= 2 && wanted[n - 2] == ':' && wanted[n - 1] == '*')
		return strncmp(recorded, wanted, n - 1) == 0;
	evname_base(recorded, base, sizeof(base));
	return !strcmp(base, wanted);
}

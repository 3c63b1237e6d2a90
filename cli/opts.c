#include "cli/opts.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	/* above every command's own values (which start at 256) */
	O_DEBUGINFOD = 1000, O_OFFLINE, O_CACHE_DIR, O_JIT_DIR, O_BID_DISK, O_MAX_DOWNLOAD,
	O_TIMEOUT, O_STRICT, O_FULL_SIGS, O_DEADLINE
};

static const struct option common_opts[] = {
	{"debug-dir", required_argument, NULL, 'd'},
	{"debuginfod", required_argument, NULL, O_DEBUGINFOD},
	{"offline", no_argument, NULL, O_OFFLINE},
	{"cache-dir", required_argument, NULL, O_CACHE_DIR},
	{"no-symbolize", no_argument, NULL, 'n'},
	{"full-signatures", no_argument, NULL, O_FULL_SIGS},
	{"kallsyms", required_argument, NULL, 'k'},
	{"jit-dir", required_argument, NULL, O_JIT_DIR},
	{"buildid-from-disk", no_argument, NULL, O_BID_DISK},
	{"max-download", required_argument, NULL, O_MAX_DOWNLOAD},
	{"timeout", required_argument, NULL, O_TIMEOUT},
	{"symbolize-deadline", required_argument, NULL, O_DEADLINE},
	{"jobs", required_argument, NULL, 'j'},
	{"quiet", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 'v'},
	{"strict", no_argument, NULL, O_STRICT},
	{NULL, 0, NULL, 0},
};

const char cli_common_help[] =
	"Symbols:\n"
	" -d, --debug-dir DIR     debug files here first (repeatable)\n"
	"     --debuginfod URL    server (repeatable; default $DEBUGINFOD_URLS)\n"
	"     --offline           no network    --cache-dir DIR  download cache\n"
	" -n, --no-symbolize      keep build-ids and ELF addresses only (binaries: here, -d)\n"
	"     --full-signatures   C++ names with return type and parameters\n"
	" -k, --kallsyms FILE     kernel symbols of the recording machine\n"
	"     --jit-dir DIR       perf-PID.map / jit-PID.dump files (default /tmp)\n"
	"     --buildid-from-disk take missing build-ids from this machine's files\n"
	"     --max-download N  --timeout S  --symbolize-deadline S   debuginfod: largest file\n"
	"                         (4G), seconds under 100 KiB/s (90), every download by (300)\n"
	"Run:\n"
	" -j, --jobs N            symbolize with N threads (default: CPUs)\n"
	" -q, --quiet             no progress or summary   -v, --verbose  say more\n"
	"     --strict            exit 3 when the input had problems\n";

bool cli_opts_join(const struct option *own, struct option *out, size_t cap)
{
	size_t n = 0;

	for (const struct option *o = common_opts; o->name; o++) {
		if (n + 1 >= cap)
			return false;
		out[n++] = *o;
	}
	for (const struct option *o = own; o->name; o++) {
		if (n + 1 >= cap)
			return false;
		out[n++] = *o;
	}
	memset(&out[n], 0, sizeof(out[n]));
	return true;
}

bool cli_parse_size(const char *s, uint64_t *out)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	if (end == s || *s == '-')
		return false;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'M')
		v <<= 20, end++;
	else if (*end == 'G')
		v <<= 30, end++;
	*out = v;
	return !*end && v;
}

int cli_common_take(struct cli_common *c, const char *cmd, int opt, const char *arg)
{
	switch (opt) {
	case 'd':
		if (c->nr_dirs >= CLI_MAX_LIST) {
			fprintf(stderr, "%s: more than %d --debug-dir\n", cmd, CLI_MAX_LIST);
			return -1;
		}
		c->dirs[c->nr_dirs++] = arg;
		return 1;
	case O_DEBUGINFOD:
		if (c->nr_urls >= CLI_MAX_LIST) {
			fprintf(stderr, "%s: more than %d --debuginfod\n", cmd, CLI_MAX_LIST);
			return -1;
		}
		c->urls[c->nr_urls++] = arg;
		return 1;
	case O_OFFLINE:
		c->sj.offline = true;
		return 1;
	case O_CACHE_DIR:
		c->sj.cache_dir = arg;
		return 1;
	case 'n':
		c->sj.no_symbolize = true;
		return 1;
	case O_FULL_SIGS:
		c->sj.full_signatures = true;
		return 1;
	case 'k':
		c->sj.kallsyms = arg;
		return 1;
	case O_JIT_DIR:
		c->pm.jit_dir = arg;
		return 1;
	case O_BID_DISK:
		c->pm.buildid_from_disk = true;
		return 1;
	case O_MAX_DOWNLOAD: {
		uint64_t v;

		if (!cli_parse_size(arg, &v)) {
			fprintf(stderr, "%s: --max-download: not a size: '%s'\n", cmd, arg);
			return -1;
		}
		c->sj.max_download = v;
		return 1;
	}
	case O_DEADLINE:
	case O_TIMEOUT: {
		char *end;
		long v = strtol(arg, &end, 10); /* LONG_MAX on overflow: debuginfod caps limits at what libcurl takes */

		if (*end || end == arg || v < 1) {
			fprintf(stderr, "%s: %s: expected seconds, got '%s'\n", cmd,
				opt == O_DEADLINE ? "--symbolize-deadline" : "--timeout", arg);
			return -1;
		}
		*(opt == O_DEADLINE ? &c->sj.deadline_s : &c->sj.timeout_s) = v;
		return 1;
	}
	case 'j': {
		char *end;
		unsigned long v = strtoul(arg, &end, 10);

		if (*end || end == arg || !v || v > 64) {
			fprintf(stderr, "%s: -j: expected 1 to 64 threads, got '%s'\n", cmd, arg);
			return -1;
		}
		c->sj.jobs = (unsigned)v;
		return 1;
	}
	case 'q':
		c->quiet = true;
		return 1;
	case 'v':
		c->verbose = true;
		return 1;
	case O_STRICT:
		c->strict = true;
		return 1;
	default:
		return 0;
	}
}

bool cli_common_finish(struct cli_common *c, const char *cmd)
{
	const char *clash = NULL;

	/* each pair would otherwise be settled silently, one of the two ignored */
	if (c->quiet && c->verbose)
		clash = "-q (--quiet) and -v (--verbose) contradict each other: give one";
	else if (c->sj.offline && c->nr_urls)
		clash = "--offline asks no server, --debuginfod names one: give one";
	else if (c->sj.no_symbolize && c->nr_urls)
		clash = "-n (--no-symbolize) looks for no symbols: --debuginfod would not be used";
	else if (c->sj.no_symbolize && c->sj.kallsyms)
		clash = "-n (--no-symbolize) looks for no symbols: -k (--kallsyms) would not be used";
	if (clash) {
		fprintf(stderr, "%s: %s\n", cmd, clash);
		return false;
	}
	c->sj.debug_dirs = c->dirs;
	c->sj.nr_debug_dirs = c->nr_dirs;
	c->sj.debuginfod_urls = c->urls;
	c->sj.nr_debuginfod_urls = c->nr_urls;
	return true;
}

void cli_opt_error(const char *cmd, int opt, char **argv)
{
	/* getopt_long leaves optind past the word it refused */
	const char *word = optind > 0 ? argv[optind - 1] : "";
	size_t len = strcspn(word, "=");
	char shortname[3] = { '-', (char)optopt, 0 };
	const char *name = optopt > 0 && optopt < 256 ? shortname : word;
	size_t nlen = optopt > 0 && optopt < 256 ? 2 : len;

	if (opt == ':')
		fprintf(stderr, "%s: option '%.*s' needs a value", cmd, (int)nlen, name);
	else if (optopt >= 256 || (optopt > 0 && word[0] == '-' && word[1] == '-'))
		/* a long option that takes no value was given one */
		fprintf(stderr, "%s: option '%.*s' takes no value", cmd, (int)len, word);
	else
		fprintf(stderr, "%s: unknown option '%.*s'", cmd, (int)nlen, name);
	fprintf(stderr, "; try '%s --help'\n", cmd);
}

const char *cli_stats_path(const char *arg, int argc, char **argv)
{
	if (!arg && optind < argc && argv[optind][0] != '-')
		arg = argv[optind++];
	return arg ? arg : "-";
}

const char *cli_out_arg(const char *cmd, const char *arg)
{
	if (*arg)
		return arg;
	fprintf(stderr, "%s: -o: an empty path names nothing\n", cmd);
	return NULL;
}

#include "cli/opts.h"

#include "cli/cli.h"
#include "cli/paths.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	/* above every command's own values (which start at 256) */
	O_DEBUGINFOD = 1000, O_OFFLINE, O_CACHE_DIR, O_JIT_DIR, O_BID_DISK, O_MAX_DOWNLOAD,
	O_TIMEOUT, O_STRICT, O_FULL_SIGS, O_DEADLINE
};

static const struct cli_opt common_opts[] = {
	{"debug-dir", required_argument, 'd'},
	{"debuginfod", required_argument, O_DEBUGINFOD},
	{"offline", no_argument, O_OFFLINE},
	{"cache-dir", required_argument, O_CACHE_DIR},
	{"no-symbolize", no_argument, 'n'},
	{"full-signatures", no_argument, O_FULL_SIGS},
	{"kallsyms", required_argument, 'k'},
	{"jit-dir", required_argument, O_JIT_DIR},
	{"buildid-from-disk", no_argument, O_BID_DISK},
	{"max-download", required_argument, O_MAX_DOWNLOAD},
	{"timeout", required_argument, O_TIMEOUT},
	{"symbolize-deadline", required_argument, O_DEADLINE},
	{"jobs", required_argument, 'j'},
	{"quiet", no_argument, 'q'},
	{"verbose", no_argument, 'v'},
	{"strict", no_argument, O_STRICT},
	{NULL, 0, 0},
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
	" -j, --jobs N            threads (CPUs): inputs side by side, or one's objects\n"
	" -q, --quiet             no progress or summary   -v, --verbose  say more\n"
	"     --strict            exit 3 when the input had problems\n";

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

/* A repeatable option's value into its list of CLI_MAX_LIST: 1, or -1 (said) when it is full. */
static int opts_list_add(const char **v, size_t *n, const char *cmd, const char *opt, const char *arg)
{
	if (*n >= CLI_MAX_LIST) {
		fprintf(stderr, "%s: more than %d %s\n", cmd, CLI_MAX_LIST, opt);
		return -1;
	}
	v[(*n)++] = arg;
	return 1;
}

/*
 * Takes opt (a getopt_long result) when it is a shared option: 1 taken,
 * 0 not a shared option, -1 a bad value (said on stderr; a usage error).
 */
static int opts_take_common(struct cli_common *c, const char *cmd, int opt, const char *arg)
{
	switch (opt) {
	case 'd':
		return opts_list_add(c->dirs, &c->nr_dirs, cmd, "--debug-dir", arg);
	case O_DEBUGINFOD:
		return opts_list_add(c->urls, &c->nr_urls, cmd, "--debuginfod", arg);
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

/* After the options: false (said) when two of them contradict each other; else sj gets the lists. */
static bool opts_finish_common(struct cli_common *c, const char *cmd)
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

/* Edit distance (insert, delete, replace, swap of neighbours) of a[0..al) and b, up to 63 bytes each. */
static size_t opts_distance(const char *a, size_t al, const char *b)
{
	size_t bl = strlen(b), d[64][64];

	if (al >= 64 || bl >= 64)
		return SIZE_MAX;
	for (size_t i = 0; i <= al; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= bl; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= al; i++) {
		for (size_t j = 1; j <= bl; j++) {
			size_t v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			v = d[i - 1][j] + 1 < v ? d[i - 1][j] + 1 : v;
			v = d[i][j - 1] + 1 < v ? d[i][j - 1] + 1 : v;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[al][bl];
}

/*
 * After "unknown option '--word'": the options word abbreviates (getopt
 * refuses an abbreviation of several), else the nearest option by edit
 * distance when it is near enough to be a typo (a third of its length,
 * at least 1), as "; did you mean --output?". Nothing when neither.
 */
static void opts_suggest(const char *word, size_t len, const struct option *opts)
{
	const struct option *best = NULL;
	size_t best_d = SIZE_MAX, nr_prefix = 0;

	for (const struct option *o = opts; o->name; o++)
		nr_prefix += len && !strncmp(o->name, word, len);
	if (nr_prefix > 1) {
		size_t shown = 0;

		fprintf(stderr, " (it abbreviates ");
		for (const struct option *o = opts; o->name; o++)
			if (!strncmp(o->name, word, len))
				fprintf(stderr, "%s--%s", shown++ ? (shown == nr_prefix ? " and " : ", ") : "",
					o->name);
		fprintf(stderr, ": give more of it)");
		return;
	}
	for (const struct option *o = opts; o->name; o++) {
		size_t d = opts_distance(word, len, o->name);

		if (d < best_d) {
			best_d = d;
			best = o;
		}
	}
	if (best && best_d <= (len / 3 > 1 ? len / 3 : 1))
		fprintf(stderr, " (did you mean --%s?)", best->name);
}

/* Says what is wrong with the option getopt_long refused ('?' or ':'); opts: the table it had. */
static void opts_error(const char *cmd, int opt, char **argv, const struct option *opts)
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
	else {
		fprintf(stderr, "%s: unknown option '%.*s'", cmd, (int)nlen, name);
		if (name == word && word[0] == '-' && word[1] == '-')
			opts_suggest(word + 2, len - 2, opts);
	}
	fprintf(stderr, "; try '%s --help'\n", cmd);
}

const char *cli_stats_path(const char *cmd, const char *arg, int argc, char **argv)
{
	if (!arg && optind < argc && argv[optind][0] != '-') {
		/*
		 * "conv --stats c.data" means the recording, not a file for the
		 * statistics to replace it: only --stats=FILE may name one.
		 */
		if (cli_path_is_perf_data(argv[optind])) {
			fprintf(stderr, "%s: --stats %s: %s is a perf.data recording, not a file for the "
					"statistics: name one with --stats=FILE, or give --stats last or before "
					"another option for standard output\n",
				cmd, argv[optind], argv[optind]);
			return NULL;
		}
		arg = argv[optind++];
	}
	return arg ? arg : "-";
}

const char *cli_out_arg(const char *cmd, const char *arg)
{
	if (*arg)
		return arg;
	fprintf(stderr, "%s: -o: an empty path names nothing\n", cmd);
	return NULL;
}

/* How many entries a table has before its zero entry. */
static size_t opts_count(const struct cli_opt *t)
{
	size_t n = 0;

	while (t[n].name)
		n++;
	return n;
}

/*
 * getopt_long's tables from the shared options and the command's (in that
 * order: the order "it abbreviates" lists them in): long (a zero entry
 * last) and short (a leading ':' tells a missing value, ':', from an
 * unknown option, '?'), both in one allocation freed with *lopts.
 */
static bool opts_build(const struct cli_opt *own, bool in_order, struct option **lopts, char **sopts)
{
	const struct cli_opt *tabs[2] = { common_opts, own };
	size_t n = opts_count(common_opts) + opts_count(own), nl = 0, ns = 0;
	struct option *l = calloc(1, (n + 1) * sizeof(*l) + 3 * n + 3);
	char *s;

	if (!l)
		return false;
	s = (char *)(l + n + 1);
	if (in_order)
		s[ns++] = '-'; /* getopt returns each operand as option 1 (CLI_OPERAND) */
	s[ns++] = ':';
	for (int t = 0; t < 2; t++) {
		for (const struct cli_opt *o = tabs[t]; o->name; o++) {
			l[nl].name = o->name;
			l[nl].has_arg = o->has_arg;
			l[nl++].val = o->id;
			if (o->id >= 256)
				continue;
			s[ns++] = (char)o->id;
			for (int k = 0; k < o->has_arg; k++)
				s[ns++] = ':';
		}
	}
	s[ns] = 0;
	*lopts = l;
	*sopts = s;
	return true;
}

int cli_opts_parse(const struct cli_cmd *cmd, struct cli_common *com, int argc, char **argv, int *rc)
{
	struct option *lopts;
	char *sopts;
	int opt;

	if (!opts_build(cmd->opts, cmd->operands_in_order, &lopts, &sopts)) {
		fprintf(stderr, "%s: out of memory\n", cmd->name);
		*rc = CLI_EXIT_USAGE;
		return -1;
	}
	opterr = 0;
	optind = 1;
	*rc = CLI_EXIT_OK;
	while (*rc == CLI_EXIT_OK && (opt = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		int taken = opt == CLI_OPERAND ? 0 : opts_take_common(com, cmd->name, opt, optarg);
		enum cli_take t;

		if (taken) {
			*rc = taken < 0 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
			continue;
		}
		if (opt == '?' || opt == ':') {
			opts_error(cmd->name, opt, argv, lopts);
			*rc = CLI_EXIT_USAGE;
			continue;
		}
		t = cmd->take(cmd->ctx, opt, optarg, argc, argv);
		if (t == CLI_TAKE_DONE) {
			free(lopts);
			return -1;
		}
		*rc = t == CLI_TAKE_USAGE ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	free(lopts);
	if (*rc == CLI_EXIT_OK && !opts_finish_common(com, cmd->name))
		*rc = CLI_EXIT_USAGE;
	return *rc == CLI_EXIT_OK ? optind : -1;
}

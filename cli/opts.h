/*
 * The options conv and conv info share (where symbols come from, and how a
 * run talks), and how both commands say that an option is wrong. One table,
 * one parser and one help text, so that the two commands take the same
 * words the same way (--opt V and --opt=V, short forms included).
 */
#ifndef CONV_CLI_OPTS_H
#define CONV_CLI_OPTS_H

#include "pipeline/symjob.h"
#include "procmap/procmap.h"

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_MAX_LIST 256

struct cli_common {
	struct symjob_opts sj;
	struct procmap_opts pm;
	const char *dirs[CLI_MAX_LIST], *urls[CLI_MAX_LIST];
	size_t nr_dirs, nr_urls;
	bool quiet, verbose, strict;
};

/* getopt letters of the shared short options (each command appends its own) */
#define CLI_COMMON_SHORT "d:nk:j:qv"

/* The shared options' help lines, printed by both commands' --help. */
extern const char cli_common_help[];

/*
 * Fills out with the shared long options, then a command's own (own ends
 * with a zero entry), then the zero entry; false when cap is too small.
 */
bool cli_opts_join(const struct option *own, struct option *out, size_t cap);

/*
 * Takes opt (a getopt_long result) when it is a shared option: 1 taken,
 * 0 not a shared option, -1 a bad value (said on stderr; a usage error).
 * cmd is "conv" or "conv info", for the messages.
 */
int cli_common_take(struct cli_common *c, const char *cmd, int opt, const char *arg);

/*
 * After the options: says (stderr) and returns false when two of them
 * contradict each other (-q -v, --offline --debuginfod, -n with a place to
 * look for symbols); otherwise points sj at the lists.
 */
bool cli_common_finish(struct cli_common *c, const char *cmd);

/* "64M" -> 64 MiB (k, M, G: powers of 1024); false unless a positive size. */
bool cli_parse_size(const char *s, uint64_t *out);

/*
 * Says what is wrong with the option getopt_long just refused ('?' or ':',
 * with a leading ':' in the short options): one line, then where help is;
 * for an unknown long option, the option it abbreviates ambiguously or the
 * one of opts (the command's table) it is a typo of ("did you mean").
 */
void cli_opt_error(const char *cmd, int opt, char **argv, const struct option *opts);

/*
 * --stats' value from getopt's optarg: --stats FILE as well as --stats=FILE,
 * as the options with a value take it; a bare --stats (last, or before an
 * option or '-') is standard output, "-". Takes FILE from argv (optind),
 * but not a perf.data recording: NULL then, said (after cmd), a usage error.
 */
const char *cli_stats_path(const char *cmd, const char *arg, int argc, char **argv);

/*
 * -o's value, or NULL (said on stderr) when it is empty: an empty
 * directory would make DIR/NAME the root's /NAME.
 */
const char *cli_out_arg(const char *cmd, const char *arg);

#endif

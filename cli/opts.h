/*
 * The options conv, conv info and conv symbolize share (where symbols come
 * from, and how a run talks), and how every command says that an option is
 * wrong. Each command declares a table of its own options; one parser takes
 * argv against the shared table and the command's, and one help text lists
 * the shared ones, so that the commands take the same words the same way
 * (--opt V and --opt=V, short forms included).
 */
#ifndef CONV_CLI_OPTS_H
#define CONV_CLI_OPTS_H

#include "pipeline/symjob.h"
#include "procmap/procmap.h"

#include <getopt.h> /* no_argument, required_argument, optional_argument */
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

/* The shared options' help lines, printed by both commands' --help. */
extern const char cli_common_help[];

/*
 * One of a command's own options: its long name, its argument (getopt's
 * no_argument, required_argument, optional_argument), and id: the short
 * letter it also has (below 256), or 256 and up for a long option alone.
 */
struct cli_opt {
	const char *name;
	int has_arg;
	int id;
};

/* What a command's take made of one of its options. */
enum cli_take {
	CLI_TAKE_OK,    /* taken: parse on */
	CLI_TAKE_DONE,  /* the command is done (--help, --version): exit 0 */
	CLI_TAKE_USAGE, /* a bad value, said on stderr: a usage error */
};

/* A command's options: the table and what takes them. */
struct cli_cmd {
	const char *name;           /* "conv", "conv info": for the messages */
	const struct cli_opt *opts; /* ends with a zero entry */
	/*
	 * Takes one of opts (by id) with its value (getopt's optarg, NULL for
	 * none); argc and argv for an option that may take the next word
	 * (--stats, cli_stats_path).
	 */
	enum cli_take (*take)(void *ctx, int id, char *arg, int argc, char **argv);
	void *ctx;
	/*
	 * The operands before "--" go to take, in their place among the
	 * options, as id CLI_OPERAND (arg: the operand), for options that
	 * apply to the operands after them (conv --label K=V); the return
	 * value is then the index of the operands after "--".
	 */
	bool operands_in_order;
};

#define CLI_OPERAND 1

/*
 * Parses argv's options: the shared ones into com, cmd's own through its
 * take; an unknown option, a missing or an extra value is said (one line,
 * then where help is; for an unknown long option, the options it
 * abbreviates ambiguously or the one it is a typo of). Then says (stderr)
 * when two options contradict each other (-q -v, --offline --debuginfod,
 * -n with a place to look for symbols), and points com->sj at the lists.
 * Returns the index of the first operand, or -1 when the command ends
 * here, with *rc its exit code (CLI_EXIT_OK after --help, CLI_EXIT_USAGE
 * after a message).
 */
int cli_opts_parse(const struct cli_cmd *cmd, struct cli_common *com, int argc, char **argv, int *rc);

/* "64M" -> 64 MiB (k, M, G: powers of 1024); false unless a positive size. */
bool cli_parse_size(const char *s, uint64_t *out);

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

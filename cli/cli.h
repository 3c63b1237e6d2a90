/*
 * Between the files of the command-line program. Only cli/ prints or exits.
 */
#ifndef CONV_CLI_CLI_H
#define CONV_CLI_CLI_H

#define CONV_VERSION_STRING "0.1.0"

/* Exit codes, documented in conv.1 and the README. */
enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_USAGE = 1,
	CLI_EXIT_INPUT = 2,  /* input unreadable or not perf data */
	CLI_EXIT_LOSS = 3,   /* written, but with data loss (--strict) */
	CLI_EXIT_OUTPUT = 4, /* an output could not be written */
	CLI_EXIT_GREW = 5,   /* conv diff --fail-above: a function grew beyond it */
};

int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif

/*
 * conv: perf.data -> pprof and JFR. This file parses the command word and
 * hands over to the subcommand.
 */
#include "cli/cli.h"

#include "core/mem.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	/*
	 * Past a file-size limit (ulimit -f) write() must fail with EFBIG, so
	 * that conv removes its temp file and says so, instead of dying.
	 */
	signal(SIGXFSZ, SIG_IGN);
	/* conv's tables are large and short-lived: see core/mem.h */
	mem_tune_malloc();
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("conv %s\n", CONV_VERSION_STRING);
		return CLI_EXIT_OK;
	}
	if (argc >= 2 && !strcmp(argv[1], "info"))
		return cmd_info(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "symbolize"))
		return cmd_symbolize(argc - 1, argv + 1);
	return cmd_convert(argc, argv);
}

/*
 * conv: perf.data -> pprof and JFR. This file parses the command word and
 * hands over to the subcommand.
 */
#include "cli/cli.h"

#include "core/mem.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static const char usage_text[] =
	"usage: conv info [--json] [--strict] [--dso] [--mappings] [--jit]\n"
	"                 [--jit-dir DIR] [--buildid-from-disk] [--top N]\n"
	"                 [--debug-dir DIR] [--debuginfod URL] [--offline]\n"
	"                 [--cache-dir DIR] [--kallsyms FILE] [--no-symbolize]\n"
	"                 [-j N] [-q] FILE|-\n"
	"\n"
	"Reads a perf.data recording (file or pipe mode, either byte order,\n"
	"zstd-compressed or not; '-' reads standard input) and prints what it\n"
	"holds: perf version, host, command line, events with their sample\n"
	"counts, records by type, lost samples, build-ids and every problem\n"
	"found in the file, with its offset.\n"
	"\n"
	"  --json       print the same facts as one JSON object\n"
	"  --strict     exit 3 when the file has problems (data was lost)\n"
	"  --dso        also count samples by thread and DSO (the mapping\n"
	"               live in that process when the sample was taken)\n"
	"  --mappings   (with --json) list executable mappings with their\n"
	"               build-id, its source and the samples they got\n"
	"  --jit        (with --json) count samples by JIT symbol (perf-PID.map,\n"
	"               jit-PID.dump)\n"
	"  --jit-dir DIR\n"
	"               where perf-PID.map and jit-PID.dump files are (default /tmp)\n"
	"  --buildid-from-disk\n"
	"               take build-ids the file lacks from the mapped files on\n"
	"               this machine (for recordings made here)\n"
	"  --top N      symbolize; list the N functions with most self samples\n"
	"  --debug-dir DIR      look for debug info here first (repeatable)\n"
	"  --debuginfod URL     debuginfod server (repeatable; default\n"
	"                       $DEBUGINFOD_URLS)\n"
	"  --offline            no network: caches and local files only\n"
	"  --cache-dir DIR      download cache (default $DEBUGINFOD_CACHE_PATH,\n"
	"                       else $XDG_CACHE_HOME/conv)\n"
	"  --kallsyms FILE      kernel symbols of the recording machine\n"
	"  --no-symbolize       do not look for symbols\n"
	"  --full-signatures    C++ names with return type and parameters\n"
	"  -j N         symbolize with N threads   -q  no progress line\n"
	"  -h, --help   show this help\n"
	"  --version    show the version\n"
	"\n"
	"Exit codes: 0 read (problems are listed), 1 usage error,\n"
	"2 input unreadable or not perf data, 3 problems found with --strict.\n"
	"See conv(1).\n";

int main(int argc, char **argv)
{
	/*
	 * Past a file-size limit (ulimit -f) write() must fail with EFBIG, so
	 * that conv removes its temp file and says so, instead of dying.
	 */
	signal(SIGXFSZ, SIG_IGN);
	/* conv's tables are large and short-lived: see core/mem.h */
	mem_tune_malloc();
	if (argc >= 2 && !strcmp(argv[1], "info") &&
	    (argc == 2 || !strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
		fputs(usage_text, argc == 2 ? stderr : stdout);
		return argc == 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("conv %s\n", CONV_VERSION_STRING);
		return CLI_EXIT_OK;
	}
	if (argc >= 2 && !strcmp(argv[1], "info"))
		return cmd_info(argc - 1, argv + 1);
	return cmd_convert(argc, argv);
}

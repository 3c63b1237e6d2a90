/*
 * conv: perf.data -> pprof and JFR. This file parses the command word and
 * hands over to the subcommand.
 */
#include "cli/cli.h"
#include "cli/text.h"

#include "core/cleanup.h"
#include "core/mem.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * SIGTERM (a CI timeout), SIGINT, SIGHUP: conv's temp files go (outputs
 * not renamed yet, downloads in flight), the --stats file is completed,
 * and the exit code is 128 + the signal, as a shell reports it.
 */
static pthread_t main_thread;

static void on_stop(int sig)
{
	/*
	 * On the main thread only: what it does between steps (the --stats
	 * record and its disarming) can then be kept whole by blocking the
	 * signals there.
	 */
	if (!pthread_equal(pthread_self(), main_thread)) {
		pthread_kill(main_thread, sig);
		return;
	}
	/* the shell's prompt comes next: not on the progress line */
	cli_progress_clear_on_signal();
	cleanup_run(sig);
	_exit(128 + sig);
}

static void catch_stop_signals(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa;

	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

int main(int argc, char **argv)
{
	int rc;

	/*
	 * Past a file-size limit (ulimit -f) write() must fail with EFBIG, so
	 * that conv removes its temp file and says so, instead of dying.
	 */
	signal(SIGXFSZ, SIG_IGN);
	catch_stop_signals();
	/* conv's tables are large and short-lived: see core/mem.h */
	mem_tune_malloc();
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("conv %s\n", CONV_VERSION_STRING);
		return CLI_EXIT_OK;
	}
	if (argc >= 2 && !strcmp(argv[1], "info"))
		rc = cmd_info(argc - 1, argv + 1);
	else if (argc >= 2 && !strcmp(argv[1], "diff"))
		rc = cmd_diff(argc - 1, argv + 1);
	else if (argc >= 2 && !strcmp(argv[1], "symbolize"))
		rc = cmd_symbolize(argc - 1, argv + 1);
	else
		rc = cmd_convert(argc, argv);
	/* whichever way a command ended, no progress line is left behind */
	cli_progress_clear_on_signal();
	return rc;
}

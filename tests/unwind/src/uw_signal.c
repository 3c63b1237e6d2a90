/* Half of the time in a signal handler: ITIMER_PROF sends SIGPROF every
 * 2 ms of CPU time and the handler burns about 1 ms in sig_burn. Stacks in
 * the handler are sig_burn <- on_prof <- __restore_rt (libc's signal
 * trampoline, its CFI marked as a signal frame) <- the interrupted function
 * (main_spin or main_step, at the interrupted instruction, not a return
 * address) <- main. Built without frame pointers. */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include "uw_common.h"

volatile uint64_t uw_sink;
static volatile uint64_t ticks;

UW_FRAME static uint64_t sig_burn(uint64_t x)
{
	for (int i = 0; i < 400000; i++)
		x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ull + (uint64_t)i;
	return x;
}

UW_FRAME static void on_prof(int sig)
{
	uw_sink ^= sig_burn(ticks++ + (uint64_t)sig);
}

UW_FRAME static uint64_t main_step(uint64_t x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 2862933555777941757ull + 3037000493ull;
	return x;
}

UW_FRAME static uint64_t main_spin(uint64_t x)
{
	for (int i = 0; i < 100; i++)
		x = main_step(x) ^ (x >> 3);
	return x;
}

int main(int argc, char **argv)
{
	double end = uw_now_ms() + uw_run_ms(argc, argv);
	struct sigaction sa;
	struct itimerval it = {{0, 2000}, {0, 2000}};
	uint64_t x = 1;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &it, NULL))
		return 1;
	do
		x = main_spin(x);
	while (uw_now_ms() < end);
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_PROF, &it, NULL);
	uw_sink ^= x;
	return 0;
}

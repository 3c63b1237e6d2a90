/*
 * The conversion options of the tests that convert an input in memory and
 * compare what comes out (the sample cache's test and the round-trip
 * fuzzer): no symbolization, no network, no file outside the input (the
 * paths do not exist), every event kept and labelled by CPU.
 */
#ifndef CONV_TESTS_CONVOPTS_H
#define CONV_TESTS_CONVOPTS_H

#include "pipeline/convert.h"

#include <stdbool.h>
#include <string.h>

#define CONVOPTS_NOWHERE "/nonexistent/conv-test"

static inline void convopts_offline(struct convert_opts *co, bool no_sample_cache)
{
	memset(co, 0, sizeof(*co));
	co->pm.kernel_notes = CONVOPTS_NOWHERE "/notes";
	co->pm.jit_dir = CONVOPTS_NOWHERE "/jit";
	co->sj.no_symbolize = true;
	co->sj.offline = true;
	co->sj.jobs = 1;
	co->sj.cache_dir = CONVOPTS_NOWHERE "/cache";
	co->keep_events = true;
	co->label_cpu = true;
	co->no_sample_cache = no_sample_cache;
}

#endif

/*
 * A library that only calls back: it is on every stack of the worker but
 * never the sampled leaf, so perf record writes no build-id for it (perf
 * keeps those of objects with sample hits only).
 */
__attribute__((noinline)) void tramp_call(void (*fn)(void))
{
	fn();
	__asm__ volatile("" ::: "memory"); /* keep the call a call, not a tail jump */
}

#ifdef TRAMP_VARIANT
/* a later build of the library: other code, so another build-id */
int tramp_variant(int x)
{
	return x * 3 + 1;
}
#endif

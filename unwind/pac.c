/*
 * Pointer-authentication codes off arm64 return addresses (see unwind.h):
 * the mask is derived from the recording's address width, not from the
 * kernel's, which perf.data does not carry.
 */
#include "unwind/unwind.h"

unsigned uw_va_bits_of(uint64_t highest)
{
	unsigned bits;

	if (!highest)
		return UW_VA_BITS_DEFAULT;
	/* asked once per unwound sample: the bit length of highest - 1 without a loop */
	bits = highest == 1 ? 0 : 64 - (unsigned)__builtin_clzll(highest - 1);
	if (bits < 39)
		bits = 39;
	if (bits > 52)
		bits = 52;
	return bits;
}

uint64_t uw_strip_pac(enum uw_arch arch, unsigned va_bits, uint64_t addr)
{
	if (arch != UW_ARCH_ARM64 || va_bits >= 55 || (addr >> 55 & 1))
		return addr;
	return addr & ((UINT64_C(1) << va_bits) - 1);
}

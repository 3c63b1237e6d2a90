/*
 * Hex digits, as every text conv reads writes them (kallsyms, perf maps,
 * build-ids): the one place that says what a hex digit is.
 */
#ifndef CONV_CORE_HEX_H
#define CONV_CORE_HEX_H

/* The value of hex digit c (either case), or -1. */
static inline int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif

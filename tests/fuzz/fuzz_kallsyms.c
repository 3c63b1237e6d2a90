/*
 * libFuzzer target for the kallsyms parser (symbolize/kallsyms.h).
 *
 * The input is kallsyms text ("ADDR TYPE NAME[\t[module]]" lines). It is
 * parsed whole, then its two halves are parsed into one struct the way
 * symjob loads a second file after a first one failed (kallsyms_parse() does
 * not append to a filled table: that is not part of its contract). Each
 * table is checked: sorted by address, every name and module a valid
 * string, and kallsyms_lookup() agrees with a linear search at and around
 * every symbol, at _text and at the ends of the address space.
 */
#include "fuzz_common.h"

#include "symbolize/kallsyms.h"

volatile uint64_t fuzz_sink;

/* What kallsyms_lookup() must return: the last symbol at or below addr, NULL past the last one. */
static const struct ksym *linear_lookup(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = 0;

	/* the number of symbols at or below addr; the array is sorted */
	while (lo < k->nr && k->syms[lo].addr <= addr)
		lo++;
	if (!lo || lo == k->nr)
		return NULL;
	return &k->syms[lo - 1];
}

static uint64_t check_lookup(const struct kallsyms *k, uint64_t addr)
{
	const struct ksym *s = kallsyms_lookup(k, addr);
	const struct ksym *want = linear_lookup(k, addr);

	/* equal addresses may hold several names: any of them is right */
	FUZZ_CHECK((s == NULL) == (want == NULL));
	if (!s)
		return 0;
	FUZZ_CHECK(s >= k->syms && s < k->syms + k->nr);
	FUZZ_CHECK(s->addr == want->addr);
	FUZZ_CHECK(s->addr <= addr);
	return s->addr + fuzz_touch_str(kallsyms_str(k, s->name));
}

static uint64_t check_table(const struct kallsyms *k)
{
	uint64_t t = k->nr + k->text + k->malformed;

	for (size_t i = 0; i < k->nr; i++) {
		const struct ksym *s = &k->syms[i];
		const char *name = kallsyms_str(k, s->name);

		FUZZ_CHECK(s->addr != 0); /* address 0 is kptr_restrict's: never kept */
		FUZZ_CHECK(i == 0 || k->syms[i - 1].addr <= s->addr);
		FUZZ_CHECK(s->name < k->buf_len && s->module < k->buf_len);
		/* a NUL byte in a name is kept (the name reads shorter), unlike in perf maps */
		FUZZ_CHECK(strchr(name, '\n') == NULL && strchr(name, '\t') == NULL);
		t += fuzz_touch_str(name) + fuzz_touch_str(kallsyms_str(k, s->module));
	}
	/* around every symbol, but bounded: a few thousand lookups per input */
	for (size_t i = 0; i < k->nr && i < 512; i++) {
		uint64_t a = k->syms[i].addr;

		t += check_lookup(k, a) + check_lookup(k, a - 1) + check_lookup(k, a + 1);
	}
	t += check_lookup(k, 0) + check_lookup(k, UINT64_MAX) + check_lookup(k, k->text);
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kallsyms k;
	enum conv_err err;
	uint64_t t = 0;

	kallsyms_init(&k);
	err = kallsyms_parse(&k, (const char *)data, size);
	FUZZ_CHECK(err == CONV_E_OK || err == CONV_E_FORMAT || err == CONV_E_NOMEM);
	FUZZ_CHECK(err != CONV_E_FORMAT || k.nr == 0);
	FUZZ_CHECK(err != CONV_E_OK || k.nr > 0);
	if (err == CONV_E_OK)
		t += check_table(&k);
	kallsyms_release(&k);

	/*
	 * symjob loads perf's copy, then /proc/kallsyms, into the same struct
	 * when the first load fails: do the same with the two halves.
	 */
	kallsyms_init(&k);
	err = kallsyms_parse(&k, (const char *)data, size / 2);
	if (err == CONV_E_OK)
		t += check_table(&k);
	else if (err == CONV_E_FORMAT &&
		 kallsyms_parse(&k, (const char *)data + size / 2, size - size / 2) == CONV_E_OK)
		t += check_table(&k);
	kallsyms_release(&k);
	fuzz_sink += t;
	return 0;
}

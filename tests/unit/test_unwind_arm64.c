/*
 * The arm64 walk on hand-made stacks and rules: return addresses signed
 * with a PAC, leaves whose return address is still in LR, PLT stubs
 * without CFI, and the vDSO's signal trampoline over a hand-built
 * rt_sigframe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/unit/testutil.h"
#include "unwind/unwind.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SP0 0xfffff0001000ull /* a 48-bit VA stack */
#define LR 30
#define FP 29
#define SP 31

/* A PAC in bits 48..54 and 56..63 of a user address (bit 55 clear). */
#define PAC(a) ((a) | 0x3a7f000000000000ull | 0x0012000000000000ull)

struct stk {
	uint8_t bytes[8192];
	size_t len;
};

static void put(struct stk *s, uint64_t addr, uint64_t v)
{
	size_t off = (size_t)(addr - SP0);

	for (int i = 0; i < 8; i++)
		s->bytes[off + (size_t)i] = (uint8_t)(v >> (8 * i));
	if (off + 8 > s->len)
		s->len = off + 8;
}

struct range {
	uint64_t lo, hi;
	const struct uw_rule *rule; /* NULL: in an object without CFI */
};

struct fake {
	const struct range *r;
	size_t n;
	uint64_t looked_up[16];
	size_t nlook;
};

static enum uw_find fake_find(void *ctx, uint64_t pc, const struct uw_rule **rule)
{
	struct fake *f = ctx;

	if (f->nlook < 16)
		f->looked_up[f->nlook++] = pc;
	for (size_t i = 0; i < f->n; i++) {
		if (pc >= f->r[i].lo && pc < f->r[i].hi) {
			*rule = f->r[i].rule;
			return f->r[i].rule ? UW_FIND_RULE : UW_FIND_NO_CFI;
		}
	}
	return UW_FIND_UNMAPPED;
}

/* A function body after `stp x29, x30, [sp, #-off]!`: CFA = sp + off, x29 at CFA - off, x30 at CFA - off + 8. */
static struct uw_rule *rule_body(int64_t off)
{
	struct uw_rule *r = calloc(1, sizeof(*r) + 2 * sizeof(r->regs[0]));

	r->cfa_reg = SP;
	r->cfa_off = off;
	r->ra = LR;
	r->nr = 2;
	r->regs[0].reg = FP;
	r->regs[0].how = UW_AT;
	r->regs[0].off = -off;
	r->regs[1].reg = LR;
	r->regs[1].how = UW_AT;
	r->regs[1].off = -off + 8;
	return r;
}

/* A leaf, or a prologue before the store: CFA = sp, x30 unchanged (no rule for it). */
static struct uw_rule *rule_leaf(void)
{
	struct uw_rule *r = calloc(1, sizeof(*r));

	r->cfa_reg = SP;
	r->cfa_off = 0;
	r->ra = LR;
	return r;
}

/* The vDSO's __kernel_rt_sigreturn: a signal frame, CFA = x29, x29 and x30 at CFA and CFA + 8. */
static struct uw_rule *rule_sigreturn(void)
{
	struct uw_rule *r = rule_body(0);

	r->signal = true;
	r->cfa_reg = FP;
	r->regs[0].off = 0;
	r->regs[1].off = 8;
	return r;
}

/* A root: the return address undefined (_start's CFI). */
static struct uw_rule *rule_root(void)
{
	struct uw_rule *r = calloc(1, sizeof(*r) + sizeof(r->regs[0]));

	r->cfa_reg = SP;
	r->ra = LR;
	r->nr = 1;
	r->regs[0].reg = LR;
	r->regs[0].how = UW_UNDEF;
	return r;
}

static struct uw_regs regs_at(uint64_t pc, uint64_t sp, uint64_t lr)
{
	struct uw_regs r;

	memset(&r, 0, sizeof(r));
	r.pc = pc;
	r.r[SP] = sp;
	r.r[LR] = lr;
	r.valid = 1ull << SP | 1ull << LR;
	return r;
}

static void walk(struct fake *f, unsigned va_bits, const struct uw_regs *regs, const struct stk *s,
		 struct uw_frame *pcs, size_t max, struct uw_result *res)
{
	struct uw_source src = { .find = fake_find, .ctx = f, .va_bits = va_bits };
	uint64_t skip = regs->r[SP] - SP0;
	struct uw_stack st = { .data = s->bytes + skip, .len = s->len - skip, .big_endian = false };

	uw_unwind(UW_ARCH_ARM64, &src, regs, &st, pcs, max, res);
}

/*
 * Saved return addresses signed: each is stripped before it is looked up
 * and returned, and the chain reaches the root (unstripped, the first
 * saved one is in no mapping).
 */
static void test_signed_return_addresses(void **state)
{
	struct uw_rule *body = rule_body(32), *root = rule_root();
	struct range rs[] = { { 0xaaaa00001000, 0xaaaa00002000, body },
			      { 0xaaaa00003000, 0xaaaa00003100, root } };
	struct fake f = { rs, 2, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_at(0xaaaa00001010, SP0, 0x1);
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put(&s, SP0 + 8, PAC(0xaaaa00001100));      /* frame 0: CFA SP0 + 32 */
	put(&s, SP0 + 32 + 8, PAC(0xaaaa00003010)); /* frame 1: CFA SP0 + 64 */
	walk(&f, 48, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.stop, UW_STOP_ROOT);
	assert_int_equal(res.n, 3);
	assert_int_equal(pcs[1].pc, 0xaaaa00001100);
	assert_int_equal(pcs[2].pc, 0xaaaa00003010);
	assert_int_equal(f.looked_up[1], 0xaaaa000010ff);
	/* no width given: arm64 Linux's usual 48 bits */
	f.nlook = 0;
	walk(&f, 0, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 3);
	assert_int_equal(pcs[2].pc, 0xaaaa00003010);
	/* a 39-bit width clears bits 39..47 as well */
	put(&s, SP0 + 8, 0x7f00001100ull | 0x007fff8000000000ull);
	rs[0].lo = 0x7f00001000;
	rs[0].hi = 0x7f00002000;
	regs.pc = 0x7f00001010;
	walk(&f, 39, &regs, &s, pcs, 2, &res);
	assert_int_equal(pcs[1].pc, 0x7f00001100);
	free(body);
	free(root);
}

/*
 * A sample in a leaf: the caller is the recorded LR (signed by a paciasp
 * that ran, stripped), looked up inside its call, at the same stack
 * pointer; the caller's own CFI goes on from there.
 */
static void test_leaf_ra_in_lr(void **state)
{
	struct uw_rule *leaf = rule_leaf(), *body = rule_body(16), *root = rule_root();
	struct range rs[] = { { 0xaaaa00005000, 0xaaaa00005100, leaf },
			      { 0xaaaa00001000, 0xaaaa00002000, body },
			      { 0xaaaa00003000, 0xaaaa00003100, root } };
	struct fake f = { rs, 3, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_at(0xaaaa00005008, SP0, PAC(0xaaaa00001044));
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put(&s, SP0 + 8, 0xaaaa00003010);
	walk(&f, 48, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.stop, UW_STOP_ROOT);
	assert_int_equal(res.n, 3);
	assert_int_equal(pcs[0].pc, 0xaaaa00005008);
	assert_true(pcs[0].exact);
	assert_int_equal(pcs[1].pc, 0xaaaa00001044);
	assert_false(pcs[1].exact);
	assert_int_equal(f.looked_up[1], 0xaaaa00001043);
	assert_int_equal(pcs[2].pc, 0xaaaa00003010);
	free(leaf);
	free(body);
	free(root);
}

/*
 * A return address whose CFI says the return address is still in LR: that
 * frame has called, LR held its own PC; the walk stops instead of
 * repeating the frame.
 */
static void test_lr_not_for_callers(void **state)
{
	struct uw_rule *body = rule_body(16), *leaf = rule_leaf();
	struct range rs[] = { { 0xaaaa00001000, 0xaaaa00002000, body },
			      { 0xaaaa00006000, 0xaaaa00006100, leaf } };
	struct fake f = { rs, 2, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_at(0xaaaa00001010, SP0, 0xaaaa00006020);
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put(&s, SP0 + 8, 0xaaaa00006020);
	walk(&f, 48, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 2);
	assert_int_equal(pcs[1].pc, 0xaaaa00006020);
	assert_int_equal(res.stop, UW_STOP_REG);
	free(body);
	free(leaf);
}

/*
 * A sample in a PLT stub (a known object, no CFI there): the caller is in
 * LR, the stack pointer the stub's; not the frame pointer's record, which
 * is the caller's caller's. A frame that is not where the thread was gets
 * no such guess.
 */
static void test_plt_stub(void **state)
{
	struct uw_rule *body = rule_body(16), *root = rule_root();
	struct range rs[] = { { 0xaaaa00000400, 0xaaaa00000500, NULL },
			      { 0xaaaa00001000, 0xaaaa00002000, body },
			      { 0xaaaa00003000, 0xaaaa00003100, root } };
	struct fake f = { rs, 3, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_at(0xaaaa00000408, SP0, PAC(0xaaaa00001044));
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	regs.r[FP] = SP0 + 64;
	regs.valid |= 1ull << FP;
	put(&s, SP0 + 8, 0xaaaa00003010);
	put(&s, SP0 + 64, 0);
	put(&s, SP0 + 72, 0xaaaa00003020);
	walk(&f, 48, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.stop, UW_STOP_ROOT);
	assert_int_equal(res.n, 3);
	assert_int_equal(pcs[1].pc, 0xaaaa00001044);
	assert_int_equal(pcs[2].pc, 0xaaaa00003010);
	/* a return address into the stub's object: by the frame pointer, as before */
	put(&s, SP0, SP0 + 64); /* the frame's saved x29 */
	put(&s, SP0 + 8, 0xaaaa00000480);
	regs.pc = 0xaaaa00001010;
	regs.r[FP] = SP0 + 64;
	walk(&f, 48, &regs, &s, pcs, 8, &res);
	assert_int_equal(pcs[1].pc, 0xaaaa00000480);
	assert_int_equal(pcs[2].pc, 0xaaaa00003020);
	free(body);
	free(root);
}

/* struct rt_sigframe at sp: siginfo (128), ucontext, its sigcontext 176 bytes in. */
#define SC (SP0 + 1024 + 128 + 176)

/*
 * A signal handler's sample: handler <- __kernel_rt_sigreturn (the
 * handler's LR) <- the interrupted function, at the sigcontext's PC
 * (exact) with the sigcontext's registers, whose caller is in its LR (a
 * leaf was interrupted; the frame record the CFI would give instead names
 * the LR, not the PC).
 */
static void test_sigreturn(void **state)
{
	struct uw_rule *handler = rule_body(32), *sig = rule_sigreturn();
	struct uw_rule *leaf = rule_leaf(), *root = rule_root();
	struct range rs[] = { { 0xaaaa00001000, 0xaaaa00002000, handler },
			      { 0xffffb7ff0800, 0xffffb7ff0810, sig },
			      { 0xaaaa00005000, 0xaaaa00005100, leaf },
			      { 0xaaaa00003000, 0xaaaa00003100, root } };
	struct fake f = { rs, 4, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	uint64_t frame = SP0 + 1024, isp = SP0 + 6000;
	struct uw_regs regs = regs_at(0xaaaa00001010, frame - 32, 0xffffb7ff0808);
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put(&s, frame - 32, isp - 16);             /* the handler's saved x29: the kernel's frame record */
	put(&s, frame - 24, 0xffffb7ff0808);       /* its saved LR: the trampoline */
	put(&s, isp - 16, 0);                      /* the frame record: interrupted x29, LR */
	put(&s, isp - 8, 0xaaaa00003010);
	for (unsigned i = 0; i < 31; i++)
		put(&s, SC + 8 + 8 * i, 0x1000 + i);
	put(&s, SC + 8 + 8 * 30, PAC(0xaaaa00003010)); /* LR */
	put(&s, SC + 8 + 8 * 31, isp);             /* sp */
	put(&s, SC + 8 + 8 * 32, 0xaaaa00005020);  /* pc */
	walk(&f, 48, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.stop, UW_STOP_ROOT);
	assert_int_equal(res.n, 4);
	assert_int_equal(pcs[1].pc, 0xffffb7ff0808);
	assert_false(pcs[1].exact);
	assert_int_equal(f.looked_up[1], 0xffffb7ff0807);
	assert_int_equal(pcs[2].pc, 0xaaaa00005020);
	assert_true(pcs[2].exact);
	assert_int_equal(f.looked_up[2], 0xaaaa00005020);
	assert_int_equal(pcs[3].pc, 0xaaaa00003010);
	/* the sigcontext past the copy: the walk says so, it does not guess */
	s.len = SC + 8 + 8 * 32 - SP0;
	walk(&f, 48, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 2);
	assert_int_equal(res.stop, UW_STOP_COPY);
	free(handler);
	free(sig);
	free(leaf);
	free(root);
}

/*
 * A minimal arm64 ELF object without CFI: one executable PT_LOAD at 0 whose
 * code at 0x80 is nop; mov x8, #139; svc #0 (the vDSO's
 * __kernel_rt_sigreturn and the nop before it), then a nop, and, when
 * `cut`, the file ends after the mov.
 */
static void write_sigreturn_elf(const char *path, bool cut)
{
	static const uint32_t code[] = { 0xd503201f, 0xd2801168, 0xd4000001, 0xd503201f };
	unsigned char img[0x80 + sizeof(code)];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	size_t len = cut ? 0x80 + 8 : sizeof(img);
	FILE *f;

	memset(img, 0, sizeof(img));
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_AARCH64;
	eh.e_version = EV_CURRENT;
	eh.e_entry = 0x1000;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_filesz = ph.p_memsz = sizeof(img);
	ph.p_align = 0x1000;
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + sizeof(eh), &ph, sizeof(ph));
	for (size_t i = 0; i < sizeof(code) / sizeof(code[0]); i++)
		for (int b = 0; b < 4; b++)
			img[0x80 + 4 * i + (size_t)b] = (unsigned char)(code[i] >> (8 * b));
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(img, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/*
 * The trampoline without CFI (Debian 12's arm64 vDSO has no .eh_frame) is
 * a signal frame by its code: from the nop before it (a return address to
 * it is looked up there) to the svc; the svc's return (an exact PC after
 * it) has no rule of its own, the walk asks for PC - 1. Not on x86, and
 * not where the file ends before the svc.
 */
static void test_sigreturn_by_code(void **state)
{
	char dir[4096], path[4200];
	struct uw_cfi *c;
	const struct uw_rule *r;

	(void)state;
	assert_true(tu_tmpdir_make(dir, sizeof(dir), "uwa64"));
	tu_strf(path, sizeof(path), "%s/sigreturn.so", dir);
	write_sigreturn_elf(path, false);
	assert_int_equal(uw_cfi_open(&c, UW_ARCH_ARM64, path, NULL), CONV_E_OK);
	for (uint64_t va = 0x80; va < 0x8c; va++) {
		r = uw_cfi_rule(c, va);
		assert_non_null(r);
		assert_true(r->signal);
	}
	assert_null(uw_cfi_rule(c, 0x7c));
	assert_null(uw_cfi_rule(c, 0x8c));
	/* asked again: the same answer from the cache */
	assert_non_null(uw_cfi_rule(c, 0x84));
	assert_null(uw_cfi_rule(c, 0x8c));
	uw_cfi_close(c);
	assert_int_equal(uw_cfi_open(&c, UW_ARCH_X86_64, path, NULL), CONV_E_OK);
	assert_null(uw_cfi_rule(c, 0x84));
	uw_cfi_close(c);
	write_sigreturn_elf(path, true);
	assert_int_equal(uw_cfi_open(&c, UW_ARCH_ARM64, path, NULL), CONV_E_OK);
	assert_null(uw_cfi_rule(c, 0x84));
	uw_cfi_close(c);
	tu_tmpdir_drop(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signed_return_addresses),
		cmocka_unit_test(test_leaf_ra_in_lr),
		cmocka_unit_test(test_lr_not_for_callers),
		cmocka_unit_test(test_plt_stub),
		cmocka_unit_test(test_sigreturn),
		cmocka_unit_test(test_sigreturn_by_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

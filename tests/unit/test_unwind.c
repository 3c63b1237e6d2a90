/*
 * The walk on hand-made stacks and rules: what it returns and why it
 * stops, independent of any object file (the CFI compiler is checked on
 * real binaries by tests/unwind).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "unwind/unwind.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define SP0 0x7ffc00001000ull

/* A stack copy of 64-bit little-endian words from SP0. */
struct stk {
	uint8_t bytes[4096];
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

/* Rules by PC range: [lo, hi) -> rule (NULL: an object without CFI). */
struct range {
	uint64_t lo, hi;
	const struct uw_rule *rule;
	bool no_file;
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
			if (f->r[i].no_file)
				return UW_FIND_NO_FILE;
			*rule = f->r[i].rule;
			return f->r[i].rule ? UW_FIND_RULE : UW_FIND_NO_CFI;
		}
	}
	return UW_FIND_UNMAPPED;
}

/* x86-64: CFA = rsp + off, return address at CFA - 8 (a function body after its pushes). */
static struct uw_rule *rule_sp(int64_t off)
{
	struct uw_rule *r = calloc(1, sizeof(*r) + sizeof(r->regs[0]));

	r->cfa_reg = 7;
	r->cfa_off = off;
	r->ra = 16;
	r->nr = 1;
	r->regs[0].reg = 16;
	r->regs[0].how = UW_AT;
	r->regs[0].off = -8;
	return r;
}

/*
 * A signal trampoline's rule, glibc's __restore_rt in short: CFA = rsp, the
 * interrupted rip and rsp saved in the sigcontext at CFA + 40 and CFA + 48.
 */
static struct uw_rule *rule_sigframe(void)
{
	struct uw_rule *r = calloc(1, sizeof(*r) + 2 * sizeof(r->regs[0]));

	r->signal = true;
	r->cfa_reg = 7;
	r->cfa_off = 0;
	r->ra = 16;
	r->nr = 2;
	r->regs[0].reg = 16;
	r->regs[0].how = UW_AT;
	r->regs[0].off = 40;
	r->regs[1].reg = 7;
	r->regs[1].how = UW_AT;
	r->regs[1].off = 48;
	return r;
}

/* rule_sigframe's frame at SP0: it interrupted rip with rsp, whose caller (return address at rsp + 8) is 0. */
static void put_sigframe(struct stk *s, uint64_t rip, uint64_t rsp)
{
	put(s, SP0 + 40, rip);
	put(s, SP0 + 48, rsp);
	put(s, rsp + 8, 0);
}

static struct uw_regs regs_at(uint64_t pc, uint64_t sp)
{
	struct uw_regs r;

	memset(&r, 0, sizeof(r));
	r.pc = pc;
	r.r[7] = sp;
	r.valid = 1ull << 7;
	return r;
}

/* regs_at with the frame pointer (rbp) recorded as fp */
static struct uw_regs regs_fp(uint64_t pc, uint64_t sp, uint64_t fp)
{
	struct uw_regs r = regs_at(pc, sp);

	r.r[6] = fp;
	r.valid |= 1ull << 6;
	return r;
}

static void walk(struct fake *f, const struct uw_regs *regs, const struct stk *s, struct uw_frame *pcs,
		 size_t max, struct uw_result *res)
{
	struct uw_source src = { .find = fake_find, .ctx = f };
	/* the copy starts at the sampled stack pointer: the bytes from there on */
	uint64_t skip = regs->r[7] - SP0;
	struct uw_stack st = { .data = s->bytes + skip, .len = s->len - skip, .big_endian = false };

	uw_unwind(UW_ARCH_X86_64, &src, regs, &st, pcs, max, res);
}

/* Three frames by CFI, the last one's return address 0: a root. */
static void test_cfi_chain(void **state)
{
	struct uw_rule *r16 = rule_sp(16), *r32 = rule_sp(32);
	struct range rs[] = { { 0x1000, 0x2000, r16, false }, { 0x2000, 0x3000, r32, false } };
	struct fake f = { rs, 2, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_at(0x1010, SP0);
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put(&s, SP0 + 8, 0x2020);        /* frame 0: CFA SP0+16, RA at SP0+8 */
	put(&s, SP0 + 16 + 24, 0x1050);  /* frame 1: CFA SP0+48, RA at SP0+40 */
	put(&s, SP0 + 48 + 8, 0);        /* frame 2: CFA SP0+64, RA 0 */
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 3);
	assert_int_equal(res.stop, UW_STOP_ROOT);
	assert_int_equal(pcs[0].pc, 0x1010);
	assert_int_equal(pcs[1].pc, 0x2020);
	assert_int_equal(pcs[2].pc, 0x1050);
	assert_true(pcs[0].exact);
	assert_false(pcs[1].exact);
	/* callers are looked up inside their call */
	assert_int_equal(f.looked_up[0], 0x1010);
	assert_int_equal(f.looked_up[1], 0x201f);
	free(r16);
	free(r32);
}

/* A return address beyond the copy: the walk says the copy ended. */
static void test_copy_ended(void **state)
{
	struct uw_rule *r16 = rule_sp(16);
	struct range rs[] = { { 0x1000, 0x2000, r16, false } };
	struct fake f = { rs, 1, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_at(0x1010, SP0);
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put(&s, SP0 + 8, 0x1020);
	/* the next return address would be at SP0 + 24: one word short */
	put(&s, SP0 + 16, 0);
	s.len = 20;
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 2);
	assert_int_equal(res.stop, UW_STOP_COPY);
	assert_string_equal(uw_stop_text(res.stop), "stack copy ended");
	free(r16);
}

/* A rule that leaves the stack pointer where it was: no endless loop. */
static void test_sp_not_advancing(void **state)
{
	/* CFA = rsp + 8, return address at CFA - 8, and a rule giving the caller rsp = CFA - 8 */
	struct uw_rule *r0 = realloc(rule_sp(8), sizeof(struct uw_rule) + 2 * sizeof(struct uw_reg_rule));
	struct range rs[] = { { 0x1000, 0x2000, r0, false } };
	struct fake f = { rs, 1, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_at(0x1010, SP0);
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	r0->nr = 2;
	memset(&r0->regs[1], 0, sizeof(r0->regs[1]));
	r0->regs[1].reg = 7;
	r0->regs[1].how = UW_VAL;
	r0->regs[1].off = -8;
	put(&s, SP0, 0x1020);
	put(&s, SP0 + 8, 0);
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.stop, UW_STOP_SP);
	free(r0);
}

/* The return-address column undefined (_start, a thread's clone): the outermost frame. */
static void test_undefined_ra_is_root(void **state)
{
	struct uw_rule *r = calloc(1, sizeof(*r) + sizeof(r->regs[0]));
	struct range rs[] = { { 0x1000, 0x2000, r, false } };
	struct fake f = { rs, 1, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_at(0x1010, SP0);
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	r->cfa_reg = 7;
	r->cfa_off = 8;
	r->ra = 16;
	r->nr = 1;
	r->regs[0].reg = 16;
	r->regs[0].how = UW_UNDEF;
	put(&s, SP0, 0xdead);
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 1);
	assert_int_equal(res.stop, UW_STOP_ROOT);
	free(r);
}

/* No CFI: the frame pointer where it is a plausible frame, else the reason with the object. */
static void test_frame_pointer_fallback(void **state)
{
	struct range rs[] = { { 0x1000, 0x2000, NULL, false }, { 0x4000, 0x5000, NULL, true } };
	struct fake f = { rs, 2, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	/* JIT frame: rbp = SP0 + 32, [rbp] = saved rbp (SP0 + 64), [rbp + 8] = return into 0x1000 */
	struct uw_regs regs = regs_fp(0x4010, SP0, SP0 + 32);
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put(&s, SP0 + 32, SP0 + 64);
	put(&s, SP0 + 40, 0x1100);
	/* the object without CFI, its frame pointer saved below the stack pointer: implausible */
	put(&s, SP0 + 64, 8);
	put(&s, SP0 + 72, 0x1200);
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(pcs[0].pc, 0x4010);
	assert_int_equal(pcs[1].pc, 0x1100);
	assert_int_equal(pcs[2].pc, 0x1200);
	assert_int_equal(res.n, 3);
	assert_int_equal(res.stop, UW_STOP_NO_CFI);
	assert_int_equal(res.stop_at, 0x11ff); /* inside the call that returns to 0x1200, no CFI there */
}

/* A frame pointer that was no frame: the address it gives is in no mapping, so it is no frame either. */
static void test_frame_pointer_guess_dropped(void **state)
{
	struct range rs[] = { { 0x1000, 0x2000, NULL, false } };
	struct fake f = { rs, 1, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_fp(0x1010, SP0, SP0 + 16);
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put(&s, SP0 + 16, SP0 + 64);
	put(&s, SP0 + 24, 0x99999999);  /* "return address" in no mapping */
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 1);
	assert_int_equal(res.stop, UW_STOP_NO_CFI);
	assert_int_equal(res.stop_at, 0x1010); /* the object the guess went through, not the bad address */
}

/* A frame-pointer chain that ends with a saved 0 (_start, a thread start, Go's goexit): the root. */
static void test_frame_pointer_chain_end(void **state)
{
	struct range rs[] = { { 0x4000, 0x5000, NULL, true } };
	struct fake f = { rs, 1, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_fp(0x4010, SP0, SP0 + 16);
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put(&s, SP0 + 16, 0);        /* saved frame pointer: 0 */
	put(&s, SP0 + 24, 0x4020);   /* return into the same code */
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 2);
	assert_int_equal(pcs[1].pc, 0x4020);
	assert_int_equal(res.stop, UW_STOP_ROOT);
}

/*
 * An exact PC (the sampled one, or one a signal interrupted) without CFI
 * and a frame pointer of 0: a leaf that sets up no frame keeps its
 * caller's, so 0 says nothing of a root. The walk stops there as "no CFI",
 * not as a root, and says where.
 */
static void test_frame_pointer_zero_at_sample(void **state)
{
	struct uw_rule *sig = rule_sigframe();
	struct range rs[] = { { 0x4000, 0x5000, NULL, false }, { 0x7000, 0x7100, sig, false } };
	struct fake f = { rs, 2, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_fp(0x4010, SP0, 0);  /* rbp recorded, and 0 */
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put(&s, SP0, 0x4020);        /* what a caller's call left */
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 1);
	assert_int_equal(res.stop, UW_STOP_NO_CFI);
	assert_int_equal(res.stop_at, 0x4010);

	/* the same function interrupted by a signal: its rbp, 0, comes from the sigcontext */
	memset(&s, 0, sizeof(s));
	f = (struct fake){ rs, 2, { 0 }, 0 };
	regs = regs_fp(0x7004, SP0, 0);  /* rbp 0, kept through the trampoline (same value) */
	put_sigframe(&s, 0x4010, SP0 + 256);
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 2);
	assert_int_equal(pcs[1].pc, 0x4010);
	assert_int_equal(res.stop, UW_STOP_NO_CFI);
	assert_int_equal(res.stop_at, 0x4010);
	free(sig);
}

/*
 * A PLT entry's CFA expression (x86-64 lazy binding):
 * rsp + 8 + ((rip & 15) >= 11 ? 8 : 0).
 */
static void test_plt_expression(void **state)
{
	static const struct uw_op plt[] = {
		{ DW_OP_breg7, 8, 0 }, { DW_OP_breg16, 0, 0 }, { DW_OP_lit15, 0, 0 },
		{ DW_OP_and, 0, 0 },   { DW_OP_lit11, 0, 0 },  { DW_OP_ge, 0, 0 },
		{ DW_OP_lit3, 0, 0 },  { DW_OP_shl, 0, 0 },    { DW_OP_plus, 0, 0 },
	};
	struct uw_rule *r = rule_sp(0), *r16 = rule_sp(16);
	struct range rs[] = { { 0x1000, 0x1100, r, false }, { 0x2000, 0x3000, r16, false } };
	struct fake f = { rs, 2, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	r->cfa_expr = true;
	r->cfa_ops = plt;
	r->cfa_len = sizeof(plt) / sizeof(plt[0]);
	/* at offset 12 of the entry: two words pushed, CFA = rsp + 16 */
	{
		struct uw_regs regs = regs_at(0x100c, SP0);

		put(&s, SP0 + 8, 0x2010);
		put(&s, SP0 + 24, 0);
		walk(&f, &regs, &s, pcs, 8, &res);
		assert_int_equal(pcs[1].pc, 0x2010);
		assert_int_equal(res.stop, UW_STOP_ROOT);
	}
	/* at offset 0: CFA = rsp + 8 */
	{
		struct uw_regs regs = regs_at(0x1000, SP0);

		memset(&s, 0, sizeof(s));
		put(&s, SP0, 0x2010);
		put(&s, SP0 + 16, 0);
		walk(&f, &regs, &s, pcs, 8, &res);
		assert_int_equal(pcs[1].pc, 0x2010);
		assert_int_equal(res.stop, UW_STOP_ROOT);
	}
	free(r);
	free(r16);
}

/* A signal trampoline's frame: the interrupted PC is exact and is looked up as it is. */
static void test_signal_frame(void **state)
{
	struct uw_rule *sig = rule_sigframe();
	struct uw_rule *r16 = rule_sp(16);
	struct range rs[] = { { 0x7000, 0x7100, sig, false }, { 0x1000, 0x2000, r16, false } };
	struct fake f = { rs, 2, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_at(0x7004, SP0);
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put_sigframe(&s, 0x1234, SP0 + 256);
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(pcs[1].pc, 0x1234);
	assert_true(pcs[1].exact);
	assert_int_equal(f.looked_up[1], 0x1234);
	assert_int_equal(res.stop, UW_STOP_ROOT);
	free(sig);
	free(r16);
}

/*
 * A sample in rt_sigreturn: the user PC is past the syscall, which ends
 * __restore_rt's CFI, and the frame pointer is 0. The syscall's rule (at
 * PC - 1) crosses the signal frame; the frame-pointer guess would have
 * called this one frame a root. A PC with a rule of its own keeps it.
 */
static void test_syscall_at_function_end(void **state)
{
	struct uw_rule *sig = rule_sigframe();
	struct uw_rule *r16 = rule_sp(16), *r8 = rule_sp(8);
	struct range rs[] = { { 0x7000, 0x7009, sig, false }, { 0x7009, 0x7100, NULL, false },
			      { 0x1000, 0x2000, r16, false }, { 0x8000, 0x8100, r8, false } };
	struct fake f = { rs, 4, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_regs regs = regs_fp(0x7009, SP0, 0);  /* rbp recorded, and 0 */
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put_sigframe(&s, 0x1234, SP0 + 256);
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 2);
	assert_int_equal(pcs[0].pc, 0x7009);
	assert_int_equal(pcs[1].pc, 0x1234);
	assert_true(pcs[0].exact);
	assert_true(pcs[1].exact);
	assert_int_equal(f.looked_up[0], 0x7009);
	assert_int_equal(f.looked_up[1], 0x7008);
	assert_int_equal(res.stop, UW_STOP_ROOT);

	/* PC's own rule is taken, not PC - 1's: 0x8000 is a function's first instruction */
	memset(&s, 0, sizeof(s));
	f = (struct fake){ rs, 4, { 0 }, 0 };
	regs = regs_at(0x8000, SP0);
	put(&s, SP0, 0x1050);            /* return address at rsp */
	put(&s, SP0 + 16, 0);            /* 0x1050's caller: 0 */
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(res.n, 2);
	assert_int_equal(pcs[1].pc, 0x1050);
	assert_int_equal(f.looked_up[0], 0x8000);
	assert_int_equal(f.looked_up[1], 0x104f);

	/* neither PC nor PC - 1 has a rule: PC's answer stands (the frame-pointer walk) */
	memset(&s, 0, sizeof(s));
	f = (struct fake){ rs, 4, { 0 }, 0 };
	regs = regs_fp(0x7050, SP0, SP0 + 16);
	put(&s, SP0 + 16, SP0 + 64);     /* saved frame pointer */
	put(&s, SP0 + 24, 0x1010);       /* return address */
	put(&s, SP0 + 32 + 8, 0);        /* 0x1010's caller (CFA SP0+48, RA at SP0+40): 0 */
	walk(&f, &regs, &s, pcs, 8, &res);
	assert_int_equal(pcs[1].pc, 0x1010);
	assert_int_equal(f.looked_up[0], 0x7050);
	assert_int_equal(f.looked_up[1], 0x704f);
	assert_int_equal(f.looked_up[2], 0x100f);
	assert_int_equal(res.stop, UW_STOP_ROOT);
	free(sig);
	free(r16);
	free(r8);
}

/*
 * Exactness is kept for every frame the walk returns: a signal frame's
 * interrupted PC deep in a long stack is exact, and dropping a frame-pointer
 * guess at depth 257 leaves frame 1's exactness alone.
 */
static void test_exact_deep(void **state)
{
	struct uw_rule *sig = rule_sigframe(), *r8 = rule_sp(8);
	struct range rs[] = { { 0x7000, 0x7100, sig, false }, { 0x1000, 0x2000, r8, false },
			      { 0x4000, 0x5000, NULL, false } };
	struct fake f = { rs, 3, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	uint64_t t = SP0 + 8 * 270, s1 = SP0 + 64, fp = s1 + 8 * 255 + 16;
	struct uw_regs regs = regs_at(0x1010, SP0);
	struct uw_frame pcs[300];
	struct uw_result res;

	(void)state;
	/* 270 frames in one function, the last one called from a signal trampoline */
	for (uint64_t i = 0; i < 269; i++)
		put(&s, SP0 + 8 * i, 0x1010);
	put(&s, SP0 + 8 * 269, 0x7005);
	put(&s, t + 40, 0x1234);  /* the interrupted PC */
	put(&s, t + 48, t + 256);
	put(&s, t + 256, 0);
	walk(&f, &regs, &s, pcs, 300, &res);
	assert_int_equal(res.stop, UW_STOP_ROOT);
	assert_int_equal(res.n, 272);
	assert_int_equal(pcs[271].pc, 0x1234);
	assert_false(pcs[270].exact);
	assert_true(pcs[271].exact);

	/*
	 * A sample in the trampoline (frame 1 exact), 255 frames, then an object
	 * without CFI whose frame pointer gives an address in no mapping
	 */
	memset(&s, 0, sizeof(s));
	f = (struct fake){ rs, 3, { 0 }, 0 };
	regs = regs_fp(0x7004, SP0, fp);
	put(&s, SP0 + 40, 0x1010);
	put(&s, SP0 + 48, s1);
	for (uint64_t i = 1; i < 255; i++)
		put(&s, s1 + 8 * (i - 1), 0x1010);
	put(&s, s1 + 8 * 254, 0x4010);
	put(&s, fp, fp + 64);
	put(&s, fp + 8, 0x99999999);
	walk(&f, &regs, &s, pcs, 300, &res);
	assert_int_equal(res.stop, UW_STOP_NO_CFI);
	assert_int_equal(res.n, 257);
	assert_int_equal(pcs[256].pc, 0x4010);
	assert_true(pcs[0].exact);
	assert_true(pcs[1].exact);
	assert_false(pcs[2].exact);
	free(sig);
	free(r8);
}

/* perf's register order to DWARF numbers, from the recorded mask. */
static void test_regs_from_perf(void **state)
{
	struct uw_regs r;
	/* x86-64: BP (bit 6), SP (7), IP (8) */
	uint64_t v[] = { 0x100, 0x200, 0x300 };
	/* arm64: x29 (29), x30 (30), sp (31), pc (32) */
	uint64_t a[] = { 1, 2, 3, 4 };

	(void)state;
	assert_true(uw_regs_from_perf(UW_ARCH_X86_64, (1ull << 6) | (1ull << 7) | (1ull << 8), v, 3, &r));
	assert_int_equal(r.r[6], 0x100);
	assert_int_equal(r.r[7], 0x200);
	assert_int_equal(r.pc, 0x300);
	assert_false(uw_regs_from_perf(UW_ARCH_X86_64, (1ull << 6) | (1ull << 8), v, 2, &r));
	assert_true(uw_regs_from_perf(UW_ARCH_ARM64, 0xfull << 29, a, 4, &r));
	assert_int_equal(r.r[29], 1);
	assert_int_equal(r.r[30], 2);
	assert_int_equal(r.r[31], 3);
	assert_int_equal(r.pc, 4);
	assert_int_equal(uw_arch_of("x86_64"), UW_ARCH_X86_64);
	assert_int_equal(uw_arch_of("aarch64"), UW_ARCH_ARM64);
	assert_int_equal(uw_arch_of("i686"), UW_ARCH_I386);
	assert_int_equal(uw_arch_of("riscv64"), UW_ARCH_UNKNOWN);
	assert_int_equal(uw_arch_of("armv7l"), UW_ARCH_ARM32);
	assert_int_equal(uw_arch_of("arm"), UW_ARCH_ARM32);
	assert_int_equal(uw_arch_of("arm64"), UW_ARCH_ARM64);
	assert_string_equal(uw_stop_text(UW_STOP_ARCH), "no unwinding for this architecture");
}

/*
 * A precise sample on a call that already pushed its return address: the
 * registers are the callee's; popped, the walk from the call finds the
 * caller's caller. Anything else is left alone.
 */
static void test_pushed_return(void **state)
{
	struct uw_rule *r32 = rule_sp(32);
	struct range rs[] = { { 0x1000, 0x2000, r32, false } };
	struct fake f = { rs, 1, { 0 }, 0 };
	struct stk s = { { 0 }, 0 };
	struct uw_source src = { .find = fake_find, .ctx = &f };
	struct uw_regs regs = regs_at(0x1010, SP0);
	struct uw_stack st = { .data = s.bytes, .len = 0, .big_endian = false };
	struct uw_frame pcs[8];
	struct uw_result res;

	(void)state;
	put(&s, SP0, 0x1015);           /* the call at 0x1010 pushed 0x1015 */
	put(&s, SP0 + 8 + 24, 0x1800);  /* the caller's frame: CFA SP0+8+32, RA at CFA-8 */
	put(&s, SP0 + 8 + 32 + 24, 0);  /* and its caller's: a root */
	st.len = s.len;
	assert_true(uw_pop_pushed_return(UW_ARCH_X86_64, &regs, &st));
	assert_int_equal(regs.r[7], SP0 + 8);
	assert_int_equal(st.base, SP0);
	uw_unwind(UW_ARCH_X86_64, &src, &regs, &st, pcs, 8, &res);
	assert_int_equal(res.stop, UW_STOP_ROOT);
	assert_int_equal(res.n, 2);
	assert_int_equal(pcs[0].pc, 0x1010);
	assert_int_equal(pcs[1].pc, 0x1800);

	/* a word that is no return address of a call at the PC: nothing popped */
	regs = regs_at(0x1010, SP0);
	st.base = 0;
	put(&s, SP0, 0x1010 + 16);
	assert_false(uw_pop_pushed_return(UW_ARCH_X86_64, &regs, &st));
	put(&s, SP0, 0x1011);
	assert_false(uw_pop_pushed_return(UW_ARCH_X86_64, &regs, &st));
	assert_int_equal(regs.r[7], SP0);
	assert_int_equal(st.base, 0);
	/* no copy to read, or not x86: nothing popped */
	put(&s, SP0, 0x1015);
	st.len = 4;
	assert_false(uw_pop_pushed_return(UW_ARCH_X86_64, &regs, &st));
	st.len = s.len;
	assert_false(uw_pop_pushed_return(UW_ARCH_ARM64, &regs, &st));
	assert_int_equal(regs.r[7], SP0);
	free(r32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cfi_chain),
		cmocka_unit_test(test_copy_ended),
		cmocka_unit_test(test_sp_not_advancing),
		cmocka_unit_test(test_undefined_ra_is_root),
		cmocka_unit_test(test_frame_pointer_fallback),
		cmocka_unit_test(test_frame_pointer_chain_end),
		cmocka_unit_test(test_frame_pointer_zero_at_sample),
		cmocka_unit_test(test_frame_pointer_guess_dropped),
		cmocka_unit_test(test_plt_expression),
		cmocka_unit_test(test_signal_frame),
		cmocka_unit_test(test_syscall_at_function_end),
		cmocka_unit_test(test_exact_deep),
		cmocka_unit_test(test_regs_from_perf),
		cmocka_unit_test(test_pushed_return),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

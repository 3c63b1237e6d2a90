/*
 * The walk over a recorded stack copy with compiled CFI rules. Reads are
 * bounded by the copy: a word outside [base, base + len) ends the walk
 * (perf's dyn_size is what the kernel copied). Nothing is allocated.
 */
#include "unwind/unwind.h"

#include <dwarf.h>
#include <string.h>

/* What the walk needs to know of an architecture. */
struct arch {
	uint8_t sp, fp;  /* DWARF numbers */
	uint8_t ra;      /* return-address column */
	/*
	 * the RA column names the PC (x86): it holds this frame's PC while
	 * walking. Otherwise it is a register (arm64's LR, x30), which holds the
	 * return address until the function saves it or calls.
	 */
	bool pc_in_ra;
	unsigned word;   /* bytes */
	uint8_t nregs;   /* DWARF registers tracked: 0 .. nregs-1 */
};

static const struct arch arches[] = {
	[UW_ARCH_X86_64] = { .sp = 7, .fp = 6, .ra = 16, .pc_in_ra = true, .word = 8, .nregs = 17 },
	[UW_ARCH_I386] = { .sp = 4, .fp = 5, .ra = 8, .pc_in_ra = true, .word = 4, .nregs = 9 },
	[UW_ARCH_ARM64] = { .sp = 31, .fp = 29, .ra = 30, .pc_in_ra = false, .word = 8, .nregs = 32 },
};

enum uw_arch uw_arch_of(const char *perf_arch)
{
	if (!perf_arch)
		return UW_ARCH_UNKNOWN;
	if (!strcmp(perf_arch, "x86_64") || !strcmp(perf_arch, "amd64"))
		return UW_ARCH_X86_64;
	if ((perf_arch[0] == 'i' && !strcmp(perf_arch + 2, "86")) || !strcmp(perf_arch, "x86"))
		return UW_ARCH_I386;
	if (!strcmp(perf_arch, "aarch64") || !strcmp(perf_arch, "arm64"))
		return UW_ARCH_ARM64;
	if (!strncmp(perf_arch, "arm", 3)) /* armv7l, armv6l, armv8l (32-bit on arm64), perf's "arm" */
		return UW_ARCH_ARM32;
	return UW_ARCH_UNKNOWN;
}

/*
 * perf's register bits (arch/<arch>/include/uapi/asm/perf_regs.h) as DWARF
 * numbers; -1: not a register the walk uses; -2: the PC.
 */
static int dwarf_of_perf(enum uw_arch arch, unsigned bit)
{
	/* x86: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15 */
	static const int x86_64[24] = { 0, 3, 2, 1, 4, 5, 6, 7, -2, -1, -1, -1,
					-1, -1, -1, -1, 8, 9, 10, 11, 12, 13, 14, 15 };
	static const int i386[9] = { 0, 3, 1, 2, 6, 7, 5, 4, -2 };

	switch (arch) {
	case UW_ARCH_X86_64:
		return bit < 24 ? x86_64[bit] : -1;
	case UW_ARCH_I386:
		return bit < 9 ? i386[bit] : -1;
	case UW_ARCH_ARM64:
		/* X0..X30, SP, PC */
		return bit < 32 ? (int)bit : bit == 32 ? -2 : -1;
	default:
		return -1;
	}
}

bool uw_regs_from_perf(enum uw_arch arch, uint64_t mask, const uint64_t *vals, uint32_t n,
		       struct uw_regs *out)
{
	uint32_t k = 0;
	bool have_pc = false;

	memset(out, 0, sizeof(*out));
	if (arch >= UW_ARCH_UNKNOWN)
		return false;
	for (unsigned bit = 0; bit < 64 && k < n; bit++) {
		int d;

		if (!(mask >> bit & 1))
			continue;
		d = dwarf_of_perf(arch, bit);
		if (d == -2) {
			out->pc = vals[k];
			have_pc = true;
		} else if (d >= 0) {
			out->r[d] = arches[arch].word == 4 ? (uint32_t)vals[k] : vals[k];
			out->valid |= 1ull << d;
		}
		k++;
	}
	return have_pc && (out->valid >> arches[arch].sp & 1);
}

const char *uw_stop_text(enum uw_stop s)
{
	static const char *const t[UW_STOP__COUNT] = {
		[UW_STOP_ROOT] = "",
		[UW_STOP_COPY] = "stack copy ended",
		[UW_STOP_NO_CFI] = "no CFI",
		[UW_STOP_SP] = "stack pointer did not advance",
		[UW_STOP_REG] = "register not recorded",
		[UW_STOP_BAD_CFI] = "bad CFI",
		[UW_STOP_UNMAPPED] = "return address in no mapping",
		[UW_STOP_DEPTH] = "too many frames",
		[UW_STOP_ARCH] = "no unwinding for this architecture",
	};

	return (unsigned)s < UW_STOP__COUNT ? t[s] : "";
}

/* The stack copy and the address of its first byte (the sampled stack pointer). */
struct copy {
	const struct uw_stack *st;
	uint64_t base;
};

/* A word of the stack copy at addr; false outside it. */
static bool read_word(const struct copy *cp, unsigned word, uint64_t addr, uint64_t *out)
{
	const struct uw_stack *st = cp->st;
	uint64_t v = 0;
	const uint8_t *p;

	if (addr < cp->base || addr - cp->base > st->len || st->len - (addr - cp->base) < word)
		return false;
	p = st->data + (addr - cp->base);
	for (unsigned i = 0; i < word; i++)
		v |= (uint64_t)p[st->big_endian ? i : word - 1 - i] << (8 * (word - 1 - i));
	*out = v;
	return true;
}

/* A step's or an evaluation's success: not a reason to stop. */
#define STEP_OK UW_STOP__COUNT

/* The state one frame is evaluated in. */
struct frame {
	const struct arch *a;
	const struct copy *st;
	const struct uw_regs *regs;
	uint64_t cfa;
	bool have_cfa;
};

#define EXPR_STACK 16

/*
 * A DWARF expression of the CFI (libdw hands CFA-relative rules over with
 * DW_OP_call_frame_cfa first). Only what CFI uses: constants, registers,
 * arithmetic, comparisons, stack ops and loads from the copy.
 */
static enum uw_stop eval(const struct frame *f, const struct uw_op *ops, size_t n, uint64_t *out)
{
	uint64_t s[EXPR_STACK];
	size_t sp = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t op = ops[i].atom;
		uint64_t a, b;

		if (op == DW_OP_stack_value)
			break;
		if (sp >= EXPR_STACK)
			return UW_STOP_BAD_CFI;
		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			s[sp++] = op - DW_OP_lit0;
			continue;
		}
		if ((op >= DW_OP_breg0 && op <= DW_OP_breg31) || op == DW_OP_bregx) {
			unsigned r = op == DW_OP_bregx ? (unsigned)ops[i].number : (unsigned)(op - DW_OP_breg0);
			uint64_t off = op == DW_OP_bregx ? ops[i].number2 : ops[i].number;
			uint64_t v;

			if (f->a->pc_in_ra && r == f->a->ra)
				v = f->regs->pc;
			else if (r < UW_NREGS && (f->regs->valid >> r & 1))
				v = f->regs->r[r];
			else
				return UW_STOP_REG;
			s[sp++] = v + off;
			continue;
		}
		switch (op) {
		case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts: case DW_OP_addr:
			s[sp++] = ops[i].number;
			continue;
		case DW_OP_call_frame_cfa:
			if (!f->have_cfa)
				return UW_STOP_BAD_CFI;
			s[sp++] = f->cfa;
			continue;
		case DW_OP_dup:
			if (!sp)
				return UW_STOP_BAD_CFI;
			s[sp] = s[sp - 1];
			sp++;
			continue;
		case DW_OP_over:
			if (sp < 2)
				return UW_STOP_BAD_CFI;
			s[sp] = s[sp - 2];
			sp++;
			continue;
		default:
			break;
		}
		if (!sp)
			return UW_STOP_BAD_CFI;
		switch (op) {
		case DW_OP_drop:
			sp--;
			continue;
		case DW_OP_deref:
			if (!read_word(f->st, f->a->word, s[sp - 1], &s[sp - 1]))
				return UW_STOP_COPY;
			continue;
		case DW_OP_plus_uconst:
			s[sp - 1] += ops[i].number;
			continue;
		case DW_OP_neg:
			s[sp - 1] = (uint64_t)0 - s[sp - 1];
			continue;
		case DW_OP_not:
			s[sp - 1] = ~s[sp - 1];
			continue;
		default:
			break;
		}
		if (sp < 2)
			return UW_STOP_BAD_CFI;
		a = s[sp - 2];
		b = s[sp - 1];
		sp--;
		switch (op) {
		case DW_OP_swap:
			s[sp - 1] = b;
			s[sp++] = a;
			break;
		case DW_OP_plus: s[sp - 1] = a + b; break;
		case DW_OP_minus: s[sp - 1] = a - b; break;
		case DW_OP_mul: s[sp - 1] = a * b; break;
		case DW_OP_and: s[sp - 1] = a & b; break;
		case DW_OP_or: s[sp - 1] = a | b; break;
		case DW_OP_xor: s[sp - 1] = a ^ b; break;
		case DW_OP_shl: s[sp - 1] = b < 64 ? a << b : 0; break;
		case DW_OP_shr: s[sp - 1] = b < 64 ? a >> b : 0; break;
		case DW_OP_shra:
			s[sp - 1] = b < 64 ? (uint64_t)((int64_t)a >> b) : ((int64_t)a < 0 ? ~0ull : 0);
			break;
		case DW_OP_ge: s[sp - 1] = (int64_t)a >= (int64_t)b; break;
		case DW_OP_gt: s[sp - 1] = (int64_t)a > (int64_t)b; break;
		case DW_OP_le: s[sp - 1] = (int64_t)a <= (int64_t)b; break;
		case DW_OP_lt: s[sp - 1] = (int64_t)a < (int64_t)b; break;
		case DW_OP_eq: s[sp - 1] = a == b; break;
		case DW_OP_ne: s[sp - 1] = a != b; break;
		default:
			return UW_STOP_BAD_CFI;
		}
	}
	if (!sp)
		return UW_STOP_BAD_CFI;
	*out = s[sp - 1];
	return STEP_OK;
}

/* The caller's value of one register by its rule. */
static enum uw_stop apply(const struct frame *f, const struct uw_reg_rule *rr, uint64_t *out)
{
	uint64_t v;
	enum uw_stop e;

	switch (rr->how) {
	case UW_AT:
		return read_word(f->st, f->a->word, f->cfa + (uint64_t)rr->off, out) ? STEP_OK
										      : UW_STOP_COPY;
	case UW_VAL:
		*out = f->cfa + (uint64_t)rr->off;
		return STEP_OK;
	case UW_REG:
		if (f->a->pc_in_ra && rr->src == f->a->ra) {
			*out = f->regs->pc;
			return STEP_OK;
		}
		if (rr->src >= UW_NREGS || !(f->regs->valid >> rr->src & 1))
			return UW_STOP_REG;
		*out = f->regs->r[rr->src];
		return STEP_OK;
	case UW_AT_EXPR:
	case UW_VAL_EXPR:
		e = eval(f, rr->expr, rr->expr_len, &v);
		if (e != STEP_OK)
			return e;
		if (rr->how == UW_VAL_EXPR) {
			*out = v;
			return STEP_OK;
		}
		return read_word(f->st, f->a->word, v, out) ? STEP_OK : UW_STOP_COPY;
	default:
		return UW_STOP_BAD_CFI;
	}
}

/*
 * One step by a CFI rule: the caller's registers and PC. *root: the CFI
 * says this is the outermost frame (the return address is undefined).
 */
static enum uw_stop step_cfi(const struct arch *a, const struct copy *st, const struct uw_rule *rule,
			     const struct uw_regs *cur, bool exact, struct uw_regs *next, bool *root)
{
	struct frame f = { .a = a, .st = st, .regs = cur };
	bool ra_set = false;
	enum uw_stop e;

	if (rule->cfa_expr) {
		e = eval(&f, rule->cfa_ops, rule->cfa_len, &f.cfa);
		if (e != STEP_OK)
			return e;
	} else {
		if (rule->cfa_reg >= UW_NREGS || !(cur->valid >> rule->cfa_reg & 1))
			return UW_STOP_REG;
		f.cfa = cur->r[rule->cfa_reg] + (uint64_t)rule->cfa_off;
	}
	f.have_cfa = true;
	*next = *cur;
	/* the caller's stack pointer is the CFA unless a rule says otherwise */
	next->r[a->sp] = a->word == 4 ? (uint32_t)f.cfa : f.cfa;
	next->valid |= 1ull << a->sp;
	for (uint8_t i = 0; i < rule->nr; i++) {
		const struct uw_reg_rule *rr = &rule->regs[i];
		uint64_t v;

		if (rr->reg >= UW_NREGS)
			continue;
		if (rr->how == UW_UNDEF) {
			if (rr->reg == rule->ra) {
				*root = true;
				return STEP_OK;
			}
			next->valid &= ~(1ull << rr->reg);
			continue;
		}
		e = apply(&f, rr, &v);
		if (e != STEP_OK) {
			/* a register nothing needs later may be lost; the return address may not */
			if (rr->reg == rule->ra || rr->reg == a->sp || e == UW_STOP_BAD_CFI)
				return e;
			next->valid &= ~(1ull << rr->reg);
			continue;
		}
		if (a->word == 4)
			v = (uint32_t)v;
		if (rr->reg == rule->ra && a->pc_in_ra) {
			next->pc = v;
			ra_set = true;
		} else {
			next->r[rr->reg] = v;
			next->valid |= 1ull << rr->reg;
			if (rr->reg == rule->ra) {
				next->pc = v;
				ra_set = true;
			}
		}
	}
	if (!ra_set) {
		/*
		 * the return-address column unchanged: its current value, arm64's
		 * LR in a leaf, a prologue before LR is saved, an epilogue after it
		 * is restored. Only where the thread was: a frame that called has
		 * had LR overwritten by that call (it held this frame's own PC).
		 */
		if (a->pc_in_ra || !exact || !(cur->valid >> rule->ra & 1))
			return UW_STOP_REG;
		next->pc = cur->r[rule->ra];
	}
	return STEP_OK;
}

/*
 * One step by the frame pointer, for code without CFI: the frame pointer
 * must point into the copy above the stack pointer (a plausible frame), the
 * saved frame pointer and the return address sit above it.
 */
static enum uw_stop step_fp(const struct arch *a, const struct copy *st, const struct uw_regs *cur,
			    bool exact, struct uw_regs *next, bool *root)
{
	uint64_t fp, saved_fp, ret;

	if (!(cur->valid >> a->fp & 1) || !(cur->valid >> a->sp & 1))
		return UW_STOP_NO_CFI;
	fp = cur->r[a->fp];
	/*
	 * a frame-pointer chain ends with a saved 0 (_start and thread starts
	 * clear it; Go's goexit); an exact PC's 0 says nothing of its caller:
	 * a leaf that sets up no frame keeps its caller's
	 */
	if (!fp) {
		if (exact)
			return UW_STOP_NO_CFI;
		*root = true;
		return STEP_OK;
	}
	if (fp < cur->r[a->sp] || fp % a->word)
		return UW_STOP_NO_CFI;
	if (!read_word(st, a->word, fp, &saved_fp) || !read_word(st, a->word, fp + a->word, &ret))
		return UW_STOP_COPY;
	*next = *cur;
	next->r[a->fp] = saved_fp;
	next->r[a->sp] = fp + 2ull * a->word;
	next->pc = ret;
	return STEP_OK;
}

/*
 * arm64's signal frame (arch/arm64/kernel/signal.c, uapi asm/ucontext.h and
 * asm/sigcontext.h; gdb's aarch64-linux-tdep.c uses the same offsets): at
 * the trampoline the stack pointer is the struct rt_sigframe, siginfo (128
 * bytes) then the ucontext, whose uc_mcontext (struct sigcontext, 16-byte
 * aligned after uc_flags, uc_link, uc_stack, uc_sigmask and glibc's room
 * for a 1024-bit sigset) is 176 bytes in: fault_address, regs[31], sp, pc.
 */
#define A64_SIGCONTEXT (128 + 176)
#define A64_SC_REGS (A64_SIGCONTEXT + 8)
#define A64_SC_SP (A64_SC_REGS + 31 * 8)
#define A64_SC_PC (A64_SC_SP + 8)

/*
 * One step out of arm64's signal trampoline (the vDSO's
 * __kernel_rt_sigreturn): the interrupted registers from the sigcontext.
 * Its CFI (CFA = x29, x29 and x30 at CFA and CFA + 8) recovers the frame
 * record the kernel pushed, the interrupted x29 and LR, but not the
 * interrupted PC: a walk by it would take LR for the PC and lose the
 * interrupted function.
 */
static enum uw_stop step_sigframe_arm64(const struct arch *a, const struct copy *st,
					const struct uw_regs *cur, struct uw_regs *next)
{
	uint64_t sp;

	if (!(cur->valid >> a->sp & 1))
		return UW_STOP_REG;
	sp = cur->r[a->sp];
	*next = *cur;
	for (unsigned i = 0; i < 31; i++)
		if (!read_word(st, a->word, sp + A64_SC_REGS + 8ull * i, &next->r[i]))
			return UW_STOP_COPY;
	if (!read_word(st, a->word, sp + A64_SC_SP, &next->r[a->sp]) ||
	    !read_word(st, a->word, sp + A64_SC_PC, &next->pc))
		return UW_STOP_COPY;
	next->valid |= (1ull << 32) - 1;
	return STEP_OK;
}

/* The longest x86 instruction, and the shortest call (ff /2 with a register). */
#define X86_INSN_MAX 15
#define X86_CALL_MIN 2

bool uw_pop_pushed_return(enum uw_arch arch, struct uw_regs *regs, struct uw_stack *stack)
{
	const struct arch *a;
	struct copy copy;
	uint64_t ret;

	if (arch != UW_ARCH_X86_64 && arch != UW_ARCH_I386)
		return false;
	a = &arches[arch];
	if (!(regs->valid >> a->sp & 1))
		return false;
	copy.st = stack;
	copy.base = stack->base ? stack->base : regs->r[a->sp];
	if (!read_word(&copy, a->word, regs->r[a->sp], &ret) || ret - regs->pc < X86_CALL_MIN ||
	    ret - regs->pc > X86_INSN_MAX)
		return false;
	stack->base = copy.base;
	regs->r[a->sp] += a->word;
	return true;
}

/*
 * The rule at PC - 1, or NULL; asked for an exact PC with no rule in its
 * object. A sample taken in a system call has the PC after the syscall
 * instruction, a return address, and so has a signal frame's PC when the
 * signal came on the syscall's return; when the syscall ends its function,
 * as in glibc's __restore_rt (rt_sigreturn), that PC is past the function's
 * CFI and the syscall's own rule is the one that holds.
 */
static const struct uw_rule *rule_before_syscall(const struct uw_source *src, uint64_t pc)
{
	const struct uw_rule *r = NULL;

	return src->find(src->ctx, pc - 1, &r) == UW_FIND_RULE ? r : NULL;
}

void uw_unwind(enum uw_arch arch, const struct uw_source *src, const struct uw_regs *regs,
	       const struct uw_stack *stack, struct uw_frame *frames, size_t max,
	       struct uw_result *res)
{
	const struct arch *a;
	struct copy copy;
	struct uw_regs cur = *regs, next;
	unsigned va_bits = src->va_bits ? src->va_bits : UW_VA_BITS_DEFAULT;
	bool exact = true; /* the sampled PC, or one a signal interrupted */
	bool guessed = false;    /* the last step went through an object by frame pointer */
	uint64_t guessed_at = 0; /* the address looked up there */

	memset(res, 0, sizeof(*res));
	if (arch >= UW_ARCH_UNKNOWN || !max) {
		res->stop = UW_STOP_DEPTH;
		return;
	}
	a = &arches[arch];
	copy.st = stack;
	copy.base = stack->base ? stack->base : regs->r[a->sp];
	for (;;) {
		const struct uw_rule *rule = NULL;
		uint64_t at = exact ? cur.pc : cur.pc - 1;
		enum uw_find fnd;
		enum uw_stop e;
		bool root = false;

		if (res->n == max) {
			res->stop = UW_STOP_DEPTH;
			return;
		}
		frames[res->n].pc = cur.pc;
		frames[res->n++].exact = exact;
		/* a return address is looked up inside its call, the instruction before it (at) */
		fnd = src->find(src->ctx, at, &rule);
		if (exact && fnd == UW_FIND_NO_CFI && (rule = rule_before_syscall(src, cur.pc)))
			fnd = UW_FIND_RULE;
		if (fnd == UW_FIND_ROOT) {
			res->stop = UW_STOP_ROOT;
			return;
		} else if (fnd == UW_FIND_RULE && rule->signal && arch == UW_ARCH_ARM64) {
			e = step_sigframe_arm64(a, &copy, &cur, &next);
		} else if (fnd == UW_FIND_RULE) {
			e = step_cfi(a, &copy, rule, &cur, exact, &next, &root);
		} else if (fnd == UW_FIND_NO_CFI && exact && !a->pc_in_ra && (cur.valid >> a->ra & 1)) {
			/*
			 * arm64 code of a known object without CFI where the thread
			 * was: mostly a PLT stub (ld writes no CFI for .plt), which
			 * touches neither LR nor SP; the caller is in LR, as libdw's
			 * aarch64 fallback (perf) and framehop take it. The caller
			 * then has CFI or the frame pointer.
			 */
			next = cur;
			next.pc = cur.r[a->ra];
			e = STEP_OK;
		} else if (fnd == UW_FIND_UNMAPPED && res->n > 1) {
			if (guessed) {
				/* the frame pointer was no frame: its "return address" is not one */
				res->n--;
				res->stop = UW_STOP_NO_CFI;
				res->stop_at = guessed_at;
				return;
			}
			res->stop = UW_STOP_UNMAPPED;
			return;
		} else {
			/* JIT code, code without CFI: the frame pointer, where it is a plausible frame */
			e = step_fp(a, &copy, &cur, exact, &next, &root);
			if (e == UW_STOP_NO_CFI) {
				res->stop_at = at;
				res->stop = fnd == UW_FIND_UNMAPPED ? UW_STOP_UNMAPPED : UW_STOP_NO_CFI;
				return;
			}
		}
		if (e != STEP_OK) {
			res->stop = e;
			return;
		}
		/*
		 * arm64 return addresses may carry a PAC (signed where saved, and
		 * LR between paciasp and autiasp). No RA_SIGN_STATE is tracked for
		 * DW_CFA_AARCH64_negate_ra_state: libdw (0.188) ignores that op on
		 * arm64, and stripping leaves an unsigned address as it is, so every
		 * return address, signed or not, is stripped.
		 */
		next.pc = uw_strip_pac(arch, va_bits, next.pc);
		if (root || !next.pc) {
			res->stop = UW_STOP_ROOT;
			return;
		}
		/*
		 * the stack grows down: a caller's frame is above (a signal may
		 * switch stacks); an arm64 frame where the thread was may have none
		 * (a leaf, a prologue: the caller's stack pointer is its own)
		 */
		if (!(rule && rule->signal) && next.r[a->sp] <= cur.r[a->sp] &&
		    !(exact && !a->pc_in_ra && next.r[a->sp] == cur.r[a->sp])) {
			res->stop = UW_STOP_SP;
			return;
		}
		exact = rule && rule->signal;
		guessed = fnd != UW_FIND_RULE;
		guessed_at = at;
		cur = next;
	}
}

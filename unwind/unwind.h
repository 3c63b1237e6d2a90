/*
 * Unwinding of `perf record --call-graph dwarf` samples: the user registers
 * and the copy of the top of the user stack perf recorded, walked with the
 * objects' call frame information (.eh_frame, .debug_frame).
 *
 * The module knows registers, stack copies and CFI; it returns frames
 * (each a PC, exact or a return address) and why a walk stopped, and knows
 * nothing of symbols, mappings or the profile model. Its caller says where
 * the rule for an address is (struct uw_source): the CFI rows of an object
 * are compiled once per row into a compact rule (struct uw_rule) and kept
 * in a uw_cfi by the row's addresses, so that a rule serves every address
 * of the row in every process that maps the object.
 */
#ifndef CONV_UNWIND_UNWIND_H
#define CONV_UNWIND_UNWIND_H

#include "core/err.h"
#include "core/elfseg.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* DWARF register numbers the walk tracks (x86-64: 0-15 and the RA column 16; arm64: 0-31). */
#define UW_NREGS 33

enum uw_arch {
	UW_ARCH_X86_64,
	UW_ARCH_I386,
	UW_ARCH_ARM64,
	UW_ARCH_UNKNOWN,
	/* known, but the walk has no rules for it: after UNKNOWN, so every "arch < UW_ARCH_UNKNOWN" test keeps it out */
	UW_ARCH_ARM32
};

/* The arch of perf's HEADER_ARCH string ("x86_64", "i686", "aarch64"...). */
enum uw_arch uw_arch_of(const char *perf_arch);

/*
 * arm64 pointer authentication: code built with -mbranch-protection signs the
 * return addresses it saves, a PAC in the bits above the virtual-address
 * width. perf.data records no PAC mask, so the width comes from the
 * recording (uw_va_bits_of): every user address is below 2^va_bits, and
 * clearing the bits from va_bits up removes a signature and leaves an
 * unsigned address as it is.
 */
#define UW_VA_BITS_DEFAULT 48 /* arm64 Linux's usual user VA width (4 KB pages, 4 levels) */

/*
 * The virtual-address width that covers user addresses up to highest (the
 * highest end of a user mapping the recording shows): the bit length of
 * highest - 1, at least 39 (the smallest arm64 Linux configures) and at most
 * 52; UW_VA_BITS_DEFAULT when highest is 0 (no mapping known).
 */
unsigned uw_va_bits_of(uint64_t highest);

/*
 * addr without a PAC: arm64 user addresses (bit 55 clear) keep their low
 * va_bits bits; every other address and every other arch's is returned as
 * it is.
 */
uint64_t uw_strip_pac(enum uw_arch arch, unsigned va_bits, uint64_t addr);

/* Registers by DWARF number (valid has bit n when reg n is known), and the PC. */
struct uw_regs {
	uint64_t r[UW_NREGS];
	uint64_t valid;
	uint64_t pc;
};

/*
 * The sample's user registers, recorded in increasing bit order of perf's
 * sample_regs_user mask, as DWARF registers. False without the PC and the
 * stack pointer.
 */
bool uw_regs_from_perf(enum uw_arch arch, uint64_t mask, const uint64_t *vals, uint32_t n,
		       struct uw_regs *out);

/* How to recover a register of the caller. */
enum uw_how {
	UW_UNDEF,    /* cannot be recovered */
	UW_AT,       /* saved at CFA + off */
	UW_VAL,      /* is CFA + off */
	UW_REG,      /* is the value of register src */
	UW_AT_EXPR,  /* saved at the address a DWARF expression gives */
	UW_VAL_EXPR, /* is the value of a DWARF expression */
};

/* A DWARF expression operation, copied out of libdw. */
struct uw_op {
	uint8_t atom;
	uint64_t number, number2;
};

/* A register the frame changed (any other stays as it is: callee-saved, or not said). */
struct uw_reg_rule {
	uint8_t reg;
	uint8_t how; /* enum uw_how */
	uint8_t src;
	uint16_t expr_len;
	int64_t off;
	const struct uw_op *expr;
};

/* One compiled CFI row: how the caller's registers follow from this frame's. */
struct uw_rule {
	bool cfa_expr;     /* the CFA is the value of cfa_ops[0..cfa_len) */
	/*
	 * the frame of a signal trampoline: its caller's PC is exact (arm64:
	 * the walk takes every register from the rt_sigframe at the stack
	 * pointer, and the rest of the rule is not used)
	 */
	bool signal;
	uint8_t cfa_reg;
	uint8_t ra;        /* the return-address column */
	uint16_t cfa_len;
	uint8_t nr;
	int64_t cfa_off;
	const struct uw_op *cfa_ops;
	struct uw_reg_rule regs[]; /* nr of them */
};

/* The CFI of one ELF object (its .eh_frame and, from its debug file, .debug_frame). */
struct uw_cfi;

/*
 * Opens the CFI of the object whose runtime binary is at `binary` (its
 * program headers and .eh_frame) and, when debug is not NULL, its debug
 * file's .debug_frame. CONV_E_IO / CONV_E_LIBELF when the binary cannot be
 * read; an object without any CFI opens and answers "no rule".
 */
enum conv_err uw_cfi_open(struct uw_cfi **out, enum uw_arch arch, const char *binary,
			  const char *debug);
void uw_cfi_close(struct uw_cfi *c);
/*
 * About the memory c holds, in bytes: its rows and rules compiled so far and
 * their index (libdw's CFI tables are not counted). For a cache of open CFI
 * to keep within a budget.
 */
uint64_t uw_cfi_footprint(const struct uw_cfi *c);

/*
 * Whether elf_va is in the first instructions at the object's ELF entry
 * point (_start): the outermost frame of a process, which some objects (the
 * dynamic loader's _start) give no CFI.
 */
bool uw_cfi_is_entry(const struct uw_cfi *c, uint64_t elf_va);

/* The ELF address of a file offset in a mapping made at file offset pgoff. */
bool uw_cfi_elf_addr(const struct uw_cfi *c, uint64_t f_off, uint64_t pgoff, uint64_t *elf_va);

/*
 * The rule at ELF address elf_va, its CFI row compiled on first use and
 * kept for the row's addresses (the pointer stays valid while c is open).
 * NULL: no CFI covers the address. arm64's rt_sigreturn trampoline without
 * CFI (mov x8, #139; svc #0, and the nop before it) answers a signal rule.
 */
const struct uw_rule *uw_cfi_rule(struct uw_cfi *c, uint64_t elf_va);

/*
 * Whether, at an address rule r covers, the caller's return address is
 * still in the link register (arm64's x30: a leaf that never saves it, a
 * prologue before it is saved, an epilogue after it is restored) rather
 * than saved in the frame. False for an arch without a link register.
 */
bool uw_rule_ra_in_lr(enum uw_arch arch, const struct uw_rule *r);

/* Where the walk finds rules: the caller's view of the process's mappings. */
enum uw_find {
	UW_FIND_RULE,     /* *rule set */
	UW_FIND_ROOT,     /* the process's first frame (an entry point without CFI): nothing calls it */
	UW_FIND_NO_CFI,   /* the address is in an object that has no rule for it */
	UW_FIND_NO_FILE,  /* the address is in memory without an object (JIT, anonymous) */
	UW_FIND_UNMAPPED, /* in no mapping */
};

struct uw_source {
	/*
	 * the rule for runtime address pc (already moved into the call for
	 * callers); a question without side effects: the walk may ask twice
	 */
	enum uw_find (*find)(void *ctx, uint64_t pc, const struct uw_rule **rule);
	void *ctx;
	/*
	 * arm64: the process's user virtual-address width (uw_va_bits_of of
	 * its highest user address), which every return address is stripped to
	 * (uw_strip_pac); 0: UW_VA_BITS_DEFAULT. Other arches ignore it.
	 */
	unsigned va_bits;
};

/* Why a walk ended. */
enum uw_stop {
	UW_STOP_ROOT,       /* the CFI says the outermost frame, or the return address is 0 */
	UW_STOP_COPY,       /* a read past the stack copy */
	UW_STOP_NO_CFI,     /* no rule for an object's code and no usable frame pointer */
	UW_STOP_SP,         /* the stack pointer did not advance */
	UW_STOP_REG,        /* a register the rule needs was not recorded */
	UW_STOP_BAD_CFI,    /* an expression conv does not evaluate, or a bad one */
	UW_STOP_UNMAPPED,   /* a return address in no mapping */
	UW_STOP_DEPTH,      /* more frames than the caller takes */
	UW_STOP_ARCH,       /* no walk for the recording's architecture (32-bit ARM): the leaf only */
	UW_STOP__COUNT
};

/* The words a truncation frame says ("stack copy ended", ...); ROOT: "". */
const char *uw_stop_text(enum uw_stop s);

/* The user stack copy: the bytes from the sampled stack pointer on. */
struct uw_stack {
	const uint8_t *data;
	uint64_t len; /* dyn_size: what the kernel copied, not the size asked for */
	bool big_endian;
	/* where data[0] was copied from; 0: the walk's first stack pointer */
	uint64_t base;
};

/*
 * x86's precise samples (PEBS: PERF_RECORD_MISC_EXACT_IP) pair the sampled
 * instruction's address with registers of a later moment. When that
 * instruction is a call which has already pushed its return address (the
 * copy's first word lies 2 to 15 bytes past the PC, the end of a call there),
 * the registers are the callee's at its entry: pops that return address
 * (stack->base keeps the copy's address) so that the walk from the PC sees
 * the caller's state, and returns true. False, nothing changed, otherwise.
 */
bool uw_pop_pushed_return(enum uw_arch arch, struct uw_regs *regs, struct uw_stack *stack);

/* A frame the walk returns. */
struct uw_frame {
	uint64_t pc;
	/*
	 * where the thread was (the sampled PC, or the PC a signal interrupted),
	 * not a return address: looked up as it is, not inside a call before it
	 */
	bool exact;
};

/* A walk's result: frames[0] is the sampled PC; later ones are callers. */
struct uw_result {
	size_t n;
	enum uw_stop stop;
	/* UW_STOP_NO_CFI: the address looked up in the object without CFI (a caller's: in its call) */
	uint64_t stop_at;
};

/*
 * Walks from regs over the stack copy, writing at most max frames. No
 * allocation; every read is bounded by the copy.
 */
void uw_unwind(enum uw_arch arch, const struct uw_source *src, const struct uw_regs *regs,
	       const struct uw_stack *stack, struct uw_frame *frames, size_t max,
	       struct uw_result *res);

#endif

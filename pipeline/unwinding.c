#include "pipeline/unwinding.h"
#include "pipeline/objtab.h"

#include "core/vec.h"
#include "pipeline/symjob.h"
#include "procmap/procmap.h"
#include "reader/perf_abi.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

/* Frames a walk gives at most (a 64 KiB copy holds a few thousand). */
#define UNWIND_MAX 2048

/* unwinding_stop_address's tag: non-canonical on every 64-bit arch conv unwinds */
#define STOP_TAG 0xc0deull

enum cfi_state { CFI_UNKNOWN, CFI_OPEN, CFI_NONE };

struct unwinding {
	struct procmap *pm;
	struct symjob *sj;
	enum uw_arch arch;
	struct uw_cfi **cfi;    /* by symjob object index */
	struct objtab_ent **cfi_held; /* its entry in the run's object table, held until the end */
	uint8_t *state;         /* enum cfi_state, by object index */
	size_t cap_obj;
	/*
	 * by procmap mapping: its object's CFI, found once per mapping (the
	 * walk asks per frame; the object table and a failed download's wait
	 * are per-object work)
	 */
	struct uw_cfi **map_cfi;
	struct objtab_ent **map_held;
	uint8_t *map_seen;
	size_t cap_map;
	uint64_t *chain;
	size_t cap_chain;
	uint64_t *exact;        /* unwinding_built.exact, one bit per chain entry */
	size_t cap_exact;
	struct unwinding_built built;
	struct uw_frame frames[UNWIND_MAX];
	/*
	 * the walk's process: its address space, and the part of a mapping the
	 * last lookup found (consecutive frames are often in one object)
	 */
	const struct pm_space *space;
	uint64_t last_lo, last_hi;
	uint32_t last_map;
	struct unwinding_stats st;
};

struct unwinding *unwinding_new(struct procmap *pm, struct symjob *sj, const char *perf_arch)
{
	struct unwinding *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->pm = pm;
	u->sj = sj;
	/*
	 * a pipe-mode recording may name its arch only after its samples: then
	 * this machine's (such a stream is mostly converted where it is recorded)
	 */
	if (!perf_arch) {
		struct utsname un;

		perf_arch = uname(&un) == 0 ? un.machine : NULL;
		u->arch = uw_arch_of(perf_arch);
	} else {
		u->arch = uw_arch_of(perf_arch);
	}
	return u;
}

void unwinding_free(struct unwinding *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->cap_obj; i++)
		if (u->state[i] == CFI_OPEN)
			objtab_put(symjob_objects(u->sj), u->cfi_held[i]);
	free(u->cfi);
	free(u->cfi_held);
	free(u->state);
	free(u->map_cfi);
	free(u->map_held);
	free(u->map_seen);
	free(u->chain);
	free(u->exact);
	free(u);
}

bool unwinding_wants(const struct rdr_sample *s)
{
	return s->regs_user.abi && s->regs_user.nr && s->stack_user_size;
}

/*
 * The CFI of symjob object oi (from the run's object table on first use,
 * held until unwinding_free); NULL when it has none. *held: its entry.
 */
static struct uw_cfi *cfi_of(struct unwinding *u, uint32_t oi, const char *runtime, const char *debug,
			     struct objtab_ent **held)
{
	*held = NULL;
	if (oi >= u->cap_obj) {
		size_t old = u->cap_obj, cap = old;

		if (!vec_reserve((void **)&u->cfi, &cap, (size_t)oi + 1, sizeof(*u->cfi)))
			return NULL;
		cap = old;
		if (!vec_reserve((void **)&u->cfi_held, &cap, (size_t)oi + 1, sizeof(*u->cfi_held)))
			return NULL;
		cap = old;
		if (!vec_reserve((void **)&u->state, &cap, (size_t)oi + 1, sizeof(*u->state)))
			return NULL;
		memset(u->state + old, CFI_UNKNOWN, cap - old);
		memset(u->cfi + old, 0, (cap - old) * sizeof(*u->cfi));
		memset(u->cfi_held + old, 0, (cap - old) * sizeof(*u->cfi_held));
		u->cap_obj = cap;
	}
	if (u->state[oi] == CFI_UNKNOWN) {
		/* without the binary, the debug file's program headers and .debug_frame */
		const char *bin = runtime ? runtime : debug;

		u->state[oi] = CFI_NONE;
		if (bin && (u->cfi_held[oi] = objtab_cfi_get(symjob_objects(u->sj), u->arch, bin, debug,
							      &u->cfi[oi])) != NULL)
			u->state[oi] = CFI_OPEN;
	}
	if (u->state[oi] != CFI_OPEN)
		return NULL;
	*held = u->cfi_held[oi];
	return u->cfi[oi];
}

/*
 * The CFI of a file mapping's object, looked up the first time the mapping
 * is walked through; *held: its object table entry, for its rules.
 */
static struct uw_cfi *cfi_of_mapping(struct unwinding *u, uint32_t map, struct objtab_ent **held)
{
	const char *runtime, *debug;
	uint32_t oi;

	if (map >= u->cap_map) {
		size_t old = u->cap_map, cap = old;

		if (!vec_reserve((void **)&u->map_cfi, &cap, (size_t)map + 1, sizeof(*u->map_cfi)))
			return NULL;
		cap = old;
		if (!vec_reserve((void **)&u->map_held, &cap, (size_t)map + 1, sizeof(*u->map_held)))
			return NULL;
		cap = old;
		if (!vec_reserve((void **)&u->map_seen, &cap, (size_t)map + 1, sizeof(*u->map_seen)))
			return NULL;
		memset(u->map_seen + old, 0, cap - old);
		u->cap_map = cap;
	}
	if (!u->map_seen[map]) {
		oi = symjob_object_files(u->sj, map, &runtime, &debug);
		u->map_held[map] = NULL;
		u->map_cfi[map] = oi == SYMJOB_NONE ? NULL
						    : cfi_of(u, oi, runtime, debug, &u->map_held[map]);
		u->map_seen[map] = 1;
	}
	*held = u->map_held[map];
	return u->map_cfi[map];
}

/* The mapping of pc in the walk's process now (the last one found tried first). */
static uint32_t walk_mapping(struct unwinding *u, uint64_t pc)
{
	if (pc - u->last_lo < u->last_hi - u->last_lo)
		return u->last_map;
	if (!u->space)
		return PM_NO_MAPPING;
	u->last_map = procmap_space_lookup(u->space, pc, &u->last_lo, &u->last_hi);
	return u->last_map;
}

/*
 * The rule at runtime address pc in the sample's process: the mapping at the
 * sample's time, its object's CFI. *unread (when not NULL) says, for
 * UW_FIND_NO_CFI, that conv has no file of the object to read rules from.
 */
static enum uw_find rule_at(struct unwinding *u, uint64_t pc, const struct uw_rule **rule, bool *unread)
{
	uint32_t map = walk_mapping(u, pc);
	const struct pm_mapping *m;
	struct uw_cfi *c;
	struct objtab_ent *held;
	uint64_t elf_va;

	if (unread)
		*unread = false;
	if (map == PM_NO_MAPPING)
		return UW_FIND_UNMAPPED;
	m = procmap_mapping(u->pm, map);
	if (m->kind != PM_KIND_FILE && m->kind != PM_KIND_VDSO)
		return UW_FIND_NO_FILE;
	c = cfi_of_mapping(u, map, &held);
	if (!c || !uw_cfi_elf_addr(c, pc - m->start + m->pgoff, m->pgoff, &elf_va)) {
		if (unread)
			*unread = true;
		return UW_FIND_NO_CFI;
	}
	/* the ELF entry has no caller, whatever its CFI says (a sample on _start's first instruction) */
	if (uw_cfi_is_entry(c, elf_va))
		return UW_FIND_ROOT;
	*rule = objtab_cfi_rule(held, elf_va);
	return *rule ? UW_FIND_RULE : UW_FIND_NO_CFI;
}

/*
 * The user VA width PACs are stripped to: what covers the recording's
 * highest user mapping and, when known, a user address seen in the sample
 * (its stack pointer: the main thread's stack, at the top of the user
 * address space, has no mapping record). The one place both the dwarf walk
 * and the leaf-caller insertion take it from.
 */
static unsigned va_bits_with(const struct unwinding *u, uint64_t user_addr)
{
	uint64_t top = procmap_user_highest(u->pm);

	if (user_addr && user_addr + 1 > top)
		top = user_addr + 1;
	return uw_va_bits_of(top);
}

/* The walk's view of the process (struct uw_source's find). */
static enum uw_find find(void *ctx, uint64_t pc, const struct uw_rule **rule)
{
	return rule_at(ctx, pc, rule, NULL);
}

/* Room for n chain entries and their exact bits, all clear; *built reset. */
static bool chain_room(struct unwinding *u, size_t n)
{
	size_t words = (n + 63) / 64;

	if (!vec_reserve((void **)&u->chain, &u->cap_chain, n, sizeof(*u->chain)) ||
	    !vec_reserve((void **)&u->exact, &u->cap_exact, words, sizeof(*u->exact)))
		return false;
	memset(u->exact, 0, words * sizeof(*u->exact));
	u->built.exact = u->exact;
	u->built.exact_words = 0;
	u->built.stop = UW_STOP_ROOT;
	u->built.stop_mapping = PM_NO_MAPPING;
	return true;
}

/* Chain entry i is where the thread was. */
static void chain_exact(struct unwinding *u, size_t i)
{
	u->exact[i / 64] |= 1ull << (i % 64);
}

/* The chain of n entries is complete: its length and the length of its exact bits set. */
static const uint64_t *chain_done(struct unwinding *u, size_t n, size_t *nr,
				  const struct unwinding_built **built)
{
	u->built.exact_words = (n + 63) / 64;
	*nr = n;
	*built = &u->built;
	return u->chain;
}

uint64_t unwinding_stop_address(enum uw_stop why, uint32_t mapping)
{
	return STOP_TAG << 48 | (uint64_t)why << 32 | mapping;
}

const uint64_t *unwinding_chain(struct unwinding *u, const struct rdr_sample *s, bool exact_ip,
				size_t *nr, const struct unwinding_built **built)
{
	struct uw_source src = { .find = find, .ctx = u };
	struct uw_regs regs;
	struct uw_stack stack;
	struct uw_result res;
	size_t n = 0;

	*nr = 0;
	/* the recorded kernel part (perf sets exclude_callchain_user for these) */
	if (!chain_room(u, s->callchain_nr + UNWIND_MAX + 1))
		return NULL;
	for (uint64_t i = 0; i < s->callchain_nr && s->callchain[i] != PERF_CONTEXT_USER; i++)
		u->chain[n++] = s->callchain[i];
	u->chain[n++] = PERF_CONTEXT_USER;
	u->st.samples++;
	/* an arch the walk has no rules for (32-bit ARM): the sampled leaf only, and that as the reason */
	if (u->arch >= UW_ARCH_UNKNOWN) {
		u->built.stop = UW_STOP_ARCH;
		u->st.stopped[UW_STOP_ARCH]++;
		return chain_done(u, n, nr, built);
	}
	if (!uw_regs_from_perf(u->arch, s->regs_user.mask, s->regs_user.regs, s->regs_user.nr, &regs)) {
		u->built.stop = UW_STOP_REG;
		u->st.stopped[UW_STOP_REG]++;
		return chain_done(u, n, nr, built);
	}
	stack.data = s->stack_user;
	stack.len = s->stack_user_dyn_size < s->stack_user_size ? s->stack_user_dyn_size
								 : s->stack_user_size;
	stack.big_endian = false;
	stack.base = 0;
	/* a precise sample taken on a call: its registers are the callee's, the walk wants the caller's */
	if (exact_ip && regs.pc == s->ip)
		uw_pop_pushed_return(u->arch, &regs, &stack);
	u->space = procmap_space(u->pm, s->pid);
	u->last_lo = u->last_hi = 0;
	/* arm64: return addresses lose what lies above the user VA width (a PAC) */
	if (u->arch == UW_ARCH_ARM64)
		src.va_bits = va_bits_with(u, (regs.valid >> 31 & 1) ? regs.r[31] : 0);
	uw_unwind(u->arch, &src, &regs, &stack, u->frames, UNWIND_MAX, &res);
	for (size_t i = 0; i < res.n; i++) {
		/* the first user PC is the sampled one, or the user entry: procmap's rule takes it as it is */
		if (i && u->frames[i].exact)
			chain_exact(u, n);
		u->chain[n++] = u->frames[i].pc;
	}
	u->st.frames += res.n;
	if (res.stop == UW_STOP_ROOT) {
		u->st.to_root++;
	} else {
		u->built.stop = res.stop;
		/* the stop names the object by its mapping */
		if (res.stop == UW_STOP_NO_CFI)
			u->built.stop_mapping = walk_mapping(u, res.stop_at);
		u->st.stopped[res.stop]++;
		if (res.stop == UW_STOP_COPY && stack.len == s->stack_user_size)
			u->st.copy_full++;
	}
	return chain_done(u, n, nr, built);
}

/* perf's arm64 register numbers in sample_regs_user (arch/arm64/include/uapi/asm/perf_regs.h) */
#define PERF_REG_ARM64_LR 30
#define PERF_REG_ARM64_PC 32

/* The value of perf register bit of the sample's user registers, false when not recorded. */
static bool user_reg(const struct rdr_sample *s, unsigned bit, uint64_t *val)
{
	uint64_t below = s->regs_user.mask & ((1ull << bit) - 1);
	unsigned i = (unsigned)__builtin_popcountll(below);

	if (!s->regs_user.abi || !(s->regs_user.mask & (1ull << bit)) || i >= s->regs_user.nr)
		return false;
	*val = s->regs_user.regs[i];
	return true;
}

/*
 * Whether the caller of a leaf at pc is in its link register, as perf's
 * unwinder answers from the sampled registers alone: by the CFI where the
 * object has a rule for pc; where it has none (an object without CFI there,
 * anonymous or JIT code, no mapping) its fallback takes LR. An object conv
 * has no file of: no, rather than a frame a stale LR may invent.
 */
static bool leaf_ra_in_lr(struct unwinding *u, uint64_t pc)
{
	const struct uw_rule *rule = NULL;
	bool unread;

	switch (rule_at(u, pc, &rule, &unread)) {
	case UW_FIND_RULE:
		return uw_rule_ra_in_lr(u->arch, rule);
	case UW_FIND_NO_CFI:
		return !unread;
	case UW_FIND_ROOT: /* _start: nothing called it, whatever LR holds */
		return false;
	default: /* anonymous or JIT code, no mapping: perf's fallback takes LR */
		return true;
	}
}

const uint64_t *unwinding_leaf_chain(struct unwinding *u, const struct rdr_sample *s, size_t *nr,
				     const struct unwinding_built **built)
{
	uint64_t lr, pc, caller;
	size_t user, n = 0;

	*nr = 0;
	if (u->arch != UW_ARCH_ARM64 || !user_reg(s, PERF_REG_ARM64_LR, &lr))
		return NULL;
	for (user = 0; user < s->callchain_nr && s->callchain[user] != PERF_CONTEXT_USER; user++)
		;
	/* perf adds the caller in front of the leaf's recorded caller: without one, nothing */
	if (user + 2 >= s->callchain_nr)
		return NULL;
	if (!user_reg(s, PERF_REG_ARM64_PC, &pc))
		pc = s->callchain[user + 1];
	u->space = procmap_space(u->pm, s->pid);
	u->last_lo = u->last_hi = 0;
	/* the leaf's PC is where the thread was: its own rule, not its call's */
	if (!leaf_ra_in_lr(u, pc))
		return NULL;
	caller = uw_strip_pac(u->arch, va_bits_with(u, 0), lr);
	/* a frame record the leaf made already holds it (the prologue's window after the store) */
	if (!caller || caller == s->callchain[user + 2])
		return NULL;
	if (!chain_room(u, s->callchain_nr + 1))
		return NULL;
	for (size_t i = 0; i <= user + 1; i++)
		u->chain[n++] = s->callchain[i];
	u->chain[n++] = caller;
	for (size_t i = user + 2; i < s->callchain_nr; i++)
		u->chain[n++] = s->callchain[i];
	u->st.leaf_callers++;
	return chain_done(u, n, nr, built);
}

const struct unwinding_stats *unwinding_stats(const struct unwinding *u)
{
	return &u->st;
}

const uint64_t *unwinding_lbr_chain(struct unwinding *u, const struct rdr_sample *s, bool user_mode,
				    size_t *nr, const struct unwinding_built **built)
{
	size_t n = 0, user;

	*nr = 0;
	for (user = 0; user < s->callchain_nr && s->callchain[user] != PERF_CONTEXT_USER; user++)
		;
	/* no user part, or no call entries to build one from: the recorded chain is all there is */
	if (user == s->callchain_nr)
		return NULL;
	u->st.lbr_samples++;
	if (!s->branch_nr) {
		u->st.lbr_empty++;
		return NULL;
	}
	if (!chain_room(u, user + s->branch_nr + 3))
		return NULL;
	if (user_mode) {
		/*
		 * The sampled IP and the branch stack are of one moment; a kernel part
		 * in the chain (a precise sample's chain is taken at the interrupt,
		 * later) is of another, and so is its user PC.
		 */
		u->chain[n++] = PERF_CONTEXT_USER;
		u->chain[n++] = s->ip;
	} else {
		/*
		 * The kernel part, then the user PC recorded at kernel entry (perf
		 * writes the latest call's target there instead: the entry of the
		 * function or of a PLT stub on the way to it, not where the thread was).
		 */
		for (size_t i = 0; i <= user; i++)
			u->chain[n++] = s->callchain[i];
		u->chain[n++] = user + 1 < s->callchain_nr ? s->callchain[user + 1] : s->branches[0].to;
	}
	for (uint64_t i = 0; i < s->branch_nr; i++)
		if (s->branches[i].from) {
			/* a call site: where the thread was */
			chain_exact(u, n);
			u->chain[n++] = s->branches[i].from;
			u->st.lbr_frames++;
		}
	return chain_done(u, n, nr, built);
}

bool unwinding_pick(struct unwinding *u, const struct rdr_info *info, const struct rdr_event **ev,
		    struct rdr_event *copy, const struct unwinding_built **built)
{
	const struct rdr_sample *s = &(*ev)->u.sample;
	const uint64_t *chain = NULL;
	size_t n = 0;

	*built = NULL;
	if ((*ev)->attr >= 0 && (size_t)(*ev)->attr < info->nr_attrs &&
	    (info->attrs[(*ev)->attr].branch_sample_type & PERF_BRANCH_CALL_STACK) &&
	    (s->sample_type & PERF_SAMPLE_BRANCH_STACK)) {
		/* NULL also when the recorded chain is to be taken */
		chain = unwinding_lbr_chain(u, s, ((*ev)->misc & PERF_MISC_CPUMODE_MASK) == PERF_MISC_USER,
					    &n, built);
	} else if (unwinding_wants(s)) {
		chain = unwinding_chain(u, s, ((*ev)->misc & PERF_MISC_EXACT_IP) != 0, &n, built);
		if (!chain)
			return false;
	} else if (s->regs_user.abi && s->callchain_nr && !(s->sample_type & PERF_SAMPLE_BRANCH_STACK)) {
		/* NULL also when the leaf's caller is not in its link register, or is in the chain */
		chain = unwinding_leaf_chain(u, s, &n, built);
	}
	if (chain) {
		*copy = **ev;
		copy->u.sample.callchain = chain;
		copy->u.sample.callchain_nr = n;
		*ev = copy;
	}
	return true;
}

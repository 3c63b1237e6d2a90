/*
 * Two recordings compared (conv diff): by function, what share of each
 * side's samples a function had by itself (self) and with its callees
 * (total), how much that moved and how much of the move the sampling alone
 * could explain; and the difference as a profile of its own, NEW minus
 * BASE, as `go tool pprof -diff_base` builds it.
 *
 * Functions are named as the top functions are (views/top.h: a location
 * counts for the outermost function of its inline levels), so that a
 * function's entry is the same in both recordings whatever its addresses.
 *
 * The noise bound: a sample lands in a function with probability p, so a
 * side's share of n samples has the binomial standard error
 * sqrt(p (1 - p) / n), and the difference of two independent sides
 * sqrt(p1 (1 - p1) / n1 + p2 (1 - p2) / n2), with Agresti and Caffo's
 * correction (p = (x + 1) / (n + 2)) so that a function of few samples is
 * not taken as certain. Counts compared as they are (same event and
 * period) are Poisson: sqrt(c1 + c2 + 2). The bound is z such errors; a
 * move within it is what two runs of one program show.
 */
#ifndef CONV_VIEWS_DIFF_H
#define CONV_VIEWS_DIFF_H

#include "core/err.h"
#include "core/strtab.h"
#include "views/tree.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct prof;

/*
 * The default z: 4 standard errors. A report compares every function of
 * both sides twice (self, total); at 4 a normal variable is outside the
 * bound in 6 of 100 000 draws, so a report of a few hundred functions of
 * an unchanged program says nothing moved in most runs (at 3, 0.27 %,
 * one of every few such reports would name a function).
 */
#define VIEW_DIFF_Z 4.0

/* One measure (self or total) of one function on both sides. */
struct view_diff_share {
	int64_t base, new;  /* samples (the compared value type) */
	double base_v, new_v; /* shares of each side's total (0..1), or the counts */
	double change;      /* new_v - base_v */
	double noise;       /* z standard errors of change */
	double sig;         /* change in standard errors */
};

struct view_diff_ent {
	const char *name;
	struct view_diff_share self, total;
	double sig; /* the larger |sig| of the two */
	/*
	 * 1: its self or total share grew beyond the noise bound; -1: neither
	 * grew, one shrank beyond it; 0: both within it
	 */
	int moved;
};

struct view_diff {
	struct strtab strs;
	int64_t base_all, new_all; /* each side's total of the compared type */
	bool counts;               /* counts compared as they are, not shares */
	double z;
	/*
	 * every function of either side: those that grew beyond the noise
	 * first (what a regression hunt asks for), then those that shrank
	 * beyond it, then the rest; each group most significant (sig) first
	 */
	struct view_diff_ent *ents;
	size_t nr;
};

/*
 * Compares base's value type base_type with new's new_type, by shares
 * (counts false) or counts, noise bounds at z standard errors. Errors:
 * CONV_E_NOMEM, CONV_E_INVAL (no such type).
 */
enum conv_err view_diff_build(struct view_diff *d, const struct prof *base, size_t base_type,
			      const struct prof *new, size_t new_type, bool counts, double z);
void view_diff_release(struct view_diff *d);

/*
 * How far past its noise bound a share grew, in the units of change: the
 * largest (change - noise) of an entry's self and total; below 0 when it
 * grew by less than its bound.
 */
double view_diff_growth(const struct view_diff_ent *e);

/* A value type of the difference profile: its name and unit, and the tree columns of its two sides. */
struct view_diff_type {
	const char *type, *unit;
	size_t base_col, new_col;
};

/*
 * The difference of t's columns as a profile in out (just made by
 * prof_init): for every stack of frame names with a value on either side,
 * NEW's own values and BASE's negated, the latter labelled pprof::base=true
 * as go tool pprof -diff_base labels them, so that a stack's values sum to
 * NEW - BASE. A location per distinct frame of t (name, file and line; no
 * address: the two recordings' addresses are not one space). types: nr of
 * them (at most VIEW_MAX_COLS / 2), the first the default. Errors:
 * CONV_E_NOMEM, CONV_E_INVAL.
 */
enum conv_err view_diff_model(struct prof *out, const struct view_tree *t,
			      const struct view_diff_type *types, size_t nr);

#endif

/*
 * The views people look at (folded stacks, the flame graph, the summary's
 * top functions) read a finished model through one naming of frames: a
 * frame per inline level of a location (the location's function and the
 * functions inlined into it, as the pprof has them), named as the pprof
 * names them; a location without lines is "LIB+0xOFFSET" (its file offset
 * in LIB, the mapping's file name), "[unknown]" unmapped (as perf names
 * them: one frame, however many stray addresses a walk met).
 *
 * The call tree merges every stack by those names, root first, with one
 * value column per model value type asked for: what folded stacks and the
 * flame graph are written from. It is built when one of them is asked for
 * (its memory grows with distinct call paths, not with samples).
 */
#ifndef CONV_VIEWS_TREE_H
#define CONV_VIEWS_TREE_H

#include "core/err.h"
#include "core/hidx.h"
#include "core/strtab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct prof;

/* A frame's name and where it is (strings of view_names.strs; 0: unknown). */
struct view_frame {
	uint32_t name, lib, build_id, file;
	uint32_t line;
	uint8_t kind;  /* enum prof_map_kind: the flame graph colours them apart */
	bool inlined;  /* inlined into the frame below it */
};

/*
 * The frames of every model location, named once: location l's frames are
 * frame_ids[first[l] .. first[l] + count[l]), outermost first (the order
 * a root-first walk meets them). Frames are deduplicated.
 */
struct view_names {
	struct strtab strs;
	struct view_frame *frames;
	size_t nr_frames, cap_frames;
	struct hidx frame_idx;
	uint32_t *frame_ids;
	uint32_t *first, *count; /* per location */
	size_t nr_frame_ids;
};

enum conv_err view_names_build(struct view_names *n, const struct prof *p);
/*
 * The frames of several models' locations in one table: the locations of
 * ps[k] come after those of ps[0..k) (first[] and count[] indexed by that
 * sum plus the location's id), so that frames of equal names in two
 * recordings are one frame.
 */
enum conv_err view_names_build_many(struct view_names *n, const struct prof *const *ps, size_t nr);
void view_names_release(struct view_names *n);

/*
 * A call tree node. Node 0 is the root (no frame). Children are a list
 * (child, then sibling). frame: the view_frame whose details the node
 * shows: among the frames of this name merged here, the one of the stack
 * that adds the most to the node (first column).
 */
struct view_node {
	uint32_t parent, name; /* name: a string of view_names.strs */
	uint32_t child, sibling; /* UINT32_MAX: none; siblings in name order */
	uint32_t frame;
	int64_t best; /* the value of the stack frame comes from */
};

struct view_tree {
	struct view_names names;
	struct view_node *nodes;
	size_t nr_nodes, cap_nodes;
	struct hidx child_idx;
	int64_t *values; /* nr_nodes * nr_cols: a node's value (itself and below) per column */
	size_t cap_values;
	size_t nr_cols;
};

/*
 * Builds the tree of p's stacks with a value column per model value type
 * in types (nr_cols of them, at most VIEW_MAX_COLS); samples with no
 * positive value in any column are left out. Errors: CONV_E_NOMEM,
 * CONV_E_INVAL (a type out of range).
 */
#define VIEW_MAX_COLS 16
enum conv_err view_tree_build(struct view_tree *t, const struct prof *p, const size_t *types,
			      size_t nr_cols);
/*
 * A value column of a tree over several models: model p's value type
 * `type`. Stacks of two models whose frames have the same names are one
 * path of the tree (conv diff compares recordings so: addresses differ
 * between runs, names do not).
 */
struct view_col {
	const struct prof *p;
	size_t type;
};

/* view_tree_build over the models of cols (same errors); a node's frame is the first model's that has it. */
enum conv_err view_tree_build_cols(struct view_tree *t, const struct view_col *cols, size_t nr_cols);
void view_tree_release(struct view_tree *t);

/*
 * The samples' values summed per stack, nr_cols columns of the model's
 * value types (sv[stack * nr_cols + c]); samples of a stack differ only
 * by their labels. malloc'd; NULL when out of memory.
 */
int64_t *view_stack_values(const struct prof *p, const size_t *types, size_t nr_cols);

static inline int64_t view_value(const struct view_tree *t, uint32_t node, size_t col)
{
	return t->values[(size_t)node * t->nr_cols + col];
}

/*
 * The first event with samples: its count is what folded stacks, the flame
 * graph and the top functions show by default. PROF_NONE when no event has
 * samples.
 */
uint32_t view_first_event(const struct prof *p);

/*
 * The event the views show by default: the CPU-time event
 * (prof.primary_event) when it has samples, so that a sched_switch
 * recorded first is never shown as where the CPU went; else the first
 * event with samples. PROF_NONE when no event has samples.
 */
uint32_t view_main_event(const struct prof *p);

/* The file name of a path ("" and names ending in '/' as they are). */
const char *view_basename(const char *path);
/* The object as perf names it: the file name, or [kernel.kallsyms] for the kernel's map. */
const char *view_object(const char *path);

/*
 * A walk over the tree in preorder, each node's children in name order
 * (as view_tree_build links them), over the nodes whose value in column
 * col is at least min: the order of folded lines and of a flame graph's
 * frames. With max_depth set (after init; 0: no limit), the walk does
 * not go below the nodes at that depth. col VIEW_ANY_COL: the nodes whose
 * value is at least min in some column.
 */
#define VIEW_ANY_COL SIZE_MAX
struct view_walk_item {
	uint32_t node, depth;
};

struct view_walk {
	const struct view_tree *t;
	size_t col;
	int64_t min;
	uint32_t max_depth;
	struct view_walk_item *st; /* to visit; the first by name on top */
	size_t nr, cap;
	bool nomem;
};

/* Starts at the root (depth 0). */
void view_walk_init(struct view_walk *w, const struct view_tree *t, size_t col, int64_t min);
/* The next node and its depth; false at the end, or when out of memory (nomem set). */
bool view_walk_next(struct view_walk *w, uint32_t *node, uint32_t *depth);
void view_walk_release(struct view_walk *w);

#endif

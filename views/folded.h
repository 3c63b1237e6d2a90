/*
 * Folded stacks, the input of flamegraph.pl, inferno, speedscope and many
 * CI tools: a line per distinct stack (frames as view_names names them,
 * root first, joined by ';'), a space, and the stack's value in one column
 * of the tree. Stacks whose frames have the same names are one line. Lines
 * come sorted by their frames (names compared as bytes, root first, a stack
 * before the stacks it is the beginning of), so the output is the same for
 * the same model. A ';' in a name becomes ':' and a line break a space: the
 * format has no escapes.
 */
#ifndef CONV_VIEWS_FOLDED_H
#define CONV_VIEWS_FOLDED_H

#include "core/err.h"
#include "views/tree.h"

#include <stddef.h>
#include <stdint.h>

struct io_flush;

/*
 * Writes column col of t to fd (flush: NULL or fd's background flusher);
 * *bytes (may be NULL) gets the bytes written. Errors: CONV_E_IO (errno's
 * text in diag), CONV_E_NOMEM, CONV_E_INVAL (no such column).
 */
enum conv_err view_write_folded(const struct view_tree *t, size_t col, int fd,
				struct io_flush *flush, uint64_t *bytes, struct conv_diag *diag);

/*
 * The same with a value per column of cols (nr_cols of them, at most
 * VIEW_MAX_COLS) on each line, "stack V1 V2": difffolded.pl's two counts
 * when the columns are two recordings'. A line for each stack with a
 * positive value in some column; 0 in the others.
 */
enum conv_err view_write_folded_cols(const struct view_tree *t, const size_t *cols, size_t nr_cols,
				     int fd, struct io_flush *flush, uint64_t *bytes,
				     struct conv_diag *diag);

#endif

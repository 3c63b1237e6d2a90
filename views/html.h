/*
 * The flame graph: one self-contained HTML file (views/flame.html, built
 * into conv, with the tree's data in it as JSON), which draws the first
 * column and offers the others in a selector. Nothing is requested from
 * outside the file, so it opens from a CI artifact or an e-mail.
 *
 * A node narrower than 1/VIEW_HTML_MIN_SHARE of its column's total is left
 * out with everything under it, as flamegraph.pl leaves out frames under
 * 0.1 pixel, and its parent shows the gap. At 1/200000 a frame left out is
 * under a pixel even zoomed in 100 times on a 2000-pixel-wide window, and
 * the bench/ recordings' pages (224 k and 544 k distinct stacks) keep 26 k
 * and 53 k nodes: 1.0 and 1.7 MB, drawn in 0.1-0.2 s (bench/README.md).
 *
 * A recording can still make more nodes than a browser can take in (a
 * page's cost is its nodes: parsed, laid out, each drawn one a box), so a
 * view holds at most VIEW_HTML_MAX_NODES entries and VIEW_HTML_MAX_DEPTH
 * frames of a stack. Frames deeper than that become one box
 * "... N more frames" on their last kept caller; when the nodes do not fit,
 * the widest are kept (the leftmost first among equals) and a parent's
 * children left out become one box "other" after its kept ones. A box has
 * the value of what it stands for, so every parent's value still adds up,
 * and the page says what the caps left out; the folded stacks and the
 * pprof are never capped.
 */
#ifndef CONV_VIEWS_HTML_H
#define CONV_VIEWS_HTML_H

#include "core/err.h"
#include "views/tree.h"

#include <stddef.h>
#include <stdint.h>

struct io_flush;

#define VIEW_HTML_MIN_SHARE 200000
#define VIEW_HTML_MAX_NODES 100000
#define VIEW_HTML_MAX_DEPTH 1024

struct view_html_opts {
	const char *title, *subtitle;
	/* the page's views: the tree's first nr_views columns (0: all of them) */
	size_t nr_views;
	/* per view: what the selector calls it, and its unit ("samples", "nanoseconds") */
	const char *const *col_names;
	const char *const *col_units;
	/*
	 * A differential page (conv diff) when set: per view, the tree column
	 * of the other recording, whose values the page shows beside the
	 * view's own and colours each frame by the change of its share
	 * (views/diff.h's noise bound at noise_z standard errors); new_view is
	 * the view of NEW (the change is NEW's share minus BASE's, or with
	 * diff_counts its samples minus BASE's, bounded as Poisson counts).
	 * NULL: a page of one profile.
	 */
	const size_t *other_cols;
	size_t new_view;
	double noise_z;
	bool diff_counts;
};

/*
 * Writes the page for t to fd (flush: NULL or fd's background flusher);
 * *bytes (may be NULL) gets the bytes written. Errors: CONV_E_IO (errno's
 * text in diag), CONV_E_NOMEM.
 */
enum conv_err view_write_html(const struct view_tree *t, const struct view_html_opts *o, int fd,
			      struct io_flush *flush, uint64_t *bytes, struct conv_diag *diag);

#endif

#include "views/html.h"

#include "core/satadd.h"
#include "core/io.h"
#include "core/json.h"
#include "core/vec.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* views/flame.html, built in (cmake/embed.cmake) */
extern const unsigned char view_flame_template[];
extern const size_t view_flame_template_len;

#define MARKER "/*CONV-DATA*/"

#define NO_BOX UINT32_MAX

/* What a view leaves out of one kind: call-tree nodes, and what they add to their parents. */
struct omitted {
	uint64_t nodes;
	int64_t value;
};

/*
 * A kept node's children that the caps leave out, drawn as its last child:
 * their value together (their parent's value still holds it), how many
 * call-tree nodes they are with everything under them, and for children
 * below VIEW_HTML_MAX_DEPTH how many frames the deepest goes on.
 */
struct box {
	int64_t value;
	uint64_t nodes;
	uint32_t frames;
	bool deep;
};

/* An entry of a view, in preorder with its depth below the root: a tree node, or a box. */
struct kept {
	uint32_t node, depth;
	uint32_t box; /* NO_BOX: the tree node node; else boxes[box] */
};

/* One view of the page: what it draws, and what it leaves out. */
struct pview {
	struct kept *kept;
	size_t nr_kept, cap_kept;
	struct box *boxes;
	size_t nr_boxes, cap_boxes;
	struct omitted narrow, cap, deep;
	uint32_t deepest; /* frames of the deepest stack */
};

/* A node on the walk's path that is kept: its depth and its box (NO_BOX until a child is left out). */
struct open {
	uint32_t depth, box;
};

static bool pview_put(struct pview *pv, uint32_t node, uint32_t depth, uint32_t box)
{
	if (!vec_reserve((void **)&pv->kept, &pv->cap_kept, pv->nr_kept + 1, sizeof(*pv->kept)))
		return false;
	pv->kept[pv->nr_kept].node = node;
	pv->kept[pv->nr_kept].depth = depth;
	pv->kept[pv->nr_kept++].box = box;
	return true;
}

/* The walk left o's subtree: its box, if any, after its last kept descendant. */
static bool pview_close(struct pview *pv, const struct open *o)
{
	return o->box == NO_BOX || pview_put(pv, UINT32_MAX, o->depth, o->box);
}

/*
 * The entries of column col: the nodes at least min wide (a narrower one
 * is left out with what is under it, and its parent shows the gap), at
 * most VIEW_HTML_MAX_DEPTH deep, and of those the ones wider than above
 * and the first quota (in preorder) as wide as above; what the last two
 * rules leave out goes into its parent's box. Every node of a positive
 * value is counted, kept or left out. False when out of memory.
 */
static bool pview_fill(struct pview *pv, const struct view_tree *t, size_t col, int64_t min,
		       int64_t above, uint64_t quota)
{
	struct view_walk w;
	struct open *open = NULL;
	size_t nr_open = 0, cap_open = 0;
	/* the topmost node left out on the walk's path (depth 0: none), its kind and its box */
	uint32_t cut = 0, cut_box = NO_BOX, cut_from = 0;
	struct omitted *cut_kind = NULL;
	uint32_t node, depth;
	bool ok = true;

	pv->nr_kept = pv->nr_boxes = 0;
	memset(&pv->narrow, 0, sizeof(pv->narrow));
	pv->cap = pv->deep = pv->narrow;
	pv->deepest = 0;
	view_walk_init(&w, t, col, 1);
	while (ok && view_walk_next(&w, &node, &depth)) {
		int64_t v = view_value(t, node, col);
		struct omitted *kind;
		struct open *parent;
		bool boxed;

		if (depth > pv->deepest)
			pv->deepest = depth;
		if (cut && depth <= cut)
			cut = 0;
		if (cut) {
			cut_kind->nodes++;
			if (cut_box != NO_BOX) {
				struct box *b = &pv->boxes[cut_box];

				b->nodes++;
				if (b->deep && depth - cut_from > b->frames)
					b->frames = depth - cut_from;
			}
			continue;
		}
		while (ok && nr_open && open[nr_open - 1].depth >= depth)
			ok = pview_close(pv, &open[--nr_open]);
		if (!ok || !vec_reserve((void **)&open, &cap_open, nr_open + 1, sizeof(*open))) {
			ok = false;
			break;
		}
		if (!node) {
			open[nr_open].depth = 0;
			open[nr_open++].box = NO_BOX;
			continue;
		}
		parent = &open[nr_open - 1];
		boxed = true;
		if (v < min) {
			kind = &pv->narrow;
			boxed = false;
		} else if (depth > VIEW_HTML_MAX_DEPTH) {
			kind = &pv->deep;
		} else if (v < above || (v == above && !quota)) {
			kind = &pv->cap;
		} else {
			if (v == above)
				quota--;
			ok = pview_put(pv, node, depth - 1, NO_BOX);
			open[nr_open].depth = depth;
			open[nr_open++].box = NO_BOX;
			continue;
		}
		kind->nodes++;
		kind->value = satadd_i64(kind->value, v);
		cut = depth;
		cut_kind = kind;
		cut_box = NO_BOX;
		cut_from = parent->depth;
		if (!boxed)
			continue;
		if (parent->box == NO_BOX) {
			if (!vec_reserve((void **)&pv->boxes, &pv->cap_boxes, pv->nr_boxes + 1, sizeof(*pv->boxes))) {
				ok = false;
				break;
			}
			memset(&pv->boxes[pv->nr_boxes], 0, sizeof(pv->boxes[0]));
			pv->boxes[pv->nr_boxes].deep = kind == &pv->deep;
			parent->box = (uint32_t)pv->nr_boxes++;
		}
		cut_box = parent->box;
		pv->boxes[cut_box].value = satadd_i64(pv->boxes[cut_box].value, v);
		pv->boxes[cut_box].nodes++;
		if (pv->boxes[cut_box].deep && !pv->boxes[cut_box].frames)
			pv->boxes[cut_box].frames = 1;
	}
	while (ok && nr_open)
		ok = pview_close(pv, &open[--nr_open]);
	ok = ok && !w.nomem;
	view_walk_release(&w);
	free(open);
	return ok;
}

static int value_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y) - (x > y);
}

/*
 * Column col's view within the caps: the nodes at least min wide, down to
 * VIEW_HTML_MAX_DEPTH, all when they fit in VIEW_HTML_MAX_NODES entries
 * (boxes included); else the widest of them, the leftmost first among
 * equals (a parent is never narrower than its child, nor after it in
 * preorder: the kept nodes hang together), as many as leave room for the
 * boxes. False when out of memory.
 */
static bool pview_build(struct pview *pv, const struct view_tree *t, size_t col, int64_t min)
{
	struct view_walk w;
	int64_t *vals = NULL;
	size_t nr = 0, cap = 0, k;
	uint32_t node, depth;
	bool ok;

	if (!pview_fill(pv, t, col, min, min, UINT64_MAX))
		return false;
	if (pv->nr_kept <= VIEW_HTML_MAX_NODES)
		return true;
	/* too many: the values of the candidates, widest first */
	view_walk_init(&w, t, col, min);
	w.max_depth = VIEW_HTML_MAX_DEPTH;
	ok = true;
	while (ok && view_walk_next(&w, &node, &depth)) {
		if (!node)
			continue;
		ok = vec_reserve((void **)&vals, &cap, nr + 1, sizeof(*vals));
		if (ok)
			vals[nr++] = view_value(t, node, col);
	}
	ok = ok && !w.nomem;
	view_walk_release(&w);
	if (ok)
		qsort(vals, nr, sizeof(*vals), value_desc);
	/* each kept node has one box at most, the root one too: half the entries always leave room */
	k = nr < VIEW_HTML_MAX_NODES ? nr : VIEW_HTML_MAX_NODES;
	for (int round = 0; ok && k && round < 5; round++) {
		int64_t above = vals[k - 1];
		size_t wider = k - 1, excess;

		while (wider > 0 && vals[wider - 1] == above)
			wider--;
		ok = pview_fill(pv, t, col, min, above, k - wider);
		if (!ok || pv->nr_kept <= VIEW_HTML_MAX_NODES)
			break;
		excess = pv->nr_kept - VIEW_HTML_MAX_NODES;
		k = round < 3 && excess < k ? k - excess : VIEW_HTML_MAX_NODES / 2 - 1;
	}
	free(vals);
	return ok;
}

static void pview_release(struct pview *pv)
{
	free(pv->kept);
	free(pv->boxes);
	memset(pv, 0, sizeof(*pv));
}

/* A JSON string literal that cannot end the <script> element it sits in (json_escape_in_script). */
static void put_str(struct dbuf *out, const char *s)
{
	json_escape_in_script(out, s, strlen(s));
}

/* The page's data: what the template's script reads (views/flame.html says the format). */
struct page {
	const struct view_tree *t;
	size_t nr_views; /* the tree's first columns shown */
	struct pview views[VIEW_MAX_COLS];
	uint32_t *frame_map; /* tree frame -> page frame + 1 */
	uint32_t *str_map;   /* tree string -> page string + 1 */
	uint32_t *frames, *strs; /* page order -> tree ids */
	size_t nr_frames, nr_strs;
	/* with boxes: their two frames (deep, cap) and names after the tree's */
	bool boxes;
};

/* The names of the boxes' frames (the page says how many frames each stands for). */
static const char *const box_names[2] = { "\xe2\x80\xa6 more frames", "other" };
#define BOX_KIND 4

static void page_str(struct page *pg, uint32_t s)
{
	if (!pg->str_map[s]) {
		pg->strs[pg->nr_strs] = s;
		pg->str_map[s] = (uint32_t)++pg->nr_strs;
	}
}

/* Numbers the frames and strings the kept nodes use, in order of first use. */
static void page_number(struct page *pg)
{
	const struct view_names *n = &pg->t->names;

	page_str(pg, 0);
	for (size_t c = 0; c < pg->nr_views; c++) {
		const struct pview *pv = &pg->views[c];

		pg->boxes = pg->boxes || pv->nr_boxes;
		for (size_t i = 0; i < pv->nr_kept; i++) {
			uint32_t f;
			const struct view_frame *vf;

			if (pv->kept[i].box != NO_BOX)
				continue;
			f = pg->t->nodes[pv->kept[i].node].frame;
			vf = &n->frames[f];
			if (pg->frame_map[f])
				continue;
			pg->frames[pg->nr_frames] = f;
			pg->frame_map[f] = (uint32_t)++pg->nr_frames;
			page_str(pg, vf->name);
			page_str(pg, vf->lib);
			page_str(pg, vf->build_id);
			page_str(pg, vf->file);
		}
	}
}

/* The page frame of entry k of a view. */
static uint32_t page_frame(const struct page *pg, const struct pview *pv, const struct kept *k)
{
	if (k->box != NO_BOX)
		return (uint32_t)pg->nr_frames + !pv->boxes[k->box].deep;
	return pg->frame_map[pg->t->nodes[k->node].frame] - 1;
}

static void put_u32_array(struct io_out *o, const char *key, const uint32_t *v, size_t n)
{
	dbuf_printf(&o->buf, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++) {
		if (i)
			dbuf_putc(&o->buf, ',');
		dbuf_printf(&o->buf, "%" PRIu32, v[i]);
		io_out_maybe_write(o);
	}
	dbuf_putc(&o->buf, ']');
}

/* What a view leaves out, and its boxes: written only when the caps left something out. */
static void put_omitted(struct io_out *o, const struct pview *pv)
{
	bool first = true;

	if (!pv->cap.nodes && !pv->deep.nodes)
		return;
	dbuf_printf(&o->buf,
		    ",\"omitted\":{\"max_nodes\":%u,\"max_depth\":%u,\"min_share\":%u,"
		    "\"narrow\":[%" PRIu64 ",%" PRId64 "],\"cap\":[%" PRIu64 ",%" PRId64 "],"
		    "\"deep\":[%" PRIu64 ",%" PRId64 "],\"deepest\":%" PRIu32 "},\"boxes\":[",
		    VIEW_HTML_MAX_NODES, VIEW_HTML_MAX_DEPTH, VIEW_HTML_MIN_SHARE, pv->narrow.nodes,
		    pv->narrow.value, pv->cap.nodes, pv->cap.value, pv->deep.nodes, pv->deep.value,
		    pv->deepest);
	for (size_t i = 0; i < pv->nr_kept; i++) {
		const struct box *b;

		if (pv->kept[i].box == NO_BOX)
			continue;
		b = &pv->boxes[pv->kept[i].box];
		dbuf_printf(&o->buf, "%s[%zu,%" PRIu64 ",%" PRIu32 "]", first ? "" : ",", i, b->nodes, b->frames);
		first = false;
		io_out_maybe_write(o);
	}
	dbuf_putc(&o->buf, ']');
}

/*
 * A differential view's other side: its total and, per entry, the other
 * column's value of the same node ("o"; -1 for a box, whose nodes the
 * other side may not have).
 */
static void put_other(struct io_out *o, const struct pview *pv, const struct view_tree *t, size_t col)
{
	dbuf_printf(&o->buf, ",\"ototal\":%" PRId64 ",\"o\":[", view_value(t, 0, col));
	for (size_t i = 0; i < pv->nr_kept; i++) {
		const struct kept *k = &pv->kept[i];

		if (i)
			dbuf_putc(&o->buf, ',');
		dbuf_printf(&o->buf, "%" PRId64, k->box != NO_BOX ? -1 : view_value(t, k->node, col));
		io_out_maybe_write(o);
	}
	dbuf_putc(&o->buf, ']');
}

static void put_data(struct io_out *o, struct page *pg, const struct view_html_opts *opts)
{
	const struct view_tree *t = pg->t;
	const struct view_names *n = &t->names;
	uint32_t *col = NULL;
	size_t ccap = 0;

	dbuf_puts(&o->buf, "{\"title\":");
	put_str(&o->buf, opts->title ? opts->title : "");
	dbuf_puts(&o->buf, ",\"subtitle\":");
	put_str(&o->buf, opts->subtitle ? opts->subtitle : "");
	if (opts->other_cols)
		dbuf_printf(&o->buf, ",\"diff\":{\"new\":%zu,\"z\":%g,\"counts\":%s}", opts->new_view,
			    opts->noise_z, opts->diff_counts ? "true" : "false");
	dbuf_puts(&o->buf, ",\"strings\":[");
	for (size_t i = 0; i < pg->nr_strs; i++) {
		if (i)
			dbuf_putc(&o->buf, ',');
		put_str(&o->buf, strtab_get(&n->strs, pg->strs[i]));
		io_out_maybe_write(o);
	}
	for (size_t i = 0; pg->boxes && i < 2; i++) {
		dbuf_putc(&o->buf, ',');
		put_str(&o->buf, box_names[i]);
	}
	dbuf_puts(&o->buf, "],\"frames\":[");
	for (size_t i = 0; i < pg->nr_frames; i++) {
		const struct view_frame *f = &n->frames[pg->frames[i]];

		dbuf_printf(&o->buf, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%" PRIu32 ",%u,%u]",
			    i ? "," : "", pg->str_map[f->name] - 1, pg->str_map[f->lib] - 1,
			    pg->str_map[f->build_id] - 1, pg->str_map[f->file] - 1, f->line,
			    (unsigned)f->kind, (unsigned)f->inlined);
		io_out_maybe_write(o);
	}
	for (size_t i = 0; pg->boxes && i < 2; i++)
		dbuf_printf(&o->buf, "%s[%zu,0,0,0,0,%d,0]", pg->nr_frames || i ? "," : "", pg->nr_strs + i,
			    BOX_KIND);
	dbuf_puts(&o->buf, "],\"views\":[");
	for (size_t c = 0; c < pg->nr_views; c++) {
		const struct pview *pv = &pg->views[c];
		size_t nk = pv->nr_kept;

		if (!vec_reserve((void **)&col, &ccap, nk ? nk : 1, sizeof(*col))) {
			o->buf.err = true;
			break;
		}
		dbuf_puts(&o->buf, c ? ",{\"name\":" : "{\"name\":");
		put_str(&o->buf, opts->col_names && opts->col_names[c] ? opts->col_names[c] : "");
		dbuf_puts(&o->buf, ",\"unit\":");
		put_str(&o->buf, opts->col_units && opts->col_units[c] ? opts->col_units[c] : "");
		dbuf_printf(&o->buf, ",\"total\":%" PRId64, view_value(t, 0, c));
		for (size_t i = 0; i < nk; i++)
			col[i] = page_frame(pg, pv, &pv->kept[i]);
		put_u32_array(o, "f", col, nk);
		for (size_t i = 0; i < nk; i++)
			col[i] = pv->kept[i].depth;
		put_u32_array(o, "d", col, nk);
		dbuf_puts(&o->buf, ",\"v\":[");
		for (size_t i = 0; i < nk; i++) {
			const struct kept *k = &pv->kept[i];

			if (i)
				dbuf_putc(&o->buf, ',');
			dbuf_printf(&o->buf, "%" PRId64,
				    k->box != NO_BOX ? pv->boxes[k->box].value : view_value(t, k->node, c));
			io_out_maybe_write(o);
		}
		dbuf_putc(&o->buf, ']');
		if (opts->other_cols)
			put_other(o, pv, t, opts->other_cols[c]);
		put_omitted(o, pv);
		dbuf_putc(&o->buf, '}');
	}
	dbuf_puts(&o->buf, "]}");
	free(col);
}

static void page_release(struct page *pg)
{
	for (size_t c = 0; c < VIEW_MAX_COLS; c++)
		pview_release(&pg->views[c]);
	free(pg->frame_map);
	free(pg->str_map);
	free(pg->frames);
	free(pg->strs);
}

enum conv_err view_write_html(const struct view_tree *t, const struct view_html_opts *opts, int fd,
			      struct io_flush *flush, uint64_t *bytes, struct conv_diag *diag)
{
	const char *tpl = (const char *)view_flame_template, *mark = strstr(tpl, MARKER);
	const struct view_names *n = &t->names;
	struct io_out o;
	struct page pg;
	bool ok;

	if (!mark)
		return conv_fail(diag, CONV_E_INVAL, UINT64_MAX, "the flame graph template has no data marker");
	memset(&pg, 0, sizeof(pg));
	pg.t = t;
	pg.frame_map = calloc(n->nr_frames ? n->nr_frames : 1, sizeof(*pg.frame_map));
	pg.frames = malloc((n->nr_frames ? n->nr_frames : 1) * sizeof(*pg.frames));
	pg.str_map = calloc(n->strs.count ? n->strs.count : 1, sizeof(*pg.str_map));
	pg.strs = malloc((n->strs.count ? n->strs.count : 1) * sizeof(*pg.strs));
	ok = pg.frame_map && pg.frames && pg.str_map && pg.strs;
	pg.nr_views = opts->nr_views && opts->nr_views < t->nr_cols ? opts->nr_views : t->nr_cols;
	for (size_t c = 0; ok && c < pg.nr_views; c++) {
		int64_t total = view_value(t, 0, c);
		int64_t min = total / VIEW_HTML_MIN_SHARE;

		ok = pview_build(&pg.views[c], t, c, min > 0 ? min : 1);
	}
	if (!ok) {
		page_release(&pg);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	}
	page_number(&pg);
	io_out_init(&o, fd, flush);
	dbuf_append(&o.buf, tpl, (size_t)(mark - tpl));
	put_data(&o, &pg, opts);
	dbuf_append(&o.buf, mark + strlen(MARKER),
		    view_flame_template_len - (size_t)(mark - tpl) - strlen(MARKER));
	page_release(&pg);
	return io_out_finish(&o, bytes, diag);
}

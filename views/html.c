#include "views/html.h"

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

/* A node to write: preorder, with its depth below the root. */
struct kept {
	uint32_t node, depth;
};

/*
 * The nodes of column col at least min wide, in preorder with children by
 * name (the order flame graphs draw them, left to right); false when out
 * of memory.
 */
static bool kept_nodes(const struct view_tree *t, size_t col, int64_t min, struct kept **out,
		       size_t *nr_out)
{
	struct view_walk w;
	struct kept *k = NULL;
	size_t nk = 0, ck = 0;
	uint32_t node, depth;
	bool ok = true;

	view_walk_init(&w, t, col, min);
	while (ok && view_walk_next(&w, &node, &depth)) {
		if (!node)
			continue; /* the root is the page's "all" */
		ok = vec_reserve((void **)&k, &ck, nk + 1, sizeof(*k));
		if (ok) {
			k[nk].node = node;
			k[nk++].depth = depth - 1;
		}
	}
	ok = ok && !w.nomem;
	view_walk_release(&w);
	if (!ok) {
		free(k);
		return false;
	}
	*out = k;
	*nr_out = nk;
	return true;
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
	struct kept *kept[VIEW_MAX_COLS];
	size_t nr_kept[VIEW_MAX_COLS];
	uint32_t *frame_map; /* tree frame -> page frame + 1 */
	uint32_t *str_map;   /* tree string -> page string + 1 */
	uint32_t *frames, *strs; /* page order -> tree ids */
	size_t nr_frames, nr_strs;
};

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
		for (size_t i = 0; i < pg->nr_kept[c]; i++) {
			uint32_t f = pg->t->nodes[pg->kept[c][i].node].frame;
			const struct view_frame *vf = &n->frames[f];

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
	dbuf_puts(&o->buf, ",\"strings\":[");
	for (size_t i = 0; i < pg->nr_strs; i++) {
		if (i)
			dbuf_putc(&o->buf, ',');
		put_str(&o->buf, strtab_get(&n->strs, pg->strs[i]));
		io_out_maybe_write(o);
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
	dbuf_puts(&o->buf, "],\"views\":[");
	for (size_t c = 0; c < pg->nr_views; c++) {
		size_t nk = pg->nr_kept[c];

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
			col[i] = pg->frame_map[t->nodes[pg->kept[c][i].node].frame] - 1;
		put_u32_array(o, "f", col, nk);
		for (size_t i = 0; i < nk; i++)
			col[i] = pg->kept[c][i].depth;
		put_u32_array(o, "d", col, nk);
		dbuf_puts(&o->buf, ",\"v\":[");
		for (size_t i = 0; i < nk; i++) {
			if (i)
				dbuf_putc(&o->buf, ',');
			dbuf_printf(&o->buf, "%" PRId64, view_value(t, pg->kept[c][i].node, c));
			io_out_maybe_write(o);
		}
		dbuf_puts(&o->buf, "]}");
	}
	dbuf_puts(&o->buf, "]}");
	free(col);
}

static void page_release(struct page *pg)
{
	for (size_t c = 0; c < VIEW_MAX_COLS; c++)
		free(pg->kept[c]);
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

		ok = kept_nodes(t, c, min > 0 ? min : 1, &pg.kept[c], &pg.nr_kept[c]);
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

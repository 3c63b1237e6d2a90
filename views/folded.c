#include "views/folded.h"

#include "core/io.h"
#include "core/vec.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Appends name to the line, with what the format cannot hold replaced. */
static void put_name(struct dbuf *b, const char *s)
{
	size_t n = strlen(s);

	if (!dbuf_reserve(b, n))
		return;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		b->data[b->len++] = (unsigned char)(c == ';' ? ':' : c == '\n' || c == '\r' ? ' ' : c);
	}
}

enum conv_err view_write_folded(const struct view_tree *t, size_t col, int fd,
				struct io_flush *flush, uint64_t *bytes, struct conv_diag *diag)
{
	return view_write_folded_cols(t, &col, 1, fd, flush, bytes, diag);
}

enum conv_err view_write_folded_cols(const struct view_tree *t, const size_t *cols, size_t nr_cols,
				     int fd, struct io_flush *flush, uint64_t *bytes,
				     struct conv_diag *diag)
{
	struct io_out o;
	struct dbuf line;
	struct view_walk w;
	size_t *plen = NULL, cap_plen = 0;
	uint32_t node, depth;
	bool nomem = false;

	if (!nr_cols || nr_cols > VIEW_MAX_COLS)
		return conv_fail(diag, CONV_E_INVAL, UINT64_MAX, "%zu value columns", nr_cols);
	for (size_t c = 0; c < nr_cols; c++)
		if (cols[c] >= t->nr_cols)
			return conv_fail(diag, CONV_E_INVAL, UINT64_MAX, "no value column %zu", cols[c]);
	io_out_init(&o, fd, flush);
	dbuf_init(&line, 0);
	/* the stacks with a positive value: a line where a node's own value is */
	view_walk_init(&w, t, nr_cols == 1 ? cols[0] : VIEW_ANY_COL, 1);
	while (!o.io_errno && view_walk_next(&w, &node, &depth)) {
		const struct view_node *nd = &t->nodes[node];
		int64_t self[VIEW_MAX_COLS];
		bool any = false;

		if (!vec_reserve((void **)&plen, &cap_plen, depth + 1, sizeof(*plen))) {
			nomem = true;
			break;
		}
		if (node) {
			/* the parent's line, then this frame */
			line.len = plen[depth - 1];
			if (depth > 1)
				dbuf_putc(&line, ';');
			put_name(&line, strtab_get(&t->names.strs, nd->name));
		} else {
			line.len = 0;
		}
		plen[depth] = line.len;
		for (size_t k = 0; k < nr_cols; k++) {
			self[k] = view_value(t, node, cols[k]);
			for (uint32_t c = nd->child; c != UINT32_MAX; c = t->nodes[c].sibling)
				self[k] -= view_value(t, c, cols[k]);
			any = any || self[k] > 0;
		}
		if (node && any) {
			dbuf_append(&o.buf, line.data, line.len);
			for (size_t k = 0; k < nr_cols; k++)
				dbuf_printf(&o.buf, " %" PRId64, self[k] > 0 ? self[k] : 0);
			dbuf_putc(&o.buf, '\n');
			io_out_maybe_write(&o);
		}
		nomem = nomem || line.err;
	}
	nomem = nomem || w.nomem;
	view_walk_release(&w);
	free(plen);
	dbuf_release(&line);
	if (nomem) {
		o.buf.err = true;
		(void)io_out_finish(&o, bytes, NULL);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	}
	return io_out_finish(&o, bytes, diag);
}

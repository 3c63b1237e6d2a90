#include "views/folded.h"

#include "core/vec.h"
#include "views/out.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A child to visit: sorted by (rank, node), pushed in reverse so that the smallest comes first. */
struct visit {
	uint32_t rank, node;
	uint32_t depth;
};

static int visit_cmp_desc(const void *a, const void *b)
{
	const struct visit *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? 1 : -1;
	return (x->node < y->node) - (x->node > y->node);
}

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
	struct view_out o;
	struct dbuf line;
	struct visit *stack = NULL;
	size_t nr = 0, cap = 0, *plen = NULL, cap_plen = 0;
	uint32_t *rank;
	bool nomem = false;

	if (col >= t->nr_cols)
		return conv_fail(diag, CONV_E_INVAL, UINT64_MAX, "no value column %zu", col);
	rank = view_name_ranks(&t->names.strs);
	if (!rank)
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	view_out_init(&o, fd, flush);
	dbuf_init(&line, 0);
	/* the root's children first; each visited node pushes its own */
	if (vec_reserve((void **)&stack, &cap, 1, sizeof(*stack))) {
		stack[nr].node = 0;
		stack[nr].depth = 0;
		stack[nr++].rank = 0;
	} else {
		nomem = true;
	}
	while (nr && !nomem && !o.io_errno) {
		struct visit v = stack[--nr];
		const struct view_node *nd = &t->nodes[v.node];
		int64_t self = view_value(t, v.node, col);
		size_t first = nr;

		if (!vec_reserve((void **)&plen, &cap_plen, v.depth + 2, sizeof(*plen))) {
			nomem = true;
			break;
		}
		if (v.node) {
			/* the parent's line, then this frame */
			line.len = plen[v.depth - 1];
			if (v.depth > 1)
				dbuf_putc(&line, ';');
			put_name(&line, strtab_get(&t->names.strs, nd->name));
		} else {
			line.len = 0;
		}
		plen[v.depth] = line.len;
		for (uint32_t c = nd->child; c != UINT32_MAX; c = t->nodes[c].sibling) {
			self -= view_value(t, c, col);
			if (view_value(t, c, col) <= 0)
				continue;
			if (!vec_reserve((void **)&stack, &cap, nr + 1, sizeof(*stack))) {
				nomem = true;
				break;
			}
			stack[nr].node = c;
			stack[nr].rank = rank[t->nodes[c].name];
			stack[nr++].depth = v.depth + 1;
		}
		qsort(stack + first, nr - first, sizeof(*stack), visit_cmp_desc);
		if (v.node && self > 0) {
			dbuf_append(&o.buf, line.data, line.len);
			dbuf_printf(&o.buf, " %" PRId64 "\n", self);
			view_out_maybe_flush(&o);
		}
		nomem = nomem || line.err;
	}
	free(stack);
	free(plen);
	free(rank);
	dbuf_release(&line);
	if (nomem) {
		o.buf.err = true;
		(void)view_out_finish(&o, bytes, NULL);
		return conv_fail(diag, CONV_E_NOMEM, UINT64_MAX, "out of memory");
	}
	return view_out_finish(&o, bytes, diag);
}

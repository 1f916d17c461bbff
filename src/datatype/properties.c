/*
 * Whether one element touches any memory byte twice (needed to unpack).
 *
 * Monotone nodes never do. Otherwise a node is accepted when its pieces do
 * not overlap each other and none overlaps itself: VEC copies whose span
 * fits the |stride|, LIST entries and SEQ parts whose spans are disjoint
 * once sorted. Spans are bounding intervals, so the answer is conservative:
 * 0 can mean "interleaved but disjoint".
 */
#include <stdlib.h>

#include "base/alloc.h"
#include "datatype/datatype_int.h"

typedef struct span {
    MPI_Count lo, hi;
} span_t;

static int by_lo(const void *a, const void *b)
{
    MPI_Count x = ((const span_t *)a)->lo, y = ((const span_t *)b)->lo;
    return (x > y) - (x < y);
}

static int disjoint(span_t *spans, MPI_Count n)
{
    qsort(spans, (size_t)n, sizeof *spans, by_lo);
    for (MPI_Count i = 1; i < n; i++)
        if (spans[i].lo < spans[i - 1].hi) return 0;
    return 1;
}

static int rep_ok(const ferry__dt_node_t *c, MPI_Count n, MPI_Count stride)
{
    MPI_Count step = stride < 0 ? -stride : stride;
    return ferry__dt_nonoverlapping(c) && (n == 1 || step >= c->hi - c->lo);
}

/* Spans of a LIST's entries or a SEQ's parts, each checked on its own. */
static int pieces_ok(const ferry__dt_node_t *nd)
{
    span_t *spans = ferry__malloc((size_t)nd->count * sizeof *spans);
    if (!spans) return 0;
    int ok = 1;
    const ferry__dt_node_t *c = nd->child;
    for (MPI_Count i = 0; i < nd->count && ok; i++) {
        if (nd->kind == FERRY__DT_SEQ) {
            spans[i] = (span_t){nd->parts[i]->lo, nd->parts[i]->hi};
            ok = ferry__dt_nonoverlapping(nd->parts[i]);
        } else if (!c) {
            spans[i] = (span_t){nd->disps[i], nd->disps[i] + ferry__dt_len(nd, i)};
        } else {
            MPI_Count last = (ferry__dt_len(nd, i) - 1) * c->extent;
            spans[i] = (span_t){nd->disps[i] + c->lo + (last < 0 ? last : 0), nd->disps[i] + c->hi + (last > 0 ? last : 0)};
            ok = rep_ok(c, ferry__dt_len(nd, i), c->extent);
        }
    }
    ok = ok && disjoint(spans, nd->count);
    ferry__free(spans);
    return ok;
}

int ferry__dt_nonoverlapping(const ferry__dt_node_t *nd)
{
    if (nd->monotone) return 1;
    switch (nd->kind) {
    case FERRY__DT_LEAF: return 1;
    case FERRY__DT_VEC: return rep_ok(nd->child, nd->count, nd->stride);
    default: return pieces_ok(nd);
    }
}

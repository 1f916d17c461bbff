/*
 * Navigation inside one element's stream, O(depth) (times log entries at
 * LIST and SEQ levels): where stream byte r lies, how long the contiguous
 * run starting there is, and, for monotone nodes, how many stream bytes lie
 * below a byte offset. Offsets are relative to the element's origin.
 */
#include "datatype/datatype_int.h"

/* One level down toward stream byte *r of nd: returns the child holding it
 * (with *r made relative to it and its placement added to *off), or NULL
 * when nd places the byte directly, *run then being the bytes left in its
 * contiguous run. */
static const ferry__dt_node_t *step(const ferry__dt_node_t *nd, MPI_Count *r, MPI_Count *off, MPI_Count *run)
{
    *off += nd->disp;
    if (nd->kind == FERRY__DT_LEAF) {
        *off += *r;
        *run = nd->size - *r;
        return NULL;
    }
    if (nd->kind == FERRY__DT_VEC) {
        *off += *r / nd->child->size * nd->stride;
        *r %= nd->child->size;
        return nd->child;
    }
    MPI_Count i = ferry__dt_entry(nd, *r);
    *r -= ferry__dt_before(nd, i);
    if (nd->kind == FERRY__DT_SEQ) return nd->parts[i];
    *off += nd->disps[i];
    if (!nd->child) {
        *off += *r;
        *run = ferry__dt_len(nd, i) - *r;
        return NULL;
    }
    *off += *r / nd->child->size * nd->child->extent;
    *r %= nd->child->size;
    return nd->child;
}

MPI_Count ferry__dt_offset(const ferry__dt_node_t *nd, MPI_Count r)
{
    MPI_Count off = 0, run;
    while ((nd = step(nd, &r, &off, &run))) continue;
    return off;
}

MPI_Count ferry__dt_locate(const ferry__dt_node_t *nd, MPI_Count r, MPI_Count *run)
{
    MPI_Count off = 0;
    while ((nd = step(nd, &r, &off, run))) continue;
    return off;
}

static MPI_Count below_rep(const ferry__dt_node_t *c, MPI_Count n, MPI_Count stride, MPI_Count x);

/* Lowest byte of LIST entry i / SEQ part i, relative to nd's origin. */
static MPI_Count entry_lo(const ferry__dt_node_t *nd, MPI_Count i)
{
    if (nd->kind == FERRY__DT_SEQ) return nd->parts[i]->lo;
    return nd->disps[i] + (nd->child ? nd->child->lo : 0);
}

/* Last entry starting at or below y (entries are in address order). */
static MPI_Count find_entry(const ferry__dt_node_t *nd, MPI_Count y)
{
    MPI_Count lo = 0, hi = nd->count - 1;
    while (lo < hi) {
        MPI_Count mid = lo + (hi - lo + 1) / 2;
        if (entry_lo(nd, mid) <= y)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

MPI_Count ferry__dt_below(const ferry__dt_node_t *nd, MPI_Count x)
{
    if (x <= nd->lo) return 0;
    if (x >= nd->hi) return nd->size;
    MPI_Count y = x - nd->disp;
    switch (nd->kind) {
    case FERRY__DT_LEAF: return y;
    case FERRY__DT_VEC: return below_rep(nd->child, nd->count, nd->stride, y);
    case FERRY__DT_SEQ: {
        MPI_Count i = find_entry(nd, y);
        return ferry__dt_before(nd, i) + ferry__dt_below(nd->parts[i], y);
    }
    case FERRY__DT_LIST: break;
    }
    MPI_Count i = find_entry(nd, y), d = y - nd->disps[i];
    MPI_Count len = ferry__dt_len(nd, i);
    if (!nd->child) return ferry__dt_before(nd, i) + (d < len ? d : len);
    return ferry__dt_before(nd, i) + below_rep(nd->child, len, nd->child->extent, d);
}

/* Stream bytes below x in n monotone copies of c at j * stride. */
static MPI_Count below_rep(const ferry__dt_node_t *c, MPI_Count n, MPI_Count stride, MPI_Count x)
{
    if (x <= c->lo) return 0;
    MPI_Count j = n > 1 ? (x - c->lo) / stride : 0;
    if (j >= n) return n * c->size;
    return j * c->size + ferry__dt_below(c, x - j * stride);
}

MPI_Count ferry__dt_below_count(const ferry__dt_node_t *c, MPI_Count n, MPI_Count stride, MPI_Count x)
{
    return below_rep(c, n, stride, x);
}

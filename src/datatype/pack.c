/*
 * The window walk: copy stream bytes [skip, skip + len) of n copies of a
 * node between memory and a contiguous stream, in either direction.
 *
 * At each level the window is a partial first element, a run of whole
 * elements and a partial last element. Partial elements descend one level
 * (so a window costs O(depth) to position, whatever skip is); whole
 * elements go to `whole`, which hands leaf blocks, vectors of leaf blocks and
 * byte-run lists to the copy kernels. After a partial first block the bulk
 * of the window is back on the fast kernel.
 *
 * Addresses are formed with ferry__datatype_at (integer arithmetic) because
 * base may be MPI_BOTTOM with absolute displacements.
 */
#include "datatype/datatype_int.h"

typedef ferry__dt_io_t walk_t;

static void walk_rep(const ferry__dt_node_t *c, char *base, MPI_Count stride, MPI_Count skip, MPI_Count len,
                     walk_t *w);

static char *at(const char *base, MPI_Count delta)
{
    return ferry__datatype_at(base, delta);
}

static void copy_bytes(char *mem, MPI_Count len, walk_t *w)
{
    if (w->dir == FERRY__DT_PACK)
        ferry__dt_copy_block(w->stream, mem, len);
    else
        ferry__dt_copy_block(mem, w->stream, len);
    w->stream += len;
}

/* Window [skip, skip + len) of the entries of a LIST or the parts of a SEQ. */
static void walk_entries(const ferry__dt_node_t *nd, char *base, MPI_Count skip, MPI_Count len, walk_t *w)
{
    for (MPI_Count i = ferry__dt_entry(nd, skip); len > 0; i++) {
        MPI_Count r = skip - ferry__dt_before(nd, i), take = ferry__dt_before(nd, i + 1) - skip;
        take = take < len ? take : len;
        if (nd->kind == FERRY__DT_SEQ)
            walk_rep(nd->parts[i], base, 0, r, take, w);
        else if (!nd->child)
            copy_bytes(at(base, nd->disps[i] + r), take, w);
        else
            walk_rep(nd->child, at(base, nd->disps[i]), nd->child->extent, r, take, w);
        skip += take;
        len -= take;
    }
}

/* Part of one element: bytes [skip, skip + len) of nd at base. */
static void walk_elem(const ferry__dt_node_t *nd, char *base, MPI_Count skip, MPI_Count len, walk_t *w)
{
    base = at(base, nd->disp);
    switch (nd->kind) {
    case FERRY__DT_LEAF: copy_bytes(at(base, skip), len, w); break;
    case FERRY__DT_VEC: walk_rep(nd->child, base, nd->stride, skip, len, w); break;
    case FERRY__DT_LIST:
    case FERRY__DT_SEQ: walk_entries(nd, base, skip, len, w); break;
    }
}

/* Struct field lists: n copies of a byte-run LIST. */
static void whole_runs(const ferry__dt_node_t *nd, char *base, MPI_Count stride, MPI_Count n, walk_t *w)
{
    char *s = w->stream;
    for (MPI_Count j = 0; j < n; j++) {
        char *elem = at(base, j * stride + nd->disp);
        for (MPI_Count i = 0; i < nd->count; i++) {
            MPI_Count len = ferry__dt_len(nd, i);
            if (w->dir == FERRY__DT_PACK)
                ferry__dt_copy_block(s, elem + nd->disps[i], len);
            else
                ferry__dt_copy_block(elem + nd->disps[i], s, len);
            s += len;
        }
    }
    w->stream = s;
}

static MPI_Count magnitude(MPI_Count x)
{
    return x < 0 ? -x : x;
}

enum { TILE = 8 };

/* A column-wise grid (an FFT transpose), TILE rows at a time: each tile
 * walks memory along its short stride and the stream as TILE runs, so both
 * sides stay within a few cache lines. Block order is free: each block has
 * its own place on both sides. */
static void tiles(const ferry__dt_node_t *nd, char *mem, MPI_Count stride, MPI_Count n, walk_t *w)
{
    const ferry__dt_node_t *leaf = nd->child;
    MPI_Count len = leaf->size, row = nd->count * len;
    for (MPI_Count o = 0; o < n; o += TILE) {
        MPI_Count rows = n - o < TILE ? n - o : TILE;
        char *m = at(mem, o * stride), *st = w->stream + o * row;
        ferry__dt_grid_t to_stream = {nd->count, rows, len, row, nd->stride, stride};
        ferry__dt_grid_t to_mem = {nd->count, rows, nd->stride, stride, len, row};
        if (w->dir == FERRY__DT_PACK)
            leaf->copy2(st, m, &to_stream, len);
        else
            leaf->copy2(m, st, &to_mem, len);
    }
    w->stream += n * nd->size;
}

/* Vectors of leaf blocks: one two-level kernel call, or tiles when the
 * memory's inner stride is the long one. */
static void whole_grid(const ferry__dt_node_t *nd, char *base, MPI_Count stride, MPI_Count n, walk_t *w)
{
    const ferry__dt_node_t *leaf = nd->child;
    MPI_Count len = leaf->size;
    char *mem = at(base, nd->disp + leaf->disp);
    if (magnitude(nd->stride) > magnitude(stride) && n >= 2 * TILE) {
        tiles(nd, mem, stride, n, w);
        return;
    }
    if (w->dir == FERRY__DT_PACK) {
        ferry__dt_grid_t g = {n, nd->count, nd->count * len, len, stride, nd->stride};
        leaf->copy2(w->stream, mem, &g, len);
    } else {
        ferry__dt_grid_t g = {n, nd->count, stride, nd->stride, nd->count * len, len};
        leaf->copy2(mem, w->stream, &g, len);
    }
    w->stream += n * nd->size;
}

/* n whole copies of nd at base + j * stride. */
static void walk_whole(const ferry__dt_node_t *nd, char *base, MPI_Count stride, MPI_Count n, walk_t *w)
{
    if (nd->kind == FERRY__DT_LEAF) {
        char *mem = at(base, nd->disp);
        if (w->dir == FERRY__DT_PACK)
            nd->copy(w->stream, nd->size, mem, stride, n, nd->size);
        else
            nd->copy(mem, stride, w->stream, nd->size, n, nd->size);
        w->stream += n * nd->size;
    } else if (nd->kind == FERRY__DT_VEC && nd->child->kind == FERRY__DT_LEAF) {
        whole_grid(nd, base, stride, n, w);
    } else if (nd->kind == FERRY__DT_LIST && !nd->child) {
        whole_runs(nd, base, stride, n, w);
    } else {
        for (MPI_Count j = 0; j < n; j++) walk_elem(nd, at(base, j * stride), 0, nd->size, w);
    }
}

/* Bytes [skip, skip + len) of copies of c at base + j * stride. */
static void walk_rep(const ferry__dt_node_t *c, char *base, MPI_Count stride, MPI_Count skip, MPI_Count len,
                     walk_t *w)
{
    MPI_Count i = skip / c->size, off = skip % c->size;
    if (off != 0) {
        MPI_Count take = c->size - off < len ? c->size - off : len;
        walk_elem(c, at(base, i * stride), off, take, w);
        len -= take;
        i++;
    }
    if (len >= c->size) {
        MPI_Count whole = len / c->size;
        walk_whole(c, at(base, i * stride), stride, whole, w);
        i += whole;
        len -= whole * c->size;
    }
    if (len > 0) walk_elem(c, at(base, i * stride), 0, len, w);
}

void ferry__dt_walk(const ferry__dt_node_t *node, char *base, MPI_Count stride, MPI_Count skip, MPI_Count len,
                    ferry__dt_io_t *io)
{
    if (node && len > 0) walk_rep(node, base, stride, skip, len, io);
}

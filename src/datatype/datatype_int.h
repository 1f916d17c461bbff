/*
 * datatype internals: the normalized type tree shared by the module's files.
 *
 * A decoded datatype is a tree of four node kinds. Every node describes the
 * stream of ONE element: `size` bytes, found at byte offsets relative to the
 * element's origin (the buf + i * extent of the MPI call). `disp` shifts the
 * whole node; `lo`/`hi` bound the bytes it touches (disp included).
 *
 *   LEAF  bytes [disp, disp + size) in order.
 *   VEC   `count` copies of `child`, copy j at disp + j * stride.
 *   LIST  `count` entries; entry i is len(i) copies of `child` at
 *         disp + disps[i] + j * child->extent, or, when child is NULL,
 *         the len(i) bytes at disp + disps[i]. len(i) follows from the
 *         prefix array, or is `uniform` for every entry when prefix is
 *         NULL: 16 bytes per entry, 8 for indexed_block-like lists.
 *   SEQ   `count` parts in stream order, part i shifted by disp.
 *
 * Invariants after normalization (build.c): no node has size 0 (an empty
 * type is a NULL tree), no VEC has count < 2, a VEC over a LEAF never has
 * stride == leaf size (that is a longer LEAF), nested VECs whose strides line
 * up are folded, LIST entries are nonempty and byte-run entries that touch
 * are merged. The byte stream order is never changed. The tree's size
 * depends on the number of distinct blocks the user listed (indexed, struct),
 * never on counts.
 *
 * ferry__dt_before(nd, i) (LIST, SEQ) is the stream bytes before entry/part
 * i, so navigation binary-searches it: O(depth * log entries), no counts
 * walked.
 */
#ifndef FERRY_DATATYPE_INT_H
#define FERRY_DATATYPE_INT_H

#include <stdatomic.h>
#include <stddef.h>

#include "datatype/datatype.h"
#include "datatype/kernels/kernels.h"

typedef enum { FERRY__DT_LEAF, FERRY__DT_VEC, FERRY__DT_LIST, FERRY__DT_SEQ } ferry__dt_kind_t;

typedef struct ferry__dt_node ferry__dt_node_t;
struct ferry__dt_node {
    ferry__dt_kind_t kind;
    int monotone; /* each stream byte lies above the previous one (implies no overlap) */
    MPI_Count disp;
    MPI_Count size;   /* stream bytes of one element */
    MPI_Count extent; /* stride when a LIST or the caller repeats the node */
    MPI_Count lo, hi; /* bytes touched lie in [lo, hi) */
    MPI_Count count;  /* VEC copies, LIST entries, SEQ parts */
    MPI_Count stride; /* VEC */
    ferry__dt_node_t *child;  /* VEC, LIST (NULL: byte runs) */
    MPI_Count *disps;         /* LIST */
    MPI_Count *lens;          /* LIST while it is built; NULL once finished */
    MPI_Count uniform;        /* LIST without prefix: every entry's length */
    MPI_Count *prefix;        /* SEQ, LIST unless uniform: count + 1 entries */
    ferry__dt_node_t **parts; /* SEQ */
    ferry__dt_copy_fn *copy;   /* LEAF: kernels for blocks of this size */
    ferry__dt_copy2_fn *copy2;
};

/* A decoded type as cached on the MPI datatype (shared by its dups). */
typedef struct ferry__dt_tree {
    atomic_int refs;
    ferry__dt_node_t *root; /* NULL for a type of size 0 */
    MPI_Count lb, extent, true_lb, true_extent, size;
    int nonoverlapping;
    size_t nodes, bytes; /* footprint of the tree */
} ferry__dt_tree_t;

/* --- build.c: node constructors that normalize; each takes ownership of
 * its node arguments (also on failure) and returns 0 or MPI_ERR_NO_MEM. */
int ferry__dt_leaf(MPI_Count disp, MPI_Count len, MPI_Count extent, ferry__dt_node_t **out);
/* n copies of child at j * stride. */
int ferry__dt_rep(MPI_Count n, MPI_Count stride, ferry__dt_node_t *child, ferry__dt_node_t **out);
/* n entries: lens[i] copies of child (bytes when child is NULL) at disps[i].
 * Takes ownership of disps and lens (ferry__malloc'ed). */
int ferry__dt_list(MPI_Count n, MPI_Count *disps, MPI_Count *lens, ferry__dt_node_t *child,
                   ferry__dt_node_t **out);
/* n parts in stream order; takes the parts array (ferry__malloc'ed). NULL parts are dropped. */
int ferry__dt_seq(MPI_Count n, ferry__dt_node_t **parts, ferry__dt_node_t **out);
void ferry__dt_shift(ferry__dt_node_t *node, MPI_Count delta);
int ferry__dt_clone(const ferry__dt_node_t *node, ferry__dt_node_t **out);
void ferry__dt_node_free(ferry__dt_node_t *node);
/* Conservative: 1 when no memory byte is touched twice by one element. */
int ferry__dt_nonoverlapping(const ferry__dt_node_t *node);
void ferry__dt_footprint(const ferry__dt_node_t *node, size_t *nodes, size_t *bytes);
/* Index of the LIST entry / SEQ part holding stream byte r (r < size). */
MPI_Count ferry__dt_entry(const ferry__dt_node_t *nd, MPI_Count r);

/* Length of LIST entry i, in child copies (bytes when child is NULL). */
static inline MPI_Count ferry__dt_len(const ferry__dt_node_t *nd, MPI_Count i)
{
    if (!nd->prefix) return nd->uniform;
    MPI_Count bytes = nd->prefix[i + 1] - nd->prefix[i];
    return nd->child ? bytes / nd->child->size : bytes;
}

/* Stream bytes before LIST entry / SEQ part i (i <= count). */
static inline MPI_Count ferry__dt_before(const ferry__dt_node_t *nd, MPI_Count i)
{
    return nd->prefix ? nd->prefix[i] : i * nd->uniform * (nd->child ? nd->child->size : 1);
}

/* --- decode.c, decode_array.c: host datatype -> tree. */
int ferry__dt_decode(MPI_Datatype type, ferry__dt_node_t **out);
/* *named: type is predefined (named or f90: no attributes, no free). */
int ferry__dt_is_named(MPI_Datatype type, int *named);
/* A subarray's or darray's arguments, counts widened. */
typedef struct ferry__dt_array {
    int ndims, order;
    MPI_Count *sizes;             /* subarray sizes, darray gsizes */
    MPI_Count *subsizes, *starts; /* subarray */
    int size, rank;               /* darray: process grid */
    MPI_Count *distribs, *dargs, *psizes;
    MPI_Datatype oldtype;
} ferry__dt_array_t;
int ferry__dt_decode_subarray(const ferry__dt_array_t *a, ferry__dt_node_t **out);
int ferry__dt_decode_darray(const ferry__dt_array_t *a, ferry__dt_node_t **out);

/* --- cache.c: the tree of a committed type. Borrowed pointer valid while
 * the type lives; for predefined types it lives in *scratch. */
typedef struct ferry__dt_scratch {
    ferry__dt_tree_t tree;
    ferry__dt_node_t node;
    MPI_Count disps[2], lens[2], prefix[3];
} ferry__dt_scratch_t;
int ferry__dt_tree_of(MPI_Datatype type, ferry__dt_scratch_t *scratch, const ferry__dt_tree_t **out);
/* The tree already cached on type, or NULL (borrowed; no decoding). */
const ferry__dt_tree_t *ferry__dt_cached(MPI_Datatype type);
/* A named (predefined or f90) type's byte runs: one, or two for pairs such
 * as MPI_SHORT_INT whose halves leave a gap. Returns the run count in *n. */
int ferry__dt_named_runs(MPI_Datatype type, MPI_Count disps[2], MPI_Count lens[2], int *n);

/* --- pack.c: the window walk. `stream` is advanced past the bytes copied. */
typedef enum { FERRY__DT_PACK, FERRY__DT_UNPACK } ferry__dt_dir_t;
typedef struct ferry__dt_io {
    ferry__dt_dir_t dir;
    char *stream; /* advanced past the bytes copied */
} ferry__dt_io_t;
/* Bytes [skip, skip + len) of copies of node at base + j * stride; the
 * window must lie inside the stream the caller has. */
void ferry__dt_walk(const ferry__dt_node_t *node, char *base, MPI_Count stride, MPI_Count skip, MPI_Count len,
                    ferry__dt_io_t *io);

/* --- navigate.c: offsets of stream bytes of (count, tree) relative to buf. */
MPI_Count ferry__dt_offset(const ferry__dt_node_t *node, MPI_Count r);
/* Offset of stream byte r, and in *run the bytes of its contiguous run from r on. */
MPI_Count ferry__dt_locate(const ferry__dt_node_t *node, MPI_Count r, MPI_Count *run);
/* For monotone nodes: stream bytes at offsets below x. */
MPI_Count ferry__dt_below(const ferry__dt_node_t *node, MPI_Count x);
/* The same over n copies of node at j * stride (stride >= node's span). */
MPI_Count ferry__dt_below_count(const ferry__dt_node_t *node, MPI_Count n, MPI_Count stride, MPI_Count x);

#endif

/*
 * Array combiners: subarray and darray as nests of repetitions.
 *
 * Both select, in every dimension, a set of indices of a global array whose
 * elements are visited in array order (dimension ndims-1 fastest for
 * MPI_ORDER_C, dimension 0 for MPI_ORDER_FORTRAN). A dimension's set is at
 * most two regular pieces, `nfull` blocks of `block` indices spaced
 * `spacing` apart plus one shorter block of `rem` indices, so the tree has
 * O(ndims) nodes whatever the sizes (2^ndims in the worst darray case).
 * The extent (the whole global array) comes from the host, as for any node.
 */
#include "base/alloc.h"
#include "datatype/datatype_int.h"
#include "error/error.h"

typedef struct dim_set {
    MPI_Count start;   /* first index */
    MPI_Count block;   /* indices per full block */
    MPI_Count nfull;   /* full blocks */
    MPI_Count spacing; /* indices from one block's start to the next */
    MPI_Count rem;     /* indices in the trailing short block */
} dim_set_t;

/* inner repeated over the index set of one dimension whose indices are
 * `stride` bytes apart. Consumes inner. */
static int apply_dim(const dim_set_t *set, MPI_Count stride, ferry__dt_node_t *inner, ferry__dt_node_t **out)
{
    ferry__dt_node_t *full = set->nfull > 0 ? inner : NULL, *tail = set->nfull > 0 ? NULL : inner, *block = NULL;
    ferry__dt_node_t **parts = ferry__calloc(2, sizeof *parts);
    int rc = parts ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory decoding a datatype");
    if (rc == 0 && full && set->rem > 0) rc = ferry__dt_clone(inner, &tail);
    if (rc == 0 && set->rem == 0) ferry__dt_node_free(tail), tail = NULL;
    if (rc == 0) rc = ferry__dt_rep(set->block, stride, full, &block), full = NULL;
    if (rc == 0) rc = ferry__dt_rep(set->nfull, set->spacing * stride, block, &parts[0]), block = NULL;
    if (rc == 0 && parts[0]) ferry__dt_shift(parts[0], set->start * stride);
    if (rc == 0) rc = ferry__dt_rep(set->rem, stride, tail, &parts[1]), tail = NULL;
    if (rc == 0 && parts[1]) ferry__dt_shift(parts[1], (set->start + set->nfull * set->spacing) * stride);
    ferry__dt_node_free(full);
    ferry__dt_node_free(block);
    ferry__dt_node_free(tail);
    if (rc == 0) return ferry__dt_seq(2, parts, out);
    if (parts) ferry__dt_node_free(parts[0]);
    ferry__free(parts);
    return rc;
}

static MPI_Count oldtype_extent(MPI_Datatype type)
{
    MPI_Count lb = 0, extent = 0;
    MPI_Type_get_extent_x(type, &lb, &extent);
    return extent;
}

/* The dimensions from fastest to slowest: 0.. for Fortran, ndims-1.. for C. */
static int dim_at(int k, int ndims, int order)
{
    return order == MPI_ORDER_FORTRAN ? k : ndims - 1 - k;
}

/* Applies each dimension's index set, fastest dimension first. */
typedef dim_set_t dim_fn(const ferry__dt_array_t *a, int d, const int *coords);

static int decode_dims(const ferry__dt_array_t *a, dim_fn *dim, const int *coords, ferry__dt_node_t **out)
{
    MPI_Count stride = oldtype_extent(a->oldtype);
    ferry__dt_node_t *node;
    FERRY_TRY(ferry__dt_decode(a->oldtype, &node));
    for (int k = 0; k < a->ndims && node; k++) {
        int d = dim_at(k, a->ndims, a->order);
        dim_set_t set = dim(a, d, coords);
        FERRY_TRY(apply_dim(&set, stride, node, &node));
        stride *= a->sizes[d];
    }
    *out = node;
    return 0;
}

static dim_set_t subarray_dim(const ferry__dt_array_t *a, int d, const int *coords)
{
    (void)coords;
    return (dim_set_t){a->starts[d], a->subsizes[d], 1, 0, 0};
}

int ferry__dt_decode_subarray(const ferry__dt_array_t *a, ferry__dt_node_t **out)
{
    return decode_dims(a, subarray_dim, NULL, out);
}

/* This process's index set in one darray dimension (MPI-3.1 4.1.4). */
static dim_set_t darray_dim(MPI_Count gsize, int distrib, int darg, int psize, int coord)
{
    dim_set_t set = {0, gsize, 1, 0, 0};
    if (distrib == MPI_DISTRIBUTE_NONE) return set;
    MPI_Count b = darg != MPI_DISTRIBUTE_DFLT_DARG ? darg : distrib == MPI_DISTRIBUTE_BLOCK ? (gsize + psize - 1) / psize : 1;
    MPI_Count first = coord * b, period = distrib == MPI_DISTRIBUTE_BLOCK ? gsize + b : (MPI_Count)psize * b;
    MPI_Count nblocks = first < gsize ? (gsize - first + period - 1) / period : 0;
    MPI_Count last = first + (nblocks - 1) * period;
    MPI_Count last_len = nblocks > 0 ? (gsize - last < b ? gsize - last : b) : 0;
    set.start = first;
    set.block = b;
    set.spacing = period;
    set.nfull = last_len == b ? nblocks : nblocks - (nblocks > 0);
    set.rem = last_len == b ? 0 : last_len;
    return set;
}

static dim_set_t darray_dim_of(const ferry__dt_array_t *a, int d, const int *coords)
{
    return darray_dim(a->sizes[d], (int)a->distribs[d], (int)a->dargs[d], (int)a->psizes[d], coords[d]);
}

int ferry__dt_decode_darray(const ferry__dt_array_t *a, ferry__dt_node_t **out)
{
    int coords[a->ndims > 0 ? a->ndims : 1];
    for (int i = 0, procs = a->size, r = a->rank; i < a->ndims; i++) { /* process grid in row-major order */
        procs /= (int)a->psizes[i];
        coords[i] = r / procs;
        r %= procs;
    }
    return decode_dims(a, darray_dim_of, coords, out);
}

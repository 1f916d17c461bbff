/*
 * Decoder: a host MPI datatype -> a normalized tree (build.c), from
 * MPI_Type_get_envelope/MPI_Type_get_contents.
 *
 * Arguments are read through a cursor that hides the two layouts of the
 * contents: the classic one (ints and addresses) and the MPI-4 large-count
 * one, where every count and displacement of a *_c constructor comes back in
 * the counts array in the same order. Each combiner reads its arguments in
 * the order of its constructor's signature. Every decoded node gets the
 * host's extent for its type (so resized types need no special case).
 */
#include <string.h>

#include "base/alloc.h"
#include "datatype/datatype_int.h"
#include "error/error.h"

typedef ferry__datatype_contents_t contents_t;

int ferry__dt_is_named(MPI_Datatype type, int *named)
{
    contents_t c = {0};
    FERRY_TRY(ferry__datatype_envelope(type, &c));
    *named = ferry__datatype_predefined_combiner(c.combiner);
    return 0;
}

typedef MPI_Count arg_fn(contents_t *c);

/* Short names for the argument cursors of contents.c. */
static arg_fn *const arg_int = ferry__datatype_arg_int;
static arg_fn *const arg_count = ferry__datatype_arg_count;
static arg_fn *const arg_disp = ferry__datatype_arg_disp;

/* n arguments read by `arg` into a new array (caller frees). */
static int arg_array(contents_t *c, MPI_Count n, arg_fn *arg, MPI_Count **out)
{
    *out = ferry__malloc((size_t)n * sizeof **out);
    if (!*out) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory decoding a datatype");
    for (MPI_Count i = 0; i < n; i++) (*out)[i] = arg(c);
    return 0;
}

/* n copies of value in a new array (caller frees). */
static int same_array(MPI_Count n, MPI_Count value, MPI_Count **out)
{
    *out = ferry__malloc((size_t)n * sizeof **out);
    if (!*out) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory decoding a datatype");
    for (MPI_Count i = 0; i < n; i++) (*out)[i] = value;
    return 0;
}

static MPI_Count host_extent(MPI_Datatype type)
{
    MPI_Count lb = 0, extent = 0;
    MPI_Type_get_extent_x(type, &lb, &extent);
    return extent;
}

/* Decodes child i; *ext is its extent. */
static int child(contents_t *c, MPI_Count i, ferry__dt_node_t **node, MPI_Count *ext)
{
    *node = NULL;
    if (i >= c->nd) return ferry__error_set(MPI_ERR_TYPE, "ferry: datatype contents lack a child type");
    *ext = host_extent(c->types[i]);
    return ferry__dt_decode(c->types[i], node);
}

static int decode_vector(contents_t *c, int bytes_stride, ferry__dt_node_t **out)
{
    MPI_Count count = arg_count(c), blocklen = arg_count(c);
    MPI_Count stride = bytes_stride ? arg_disp(c) : arg_count(c), ext = 0;
    ferry__dt_node_t *old, *block;
    FERRY_TRY(child(c, 0, &old, &ext));
    FERRY_TRY(ferry__dt_rep(blocklen, ext, old, &block));
    return ferry__dt_rep(count, bytes_stride ? stride : stride * ext, block, out);
}

/* indexed, hindexed, indexed_block, hindexed_block: per-block lengths or
 * one length, displacements in elements or bytes. */
static int decode_indexed(contents_t *c, int one_blocklen, int bytes_disps, ferry__dt_node_t **out)
{
    MPI_Count count = arg_count(c), ext = 0, *lens = NULL, *disps = NULL;
    ferry__dt_node_t *old;
    int rc = one_blocklen ? same_array(count, arg_count(c), &lens) : arg_array(c, count, arg_count, &lens);
    if (rc == 0) rc = arg_array(c, count, bytes_disps ? arg_disp : arg_count, &disps);
    if (rc == 0) rc = child(c, 0, &old, &ext);
    if (rc != 0 || !old) {
        ferry__free(lens);
        ferry__free(disps);
        return rc;
    }
    for (MPI_Count i = 0; !bytes_disps && i < count; i++) disps[i] *= ext;
    return ferry__dt_list(count, disps, lens, old, out);
}

static int decode_struct(contents_t *c, ferry__dt_node_t **out)
{
    MPI_Count count = arg_count(c), *lens = NULL, *disps = NULL;
    ferry__dt_node_t **parts = NULL;
    int rc = arg_array(c, count, arg_count, &lens);
    if (rc == 0) rc = arg_array(c, count, arg_disp, &disps);
    if (rc == 0 && !(parts = ferry__calloc((size_t)count, sizeof *parts)))
        rc = ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory decoding a datatype");
    for (MPI_Count i = 0; rc == 0 && i < count; i++) {
        MPI_Count ext = 0;
        ferry__dt_node_t *old;
        rc = child(c, i, &old, &ext);
        if (rc == 0) rc = ferry__dt_rep(lens[i], ext, old, &parts[i]);
        if (rc == 0 && parts[i]) ferry__dt_shift(parts[i], disps[i]);
    }
    ferry__free(lens);
    ferry__free(disps);
    if (rc == 0) return ferry__dt_seq(count, parts, out);
    for (MPI_Count i = 0; parts && i < count; i++) ferry__dt_node_free(parts[i]);
    ferry__free(parts);
    return rc;
}

static void free_array_args(ferry__dt_array_t *a)
{
    ferry__free(a->sizes);
    ferry__free(a->subsizes);
    ferry__free(a->starts);
    ferry__free(a->distribs);
    ferry__free(a->dargs);
    ferry__free(a->psizes);
}

static int decode_subarray(contents_t *c, ferry__dt_node_t **out)
{
    ferry__dt_array_t a = {.ndims = (int)arg_int(c)};
    int rc = arg_array(c, a.ndims, arg_count, &a.sizes);
    if (rc == 0) rc = arg_array(c, a.ndims, arg_count, &a.subsizes);
    if (rc == 0) rc = arg_array(c, a.ndims, arg_count, &a.starts);
    a.order = (int)arg_int(c);
    if (rc == 0 && c->nd < 1) rc = ferry__error_set(MPI_ERR_TYPE, "ferry: subarray contents lack a child type");
    if (rc == 0) a.oldtype = c->types[0], rc = ferry__dt_decode_subarray(&a, out);
    free_array_args(&a);
    return rc;
}

static int decode_darray(contents_t *c, ferry__dt_node_t **out)
{
    ferry__dt_array_t a = {0};
    a.size = (int)arg_int(c); /* one statement each: initializers are not sequenced */
    a.rank = (int)arg_int(c);
    a.ndims = (int)arg_int(c);
    int rc = arg_array(c, a.ndims, arg_count, &a.sizes);
    if (rc == 0) rc = arg_array(c, a.ndims, arg_int, &a.distribs);
    if (rc == 0) rc = arg_array(c, a.ndims, arg_int, &a.dargs);
    if (rc == 0) rc = arg_array(c, a.ndims, arg_int, &a.psizes);
    a.order = (int)arg_int(c);
    if (rc == 0 && c->nd < 1) rc = ferry__error_set(MPI_ERR_TYPE, "ferry: darray contents lack a child type");
    if (rc == 0) a.oldtype = c->types[0], rc = ferry__dt_decode_darray(&a, out);
    free_array_args(&a);
    return rc;
}

/* Types whose bytes the host describes completely: named and f90 types. */
static int decode_named(MPI_Datatype type, ferry__dt_node_t **out)
{
    MPI_Count disps[2], lens[2];
    int n;
    FERRY_TRY(ferry__dt_named_runs(type, disps, lens, &n));
    if (n == 1) return ferry__dt_leaf(disps[0], lens[0], host_extent(type), out);
    MPI_Count *d = ferry__malloc(2 * sizeof *d), *l = ferry__malloc(2 * sizeof *l);
    if (!d || !l) {
        ferry__free(d);
        ferry__free(l);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory decoding a datatype");
    }
    memcpy(d, disps, sizeof disps);
    memcpy(l, lens, sizeof lens);
    return ferry__dt_list(2, d, l, NULL, out);
}

static int decode_combiner(MPI_Datatype type, contents_t *c, ferry__dt_node_t **out)
{
    MPI_Count ext = 0;
    switch (c->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: return child(c, 0, out, &ext);
    case MPI_COMBINER_CONTIGUOUS: {
        MPI_Count count = arg_count(c);
        ferry__dt_node_t *old;
        FERRY_TRY(child(c, 0, &old, &ext));
        return ferry__dt_rep(count, ext, old, out);
    }
    case MPI_COMBINER_VECTOR: return decode_vector(c, 0, out);
    case MPI_COMBINER_HVECTOR: return decode_vector(c, 1, out);
    case MPI_COMBINER_INDEXED: return decode_indexed(c, 0, 0, out);
    case MPI_COMBINER_HINDEXED: return decode_indexed(c, 0, 1, out);
    case MPI_COMBINER_INDEXED_BLOCK: return decode_indexed(c, 1, 0, out);
    case MPI_COMBINER_HINDEXED_BLOCK: return decode_indexed(c, 1, 1, out);
    case MPI_COMBINER_STRUCT: return decode_struct(c, out);
    case MPI_COMBINER_SUBARRAY: return decode_subarray(c, out);
    case MPI_COMBINER_DARRAY: return decode_darray(c, out);
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER: return decode_named(type, out);
    default: return ferry__error_set(MPI_ERR_TYPE, "ferry: datatype combiner %d is not supported", c->combiner);
    }
}

int ferry__dt_decode(MPI_Datatype type, ferry__dt_node_t **out)
{
    contents_t c = {0};
    *out = NULL;
    const ferry__dt_tree_t *known = ferry__dt_cached(type); /* a part the program has used before */
    if (known) return ferry__dt_clone(known->root, out);
    FERRY_TRY(ferry__datatype_envelope(type, &c));
    if (c.combiner == MPI_COMBINER_NAMED) return decode_named(type, out);
    int rc = ferry__datatype_contents(type, &c);
    if (rc == 0) rc = decode_combiner(type, &c, out);
    if (rc == 0 && c.overrun) rc = ferry__error_set(MPI_ERR_TYPE, "ferry: datatype contents shorter than expected");
    ferry__datatype_contents_release(&c);
    if (rc != 0) {
        ferry__dt_node_free(*out);
        *out = NULL;
        return rc;
    }
    if (*out) (*out)->extent = host_extent(type);
    return 0;
}

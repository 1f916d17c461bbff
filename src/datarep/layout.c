/*
 * File layouts: a datatype rebuilt with each predefined type replaced by a
 * contiguous block of MPI_BYTE of its file size.
 *
 * MPI-3.1 13.5.1: constructors that take displacements in bytes (hvector,
 * hindexed, hindexed_block, struct, and resized's lb and extent) are
 * interpreted "as is; no scaling will be done", while the displacements of
 * portable constructors (contiguous, vector, indexed, indexed_block,
 * subarray, darray, dup) count old types and so scale with the old type's
 * file extent. Rebuilding the type with the same arguments over the new
 * old types does exactly that. "All data is byte aligned" (13.5.2): the
 * blocks are MPI_BYTE, so a struct's extent has no alignment padding in the
 * file (a struct {double; char} has extent 9 in external32, 16 in memory).
 */
#include "core/core.h"
#include "datarep/datarep_int.h"
#include "error/error.h"

#if MPI_VERSION >= 4
typedef MPI_Count lcount_t; /* counts and displacements as the constructors take them */
typedef MPI_Count ldisp_t;
#define CONTIGUOUS MPI_Type_contiguous_c
#define VECTOR MPI_Type_vector_c
#define HVECTOR MPI_Type_create_hvector_c
#define INDEXED MPI_Type_indexed_c
#define HINDEXED MPI_Type_create_hindexed_c
#define INDEXED_BLOCK MPI_Type_create_indexed_block_c
#define HINDEXED_BLOCK MPI_Type_create_hindexed_block_c
#define STRUCT MPI_Type_create_struct_c
#define SUBARRAY MPI_Type_create_subarray_c
#define DARRAY MPI_Type_create_darray_c
#define RESIZED MPI_Type_create_resized_c
#else
typedef int lcount_t;
typedef MPI_Aint ldisp_t;
#define CONTIGUOUS MPI_Type_contiguous
#define VECTOR MPI_Type_vector
#define HVECTOR MPI_Type_create_hvector
#define INDEXED MPI_Type_indexed
#define HINDEXED MPI_Type_create_hindexed
#define INDEXED_BLOCK MPI_Type_create_indexed_block
#define HINDEXED_BLOCK MPI_Type_create_hindexed_block
#define STRUCT MPI_Type_create_struct
#define SUBARRAY MPI_Type_create_subarray
#define DARRAY MPI_Type_create_darray
#define RESIZED MPI_Type_create_resized
#endif

typedef MPI_Count arg_fn(ferry__dr_contents_t *c);

/* The constructor's arguments read back; arrays of n entries. */
typedef struct args {
    lcount_t *lens;
    ldisp_t *disps;
    lcount_t *c1, *c2, *c3; /* subarray sizes/subsizes/starts, darray gsizes */
    int *i1, *i2, *i3;      /* darray distribs/dargs/psizes */
} args_t;

static void args_free(args_t *a)
{
    ferry__free(a->lens);
    ferry__free(a->disps);
    ferry__free(a->c1);
    ferry__free(a->c2);
    ferry__free(a->c3);
    ferry__free(a->i1);
    ferry__free(a->i2);
    ferry__free(a->i3);
}

static int read_counts(ferry__dr_contents_t *c, MPI_Count n, arg_fn *arg, lcount_t **out)
{
    if (!(*out = ferry__malloc((size_t)(n > 0 ? n : 1) * sizeof **out))) return MPI_ERR_NO_MEM;
    for (MPI_Count i = 0; i < n; i++) (*out)[i] = (lcount_t)arg(c);
    return 0;
}

static int read_disps(ferry__dr_contents_t *c, MPI_Count n, arg_fn *arg, ldisp_t **out)
{
    if (!(*out = ferry__malloc((size_t)(n > 0 ? n : 1) * sizeof **out))) return MPI_ERR_NO_MEM;
    for (MPI_Count i = 0; i < n; i++) (*out)[i] = (ldisp_t)arg(c);
    return 0;
}

static int read_ints(ferry__dr_contents_t *c, MPI_Count n, int **out)
{
    if (!(*out = ferry__malloc((size_t)(n > 0 ? n : 1) * sizeof **out))) return MPI_ERR_NO_MEM;
    for (MPI_Count i = 0; i < n; i++) (*out)[i] = (int)ferry__dr_arg_int(c);
    return 0;
}

static int layout(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Datatype *out);

/* The host constructor call of combiner c over the old types' layouts `old`. */
static int construct(ferry__dr_contents_t *c, const MPI_Datatype *old, MPI_Datatype *out)
{
    args_t a = {0};
    int rc = 0, host = MPI_SUCCESS;
    MPI_Count n, n2, n3, ndims;
    switch (c->combiner) {
    case MPI_COMBINER_DUP: host = MPI_Type_dup(old[0], out); break;
    case MPI_COMBINER_CONTIGUOUS: host = CONTIGUOUS((lcount_t)ferry__dr_arg_count(c), old[0], out); break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        n = ferry__dr_arg_count(c), n2 = ferry__dr_arg_count(c);
        if (c->combiner == MPI_COMBINER_VECTOR) host = VECTOR((lcount_t)n, (lcount_t)n2, (lcount_t)ferry__dr_arg_count(c), old[0], out);
        else host = HVECTOR((lcount_t)n, (lcount_t)n2, (ldisp_t)ferry__dr_arg_disp(c), old[0], out);
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        n = ferry__dr_arg_count(c);
        rc = read_counts(c, n, ferry__dr_arg_count, &a.lens);
        if (rc == 0 && c->combiner == MPI_COMBINER_INDEXED) rc = read_counts(c, n, ferry__dr_arg_count, &a.c1);
        if (rc == 0 && c->combiner == MPI_COMBINER_INDEXED) host = INDEXED((lcount_t)n, a.lens, a.c1, old[0], out);
        if (rc == 0 && c->combiner == MPI_COMBINER_HINDEXED) rc = read_disps(c, n, ferry__dr_arg_disp, &a.disps);
        if (rc == 0 && c->combiner == MPI_COMBINER_HINDEXED) host = HINDEXED((lcount_t)n, a.lens, a.disps, old[0], out);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        n = ferry__dr_arg_count(c), n2 = ferry__dr_arg_count(c);
        if (c->combiner == MPI_COMBINER_INDEXED_BLOCK && (rc = read_counts(c, n, ferry__dr_arg_count, &a.c1)) == 0)
            host = INDEXED_BLOCK((lcount_t)n, (lcount_t)n2, a.c1, old[0], out);
        if (c->combiner == MPI_COMBINER_HINDEXED_BLOCK && (rc = read_disps(c, n, ferry__dr_arg_disp, &a.disps)) == 0)
            host = HINDEXED_BLOCK((lcount_t)n, (lcount_t)n2, a.disps, old[0], out);
        break;
    case MPI_COMBINER_STRUCT:
        n = ferry__dr_arg_count(c);
        rc = read_counts(c, n, ferry__dr_arg_count, &a.lens);
        if (rc == 0) rc = read_disps(c, n, ferry__dr_arg_disp, &a.disps);
        if (rc == 0) host = STRUCT((lcount_t)n, a.lens, a.disps, old, out);
        break;
    case MPI_COMBINER_SUBARRAY:
        ndims = ferry__dr_arg_int(c);
        rc = read_counts(c, ndims, ferry__dr_arg_count, &a.c1);
        if (rc == 0) rc = read_counts(c, ndims, ferry__dr_arg_count, &a.c2);
        if (rc == 0) rc = read_counts(c, ndims, ferry__dr_arg_count, &a.c3);
        if (rc == 0) host = SUBARRAY((int)ndims, a.c1, a.c2, a.c3, (int)ferry__dr_arg_int(c), old[0], out);
        break;
    case MPI_COMBINER_DARRAY:
        n = ferry__dr_arg_int(c), n2 = ferry__dr_arg_int(c), ndims = ferry__dr_arg_int(c);
        rc = read_counts(c, ndims, ferry__dr_arg_count, &a.c1);
        if (rc == 0) rc = read_ints(c, ndims, &a.i1);
        if (rc == 0) rc = read_ints(c, ndims, &a.i2);
        if (rc == 0) rc = read_ints(c, ndims, &a.i3);
        n3 = rc == 0 ? ferry__dr_arg_int(c) : 0;
        if (rc == 0)
            host = DARRAY((int)n, (int)n2, (int)ndims, a.c1, a.i1, a.i2, a.i3, (int)n3, old[0], out);
        break;
    case MPI_COMBINER_RESIZED:
        n = ferry__dr_arg_disp(c), n2 = ferry__dr_arg_disp(c);
        host = RESIZED(old[0], (ldisp_t)n, (ldisp_t)n2, out);
        break;
    default: rc = MPI_ERR_TYPE;
    }
    args_free(&a);
    if (rc == MPI_ERR_NO_MEM) return ferry__error_set(rc, "ferry: out of memory building a file layout");
    if (rc != 0 || host != MPI_SUCCESS || c->overrun)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: cannot rebuild a datatype (combiner %d) in a file layout",
                                c->combiner);
    return 0;
}

static int leaf_layout(const ferry__datarep_t *rep, MPI_Datatype type, int combiner, MPI_Datatype *out)
{
    ferry__dr_basic_t b;
    FERRY_TRY(ferry__dr_basic(rep, type, combiner, &b));
    if (CONTIGUOUS((lcount_t)b.fsize, MPI_BYTE, out) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: cannot build a file layout block");
    return 0;
}

/* Rebuilds a derived type over its old types' layouts. */
static int derived_layout(const ferry__datarep_t *rep, ferry__dr_contents_t *c, MPI_Datatype *out)
{
    MPI_Count n = c->combiner == MPI_COMBINER_STRUCT ? c->nd : (c->nd > 0 ? 1 : 0);
    MPI_Datatype *old = ferry__malloc((size_t)(n > 0 ? n : 1) * sizeof *old);
    if (!old) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory building a file layout");
    MPI_Count built = 0;
    int rc = 0;
    for (; rc == 0 && built < n; built++) rc = layout(rep, c->types[built], &old[built]);
    if (rc != 0) built--;
    if (rc == 0) rc = construct(c, old, out);
    for (MPI_Count i = 0; i < built; i++) MPI_Type_free(&old[i]);
    ferry__free(old);
    return rc;
}

/* An uncommitted layout of type, owned by the caller. */
static int layout(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Datatype *out)
{
    ferry__dr_contents_t c;
    int rc = ferry__dr_contents_get(type, &c);
    if (rc == 0 && ferry__dr_predefined(c.combiner)) rc = leaf_layout(rep, type, c.combiner, out);
    else if (rc == 0) rc = derived_layout(rep, &c, out);
    ferry__dr_contents_release(&c);
    return rc;
}

int ferry__datarep_file_layout(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Datatype *out)
{
    *out = MPI_DATATYPE_NULL;
    if (rep->kind == FERRY__DR_NATIVE) {
        if (MPI_Type_dup(type, out) != MPI_SUCCESS)
            return ferry__error_set(MPI_ERR_TYPE, "ferry: cannot duplicate a view datatype");
        return 0;
    }
    if (type == MPI_DATATYPE_NULL) return ferry__error_set(MPI_ERR_TYPE, "ferry: MPI_DATATYPE_NULL");
    FERRY_TRY(layout(rep, type, out));
    if (MPI_Type_commit(out) != MPI_SUCCESS) {
        MPI_Type_free(out);
        return ferry__error_set(MPI_ERR_TYPE, "ferry: cannot commit a file layout");
    }
    return 0;
}

int ferry__datarep_size(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Count *size)
{
    if (rep->kind == FERRY__DR_NATIVE) {
        if (type == MPI_DATATYPE_NULL || MPI_Type_size_x(type, size) != MPI_SUCCESS || *size == MPI_UNDEFINED)
            return ferry__error_set(MPI_ERR_TYPE, "ferry: invalid datatype");
        return 0;
    }
    ferry__dr_sig_t *sig;
    FERRY_TRY(ferry__dr_sig_build(rep, type, &sig));
    *size = sig ? sig->size.f : 0;
    ferry__dr_sig_free(sig);
    return 0;
}

int ferry__datarep_extent(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Count *extent)
{
    MPI_Datatype l;
    MPI_Count lb;
    if (rep->kind == FERRY__DR_NATIVE) {
        if (type == MPI_DATATYPE_NULL || MPI_Type_get_extent_x(type, &lb, extent) != MPI_SUCCESS)
            return ferry__error_set(MPI_ERR_TYPE, "ferry: invalid datatype");
        return 0;
    }
    FERRY_TRY(ferry__datarep_file_layout(rep, type, &l));
    int host = MPI_Type_get_extent_x(l, &lb, extent);
    MPI_Type_free(&l);
    return host == MPI_SUCCESS ? 0 : ferry__error_set(MPI_ERR_TYPE, "ferry: cannot get a file layout's extent");
}

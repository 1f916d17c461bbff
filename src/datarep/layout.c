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
#include <limits.h>

#include "base/alloc.h"
#include "datarep/datarep_int.h"
#include "error/error.h"

/* Layouts are built with the classic constructors even for types made with
 * MPI-4 *_c ones: MPICH refuses MPI_Type_get_envelope on a type built with
 * a *_c constructor, and other modules query layouts that way. A count
 * beyond int is refused (MPI_ERR_TYPE). */
typedef MPI_Count arg_fn(ferry__dr_contents_t *c);

/* The constructor's arguments read back; arrays of n entries. */
typedef struct args {
    int *c1, *c2, *c3; /* counts: block lengths, displacements in elements, sizes... */
    MPI_Aint *disps;   /* byte displacements */
} args_t;

static void args_free(args_t *a)
{
    ferry__free(a->c1);
    ferry__free(a->c2);
    ferry__free(a->c3);
    ferry__free(a->disps);
}

/* v as a classic count; out of range marks the contents unusable. */
static int cnt(ferry__dr_contents_t *c, MPI_Count v)
{
    if (v > INT_MAX || v < INT_MIN) c->overrun = 1;
    return (int)v;
}

static int read_counts(ferry__dr_contents_t *c, MPI_Count n, arg_fn *arg, int **out)
{
    if (!(*out = ferry__malloc((size_t)(n > 0 ? n : 1) * sizeof **out))) return MPI_ERR_NO_MEM;
    for (MPI_Count i = 0; i < n; i++) (*out)[i] = cnt(c, arg(c));
    return 0;
}

static int read_disps(ferry__dr_contents_t *c, MPI_Count n, MPI_Aint **out)
{
    if (!(*out = ferry__malloc((size_t)(n > 0 ? n : 1) * sizeof **out))) return MPI_ERR_NO_MEM;
    for (MPI_Count i = 0; i < n; i++) (*out)[i] = (MPI_Aint)ferry__datatype_arg_disp(c);
    return 0;
}

static int layout(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Datatype *out);

/* vector, hvector, indexed_block, hindexed_block: count, blocklength, then
 * a stride or displacements, in elements or bytes. */
static int make_strided(ferry__dr_contents_t *c, MPI_Datatype old, args_t *a, MPI_Datatype *out)
{
    int n = cnt(c, ferry__datatype_arg_count(c)), len = cnt(c, ferry__datatype_arg_count(c)), rc;
    switch (c->combiner) {
    case MPI_COMBINER_VECTOR: return MPI_Type_vector(n, len, cnt(c, ferry__datatype_arg_count(c)), old, out);
    case MPI_COMBINER_HVECTOR: return MPI_Type_create_hvector(n, len, (MPI_Aint)ferry__datatype_arg_disp(c), old, out);
    case MPI_COMBINER_INDEXED_BLOCK:
        if ((rc = read_counts(c, n, ferry__datatype_arg_count, &a->c1)) != 0) return rc;
        return MPI_Type_create_indexed_block(n, len, a->c1, old, out);
    default:
        if ((rc = read_disps(c, n, &a->disps)) != 0) return rc;
        return MPI_Type_create_hindexed_block(n, len, a->disps, old, out);
    }
}

/* indexed, hindexed, struct: count, blocklengths, displacements. */
static int make_listed(ferry__dr_contents_t *c, const MPI_Datatype *old, args_t *a, MPI_Datatype *out)
{
    int n = cnt(c, ferry__datatype_arg_count(c));
    int rc = read_counts(c, n, ferry__datatype_arg_count, &a->c1);
    if (rc == 0 && c->combiner == MPI_COMBINER_INDEXED) rc = read_counts(c, n, ferry__datatype_arg_count, &a->c2);
    else if (rc == 0) rc = read_disps(c, n, &a->disps);
    if (rc != 0) return rc;
    if (c->combiner == MPI_COMBINER_INDEXED) return MPI_Type_indexed(n, a->c1, a->c2, old[0], out);
    if (c->combiner == MPI_COMBINER_HINDEXED) return MPI_Type_create_hindexed(n, a->c1, a->disps, old[0], out);
    return MPI_Type_create_struct(n, a->c1, a->disps, old, out);
}

/* subarray, darray: per-dimension arrays, in elements of the old type. */
static int make_array(ferry__dr_contents_t *c, MPI_Datatype old, args_t *a, MPI_Datatype *out)
{
    int size = 0, rank = 0, ndims, rc;
    if (c->combiner == MPI_COMBINER_DARRAY) size = cnt(c, ferry__datatype_arg_int(c)), rank = cnt(c, ferry__datatype_arg_int(c));
    ndims = cnt(c, ferry__datatype_arg_int(c));
    if ((rc = read_counts(c, ndims, ferry__datatype_arg_count, &a->c1)) != 0) return rc;
    if (c->combiner == MPI_COMBINER_SUBARRAY) rc = read_counts(c, 2 * ndims, ferry__datatype_arg_count, &a->c2); /* subsizes, starts */
    else rc = read_counts(c, 3 * ndims, ferry__datatype_arg_int, &a->c2); /* distribs, dargs, psizes */
    if (rc != 0) return rc;
    int order = cnt(c, ferry__datatype_arg_int(c));
    if (c->combiner == MPI_COMBINER_SUBARRAY)
        return MPI_Type_create_subarray(ndims, a->c1, a->c2, a->c2 + ndims, order, old, out);
    return MPI_Type_create_darray(size, rank, ndims, a->c1, a->c2, a->c2 + ndims, a->c2 + 2 * ndims, order, old,
                                  out);
}

/* The host constructor call of combiner c over the old types' layouts `old`. */
static int construct(ferry__dr_contents_t *c, const MPI_Datatype *old, MPI_Datatype *out)
{
    args_t a = {0};
    int rc = MPI_ERR_TYPE;
    MPI_Count lb, extent;
    *out = MPI_DATATYPE_NULL;
    switch (c->combiner) {
    case MPI_COMBINER_DUP: rc = MPI_Type_dup(old[0], out); break;
    case MPI_COMBINER_CONTIGUOUS: rc = MPI_Type_contiguous(cnt(c, ferry__datatype_arg_count(c)), old[0], out); break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: rc = make_strided(c, old[0], &a, out); break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT: rc = make_listed(c, old, &a, out); break;
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY: rc = make_array(c, old[0], &a, out); break;
    case MPI_COMBINER_RESIZED:
        lb = ferry__datatype_arg_disp(c), extent = ferry__datatype_arg_disp(c);
        rc = MPI_Type_create_resized(old[0], (MPI_Aint)lb, (MPI_Aint)extent, out);
        break;
    }
    args_free(&a);
    if (rc != MPI_SUCCESS || c->overrun) {
        if (rc == MPI_SUCCESS) MPI_Type_free(out);
        if (rc == MPI_ERR_NO_MEM) return ferry__error_set(rc, "ferry: out of memory building a file layout");
        return ferry__error_set(MPI_ERR_TYPE, "ferry: cannot rebuild a datatype (combiner %d) in a file layout",
                                c->combiner);
    }
    return 0;
}

static int leaf_layout(const ferry__datarep_t *rep, MPI_Datatype type, int combiner, MPI_Datatype *out)
{
    ferry__dr_basic_t b;
    FERRY_TRY(ferry__dr_basic(rep, type, combiner, &b));
    if (b.fsize > INT_MAX || MPI_Type_contiguous((int)b.fsize, MPI_BYTE, out) != MPI_SUCCESS)
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
    if (rc == 0 && ferry__datatype_predefined_combiner(c.combiner)) rc = leaf_layout(rep, type, c.combiner, out);
    else if (rc == 0) rc = derived_layout(rep, &c, out);
    ferry__datatype_contents_release(&c);
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

/*
 * Random datatypes from every constructor, nested up to a depth, with
 * negative displacements and strides, zero-length blocks, resized extents,
 * and predefined leaves including the pair types with holes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"
#include "oracle.h"

static MPI_Count pick(uint64_t *s, MPI_Count lo, MPI_Count hi)
{
    return lo + (MPI_Count)(ft_rand(s) % (uint64_t)(hi - lo + 1));
}

void or_type_free(MPI_Datatype *type)
{
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(*type, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED && combiner != MPI_COMBINER_F90_REAL && combiner != MPI_COMBINER_F90_COMPLEX &&
        combiner != MPI_COMBINER_F90_INTEGER)
        MPI_Type_free(type);
}

static MPI_Datatype random_named(uint64_t *s)
{
    const MPI_Datatype named[] = {MPI_BYTE,      MPI_CHAR,      MPI_SHORT,    MPI_INT,     MPI_DOUBLE,
                                  MPI_INT8_T,    MPI_INT64_T,   MPI_FLOAT,    MPI_SHORT_INT, MPI_DOUBLE_INT,
                                  MPI_2INT,      MPI_FLOAT_INT, MPI_LONG_INT, MPI_C_DOUBLE_COMPLEX};
    return named[pick(s, 0, sizeof named / sizeof named[0] - 1)];
}

static MPI_Datatype random_child(uint64_t *s, int depth);

/* Host bug probe: Open MPI 4.1 packs vector(2, 3, -1, MPI_BYTE) as bytes
 * 0..5 instead of 0,1,2,-1,0,1 (MPI-3.1 4.1.2), i.e. overlapping blocks
 * with a negative stride (also vector(2, 1, -1): backwards-adjacent blocks
 * come out forwards). Where the host has it, such vectors are not
 * generated, since the host is the oracle. */
static int negative_overlap_broken(void)
{
    static int probed = -1;
    if (probed >= 0) return probed;
    char mem[16], out[8];
    for (int i = 0; i < 16; i++) mem[i] = (char)i;
    MPI_Datatype v;
    int position = 0;
    FT_OK(MPI_Type_vector(2, 3, -1, MPI_BYTE, &v));
    FT_OK(MPI_Type_commit(&v));
    FT_OK(MPI_Pack(mem + 8, 1, v, out, sizeof out, &position, MPI_COMM_SELF));
    MPI_Type_free(&v);
    probed = out[3] != 7;
    if (probed && ft_rank == 0)
        fprintf(stderr, "note: host MPI_Pack mishandles vectors with negative overlapping strides; not generated\n");
    return probed;
}

/* A vector stride (in units of `unit` bytes) the host packs correctly. */
static MPI_Count safe_stride(MPI_Count stride, MPI_Count blocklen, MPI_Count unit)
{
    if (stride < 0 && -stride * unit <= blocklen * unit && negative_overlap_broken()) return -blocklen - 1;
    return stride;
}

static void random_indexed(uint64_t *s, MPI_Datatype old, int which, MPI_Datatype *out)
{
    int n = (int)pick(s, 0, 5), lens[6], disps[6];
    MPI_Aint hdisps[6];
    int blocklen = (int)pick(s, 0, 3);
    MPI_Count lb, ext;
    MPI_Type_get_extent_x(old, &lb, &ext);
    for (int i = 0; i < n; i++) {
        lens[i] = (int)pick(s, 0, 3);
        disps[i] = (int)pick(s, -4, 10);
        hdisps[i] = pick(s, 0, 3) == 0 ? (MPI_Aint)pick(s, -40, 100) : (MPI_Aint)disps[i] * (MPI_Aint)ext;
    }
    switch (which) {
    case 0: FT_OK(MPI_Type_indexed(n, lens, disps, old, out)); break;
    case 1: FT_OK(MPI_Type_create_hindexed(n, lens, hdisps, old, out)); break;
    case 2: FT_OK(MPI_Type_create_indexed_block(n, blocklen, disps, old, out)); break;
    default: FT_OK(MPI_Type_create_hindexed_block(n, blocklen, hdisps, old, out)); break;
    }
}

static void random_struct(uint64_t *s, int depth, MPI_Datatype *out)
{
    int n = (int)pick(s, 1, 4), lens[4];
    MPI_Aint disps[4], at = pick(s, -16, 16);
    MPI_Datatype types[4];
    for (int i = 0; i < n; i++) {
        MPI_Count lb, ext;
        types[i] = random_child(s, depth);
        MPI_Type_get_extent_x(types[i], &lb, &ext);
        lens[i] = (int)pick(s, 0, 3);
        disps[i] = pick(s, 0, 4) == 0 ? (MPI_Aint)pick(s, -64, 64) : at; /* mostly packed like a C struct */
        at = disps[i] + lens[i] * (MPI_Aint)ext + (MPI_Aint)pick(s, 0, 8);
    }
    FT_OK(MPI_Type_create_struct(n, lens, disps, types, out));
    for (int i = 0; i < n; i++) or_type_free(&types[i]);
}

static void random_subarray(uint64_t *s, MPI_Datatype old, MPI_Datatype *out)
{
    int ndims = (int)pick(s, 1, 3), sizes[3], subsizes[3], starts[3];
    for (int d = 0; d < ndims; d++) {
        sizes[d] = (int)pick(s, 1, 5);
        subsizes[d] = (int)pick(s, 1, sizes[d]);
        starts[d] = (int)pick(s, 0, sizes[d] - subsizes[d]);
    }
    int order = pick(s, 0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    FT_OK(MPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old, out));
}

static void random_darray(uint64_t *s, MPI_Datatype old, MPI_Datatype *out)
{
    int ndims = (int)pick(s, 1, 3), gsizes[3], distribs[3], dargs[3], psizes[3], size = 1;
    for (int d = 0; d < ndims; d++) {
        gsizes[d] = (int)pick(s, 1, 7);
        psizes[d] = (int)pick(s, 1, 3);
        int kind = (int)pick(s, 0, 2);
        distribs[d] = kind == 0 ? MPI_DISTRIBUTE_NONE : kind == 1 ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
        if (kind == 0) psizes[d] = 1;
        int min_block = (gsizes[d] + psizes[d] - 1) / psizes[d];
        dargs[d] = pick(s, 0, 1) ? MPI_DISTRIBUTE_DFLT_DARG
                   : kind == 1   ? min_block + (int)pick(s, 0, 2)
                                 : (int)pick(s, 1, 3);
        size *= psizes[d];
    }
    int order = pick(s, 0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, rank = (int)pick(s, 0, size - 1);
    MPI_Errhandler saved;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Type_create_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old, out);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, saved);
    MPI_Errhandler_free(&saved);
    if (rc == MPI_SUCCESS) return;
    static int reported;
    if (!reported++) {
        fprintf(stderr, "note: host refused darray(size %d rank %d ndims %d", size, rank, ndims);
        for (int d = 0; d < ndims; d++)
            fprintf(stderr, " [g%d dist%d darg%d p%d]", gsizes[d], distribs[d], dargs[d], psizes[d]);
        fprintf(stderr, " order %d, old %s)\n", order, or_describe(old));
    }
    FT_OK(MPI_Type_dup(old, out));
}

static void random_derived(uint64_t *s, int depth, MPI_Datatype *out)
{
    int which = (int)pick(s, 0, 12);
    if (which == 8) {
        random_struct(s, depth - 1, out);
        return;
    }
    MPI_Datatype old = random_child(s, depth - 1);
    MPI_Count lb, ext;
    MPI_Type_get_extent_x(old, &lb, &ext);
    int count = (int)(pick(s, 0, 5) == 0 ? pick(s, 5, 40) : pick(s, 0, 4)), blocklen = (int)pick(s, 0, 3);
    switch (which) {
    case 0: FT_OK(MPI_Type_contiguous(count, old, out)); break;
    case 1: FT_OK(MPI_Type_vector(count, blocklen, (int)safe_stride(pick(s, -4, 6), blocklen, 1), old, out)); break;
    case 2:
        FT_OK(MPI_Type_create_hvector(count, blocklen, (MPI_Aint)safe_stride(pick(s, -64, 96), blocklen * ext, 1),
                                      old, out));
        break;
    case 3: case 4: case 5: case 6: random_indexed(s, old, which - 3, out); break;
    case 7: FT_OK(MPI_Type_dup(old, out)); break;
    case 9: random_subarray(s, old, out); break;
    case 10: random_darray(s, old, out); break;
    default:
        FT_OK(MPI_Type_create_resized(old, (MPI_Aint)pick(s, -24, 24),
                                      pick(s, 0, 5) == 0 ? (MPI_Aint)pick(s, 1, 8) : (MPI_Aint)(ext + pick(s, 0, 32)),
                                      out));
        break;
    }
    or_type_free(&old);
}

static int within_limits(MPI_Datatype type)
{
    MPI_Count size, lb, ext, tlb, text;
    MPI_Type_size_x(type, &size);
    MPI_Type_get_extent_x(type, &lb, &ext);
    MPI_Type_get_true_extent_x(type, &tlb, &text);
    return size != MPI_UNDEFINED && size <= OR_MAX_SIZE && text <= OR_MAX_SPAN && ext <= OR_MAX_SPAN &&
           ext >= -OR_MAX_SPAN && tlb > -OR_MAX_SPAN && tlb < OR_MAX_SPAN;
}

static MPI_Datatype random_child(uint64_t *s, int depth)
{
    for (;;) {
        if (depth <= 0 || pick(s, 0, 4) == 0) return random_named(s);
        MPI_Datatype t;
        random_derived(s, depth, &t);
        if (within_limits(t)) return t;
        MPI_Type_free(&t);
        depth--;
    }
}

MPI_Datatype or_random_type(uint64_t *state, int depth)
{
    MPI_Datatype t = random_child(state, depth);
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED) FT_OK(MPI_Type_commit(&t));
    return t;
}

static const char *combiner_name(int c)
{
    switch (c) {
    case MPI_COMBINER_NAMED: return "named";
    case MPI_COMBINER_DUP: return "dup";
    case MPI_COMBINER_CONTIGUOUS: return "contig";
    case MPI_COMBINER_VECTOR: return "vector";
    case MPI_COMBINER_HVECTOR: return "hvector";
    case MPI_COMBINER_INDEXED: return "indexed";
    case MPI_COMBINER_HINDEXED: return "hindexed";
    case MPI_COMBINER_INDEXED_BLOCK: return "indexed_block";
    case MPI_COMBINER_HINDEXED_BLOCK: return "hindexed_block";
    case MPI_COMBINER_STRUCT: return "struct";
    case MPI_COMBINER_SUBARRAY: return "subarray";
    case MPI_COMBINER_DARRAY: return "darray";
    case MPI_COMBINER_RESIZED: return "resized";
    default: return "other";
    }
}

static void describe(MPI_Datatype type, char *out, size_t cap, int depth)
{
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    size_t used = strlen(out);
    if (combiner == MPI_COMBINER_NAMED || depth > 8) {
        MPI_Count size, lb, ext;
        MPI_Type_size_x(type, &size);
        MPI_Type_get_extent_x(type, &lb, &ext);
        snprintf(out + used, cap - used, "named(%lld/%lld)", (long long)size, (long long)ext);
        return;
    }
    int ints[64];
    MPI_Aint aints[64];
    MPI_Datatype types[8];
    if (ni > 64 || na > 64 || nd > 8) {
        snprintf(out + used, cap - used, "%s(...)", combiner_name(combiner));
        return;
    }
    MPI_Type_get_contents(type, ni, na, nd, ints, aints, types);
    used += (size_t)snprintf(out + used, cap - used, "%s(", combiner_name(combiner));
    for (int i = 0; i < ni && used < cap; i++) used += (size_t)snprintf(out + used, cap - used, "%d,", ints[i]);
    for (int i = 0; i < na && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "a%lld,", (long long)aints[i]);
    for (int i = 0; i < nd && strlen(out) + 2 < cap; i++) {
        describe(types[i], out, cap, depth + 1);
        or_type_free(&types[i]);
        used = strlen(out);
        if (used + 1 < cap) strcat(out, ",");
    }
    used = strlen(out);
    if (used + 1 < cap) strcat(out, ")");
}

const char *or_describe(MPI_Datatype type)
{
    static char text[4096];
    text[0] = 0;
    describe(type, text, sizeof text, 0);
    return text;
}

void or_probe(MPI_Datatype type, int depth)
{
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED || nd > 8 || ni > 64 || na > 64) return;
    int ints[64];
    MPI_Aint aints[64];
    MPI_Datatype types[8];
    MPI_Type_get_contents(type, ni, na, nd, ints, aints, types);
    for (int i = 0; i < nd; i++) {
        or_probe(types[i], depth + 1);
        or_type_free(&types[i]);
    }
    MPI_Datatype copy;
    MPI_Type_dup(type, &copy);
    MPI_Type_commit(&copy);
    MPI_Count size, lo, hi;
    MPI_Type_size_x(copy, &size);
    fprintf(stderr, "probe depth %d: %s\n", depth, or_describe(copy));
    if (size > 0) free(or_byte_map(copy, 2));
    MPI_Type_free(&copy);
    (void)lo, (void)hi;
}

/*
 * The view cache's type transport: a type serialized on one rank and
 * rebuilt as a host datatype must have the same size, lb, extent and the
 * same offset for every stream byte; a hoisted blob (issue 20) the same
 * offsets lower by its shift. Seeded random types from every
 * constructor, plus vectors whose counts do not fit an int.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "datatype/datatype.h"
#include "ferry_test.h"
#include "oracle.h"

/* b's map is a's lower by shift (0: the same), with the same size, lb and extent. */
static void check_same_map(MPI_Datatype a, MPI_Datatype b, MPI_Count shift)
{
    ferry__typeinfo_t ia, ib;
    FT_EQ(ferry__datatype_info(a, &ia), 0);
    FT_EQ(ferry__datatype_info(b, &ib), 0);
    FT_EQ(ia.size, ib.size);
    FT_EQ(ia.lb, ib.lb);
    FT_EQ(ia.extent, ib.extent);
    FT_EQ(ia.monotone, ib.monotone);
    MPI_Count n = 2 * ia.size, step = n > 20000 ? n / 20000 : 1;
    for (MPI_Count r = 0; r < n; r += step) {
        MPI_Count oa = -1, ob = -2;
        FT_EQ(ferry__datatype_offset(a, r, &oa), 0);
        FT_EQ(ferry__datatype_offset(b, r, &ob), 0);
        FT_EQ(oa, ob + shift);
    }
}

/* Issue 20: a hoisted blob rebuilds the same type map lower by the shift, with the same size, lb and extent. */
static void check_hoisted(const void *blob, size_t len, MPI_Datatype type)
{
    void *copy = ferry__malloc(len);
    FT_CHECK(copy != NULL);
    memcpy(copy, blob, len);
    MPI_Count shift = ferry__datatype_blob_hoist(copy, len);
    MPI_Datatype rebuilt;
    FT_EQ(ferry__datatype_deserialize(copy, len, &rebuilt), 0);
    check_same_map(type, rebuilt, shift);
    MPI_Type_free(&rebuilt);
    ferry__free(copy);
}

static void roundtrip(MPI_Datatype type)
{
    void *blob = NULL;
    size_t len = 0;
    FT_EQ(ferry__datatype_serialize(type, &blob, &len), 0);
    MPI_Datatype rebuilt;
    FT_EQ(ferry__datatype_deserialize(blob, len, &rebuilt), 0);
    check_same_map(type, rebuilt, 0);
    check_hoisted(blob, len, type);
    /* Truncated blobs are refused, not read past their end. */
    MPI_Datatype none;
    FT_CHECK(ferry__datatype_deserialize(blob, len - sizeof(int64_t), &none) != 0);
    FT_CHECK(none == MPI_DATATYPE_NULL);
    ferry__free(blob);
    MPI_Type_free(&rebuilt);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    uint64_t state = ft_seed;
    int iters = getenv("FERRY_DT_ITERS") ? atoi(getenv("FERRY_DT_ITERS")) : 1500;
    for (int i = 0; i < iters; i++) {
        MPI_Datatype type = or_random_type(&state, 1 + i % 5);
        roundtrip(type);
        or_type_free(&type);
    }
    /* A vector of 3 * 2^30 + 5 blocks: a few words, rebuilt in two levels. */
    MPI_Datatype block, big;
    MPI_Type_contiguous(3, MPI_BYTE, &block);
    MPI_Type_create_hvector(1 << 30, 1, 8, block, &big);
    MPI_Datatype parts[2] = {big, big};
    int ones[2] = {1, 1};
    MPI_Aint disps[2] = {0, (MPI_Aint)8 << 30};
    MPI_Datatype huge;
    MPI_Type_create_struct(2, ones, disps, parts, &huge);
    MPI_Type_commit(&huge);
    roundtrip(huge);
    MPI_Type_free(&huge);
    MPI_Type_free(&big);
    MPI_Type_free(&block);
    return ft_finish();
}

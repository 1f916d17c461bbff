/*
 * Datatypes of blocks: the halo-free part of a local buffer (memory) and a
 * block's place in a file variable, all as 4-D C-order subarrays (leading
 * dimensions of length 1), so no data are ever copied to exclude halos.
 */
#include <limits.h>

#include "ckpt/ckpt_int.h"

MPI_Offset ferry__ckpt_elems(const MPI_Offset count[FERRY__CKPT_D])
{
    MPI_Offset n = 1;
    for (int d = 0; d < FERRY__CKPT_D; d++) n *= count[d];
    return n;
}

static int fits_int(const MPI_Offset *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] < 0 || v[i] > INT_MAX) return 0;
    return 1;
}

int ferry__ckpt_subarray(const MPI_Offset sizes[FERRY__CKPT_D], const MPI_Offset sub[FERRY__CKPT_D],
                         const MPI_Offset starts[FERRY__CKPT_D], MPI_Datatype old, MPI_Datatype *type)
{
    if (!fits_int(sizes, FERRY__CKPT_D) || !fits_int(sub, FERRY__CKPT_D) || !fits_int(starts, FERRY__CKPT_D))
        return ferry__error_set(MPI_ERR_COUNT, "ferry_ckpt: an array dimension beyond 2^31-1 elements");
    int s[FERRY__CKPT_D], u[FERRY__CKPT_D], t[FERRY__CKPT_D];
    for (int d = 0; d < FERRY__CKPT_D; d++) {
        s[d] = (int)sizes[d];
        u[d] = (int)sub[d];
        t[d] = (int)starts[d];
    }
    if (MPI_Type_create_subarray(FERRY__CKPT_D, s, u, t, MPI_ORDER_C, old, type) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry_ckpt: MPI_Type_create_subarray failed");
    MPI_Type_commit(type);
    return 0;
}

int ferry__ckpt_contiguous(MPI_Offset n, MPI_Datatype old, MPI_Datatype *type)
{
    if (!fits_int(&n, 1))
        return ferry__error_set(MPI_ERR_COUNT, "ferry_ckpt: a block of %lld elements (at most 2^31-1 per rank)",
                                (long long)n);
    MPI_Type_contiguous((int)n, old, type);
    MPI_Type_commit(type);
    return 0;
}

int ferry__ckpt_memtype(const ferry__ckpt_var_t *v, const MPI_Offset part_start[FERRY__CKPT_D],
                        const MPI_Offset part_count[FERRY__CKPT_D], MPI_Datatype *type)
{
    MPI_Offset starts[FERRY__CKPT_D];
    for (int d = 0; d < FERRY__CKPT_D; d++) starts[d] = v->halo[d] + part_start[d];
    return ferry__ckpt_subarray(v->mem, part_count, starts, v->type, type);
}

int ferry__ckpt_elem_bytes(const ferry__ckpt_var_t *v, MPI_Datatype *type)
{
    MPI_Type_contiguous(v->esize, MPI_BYTE, type);
    MPI_Type_commit(type);
    return 0;
}

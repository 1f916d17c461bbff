/*
 * Size, extent and contiguity of a datatype, from the host MPI.
 *
 * Contiguity is decided from the type's construction, not from its size and
 * extent alone: a struct {int at 4, int at 0} spans 8 bytes with size 8 but
 * its stream runs backwards.
 */
#include "core/core.h"
#include "datatype/datatype.h"
#include "error/error.h"

enum { CONTIGUITY_MAX_DEPTH = 16 };

static void free_if_derived(MPI_Datatype *types, int n)
{
    for (int i = 0; i < n; i++) {
        int ni, na, nd, combiner;
        MPI_Type_get_envelope(types[i], &ni, &na, &nd, &combiner);
        if (combiner != MPI_COMBINER_NAMED) MPI_Type_free(&types[i]);
    }
}

/* True when one element's stream is its bytes [true_lb, true_lb + size) in
 * order. Conservative: unknown constructions answer false (slower, exact). */
static int element_contiguous(MPI_Datatype type, int depth)
{
    int ni, na, nd, combiner;
    if (depth > CONTIGUITY_MAX_DEPTH || MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return 0;
    if (combiner == MPI_COMBINER_NAMED) return 1;
    if (combiner != MPI_COMBINER_DUP && combiner != MPI_COMBINER_CONTIGUOUS && combiner != MPI_COMBINER_RESIZED)
        return 0;
    if (ni > 1 || na > 2 || nd != 1) return 0;
    int ints[1];
    MPI_Aint addrs[2];
    MPI_Datatype child;
    MPI_Type_get_contents(type, ni, na, nd, ints, addrs, &child);
    int contiguous = element_contiguous(child, depth + 1);
    if (contiguous && combiner == MPI_COMBINER_CONTIGUOUS && ints[0] > 1) {
        MPI_Count size, lb, extent;
        MPI_Type_size_x(child, &size);
        MPI_Type_get_extent_x(child, &lb, &extent);
        contiguous = size == extent;
    }
    free_if_derived(&child, 1);
    return contiguous;
}

int ferry__datatype_info(MPI_Datatype type, ferry__typeinfo_t *info)
{
    MPI_Count lb;
    if (type == MPI_DATATYPE_NULL || MPI_Type_size_x(type, &info->size) != MPI_SUCCESS ||
        MPI_Type_get_extent_x(type, &lb, &info->extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(type, &info->true_lb, &info->true_extent) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: invalid datatype");
    if (info->size == MPI_UNDEFINED) return ferry__error_set(MPI_ERR_TYPE, "ferry: datatype size overflows");
    info->contiguous = info->size == info->true_extent && element_contiguous(type, 0);
    return 0;
}

int ferry__datatype_stream_contiguous(const ferry__typeinfo_t *info, MPI_Count count)
{
    return info->contiguous && (count <= 1 || info->extent == info->size);
}

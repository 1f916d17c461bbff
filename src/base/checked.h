/*
 * Checked offset arithmetic (a leaf header: includes no other ferry header).
 *
 * File offsets, view stream positions and their products overflow 64 bits
 * only for absurd arguments, but then they wrap silently: a byte at etype
 * offset 2^24 through a filetype of extent 2^40 landed at file byte 0
 * (issue 13). Every computation of an offset from a caller's numbers goes
 * through these, and a result past FERRY_OFFSET_MAX counts as an overflow,
 * which the data-access entry points report as MPI_ERR_ARG naming the value.
 */
#ifndef FERRY_CHECKED_H
#define FERRY_CHECKED_H

#include <stdint.h>

#include "ferry.h"

/* The largest file offset (one past a byte) and view stream position ferry
 * computes with: 2 EiB, above every file system's limit and far enough
 * below INT64_MAX that rounding a range up to blocks or windows, or adding
 * a few such ranges, cannot overflow. */
#define FERRY_OFFSET_MAX ((MPI_Offset)(INT64_MAX / 4))

/* *sum = a + b; 1 when that passes FERRY_OFFSET_MAX (or 64 bits). */
static inline int ferry__offset_add(MPI_Offset a, MPI_Offset b, MPI_Offset *sum)
{
    return __builtin_add_overflow(a, b, sum) || *sum > FERRY_OFFSET_MAX;
}

/* *product = a * b; 1 when that passes FERRY_OFFSET_MAX (or 64 bits). */
static inline int ferry__offset_mul(MPI_Offset a, MPI_Offset b, MPI_Offset *product)
{
    return __builtin_mul_overflow(a, b, product) || *product > FERRY_OFFSET_MAX;
}

#endif

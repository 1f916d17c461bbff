/*
 * Block copy kernels, specialized on the block's byte length.
 *
 * A kernel copies n blocks of `len` bytes from src + j * sstride to
 * dst + j * dstride. Pack passes the memory side as src and the stream
 * (dstride == len) as dst; unpack swaps them, so one kernel serves both.
 * The two-level form copies a grid of n_out x n_in blocks (a vector of
 * vectors: subarray faces). Small lengths get an instance with the length
 * as a constant, so the compiler emits plain moves; from FERRY__DT_MEMCPY_MIN
 * bytes on, memcpy is as fast and there is one generic instance.
 */
#ifndef FERRY_DATATYPE_KERNELS_H
#define FERRY_DATATYPE_KERNELS_H

#include "ferry.h"

enum { FERRY__DT_MEMCPY_MIN = 128 };

typedef struct ferry__dt_grid {
    MPI_Count n_out, n_in;  /* blocks */
    MPI_Count d_out, d_in;  /* dst strides, bytes */
    MPI_Count s_out, s_in;  /* src strides, bytes */
} ferry__dt_grid_t;

typedef void ferry__dt_copy_fn(char *dst, MPI_Count dstride, const char *src, MPI_Count sstride, MPI_Count n,
                               MPI_Count len);
typedef void ferry__dt_copy2_fn(char *dst, const char *src, const ferry__dt_grid_t *grid, MPI_Count len);

/* The kernels for blocks of len bytes (never NULL). */
ferry__dt_copy_fn *ferry__dt_copy_for(MPI_Count len);
ferry__dt_copy2_fn *ferry__dt_copy2_for(MPI_Count len);

/* One block of len bytes: fixed-size moves for the common small sizes. */
void ferry__dt_copy_block(char *dst, const char *src, MPI_Count len);

#endif

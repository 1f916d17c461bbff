/*
 * Kernel instances. COPY_KERNELS(L) defines the one- and two-level copies
 * for blocks of exactly L bytes; the table below maps a length to them.
 */
#include <string.h>

#include "datatype/kernels/kernels.h"

#define COPY_KERNELS(L)                                                                                            \
    static void copy_##L(char *dst, MPI_Count dstride, const char *src, MPI_Count sstride, MPI_Count n,           \
                         MPI_Count len)                                                                            \
    {                                                                                                              \
        (void)len;                                                                                                 \
        for (MPI_Count j = 0; j < n; j++) memcpy(dst + j * dstride, src + j * sstride, L);                         \
    }                                                                                                              \
    static void copy2_##L(char *dst, const char *src, const ferry__dt_grid_t *g, MPI_Count len)                   \
    {                                                                                                              \
        (void)len;                                                                                                 \
        for (MPI_Count o = 0; o < g->n_out; o++) {                                                                 \
            char *d = dst + o * g->d_out;                                                                          \
            const char *s = src + o * g->s_out;                                                                    \
            for (MPI_Count i = 0; i < g->n_in; i++) memcpy(d + i * g->d_in, s + i * g->s_in, L);                   \
        }                                                                                                          \
    }

COPY_KERNELS(1)
COPY_KERNELS(2)
COPY_KERNELS(4)
COPY_KERNELS(8)
COPY_KERNELS(12)
COPY_KERNELS(16)
COPY_KERNELS(24)
COPY_KERNELS(32)
COPY_KERNELS(48)
COPY_KERNELS(64)

static void copy_any(char *dst, MPI_Count dstride, const char *src, MPI_Count sstride, MPI_Count n, MPI_Count len)
{
    for (MPI_Count j = 0; j < n; j++) memcpy(dst + j * dstride, src + j * sstride, (size_t)len);
}

static void copy2_any(char *dst, const char *src, const ferry__dt_grid_t *g, MPI_Count len)
{
    for (MPI_Count o = 0; o < g->n_out; o++)
        copy_any(dst + o * g->d_out, g->d_in, src + o * g->s_out, g->s_in, g->n_in, len);
}

static const struct {
    MPI_Count len;
    ferry__dt_copy_fn *copy;
    ferry__dt_copy2_fn *copy2;
} table[] = {
    {1, copy_1, copy2_1},    {2, copy_2, copy2_2},    {4, copy_4, copy2_4},    {8, copy_8, copy2_8},
    {12, copy_12, copy2_12}, {16, copy_16, copy2_16}, {24, copy_24, copy2_24}, {32, copy_32, copy2_32},
    {48, copy_48, copy2_48}, {64, copy_64, copy2_64},
};

ferry__dt_copy_fn *ferry__dt_copy_for(MPI_Count len)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].len == len) return table[i].copy;
    return copy_any;
}

ferry__dt_copy2_fn *ferry__dt_copy2_for(MPI_Count len)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].len == len) return table[i].copy2;
    return copy2_any;
}

void ferry__dt_copy_block(char *dst, const char *src, MPI_Count len)
{
    switch (len) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, (size_t)len); break;
    }
}

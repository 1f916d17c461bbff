/*
 * Kernel instances. COPY_KERNELS(L) defines the one- and two-level copies
 * for blocks of exactly L bytes; the table below maps a length to them.
 */
#include <stdint.h>
#include <string.h>

#include "datatype/kernels/kernels.h"

/* Pointer-stepping loops unrolled by four: strided small blocks are bound
 * by load latency, and independent moves keep several loads in flight. */
#define COPY_KERNELS(L)                                                                                            \
    static void copy_##L(char *dst, MPI_Count dstride, const char *src, MPI_Count sstride, MPI_Count n,           \
                         MPI_Count len)                                                                            \
    {                                                                                                              \
        (void)len;                                                                                                 \
        MPI_Count j = 0;                                                                                           \
        for (; j + 4 <= n; j += 4, dst += 4 * dstride, src += 4 * sstride) {                                       \
            memcpy(dst, src, L);                                                                                   \
            memcpy(dst + dstride, src + sstride, L);                                                               \
            memcpy(dst + 2 * dstride, src + 2 * sstride, L);                                                       \
            memcpy(dst + 3 * dstride, src + 3 * sstride, L);                                                       \
        }                                                                                                          \
        for (; j < n; j++, dst += dstride, src += sstride) memcpy(dst, src, L);                                    \
    }                                                                                                              \
    static void copy2_##L(char *dst, const char *src, const ferry__dt_grid_t *g, MPI_Count len)                   \
    {                                                                                                              \
        for (MPI_Count o = 0; o < g->n_out; o++)                                                                   \
            copy_##L(dst + o * g->d_out, g->d_in, src + o * g->s_out, g->s_in, g->n_in, len);                      \
    }

COPY_KERNELS(1)
COPY_KERNELS(2)
COPY_KERNELS(4)
COPY_KERNELS(8)
COPY_KERNELS(12)
COPY_KERNELS(16)
COPY_KERNELS(24)
COPY_KERNELS(32)
COPY_KERNELS(40)
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
    {40, copy_40, copy2_40}, {48, copy_48, copy2_48}, {64, copy_64, copy2_64},
};

ferry__dt_copy_fn *ferry__dt_copy_for(MPI_Count len)
{
    if (len >= FERRY__DT_MEMCPY_MIN) return copy_any;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].len == len) return table[i].copy;
    return copy_any;
}

ferry__dt_copy2_fn *ferry__dt_copy2_for(MPI_Count len)
{
    if (len >= FERRY__DT_MEMCPY_MIN) return copy2_any;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].len == len) return table[i].copy2;
    return copy2_any;
}

/* Up to 64 bytes as two possibly overlapping fixed-size moves: no call, no loop. */
void ferry__dt_copy_block(char *dst, const char *src, MPI_Count len)
{
    if (len > 32 && len <= 64) { /* first and last 32 bytes, possibly overlapping */
        char a[32], b[32];
        memcpy(a, src, 32);
        memcpy(b, src + len - 32, 32);
        memcpy(dst, a, 32);
        memcpy(dst + len - 32, b, 32);
    } else if (len > 16 && len <= 32) {
        char a[16], b[16];
        memcpy(a, src, 16);
        memcpy(b, src + len - 16, 16);
        memcpy(dst, a, 16);
        memcpy(dst + len - 16, b, 16);
    } else if (len >= 8 && len <= 16) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + len - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + len - 8, &b, 8);
    } else if (len >= 4 && len < 8) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + len - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + len - 4, &b, 4);
    } else if (len == 1) {
        *dst = *src;
    } else if (len > 1 && len < 4) {
        uint16_t a, b;
        memcpy(&a, src, 2);
        memcpy(&b, src + len - 2, 2);
        memcpy(dst, &a, 2);
        memcpy(dst + len - 2, &b, 2);
    } else {
        memcpy(dst, src, (size_t)len);
    }
}

/*
 * Passes over a rank's block in its local buffer, one contiguous run of the
 * innermost dimension at a time: checksum then swap to big-endian (before
 * a write), swap back (after a write, after a read), zero (before a read
 * that may not cover the block).
 *
 * The checksum of a variable (docs/checkpoint.md) is the sum, modulo 2^64,
 * over its elements of bits(value) * K(i), where bits is the value's bytes
 * as an unsigned big-endian integer, i the element's index in the file
 * variable and K(i) = (2i + 1) * 0x9E3779B97F4A7C15, an odd number: any
 * change of one element changes the sum, zeros (holes never written) add
 * nothing, and sums of disjoint parts add up, so ranks sum their blocks
 * and one reduction gives the file's checksum.
 */
#include <string.h>

#include "ckpt/ckpt_int.h"

#define CKPT_GOLDEN 0x9E3779B97F4A7C15ull

static inline uint64_t load_native(const unsigned char *p, int esize)
{
    switch (esize) {
    case 1: return p[0];
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static inline void swap_one(unsigned char *p, int esize)
{
    switch (esize) {
    case 2: { uint16_t v; memcpy(&v, p, 2); v = __builtin_bswap16(v); memcpy(p, &v, 2); break; }
    case 4: { uint32_t v; memcpy(&v, p, 4); v = __builtin_bswap32(v); memcpy(p, &v, 4); break; }
    case 8: { uint64_t v; memcpy(&v, p, 8); v = __builtin_bswap64(v); memcpy(p, &v, 8); break; }
    default: break;
    }
}

static int host_is_little(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* One run of n elements, instantiated per element size so the loops see a constant. */
static inline uint64_t run_sized(unsigned char *p, MPI_Offset n, int esize, uint64_t k, ferry__ckpt_pass_t pass)
{
    uint64_t sum = 0;
    int swap = host_is_little() && pass != FERRY__CKPT_SUM;
    if (pass == FERRY__CKPT_ZERO) {
        memset(p, 0, (size_t)n * (size_t)esize);
        return 0;
    }
    for (MPI_Offset i = 0; i < n; i++, p += esize, k += 2 * CKPT_GOLDEN) {
        if (pass != FERRY__CKPT_SWAP) sum += load_native(p, esize) * k;
        if (swap) swap_one(p, esize);
    }
    return sum;
}

static uint64_t run(unsigned char *p, MPI_Offset n, int esize, MPI_Offset first, ferry__ckpt_pass_t pass)
{
    uint64_t k = ((uint64_t)first * 2 + 1) * CKPT_GOLDEN;
    switch (esize) {
    case 1: return run_sized(p, n, 1, k, pass);
    case 2: return run_sized(p, n, 2, k, pass);
    case 4: return run_sized(p, n, 4, k, pass);
    default: return run_sized(p, n, 8, k, pass);
    }
}

/* The value's bytes big-endian at out (bits as load_native read them). */
static inline void store_be(unsigned char *out, uint64_t bits, int esize)
{
    int swap = host_is_little();
    switch (esize) {
    case 1: out[0] = (unsigned char)bits; break;
    case 2: { uint16_t v = (uint16_t)bits; if (swap) v = __builtin_bswap16(v); memcpy(out, &v, 2); break; }
    case 4: { uint32_t v = (uint32_t)bits; if (swap) v = __builtin_bswap32(v); memcpy(out, &v, 4); break; }
    default: { uint64_t v = swap ? __builtin_bswap64(bits) : bits; memcpy(out, &v, 8); break; }
    }
}

/* One run of n elements summed and copied big-endian to out, instantiated per element size. */
static inline uint64_t pack_sized(const unsigned char *p, MPI_Offset n, int esize, uint64_t k, unsigned char *out)
{
    uint64_t sum = 0;
    for (MPI_Offset i = 0; i < n; i++, p += esize, out += esize, k += 2 * CKPT_GOLDEN) {
        uint64_t bits = load_native(p, esize);
        sum += bits * k;
        store_be(out, bits, esize);
    }
    return sum;
}

static uint64_t pack_run(const unsigned char *p, MPI_Offset n, int esize, MPI_Offset first, unsigned char *out)
{
    uint64_t k = ((uint64_t)first * 2 + 1) * CKPT_GOLDEN;
    switch (esize) {
    case 1: return pack_sized(p, n, 1, k, out);
    case 2: return pack_sized(p, n, 2, k, out);
    case 4: return pack_sized(p, n, 4, k, out);
    default: return pack_sized(p, n, 8, k, out);
    }
}

uint64_t ferry__ckpt_walk_pack(const ferry__ckpt_block_t *b, unsigned char *out)
{
    uint64_t sum = 0;
    if (ferry__ckpt_elems(b->count) == 0) return 0;
    MPI_Offset run_bytes = b->count[3] * b->esize;
    for (MPI_Offset a = 0; a < b->count[0]; a++)
        for (MPI_Offset c = 0; c < b->count[1]; c++)
            for (MPI_Offset d = 0; d < b->count[2]; d++, out += run_bytes) {
                MPI_Offset mem = a * b->mem_stride[0] + c * b->mem_stride[1] + d * b->mem_stride[2];
                MPI_Offset file = b->file_first + a * b->file_stride[0] + c * b->file_stride[1] + d * b->file_stride[2];
                sum += pack_run(b->base + mem * b->esize, b->count[3], b->esize, file, out);
            }
    return sum;
}

uint64_t ferry__ckpt_walk(const ferry__ckpt_block_t *b, ferry__ckpt_pass_t pass)
{
    uint64_t sum = 0;
    if (ferry__ckpt_elems(b->count) == 0) return 0;
    for (MPI_Offset a = 0; a < b->count[0]; a++)
        for (MPI_Offset c = 0; c < b->count[1]; c++)
            for (MPI_Offset d = 0; d < b->count[2]; d++) {
                MPI_Offset mem = a * b->mem_stride[0] + c * b->mem_stride[1] + d * b->mem_stride[2];
                MPI_Offset file = b->file_first + a * b->file_stride[0] + c * b->file_stride[1] + d * b->file_stride[2];
                sum += run(b->base + mem * b->esize, b->count[3], b->esize, file, pass);
            }
    return sum;
}

void ferry__ckpt_walk_fill(const ferry__ckpt_block_t *b, const unsigned char *value)
{
    if (ferry__ckpt_elems(b->count) == 0) return;
    for (MPI_Offset a = 0; a < b->count[0]; a++)
        for (MPI_Offset c = 0; c < b->count[1]; c++)
            for (MPI_Offset d = 0; d < b->count[2]; d++) {
                unsigned char *p =
                    b->base + (a * b->mem_stride[0] + c * b->mem_stride[1] + d * b->mem_stride[2]) * b->esize;
                for (MPI_Offset i = 0; i < b->count[3]; i++) memcpy(p + i * b->esize, value, (size_t)b->esize);
            }
}

/* Strides of a C-order array of the given shape, in elements. */
static void strides_of(const MPI_Offset shape[FERRY__CKPT_D], MPI_Offset stride[FERRY__CKPT_D])
{
    stride[FERRY__CKPT_D - 1] = 1;
    for (int d = FERRY__CKPT_D - 2; d >= 0; d--) stride[d] = stride[d + 1] * shape[d + 1];
}

ferry__ckpt_block_t ferry__ckpt_block_of(const ferry_ckpt_t ck, const ferry__ckpt_var_t *v, void *buf, int strategy)
{
    ferry__ckpt_block_t b = {.esize = v->esize};
    MPI_Offset first = 0;
    strides_of(v->mem, b.mem_stride);
    for (int d = 0; d < FERRY__CKPT_D; d++) {
        b.count[d] = v->count[d];
        first += v->halo[d] * b.mem_stride[d];
    }
    b.base = buf ? (unsigned char *)buf + first * v->esize : NULL;
    if (strategy == FERRY_CKPT_STACK) {
        strides_of(v->count, b.file_stride);
        b.file_first = v->offsets[ck->rank];
    } else {
        strides_of(v->global, b.file_stride);
        for (int d = 0; d < FERRY__CKPT_D; d++) b.file_first += v->start[d] * b.file_stride[d];
    }
    return b;
}

uint64_t ferry__ckpt_checksum_be(const unsigned char *data, int64_t n, int esize, int64_t first)
{
    uint64_t sum = 0, k = ((uint64_t)first * 2 + 1) * CKPT_GOLDEN;
    for (int64_t i = 0; i < n; i++, data += esize, k += 2 * CKPT_GOLDEN) {
        uint64_t bits = 0;
        for (int j = 0; j < esize; j++) bits = bits << 8 | data[j];
        sum += bits * k;
    }
    return sum;
}

void ferry__ckpt_hex(uint64_t sum, char out[17])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) out[i] = digits[(sum >> (60 - 4 * i)) & 15];
    out[16] = '\0';
}

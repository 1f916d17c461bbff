/*
 * Scalar conversions between native and external32 bytes: byte swaps as
 * word loops, integers widened or narrowed (range checked) with shifts so
 * the code does not depend on the host's byte order, booleans normalized,
 * and x87 extended long double <-> IEEE binary128 (exact widening, reads
 * rounded to nearest even).
 */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "datarep/datarep_int.h"
#include "error/error.h"

enum { C = FERRY__DR_COPY, F = FERRY__DR_SWAP, I = FERRY__DR_INT, U = FERRY__DR_UINT, B = FERRY__DR_BOOL,
       L = FERRY__DR_LDOUBLE };

/* long double formats we convert: x87 extended (64-bit significand) on a
 * little-endian host, or binary128 itself. */
int ferry__dr_ldouble_supported(void)
{
    return (LDBL_MANT_DIG == 64 && ferry__dr_host_le() && sizeof(long double) >= 10) ||
           (LDBL_MANT_DIG == 113 && sizeof(long double) == 16);
}

static uint64_t load_native(const unsigned char *p, int n)
{
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (n) {
    case 1: memcpy(&u8, p, 1); return u8;
    case 2: memcpy(&u16, p, 2); return u16;
    case 4: memcpy(&u32, p, 4); return u32;
    default: memcpy(&u64, p, 8); return u64;
    }
}

static void store_native(unsigned char *p, int n, uint64_t v)
{
    uint8_t u8 = (uint8_t)v;
    uint16_t u16 = (uint16_t)v;
    uint32_t u32 = (uint32_t)v;
    switch (n) {
    case 1: memcpy(p, &u8, 1); break;
    case 2: memcpy(p, &u16, 2); break;
    case 4: memcpy(p, &u32, 4); break;
    default: memcpy(p, &v, 8); break;
    }
}

static uint64_t load_be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

static void store_be(unsigned char *p, int n, uint64_t v)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}

/* v (n bytes) sign-extended to 64 bits. */
static int64_t sign_extend(uint64_t v, int n)
{
    if (n >= 8) return (int64_t)v;
    uint64_t sign = (uint64_t)1 << (8 * n - 1);
    return (int64_t)((v ^ sign) - sign);
}

/* Whether v fits n bytes, signed or not. */
static int fits(uint64_t v, int n, int is_signed)
{
    if (n >= 8) return 1;
    if (!is_signed) return v >> (8 * n) == 0;
    int64_t s = (int64_t)v, lim = (int64_t)1 << (8 * n - 1);
    return s >= -lim && s < lim;
}

static uint32_t bswap32(uint32_t v)
{
    return (v & 0xffu) << 24 | (v & 0xff00u) << 8 | (v >> 8 & 0xff00u) | v >> 24;
}

static uint64_t bswap64(uint64_t v)
{
    return (uint64_t)bswap32((uint32_t)v) << 32 | bswap32((uint32_t)(v >> 32));
}

/* n scalars of `size` bytes reversed (a copy on a big-endian host); the
 * common sizes as word loops the compiler turns into byte-swap instructions. */
static void swap_run(const unsigned char *src, unsigned char *dst, int size, MPI_Count n)
{
    if (!ferry__dr_host_le()) {
        memcpy(dst, src, (size_t)(size * n));
        return;
    }
    if (size == 4) {
        for (MPI_Count k = 0; k < n; k++) {
            uint32_t v;
            memcpy(&v, src + 4 * k, 4);
            v = bswap32(v);
            memcpy(dst + 4 * k, &v, 4);
        }
    } else if (size == 8) {
        for (MPI_Count k = 0; k < n; k++) {
            uint64_t v;
            memcpy(&v, src + 8 * k, 8);
            v = bswap64(v);
            memcpy(dst + 8 * k, &v, 8);
        }
    } else {
        for (MPI_Count k = 0; k < n; k++, src += size, dst += size)
            for (int i = 0; i < size; i++) dst[i] = src[size - 1 - i];
    }
}

/* The common narrowing: 8-byte native long to 4 file bytes, and back. */
static int long_run(int put, int is_signed, const unsigned char *src, unsigned char *dst, MPI_Count n)
{
    for (MPI_Count k = 0; k < n; k++) {
        uint64_t v;
        uint32_t w;
        if (put) {
            memcpy(&v, src + 8 * k, 8);
            if (is_signed ? ((int64_t)v < INT32_MIN || (int64_t)v > INT32_MAX) : v > UINT32_MAX)
                return MPI_ERR_CONVERSION;
            w = bswap32((uint32_t)v);
            memcpy(dst + 4 * k, &w, 4);
        } else {
            memcpy(&w, src + 4 * k, 4);
            w = bswap32(w);
            v = is_signed ? (uint64_t)(int64_t)(int32_t)w : w;
            memcpy(dst + 8 * k, &v, 8);
        }
    }
    return 0;
}

static int any_nonzero(const unsigned char *p, int n)
{
    for (int i = 0; i < n; i++)
        if (p[i]) return 1;
    return 0;
}

/* x87 extended (bytes 0-7 significand with explicit integer bit, 8-9 sign
 * and exponent) -> binary128 big-endian. Exact. */
static void x87_to_quad(const unsigned char *src, unsigned char *dst)
{
    uint64_t sig = load_native(src, 8);
    unsigned se = (unsigned)load_native(src + 8, 2), exp = se & 0x7fff;
    uint64_t frac = sig & ~((uint64_t)1 << 63); /* 63 fraction bits */
    int integer = (int)(sig >> 63);
    if (exp == 0 && integer) exp = 1;                                       /* pseudo-denormal */
    if (exp != 0 && exp != 0x7fff && !integer) frac = (uint64_t)1 << 62, exp = 0x7fff; /* unnormal: NaN */
    uint64_t hi = (uint64_t)se >> 15 << 63 | (uint64_t)exp << 48 | frac >> 15, lo = frac << 49;
    store_be(dst, 8, hi);
    store_be(dst + 8, 8, lo);
}

/* binary128 big-endian -> x87 extended, rounded to nearest even. */
static void quad_to_x87(const unsigned char *src, unsigned char *dst)
{
    uint64_t hi = load_be(src, 8), lo = load_be(src + 8, 8);
    unsigned sign = (unsigned)(hi >> 63), exp = (unsigned)(hi >> 48) & 0x7fff;
    uint64_t frac = (hi & 0xffffffffffffULL) << 15 | lo >> 49, rest = lo & (((uint64_t)1 << 49) - 1);
    uint64_t sig;
    if (exp == 0x7fff) {
        sig = (uint64_t)1 << 63 | frac;
        if ((hi << 16 | lo) != 0 && frac == 0) sig |= (uint64_t)1 << 62; /* NaN with a low payload stays NaN */
    } else {
        sig = (exp ? (uint64_t)1 << 63 : 0) | frac;
        uint64_t half = (uint64_t)1 << 48;
        if (rest > half || (rest == half && (sig & 1))) {
            sig++;
            if (sig == 0) sig = (uint64_t)1 << 63, exp++; /* carried out of the significand */
        }
        if (exp == 0 && sig >> 63) exp = 1; /* a denormal rounded up to the smallest normal */
    }
    memset(dst, 0, sizeof(long double));
    store_native(dst, 8, sig);
    store_native(dst + 8, 2, (uint64_t)(sign << 15 | exp));
}

/* One scalar of an integer, boolean or long double part. */
static int convert_one(const ferry__dr_part_t *p, int put, const unsigned char *src, unsigned char *dst)
{
    int ss = put ? p->msize : p->fsize, ds = put ? p->fsize : p->msize;
    uint64_t v;
    switch (p->conv) {
    case I:
    case U:
        v = put ? load_native(src, ss) : load_be(src, ss);
        if (p->conv == I) v = (uint64_t)sign_extend(v, ss);
        if (!fits(v, ds, p->conv == I)) return MPI_ERR_CONVERSION;
        put ? store_be(dst, ds, v) : store_native(dst, ds, v);
        return 0;
    case B:
        v = (uint64_t)any_nonzero(src, ss);
        put ? store_be(dst, ds, v) : store_native(dst, ds, v);
        return 0;
    case L: put ? x87_to_quad(src, dst) : quad_to_x87(src, dst); return 0;
    default: return MPI_ERR_CONVERSION;
    }
}

/* n scalars of part p, native -> file (put) or file -> native. */
static int convert_scalars(const ferry__dr_part_t *p, int put, const unsigned char *src, unsigned char *dst,
                           MPI_Count n)
{
    int ss = put ? p->msize : p->fsize, ds = put ? p->fsize : p->msize;
    if (p->conv == C) {
        memcpy(dst, src, (size_t)(ds * n));
        return 0;
    }
    if (p->conv == F) {
        swap_run(src, dst, ds, n);
        return 0;
    }
    if ((p->conv == I || p->conv == U) && p->msize == 8 && p->fsize == 4 && ferry__dr_host_le())
        return long_run(put, p->conv == I, src, dst, n);
    for (MPI_Count k = 0; k < n; k++, src += ss, dst += ds) FERRY_TRY(convert_one(p, put, src, dst));
    return 0;
}

static int convert_items(const ferry__dr_basic_t *b, int put, const unsigned char *src, unsigned char *dst,
                         MPI_Count n)
{
    const ferry__dr_part_t *p0 = &b->part[0], *p1 = &b->part[1];
    if (b->nparts == 1) return convert_scalars(p0, put, src, dst, n * p0->count);
    MPI_Count ss = put ? b->msize : b->fsize, ds = put ? b->fsize : b->msize;
    MPI_Count s1 = (put ? p0->msize : p0->fsize) * p0->count, d1 = (put ? p0->fsize : p0->msize) * p0->count;
    for (MPI_Count k = 0; k < n; k++, src += ss, dst += ds) {
        FERRY_TRY(convert_scalars(p0, put, src, dst, p0->count));
        FERRY_TRY(convert_scalars(p1, put, src + s1, dst + d1, 1));
    }
    return 0;
}

int ferry__dr_put(const ferry__dr_basic_t *b, const unsigned char *native, unsigned char *file, MPI_Count n)
{
    return convert_items(b, 1, native, file, n);
}

int ferry__dr_get(const ferry__dr_basic_t *b, const unsigned char *file, unsigned char *native, MPI_Count n)
{
    return convert_items(b, 0, file, native, n);
}

/* Within one scalar: the file byte native byte j comes from, -1 if many. */
static int scalar_source(const ferry__dr_part_t *p, int j)
{
    int ms = p->msize, fs = p->fsize, le = ferry__dr_host_le();
    switch (p->conv) {
    case C: return j;
    case F: return le ? fs - 1 - j : j;
    case I:
    case U:
        if (ms < fs) return -1; /* narrowing checks the whole value */
        if (le) return j < fs ? fs - 1 - j : 0;
        return j >= ms - fs ? j - (ms - fs) : 0;
    case B: return fs == 1 ? 0 : -1;
    default: return -1;
    }
}

int ferry__dr_source_byte(const ferry__dr_basic_t *b, MPI_Count j)
{
    MPI_Count file_base = 0;
    for (int k = 0; k < b->nparts; k++) {
        const ferry__dr_part_t *p = &b->part[k];
        MPI_Count span = (MPI_Count)p->msize * p->count;
        if (j < span) {
            int s = scalar_source(p, (int)(j % p->msize));
            return s < 0 ? -1 : (int)(file_base + j / p->msize * p->fsize + s);
        }
        j -= span;
        file_base += (MPI_Count)p->fsize * p->count;
    }
    return -1;
}

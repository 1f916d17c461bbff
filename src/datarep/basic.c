/*
 * Predefined datatypes in external32 (MPI-3.1 13.5.2, table 13.2) and the
 * conversions of their scalars.
 *
 * File sizes come from the standard's table, native sizes from the host, so
 * MPI_LONG (8 bytes here) is 4 big-endian bytes in the file, MPI_WCHAR
 * (wchar_t, 4 bytes) is 2: a value that does not fit the file size is an
 * MPI_ERR_CONVERSION when writing (the standard's advice: "only the least
 * significant bytes are moved ... no conversion errors if the data range is
 * within the range of the smaller size integer"). Pair types (MPI_DOUBLE_INT
 * ...) are the sum of their parts, as a struct would be. long double is IEEE
 * binary128 in the file: x87 80-bit extended values widen exactly and are
 * rounded to nearest even when read. Integer code is written with shifts, so
 * it does not depend on the host's byte order.
 */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "datarep/datarep_int.h"
#include "error/error.h"

enum { C = FERRY__DR_COPY, F = FERRY__DR_SWAP, I = FERRY__DR_INT, U = FERRY__DR_UINT, B = FERRY__DR_BOOL,
       L = FERRY__DR_LDOUBLE };

/* One row: the type, then (conversion, file bytes, scalars) of each part;
 * native sizes are the host's. FLOAT-like rows use SWAP; INT/UINT rows
 * become SWAP when the native size equals the file size. */
typedef struct row {
    MPI_Datatype type;
    unsigned char conv0, fsize0, count0, conv1, fsize1;
} row_t;

static const row_t *table(size_t *n)
{
    static const row_t rows[] = {
        {MPI_CHAR, C, 1, 1, 0, 0}, {MPI_SIGNED_CHAR, C, 1, 1, 0, 0}, {MPI_UNSIGNED_CHAR, C, 1, 1, 0, 0},
        {MPI_BYTE, C, 1, 1, 0, 0}, {MPI_PACKED, C, 1, 1, 0, 0}, {MPI_WCHAR, U, 2, 1, 0, 0},
        {MPI_SHORT, I, 2, 1, 0, 0}, {MPI_UNSIGNED_SHORT, U, 2, 1, 0, 0}, {MPI_INT, I, 4, 1, 0, 0},
        {MPI_UNSIGNED, U, 4, 1, 0, 0}, {MPI_LONG, I, 4, 1, 0, 0}, {MPI_UNSIGNED_LONG, U, 4, 1, 0, 0},
        {MPI_LONG_LONG_INT, I, 8, 1, 0, 0}, {MPI_LONG_LONG, I, 8, 1, 0, 0},
        {MPI_UNSIGNED_LONG_LONG, U, 8, 1, 0, 0}, {MPI_FLOAT, F, 4, 1, 0, 0}, {MPI_DOUBLE, F, 8, 1, 0, 0},
        {MPI_LONG_DOUBLE, L, 16, 1, 0, 0}, {MPI_C_BOOL, B, 1, 1, 0, 0}, {MPI_INT8_T, I, 1, 1, 0, 0},
        {MPI_INT16_T, I, 2, 1, 0, 0}, {MPI_INT32_T, I, 4, 1, 0, 0}, {MPI_INT64_T, I, 8, 1, 0, 0},
        {MPI_UINT8_T, U, 1, 1, 0, 0}, {MPI_UINT16_T, U, 2, 1, 0, 0}, {MPI_UINT32_T, U, 4, 1, 0, 0},
        {MPI_UINT64_T, U, 8, 1, 0, 0}, {MPI_AINT, I, 8, 1, 0, 0}, {MPI_COUNT, I, 8, 1, 0, 0},
        {MPI_OFFSET, I, 8, 1, 0, 0}, {MPI_C_COMPLEX, F, 4, 2, 0, 0}, {MPI_C_FLOAT_COMPLEX, F, 4, 2, 0, 0},
        {MPI_C_DOUBLE_COMPLEX, F, 8, 2, 0, 0}, {MPI_C_LONG_DOUBLE_COMPLEX, L, 16, 2, 0, 0},
        {MPI_CXX_BOOL, B, 1, 1, 0, 0}, {MPI_CXX_FLOAT_COMPLEX, F, 4, 2, 0, 0},
        {MPI_CXX_DOUBLE_COMPLEX, F, 8, 2, 0, 0}, {MPI_CXX_LONG_DOUBLE_COMPLEX, L, 16, 2, 0, 0},
        {MPI_FLOAT_INT, F, 4, 1, I, 4}, {MPI_DOUBLE_INT, F, 8, 1, I, 4}, {MPI_LONG_INT, I, 4, 1, I, 4},
        {MPI_SHORT_INT, I, 2, 1, I, 4}, {MPI_LONG_DOUBLE_INT, L, 16, 1, I, 4}, {MPI_2INT, I, 4, 2, 0, 0},
        {MPI_CHARACTER, C, 1, 1, 0, 0}, {MPI_LOGICAL, B, 4, 1, 0, 0}, {MPI_INTEGER, I, 4, 1, 0, 0},
        {MPI_REAL, F, 4, 1, 0, 0}, {MPI_DOUBLE_PRECISION, F, 8, 1, 0, 0}, {MPI_COMPLEX, F, 4, 2, 0, 0},
        {MPI_DOUBLE_COMPLEX, F, 8, 2, 0, 0}, {MPI_2REAL, F, 4, 2, 0, 0}, {MPI_2DOUBLE_PRECISION, F, 8, 2, 0, 0},
        {MPI_2INTEGER, I, 4, 2, 0, 0},
#ifdef MPI_INTEGER1
        {MPI_INTEGER1, I, 1, 1, 0, 0},
#endif
#ifdef MPI_INTEGER2
        {MPI_INTEGER2, I, 2, 1, 0, 0},
#endif
#ifdef MPI_INTEGER4
        {MPI_INTEGER4, I, 4, 1, 0, 0},
#endif
#ifdef MPI_INTEGER8
        {MPI_INTEGER8, I, 8, 1, 0, 0},
#endif
#ifdef MPI_INTEGER16
        {MPI_INTEGER16, I, 16, 1, 0, 0},
#endif
#ifdef MPI_REAL2
        {MPI_REAL2, F, 2, 1, 0, 0},
#endif
#ifdef MPI_REAL4
        {MPI_REAL4, F, 4, 1, 0, 0},
#endif
#ifdef MPI_REAL8
        {MPI_REAL8, F, 8, 1, 0, 0},
#endif
#ifdef MPI_REAL16
        {MPI_REAL16, F, 16, 1, 0, 0}, /* Fortran REAL*16 is binary128 already */
#endif
#ifdef MPI_COMPLEX4
        {MPI_COMPLEX4, F, 2, 2, 0, 0},
#endif
#ifdef MPI_COMPLEX8
        {MPI_COMPLEX8, F, 4, 2, 0, 0},
#endif
#ifdef MPI_COMPLEX16
        {MPI_COMPLEX16, F, 8, 2, 0, 0},
#endif
#ifdef MPI_COMPLEX32
        {MPI_COMPLEX32, F, 16, 2, 0, 0},
#endif
    };
    *n = sizeof rows / sizeof rows[0];
    return rows;
}

static int host_le(void)
{
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* long double formats we convert: x87 extended (64-bit significand) on a
 * little-endian host, or binary128 itself. */
static int ldouble_supported(void)
{
    return (LDBL_MANT_DIG == 64 && host_le() && sizeof(long double) >= 10) ||
           (LDBL_MANT_DIG == 113 && sizeof(long double) == 16);
}

/* The part's native scalar size and final conversion; MPI_ERR_CONVERSION if
 * the pair of sizes is not one we convert. */
static int settle(ferry__dr_part_t *p, MPI_Count msize)
{
    p->msize = (unsigned char)msize;
    if (p->conv == C && msize != p->fsize) p->conv = U;
    if ((p->conv == I || p->conv == U) && msize == p->fsize) p->conv = msize == 1 ? C : F;
    if (p->conv == F && msize != p->fsize) return MPI_ERR_CONVERSION;
    if ((p->conv == I || p->conv == U || p->conv == B) && (msize > 8 || p->fsize > 8)) return MPI_ERR_CONVERSION;
    if (p->conv == L && (!ldouble_supported() || msize != (MPI_Count)sizeof(long double)))
        return MPI_ERR_CONVERSION;
    if (p->conv == L && LDBL_MANT_DIG == 113) p->conv = F;
    return 0;
}

/* MPI-3.1 17.1.9: external32 sizes of MPI_Type_create_f90_* types, from (p, r). */
static int f90_row(ferry__dr_contents_t *c, row_t *row)
{
    MPI_Count p = c->ni > 0 ? c->ints[0] : 0, r = c->ni > 1 ? c->ints[1] : 0;
    *row = (row_t){MPI_DATATYPE_NULL, F, 4, 1, 0, 0};
    if (c->combiner == MPI_COMBINER_F90_INTEGER) {
        r = p; /* one argument: r */
        row->conv0 = I;
        row->fsize0 = r > 18 ? 16 : r > 9 ? 8 : r > 4 ? 4 : r > 2 ? 2 : 1;
        return r > 38 ? MPI_ERR_CONVERSION : 0;
    }
    row->fsize0 = (p > 15 || r > 307) ? 16 : (p > 6 || r > 37) ? 8 : 4;
    if (row->fsize0 == 16 && p <= 18 && r <= 4931 && LDBL_MANT_DIG == 64) row->conv0 = L; /* x87 kind */
    row->count0 = c->combiner == MPI_COMBINER_F90_COMPLEX ? 2 : 1;
    return (p > 33 || r > 4931) ? MPI_ERR_CONVERSION : 0;
}

static int find_row(MPI_Datatype type, int combiner, row_t *row)
{
    if (combiner != MPI_COMBINER_NAMED) {
        ferry__dr_contents_t c;
        int rc = ferry__dr_contents_get(type, &c);
        if (rc == 0) rc = f90_row(&c, row);
        ferry__dr_contents_release(&c);
        return rc;
    }
    size_t n;
    const row_t *rows = table(&n);
    for (size_t i = 0; i < n; i++)
        if (rows[i].type != MPI_DATATYPE_NULL && rows[i].type == type) {
            *row = rows[i];
            return 0;
        }
    return MPI_ERR_TYPE;
}

static int type_error(int cls, MPI_Datatype type, const char *rep)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    MPI_Type_get_name(type, name, &len);
    return ferry__error_set(cls, "ferry: data representation '%s' cannot represent predefined datatype %s", rep,
                            len > 0 ? name : "(unnamed)");
}

static int external32_basic(const ferry__datarep_t *rep, MPI_Datatype type, int combiner, ferry__dr_basic_t *b)
{
    row_t row;
    int cls = find_row(type, combiner, &row);
    if (cls) return type_error(cls, type, rep->name);
    b->nparts = row.conv1 ? 2 : 1;
    b->part[0] = (ferry__dr_part_t){row.conv0, 0, row.fsize0, row.count0};
    b->part[1] = (ferry__dr_part_t){row.conv1, 0, row.fsize1, 1};
    MPI_Count tail = b->nparts == 2 ? (MPI_Count)sizeof(int) : 0;
    if (b->msize <= tail || (b->msize - tail) % row.count0) return type_error(MPI_ERR_TYPE, type, rep->name);
    cls = settle(&b->part[0], (b->msize - tail) / row.count0);
    if (cls == 0 && b->nparts == 2) cls = settle(&b->part[1], tail);
    if (cls) return type_error(cls, type, rep->name);
    b->fsize = (MPI_Count)row.fsize0 * row.count0 + (b->nparts == 2 ? row.fsize1 : 0);
    return 0;
}

int ferry__dr_basic(const ferry__datarep_t *rep, MPI_Datatype type, int combiner, ferry__dr_basic_t *b)
{
    memset(b, 0, sizeof *b);
    b->type = type;
    if (MPI_Type_size_x(type, &b->msize) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: invalid predefined datatype");
    b->fsize = b->msize;
    if (rep->kind == FERRY__DR_NATIVE) return 0;
    if (rep->kind == FERRY__DR_EXTERNAL32) return external32_basic(rep, type, combiner, b);
    MPI_Aint extent = 0;
    int code = rep->extent_fn(type, &extent, rep->extra_state);
    if (code != MPI_SUCCESS || extent < 0)
        return ferry__error_set(MPI_ERR_CONVERSION, "ferry: data representation '%s': dtype_file_extent_fn failed",
                                rep->name);
    b->fsize = extent;
    return 0;
}

/* --- scalars */

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
    if (!host_le()) {
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

/* n scalars of part p, native -> file (put) or file -> native. */
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
    if ((p->conv == I || p->conv == U) && p->msize == 8 && p->fsize == 4 && host_le())
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
    int ms = p->msize, fs = p->fsize, le = host_le();
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

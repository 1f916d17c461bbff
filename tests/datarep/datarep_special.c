/*
 * external32 edge cases: long double <-> IEEE binary128 over every class of
 * value (zeros, denormals, normals, infinities, NaNs, ties, carries into
 * the exponent), checked against the compiler's __float128 conversions;
 * values that do not fit their external32 size (MPI_ERR_CONVERSION, with the
 * hosts' behaviour noted); booleans; file-layout extents and
 * get_type_extent values worked out from MPI-3.1 13.5; window and name
 * errors.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <wchar.h>

#include "base/alloc.h"
#include "datarep/datarep.h"
#include "ferry_test.h"

static const ferry__datarep_t *ext32;

static void reverse(const unsigned char *src, unsigned char *dst, int n)
{
    for (int i = 0; i < n; i++) dst[i] = src[n - 1 - i];
}

/* An x87 value of a chosen class from random bits. */
static long double random_x87(uint64_t *s)
{
    unsigned char raw[sizeof(long double)] = {0};
    uint64_t sig = ft_rand(s);
    unsigned exp, cls = (unsigned)(ft_rand(s) % 6);
    exp = cls == 0 ? 0 : cls == 1 ? 1 : cls == 2 ? 0x7ffe : cls == 3 ? 0x7fff : 1 + (unsigned)(ft_rand(s) % 0x7ffd);
    if (exp != 0) sig |= (uint64_t)1 << 63; /* valid encodings only: no unnormals or pseudo-denormals */
    else sig &= ~((uint64_t)1 << 63);
    if (cls == 3 && (ft_rand(s) & 1)) sig = (uint64_t)1 << 63; /* infinity */
    if (cls == 0 && (ft_rand(s) & 3) == 0) sig = 0;           /* zero */
    unsigned se = exp | (unsigned)(ft_rand(s) & 1) << 15;
    memcpy(raw, &sig, 8);
    raw[8] = (unsigned char)se, raw[9] = (unsigned char)(se >> 8);
    long double x;
    memcpy(&x, raw, sizeof x);
    return x;
}

/* A binary128 value of a chosen class, with ties and carries. */
static __float128 random_quad(uint64_t *s)
{
    uint64_t hi = ft_rand(s), lo = ft_rand(s);
    unsigned cls = (unsigned)(ft_rand(s) % 8), exp;
    exp = cls == 0 ? 0 : cls == 1 ? 1 : cls == 2 ? 0x7ffe : cls == 3 ? 0x7fff : 1 + (unsigned)(ft_rand(s) % 0x7ffd);
    if (cls == 4) lo = (lo & ~(((uint64_t)1 << 49) - 1)) | (uint64_t)1 << 48; /* exactly half an x87 ulp */
    if (cls == 5) hi |= 0xffffffffffffULL, lo |= ~(((uint64_t)1 << 49) - 1); /* all ones: rounding carries */
    if (cls == 3 && (ft_rand(s) & 1)) hi &= ~0xffffffffffffULL, lo = 0;  /* infinity */
    hi = (hi & 0x8000ffffffffffffULL) | (uint64_t)exp << 48;
    unsigned char raw[16];
    memcpy(raw, &lo, 8);
    memcpy(raw + 8, &hi, 8);
    __float128 q;
    memcpy(&q, raw, 16);
    return q;
}

static int same_long_double(long double a, long double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return !memcmp(&a, &b, 10);
}

static void test_long_double(uint64_t *s)
{
    if (LDBL_MANT_DIG != 64) {
        ft_skip("long double is not x87 extended here: binary128 is tested only through the random types");
        return;
    }
    for (int i = 0; i < 20000; i++) {
        long double x = random_x87(s), back;
        unsigned char file[16], want[16], raw[16];
        __float128 q = (__float128)x;
        memcpy(raw, &q, 16);
        reverse(raw, want, 16);
        FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)&x, 1, MPI_LONG_DOUBLE}, 0, file, 16), 0);
        if (isnan(x)) FT_CHECK((file[0] & 0x7f) == 0x7f && file[1] == 0xff);
        else FT_EQ_MEM(file, want, 16);
        FT_EQ(ferry__datarep_unpack(ext32, file, 16, &(ferry__datarep_memory_t){&back, 1, MPI_LONG_DOUBLE}, 0), 0);
        FT_CHECK(same_long_double(back, x)); /* widening then narrowing is exact */

        q = random_quad(s);
        memcpy(raw, &q, 16);
        reverse(raw, file, 16);
        FT_EQ(ferry__datarep_unpack(ext32, file, 16, &(ferry__datarep_memory_t){&back, 1, MPI_LONG_DOUBLE}, 0), 0);
        long double expect = (long double)q;
        if (!same_long_double(back, expect)) {
            unsigned char g[16], e[16];
            memcpy(g, &back, 16), memcpy(e, &expect, 16);
            FT_EQ_MEM(g, e, 10);
        }
    }
}

/* Values wider than their external32 size: an error, never silent truncation. */
static void test_range(void)
{
    long big = (long)1 << 40, fine = -(1L << 31);
    unsigned long ubig = (unsigned long)1 << 33;
    wchar_t emoji = (wchar_t)0x1F600, bmp = (wchar_t)0x00E9;
    unsigned char file[16];
    long back = 0;
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)&big, 1, MPI_LONG}, 0, file, 4), MPI_ERR_CONVERSION);
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)&ubig, 1, MPI_UNSIGNED_LONG}, 0, file, 4), MPI_ERR_CONVERSION);
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)&emoji, 1, MPI_WCHAR}, 0, file, 2), MPI_ERR_CONVERSION);
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)&fine, 1, MPI_LONG}, 0, file, 4), 0);
    FT_EQ(file[0], 0x80);
    FT_EQ(ferry__datarep_unpack(ext32, file, 4, &(ferry__datarep_memory_t){&back, 1, MPI_LONG}, 0), 0);
    FT_EQ(back, fine);
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)&bmp, 1, MPI_WCHAR}, 0, file, 2), 0);
    FT_EQ(file[0], 0x00);
    FT_EQ(file[1], 0xE9);
    /* A window past the offending element converts: errors belong to elements. */
    long two[2] = {big, 7};
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)two, 2, MPI_LONG}, 4, file, 4), 0);
    FT_EQ(file[3], 7);
    if (ft_rank == 0) {
        MPI_Aint pos = 0;
        unsigned char host[16] = {0};
        MPI_Pack_external("external32", &big, 1, MPI_LONG, host, sizeof host, &pos);
        printf("note: host MPI_Pack_external of MPI_LONG 2^40: %ld bytes, first %02x %02x %02x %02x (no error)\n",
               (long)pos, host[0], host[1], host[2], host[3]);
    }
}

static void test_bool(void)
{
    unsigned char raw = 7, file[4], logical_file[4] = {0, 0, 2, 0};
    bool b;
    int logical = 5, logical_back = 0;
    memcpy(&b, &raw, 1);
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)&b, 1, MPI_C_BOOL}, 0, file, 1), 0);
    FT_EQ(file[0], 1);
    file[0] = 0x40;
    FT_EQ(ferry__datarep_unpack(ext32, file, 1, &(ferry__datarep_memory_t){&b, 1, MPI_C_BOOL}, 0), 0);
    memcpy(&raw, &b, 1);
    FT_EQ(raw, 1);
    if (MPI_LOGICAL != MPI_DATATYPE_NULL) {
        FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)&logical, 1, MPI_LOGICAL}, 0, file, 4), 0);
        FT_EQ(file[3], 1);
        FT_EQ(ferry__datarep_unpack(ext32, logical_file, 4, &(ferry__datarep_memory_t){&logical_back, 1, MPI_LOGICAL}, 0), 0);
        FT_EQ(logical_back, 1); /* "all bytes of LOGICAL must be checked" */
    }
}

/* MPI_Type_create_f90_*: external32 sizes from (p, r), MPI-3.1 17.1.9. */
static void test_f90(void)
{
    MPI_Datatype i9, r15, c6;
    if (MPI_Type_create_f90_integer(9, &i9) != MPI_SUCCESS || MPI_Type_create_f90_real(15, 307, &r15) != MPI_SUCCESS ||
        MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &c6) != MPI_SUCCESS) {
        ft_skip("the host has no MPI_Type_create_f90_* types");
        return;
    }
    MPI_Count size;
    FT_EQ(ferry__datarep_size(ext32, i9, &size), 0);
    FT_EQ(size, 4); /* r = 9 > 4: 4 bytes */
    FT_EQ(ferry__datarep_size(ext32, r15, &size), 0);
    FT_EQ(size, 8); /* p = 15 > 6: 8 bytes */
    FT_EQ(ferry__datarep_size(ext32, c6, &size), 0);
    FT_EQ(size, 8); /* two 4-byte reals */
    int32_t v = -2;
    double d = 1.0;
    unsigned char file[8], want_d[8] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)&v, 1, i9}, 0, file, 4), 0);
    FT_EQ(file[0], 0xff);
    FT_EQ(file[3], 0xfe);
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)&d, 1, r15}, 0, file, 8), 0);
    FT_EQ_MEM(file, want_d, 8);
}

static MPI_Count file_extent(MPI_Datatype type)
{
    MPI_Count extent = -1;
    FT_EQ(ferry__datarep_extent(ext32, type, &extent), 0);
    return extent;
}

static void check_extent(MPI_Datatype type, MPI_Count want)
{
    MPI_Type_commit(&type);
    FT_EQ(file_extent(type), want);
    MPI_Type_free(&type);
}

/* MPI-3.1 13.5.1: element displacements scale with the old type's file
 * extent, byte displacements and resized bounds do not; 13.5.2: byte aligned. */
static void test_extents(void)
{
    MPI_Datatype t;
    FT_EQ(file_extent(MPI_LONG), 4);
    FT_EQ(file_extent(MPI_UNSIGNED_LONG), 4);
    FT_EQ(file_extent(MPI_LONG_DOUBLE), 16);
    FT_EQ(file_extent(MPI_WCHAR), 2);
    FT_EQ(file_extent(MPI_DOUBLE_INT), 12);
    FT_EQ(file_extent(MPI_LONG_DOUBLE_INT), 20);
    FT_EQ(file_extent(MPI_C_LONG_DOUBLE_COMPLEX), 32);
    FT_EQ(file_extent(MPI_AINT), 8);
    MPI_Type_contiguous(3, MPI_LONG, &t);
    check_extent(t, 12);
    MPI_Type_vector(2, 1, 3, MPI_LONG, &t);
    check_extent(t, 16);
    MPI_Type_create_hvector(2, 1, 24, MPI_LONG, &t);
    check_extent(t, 28);
    int lens[2] = {1, 2}, idx[2] = {2, 5};
    MPI_Type_indexed(2, lens, idx, MPI_LONG, &t);
    check_extent(t, 20); /* lb 8, ub 28 */
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_CHAR};
    int one[2] = {1, 1};
    MPI_Aint disps[2] = {0, 8};
    MPI_Type_create_struct(2, one, disps, types, &t);
    check_extent(t, 9); /* 16 in memory: no alignment padding in external32 */
    MPI_Type_create_resized(MPI_LONG, 0, 40, &t);
    check_extent(t, 40);
    int sizes[2] = {4, 5}, subs[2] = {2, 2}, starts[2] = {1, 1};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_LONG, &t);
    check_extent(t, 80);
}

static void test_errors(void)
{
    const ferry__datarep_t *rep;
    long v[2] = {1, 2};
    unsigned char file[16];
    FT_EQ(ferry__datarep_find("external64", &rep), MPI_ERR_UNSUPPORTED_DATAREP);
    FT_EQ(ferry__datarep_find("", &rep), MPI_ERR_UNSUPPORTED_DATAREP);
    FT_EQ(ferry__datarep_find("native", &rep), 0);
    FT_CHECK(ferry__datarep_is_native(rep));
    FT_EQ(ferry__datarep_find("internal", &rep), 0);
    FT_CHECK(ferry__datarep_is_native(rep));
    FT_CHECK(!ferry__datarep_is_native(ext32));
    FT_CHECK(!strcmp(ferry__datarep_name(ext32), "external32"));
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)v, 2, MPI_LONG}, 4, file, 8), MPI_ERR_ARG);
    FT_EQ(ferry__datarep_unpack(ext32, file, 1, &(ferry__datarep_memory_t){v, 2, MPI_LONG}, 8), MPI_ERR_ARG);
    MPI_Count floor = -1;
    FT_EQ(ferry__datarep_item_floor(ext32, MPI_LONG, 2, 6, &floor), 0);
    FT_EQ(floor, 4);
    MPI_Count native = -1;
    FT_EQ(ferry__datarep_native_bytes(ext32, MPI_LONG, 2, 6, &native), 0);
    FT_EQ(native, (MPI_Count)sizeof(long)); /* one whole long */
    FT_EQ(ferry__datarep_native_bytes(ext32, MPI_LONG, 2, 8, &native), 0);
    FT_EQ(native, 2 * (MPI_Count)sizeof(long));
    FT_EQ(ferry__datarep_native_bytes(ext32, MPI_LONG_DOUBLE_INT, 3, 25, &native), 0);
    FT_EQ(native, (MPI_Count)(sizeof(long double) + sizeof(int))); /* one whole 20-byte pair of the 25 */
}

/* Every allocation of a conversion fails in turn: MPI_ERR_NO_MEM or
 * success, nothing leaked (the sanitizer build checks), same bytes. */
static void test_alloc_failures(void)
{
    MPI_Datatype inner, outer, vec;
    int lens[2] = {2, 1};
    MPI_Aint disps[2] = {0, 40};
    MPI_Datatype types[2] = {MPI_LONG, MPI_LONG_DOUBLE};
    MPI_Type_create_struct(2, lens, disps, types, &inner);
    MPI_Type_vector(2, 1, 2, inner, &vec);
    MPI_Datatype types2[2] = {vec, MPI_SHORT};
    MPI_Aint disps2[2] = {0, 400};
    MPI_Type_create_struct(2, lens, disps2, types2, &outer);
    MPI_Type_commit(&outer);
    static unsigned char mem[4096], want[512], got[512], back[4096];
    MPI_Count size;
    FT_EQ(ferry__datarep_size(ext32, outer, &size), 0);
    FT_CHECK(size <= (MPI_Count)sizeof want);
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)mem, 1, outer}, 0, want, size), 0);
    for (long n = 1; n < 200; n++) {
        MPI_Datatype layout = MPI_DATATYPE_NULL;
        ferry__alloc_fail_after(n);
        int rc1 = ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)mem, 1, outer}, 3, got, size - 3);
        ferry__alloc_fail_after(n);
        int rc2 = ferry__datarep_unpack(ext32, want, size, &(ferry__datarep_memory_t){back, 1, outer}, 0);
        ferry__alloc_fail_after(n);
        int rc3 = ferry__datarep_file_layout(ext32, outer, &layout);
        ferry__alloc_fail_after(0);
        FT_CHECK(rc1 == 0 || rc1 == MPI_ERR_NO_MEM);
        FT_CHECK(rc2 == 0 || rc2 == MPI_ERR_NO_MEM);
        FT_CHECK(rc3 == 0 || rc3 == MPI_ERR_NO_MEM);
        if (rc1 == 0) FT_EQ_MEM(got, want + 3, (size_t)size - 3);
        if (rc3 == 0) MPI_Type_free(&layout);
        if (rc1 == 0 && rc2 == 0 && rc3 == 0) break;
    }
    MPI_Type_free(&outer);
    MPI_Type_free(&vec);
    MPI_Type_free(&inner);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    FT_EQ(ferry__datarep_find("external32", &ext32), 0);
    uint64_t s = ft_seed + (uint64_t)ft_rank;
    test_long_double(&s);
    test_range();
    test_bool();
    test_extents();
    test_f90();
    test_errors();
    test_alloc_failures();
    return ft_finish();
}

/*
 * Test values for every predefined datatype and their external32 bytes,
 * computed the obvious way: integers with casts and shifts, long double
 * through the compiler's __float128 (IEEE binary128), so the expected file
 * bytes do not come from ferry's conversion code.
 */
#include <float.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <wchar.h>

#include "datarep_bases.h"
#include "ferry_test.h"

#if defined(MPICH)
#define MPICH_ABORTS 1 /* MPICH 4.0 asserts in MPI_Pack_external on pair types and MPI_WCHAR */
#else
#define MPICH_ABORTS 0
#endif

#define P1(s, m, f, n) 1, {{s, m, f, n}, {0, 0, 0, 0}}
#define P2(s, m, f, s2) 2, {{s, m, f, 1}, {s2, (int)sizeof(int), 4, 1}}
#define BASE(t, parts) {t, #t, parts, 0, 0}
#define PAIR(t, parts) {t, #t, parts, MPICH_ABORTS, 0}

dr_base_t dr_bases[] = {
    BASE(MPI_CHAR, P1('c', 1, 1, 1)),
    BASE(MPI_SIGNED_CHAR, P1('i', 1, 1, 1)),
    BASE(MPI_UNSIGNED_CHAR, P1('u', 1, 1, 1)),
    BASE(MPI_BYTE, P1('c', 1, 1, 1)),
    {MPI_WCHAR, "MPI_WCHAR", P1('u', (int)sizeof(wchar_t), 2, 1), MPICH_ABORTS, 0},
    BASE(MPI_SHORT, P1('i', (int)sizeof(short), 2, 1)),
    BASE(MPI_UNSIGNED_SHORT, P1('u', (int)sizeof(short), 2, 1)),
    BASE(MPI_INT, P1('i', (int)sizeof(int), 4, 1)),
    BASE(MPI_UNSIGNED, P1('u', (int)sizeof(int), 4, 1)),
    BASE(MPI_LONG, P1('i', (int)sizeof(long), 4, 1)),
    BASE(MPI_UNSIGNED_LONG, P1('u', (int)sizeof(long), 4, 1)),
    BASE(MPI_LONG_LONG, P1('i', (int)sizeof(long long), 8, 1)),
    BASE(MPI_UNSIGNED_LONG_LONG, P1('u', (int)sizeof(long long), 8, 1)),
    BASE(MPI_FLOAT, P1('f', 4, 4, 1)),
    BASE(MPI_DOUBLE, P1('f', 8, 8, 1)),
    BASE(MPI_LONG_DOUBLE, P1('q', (int)sizeof(long double), 16, 1)),
    BASE(MPI_C_BOOL, P1('b', (int)sizeof(bool), 1, 1)),
    BASE(MPI_INT8_T, P1('i', 1, 1, 1)),
    BASE(MPI_INT16_T, P1('i', 2, 2, 1)),
    BASE(MPI_INT32_T, P1('i', 4, 4, 1)),
    BASE(MPI_INT64_T, P1('i', 8, 8, 1)),
    BASE(MPI_UINT8_T, P1('u', 1, 1, 1)),
    BASE(MPI_UINT16_T, P1('u', 2, 2, 1)),
    BASE(MPI_UINT32_T, P1('u', 4, 4, 1)),
    BASE(MPI_UINT64_T, P1('u', 8, 8, 1)),
    BASE(MPI_AINT, P1('i', (int)sizeof(MPI_Aint), 8, 1)),
    BASE(MPI_COUNT, P1('i', (int)sizeof(MPI_Count), 8, 1)),
    BASE(MPI_OFFSET, P1('i', (int)sizeof(MPI_Offset), 8, 1)),
    BASE(MPI_C_FLOAT_COMPLEX, P1('f', 4, 4, 2)),
    BASE(MPI_C_DOUBLE_COMPLEX, P1('f', 8, 8, 2)),
    BASE(MPI_C_LONG_DOUBLE_COMPLEX, P1('q', (int)sizeof(long double), 16, 2)),
    BASE(MPI_CXX_BOOL, P1('b', 1, 1, 1)),
    BASE(MPI_CXX_DOUBLE_COMPLEX, P1('f', 8, 8, 2)),
    PAIR(MPI_FLOAT_INT, P2('f', 4, 4, 'i')),
    PAIR(MPI_DOUBLE_INT, P2('f', 8, 8, 'i')),
    PAIR(MPI_LONG_INT, P2('i', (int)sizeof(long), 4, 'i')),
    PAIR(MPI_SHORT_INT, P2('i', (int)sizeof(short), 2, 'i')),
    PAIR(MPI_LONG_DOUBLE_INT, P2('q', (int)sizeof(long double), 16, 'i')),
    PAIR(MPI_2INT, P1('i', 4, 4, 2)),
    BASE(MPI_CHARACTER, P1('c', 1, 1, 1)),
    BASE(MPI_LOGICAL, P1('b', 4, 4, 1)),
    BASE(MPI_INTEGER, P1('i', 4, 4, 1)),
    BASE(MPI_REAL, P1('f', 4, 4, 1)),
    BASE(MPI_DOUBLE_PRECISION, P1('f', 8, 8, 1)),
    BASE(MPI_COMPLEX, P1('f', 4, 4, 2)),
    BASE(MPI_DOUBLE_COMPLEX, P1('f', 8, 8, 2)),
    PAIR(MPI_2REAL, P1('f', 4, 4, 2)),
    PAIR(MPI_2DOUBLE_PRECISION, P1('f', 8, 8, 2)),
    PAIR(MPI_2INTEGER, P1('i', 4, 4, 2)),
    BASE(MPI_INTEGER1, P1('i', 1, 1, 1)),
    BASE(MPI_INTEGER2, P1('i', 2, 2, 1)),
    BASE(MPI_INTEGER8, P1('i', 8, 8, 1)),
    BASE(MPI_REAL8, P1('f', 8, 8, 1)),
    BASE(MPI_REAL16, P1('f', 16, 16, 1)),
    BASE(MPI_COMPLEX16, P1('f', 8, 8, 2)),
};
int dr_nbases = (int)(sizeof dr_bases / sizeof dr_bases[0]);

int dr_base_msize(const dr_base_t *b)
{
    int n = 0;
    for (int i = 0; i < b->nparts; i++) n += b->part[i].msize * b->part[i].count;
    return n;
}

int dr_base_fsize(const dr_base_t *b)
{
    int n = 0;
    for (int i = 0; i < b->nparts; i++) n += b->part[i].fsize * b->part[i].count;
    return n;
}

int dr_base_local(const dr_base_t *b)
{
    for (int i = 0; i < b->nparts; i++)
        if (b->part[i].shape == 'q' || (b->part[i].shape == 'b' && b->part[i].fsize > 1)) return 0;
    return 1;
}

static void put_le(unsigned char *p, int n, uint64_t v)
{
    for (int i = 0; i < n; i++, v >>= 8) p[i] = (unsigned char)(i < 8 ? v : 0);
}

static void put_be(unsigned char *p, int n, uint64_t v)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}

static void reverse(const unsigned char *src, unsigned char *dst, int n)
{
    for (int i = 0; i < n; i++) dst[i] = src[n - 1 - i];
}

/* A finite long double with any exponent; external32 via __float128. */
static void long_double_value(uint64_t *rng, unsigned char *native, unsigned char *file)
{
    long double x = 0;
    memset(native, 0, sizeof x);
    if (LDBL_MANT_DIG == 64) {
        uint64_t sig = ft_rand(rng) | (uint64_t)1 << 63;
        unsigned exp = 1 + (unsigned)(ft_rand(rng) % 0x7ffe), se = exp | (unsigned)(ft_rand(rng) & 1) << 15;
        memcpy(native, &sig, 8);
        native[8] = (unsigned char)se, native[9] = (unsigned char)(se >> 8);
        memcpy(&x, native, sizeof x);
    } else {
        x = (long double)(int64_t)ft_rand(rng) / 7.0L;
        memcpy(native, &x, sizeof x);
    }
    __float128 q = (__float128)x;
    unsigned char raw[16];
    memcpy(raw, &q, 16);
    reverse(raw, file, 16);
}

static void scalar_value(const dr_part_t *p, uint64_t *rng, unsigned char *native, unsigned char *file)
{
    uint64_t v = ft_rand(rng);
    int keep = p->msize < p->fsize ? p->msize : p->fsize;
    switch (p->shape) {
    case 'c': native[0] = file[0] = (unsigned char)v; break;
    case 'i':
    case 'u':
        if (keep < 8) {
            v &= ((uint64_t)1 << (8 * keep)) - 1;
            if (p->shape == 'i' && (v >> (8 * keep - 1)) & 1) v |= ~(uint64_t)0 << (8 * keep); /* sign-extend */
        }
        put_le(native, p->msize, v);
        put_be(file, p->fsize, v);
        if (p->shape == 'i' && p->msize > 8 && (int64_t)v < 0) memset(native + 8, 0xff, (size_t)p->msize - 8);
        break;
    case 'b':
        put_le(native, p->msize, v & 1);
        put_be(file, p->fsize, v & 1);
        break;
    case 'f':
        for (int i = 0; i < p->msize; i++) native[i] = (unsigned char)ft_rand(rng);
        native[p->msize - 1] &= 0xbf; /* top exponent bit clear: finite, never NaN */
        reverse(native, file, p->msize);
        break;
    case 'q': long_double_value(rng, native, file); break;
    }
}

void dr_base_value(const dr_base_t *b, uint64_t *rng, unsigned char *native, unsigned char *file)
{
    for (int i = 0; i < b->nparts; i++)
        for (int k = 0; k < b->part[i].count; k++) {
            scalar_value(&b->part[i], rng, native, file);
            native += b->part[i].msize;
            file += b->part[i].fsize;
        }
}

int dr_base_find(MPI_Datatype type)
{
    for (int i = 0; i < dr_nbases; i++)
        if (dr_bases[i].type == type) return i;
    return -1;
}

int dr_host_traps;
static sigjmp_buf host_trap;

static void on_host_trap(int sig)
{
    siglongjmp(host_trap, sig);
}

int dr_host_external(dr_host_op_t op, const void *in, MPI_Aint insize, MPI_Count count, MPI_Datatype type,
                     void *out, MPI_Aint outsize, MPI_Aint *pos)
{
    static const char *names[] = {"MPI_Pack_external", "MPI_Unpack_external", "MPI_Pack_external_size"};
    struct sigaction trap = {.sa_handler = on_host_trap}, saved_ill, saved_fpe;
    sigemptyset(&trap.sa_mask);
    sigaction(SIGILL, &trap, &saved_ill);
    sigaction(SIGFPE, &trap, &saved_fpe);
    int rc;
    if (sigsetjmp(host_trap, 1) != 0) {
        rc = -1;
        if (dr_host_traps++ == 0) printf("rank %d: note: host %s trapped (SIGILL/SIGFPE)\n", ft_rank, names[op]);
    } else if (op == DR_HOST_PACK) {
        rc = MPI_Pack_external("external32", in, (int)count, type, out, outsize, pos);
    } else if (op == DR_HOST_SIZE) {
        rc = MPI_Pack_external_size("external32", (int)count, type, pos);
    } else {
        rc = MPI_Unpack_external("external32", in, insize, pos, out, (int)count, type);
    }
    sigaction(SIGILL, &saved_ill, NULL);
    sigaction(SIGFPE, &saved_fpe, NULL);
    return rc;
}

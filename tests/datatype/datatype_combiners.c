/*
 * Deterministic coverage of every combiner and of the engine's contracts:
 * predefined and pair types, darray over whole process grids, subarray
 * faces, f90 types, MPI-4 large-count constructors where the host has them,
 * MPI_BOTTOM buffers, dup sharing, tree sizes that do not grow with counts,
 * navigation on types far beyond 2^31 bytes, and the error classes.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/alloc.h"
#include "datatype/datatype.h"
#include "ferry_test.h"
#include "oracle.h"

/* Whole-stream pack and unpack of (count, type) against the host. */
static void check_host(MPI_Datatype type, MPI_Count count, const char *what)
{
    MPI_Count size, lo, hi;
    MPI_Type_size_x(type, &size);
    if (size == 0) return;
    or_span(type, count, &lo, &hi);
    MPI_Count n = count * size, span = hi - lo;
    char *mem = malloc((size_t)span + 1), *ref = malloc((size_t)n + 1), *got = malloc((size_t)n + 1);
    char *back = malloc((size_t)span + 1);
    FT_CHECK(mem && ref && got && back);
    char *buf = ferry__datatype_at(mem, -lo);
    ft_fill(mem, (size_t)span, ft_seed ^ (uint64_t)n);
    int position = 0;
    FT_OK(MPI_Pack(buf, (int)count, type, ref, (int)n, &position, MPI_COMM_SELF));
    FT_EQ(ferry__datatype_pack(buf, count, type, 0, got, n), 0);
    for (MPI_Count i = 0; i < n; i++)
        if (ref[i] != got[i]) {
            ferry__datatype_dump(type, stderr);
            ft_fail(__FILE__, __LINE__, "%s: pack differs from MPI_Pack at byte %lld of %lld", what, (long long)i,
                    (long long)n);
        }
    memcpy(back, mem, (size_t)span);
    memset(mem, 0, (size_t)span);
    FT_EQ(ferry__datatype_unpack(ref, n, buf, count, type, 0), 0);
    FT_EQ(ferry__datatype_pack(buf, count, type, 0, got, n), 0);
    FT_EQ_MEM(got, ref, (size_t)n);
    uint64_t rng = ft_seed ^ (uint64_t)span;
    for (int w = 0; w < 6; w++) { /* windows: pack vs the host's stream, unpack then pack back */
        MPI_Count skip = (MPI_Count)(ft_rand(&rng) % (uint64_t)n);
        MPI_Count len = (MPI_Count)(ft_rand(&rng) % (uint64_t)(n - skip + 1));
        FT_EQ(ferry__datatype_unpack(ref, n, buf, count, type, 0), 0); /* the whole stream back in place */
        FT_EQ(ferry__datatype_pack(buf, count, type, skip, got, len), 0);
        FT_EQ_MEM(got, ref + skip, (size_t)len);
        memset(mem, 0, (size_t)span);
        FT_EQ(ferry__datatype_unpack(ref + skip, len, buf, count, type, skip), 0);
        FT_EQ(ferry__datatype_pack(buf, count, type, skip, got, len), 0);
        if (memcmp(got, ref + skip, (size_t)len) != 0) {
            ferry__datatype_dump(type, stderr);
            ft_fail(__FILE__, __LINE__, "%s: unpack window [%lld, +%lld) of %lld does not pack back", what,
                    (long long)skip, (long long)len, (long long)n);
        }
    }
    free(mem), free(ref), free(got), free(back);
}

static void check_named(void)
{
    const MPI_Datatype types[] = {MPI_CHAR,  MPI_SHORT,       MPI_INT,          MPI_LONG,     MPI_LONG_LONG,
                                  MPI_FLOAT, MPI_DOUBLE,      MPI_LONG_DOUBLE,  MPI_BYTE,     MPI_PACKED,
                                  MPI_C_BOOL, MPI_INT16_T,    MPI_UINT64_T,     MPI_AINT,     MPI_OFFSET,
                                  MPI_COUNT, MPI_C_COMPLEX,   MPI_C_LONG_DOUBLE_COMPLEX,  MPI_SHORT_INT,
                                  MPI_LONG_INT, MPI_DOUBLE_INT, MPI_LONG_DOUBLE_INT, MPI_FLOAT_INT, MPI_2INT};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        check_host(types[i], 3, "predefined");
        ferry__typeinfo_t info;
        FT_EQ(ferry__datatype_info(types[i], &info), 0);
        FT_EQ(info.tree_bytes, 0);
    }
}

static void check_darray(void)
{
    const int distribs[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE};
    for (int order = 0; order < 2; order++)
        for (int d0 = 0; d0 < 3; d0++)
            for (int d1 = 0; d1 < 3; d1++)
                for (int darg = 0; darg < 3; darg++) {
                    int gsizes[3] = {7, 5, 3}, dist[3] = {distribs[d0], distribs[d1], MPI_DISTRIBUTE_BLOCK};
                    int psizes[3] = {d0 == 2 ? 1 : 2, d1 == 2 ? 1 : 3, 1}, dargs[3];
                    for (int k = 0; k < 3; k++) {
                        int min = (gsizes[k] + psizes[k] - 1) / psizes[k];
                        dargs[k] = darg == 0 || dist[k] == MPI_DISTRIBUTE_NONE ? MPI_DISTRIBUTE_DFLT_DARG
                                   : dist[k] == MPI_DISTRIBUTE_BLOCK         ? min + darg - 1
                                                                             : darg;
                    }
                    int size = psizes[0] * psizes[1];
                    for (int rank = 0; rank < size; rank++) {
                        MPI_Datatype t;
                        FT_OK(MPI_Type_create_darray(size, rank, 3, gsizes, dist, dargs, psizes,
                                                     order ? MPI_ORDER_FORTRAN : MPI_ORDER_C, MPI_DOUBLE, &t));
                        FT_OK(MPI_Type_commit(&t));
                        check_host(t, 2, "darray");
                        ferry__typeinfo_t info;
                        FT_EQ(ferry__datatype_info(t, &info), 0);
                        FT_CHECK(info.tree_nodes <= 16);
                        MPI_Type_free(&t);
                    }
                }
}

/* The six faces of a 3-D array in both orders: a few nodes each. */
static void check_subarray_faces(void)
{
    int sizes[3] = {40, 30, 20};
    for (int order = 0; order < 2; order++)
        for (int dim = 0; dim < 3; dim++)
            for (int side = 0; side < 2; side++) {
                int subsizes[3] = {40, 30, 20}, starts[3] = {0, 0, 0};
                subsizes[dim] = 1;
                starts[dim] = side ? sizes[dim] - 1 : 0;
                MPI_Datatype t;
                FT_OK(MPI_Type_create_subarray(3, sizes, subsizes, starts, order ? MPI_ORDER_FORTRAN : MPI_ORDER_C,
                                               MPI_DOUBLE, &t));
                FT_OK(MPI_Type_commit(&t));
                check_host(t, 1, "subarray face");
                ferry__typeinfo_t info;
                FT_EQ(ferry__datatype_info(t, &info), 0);
                FT_CHECK(info.tree_nodes <= 3);
                FT_CHECK(info.monotone);
                MPI_Type_free(&t);
            }
}

/* 10^8 blocks spanning 6.4 GB: two nodes; navigation by formula. */
static void check_huge_vector(void)
{
    const MPI_Count n = 100000000, stride = 64;
    MPI_Datatype t;
    FT_OK(MPI_Type_create_hvector((int)n, 1, (MPI_Aint)stride, MPI_INT, &t));
    FT_OK(MPI_Type_commit(&t));
    ferry__typeinfo_t info;
    FT_EQ(ferry__datatype_info(t, &info), 0);
    FT_EQ(info.tree_nodes, 2);
    FT_CHECK(info.tree_bytes < 1024);
    FT_CHECK(info.monotone);
    MPI_Count byte = 4 * (n - 7) + 3, off = 0, got = 0;
    FT_EQ(ferry__datatype_offset(t, byte, &off), 0);
    FT_EQ(off, (n - 7) * stride + 3);
    FT_EQ(ferry__datatype_offset(t, 4 * n + 5, &off), 0); /* second element */
    FT_EQ(off, info.extent + stride + 1);
    FT_EQ(ferry__datatype_bytes_below(t, 1, (n - 7) * stride + 2, &got), 0);
    FT_EQ(got, 4 * (n - 7) + 2);
    FT_EQ(ferry__datatype_ff_size(t, 6, stride * 1000, &got), 0);
    FT_EQ(got, 4 * 1000); /* from block 1 + 2 bytes to block 1001 + 2 bytes */
    FT_EQ(ferry__datatype_ff_extent(t, 2, 4 * 1000, &got), 0);
    FT_EQ(got, 1000 * stride); /* block 0 byte 2 through block 1000 byte 1 */
    MPI_Type_free(&t);
}

/* Extents beyond 2^31: two ints 3 GiB apart, in a lazily mapped region. */
static void check_far_apart(void)
{
    const MPI_Count far = (MPI_Count)3 << 30;
    char *mem = mmap(NULL, (size_t)far + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    if (mem == MAP_FAILED) {
        printf("far-apart blocks: no 3 GiB of address space, skipped\n");
        return;
    }
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {0, (MPI_Aint)far};
    MPI_Datatype t;
    FT_OK(MPI_Type_create_hindexed(2, lens, disps, MPI_INT, &t));
    FT_OK(MPI_Type_commit(&t));
    memcpy(mem, "abcd", 4);
    memcpy(mem + far, "wxyz", 4);
    char out[8], ref[8];
    int position = 0;
    FT_OK(MPI_Pack(mem, 1, t, ref, 8, &position, MPI_COMM_SELF));
    FT_EQ(ferry__datatype_pack(mem, 1, t, 2, out, 6), 0);
    FT_EQ_MEM(out, ref + 2, 6);
    MPI_Count off;
    FT_EQ(ferry__datatype_offset(t, 5, &off), 0);
    FT_EQ(off, far + 1);
    FT_EQ(ferry__datatype_unpack("ABCDWXYZ", 8, mem, 1, t, 0), 0);
    FT_EQ_MEM(mem + far, "WXYZ", 4);
    MPI_Type_free(&t);
    munmap(mem, (size_t)far + 4096);
}

/* Column-wise grids (FFT transposes) take the tiled kernels: row counts
 * around the tile size, negative strides, several block sizes. */
static void check_grids(void)
{
    const int rows[] = {15, 16, 17, 40};
    const MPI_Datatype blocks[] = {MPI_C_DOUBLE_COMPLEX, MPI_INT, MPI_SHORT_INT};
    for (int r = 0; r < 4; r++)
        for (int b = 0; b < 3; b++)
            for (int sign = -1; sign <= 1; sign += 2) {
                MPI_Datatype column, col1;
                MPI_Count lb, ext;
                MPI_Type_get_extent_x(blocks[b], &lb, &ext);
                FT_OK(MPI_Type_vector(rows[r], 1, sign * rows[r], blocks[b], &column));
                FT_OK(MPI_Type_create_resized(column, 0, (MPI_Aint)ext, &col1));
                FT_OK(MPI_Type_commit(&col1));
                check_host(col1, rows[r], "column grid");
                MPI_Type_free(&column);
                MPI_Type_free(&col1);
            }
}

/* Equal blocks at irregular places keep one length: 8 bytes per block. */
static void check_uniform_list(void)
{
    enum { N = 100000 };
    int *disps = malloc(N * sizeof *disps);
    FT_CHECK(disps);
    for (int i = 0, at = 0; i < N; i++) disps[i] = at, at += 3 + (i * 7919) % 5;
    MPI_Datatype t;
    FT_OK(MPI_Type_create_indexed_block(N, 2, disps, MPI_INT, &t));
    FT_OK(MPI_Type_commit(&t));
    ferry__typeinfo_t info;
    FT_EQ(ferry__datatype_info(t, &info), 0);
    FT_CHECK(info.tree_bytes < 8 * N + 1024);
    check_host(t, 2, "indexed_block at irregular places");
    MPI_Type_free(&t);
    free(disps);
}

static void check_f90(void)
{
    MPI_Datatype real, cplx, integer;
    FT_OK(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &real));
    FT_OK(MPI_Type_create_f90_complex(6, MPI_UNDEFINED, &cplx));
    FT_OK(MPI_Type_create_f90_integer(9, &integer));
    MPI_Datatype types[3] = {real, cplx, integer}, s;
    int lens[3] = {2, 1, 3};
    MPI_Aint disps[3] = {0, 24, 40};
    FT_OK(MPI_Type_create_struct(3, lens, disps, types, &s));
    FT_OK(MPI_Type_commit(&s));
    check_host(s, 3, "f90 struct");
    check_host(real, 2, "f90 real");
    MPI_Type_free(&s);
}

/* Absolute addresses from MPI_Get_address, packed from MPI_BOTTOM. */
static void check_bottom(void)
{
    double a[4] = {1, 2, 3, 4};
    int b[3] = {5, 6, 7};
    MPI_Aint disps[2];
    MPI_Get_address(&a[1], &disps[0]);
    MPI_Get_address(&b[0], &disps[1]);
    int lens[2] = {2, 3};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT}, t;
    FT_OK(MPI_Type_create_struct(2, lens, disps, types, &t));
    FT_OK(MPI_Type_commit(&t));
    char out[28];
    FT_EQ(ferry__datatype_pack(MPI_BOTTOM, 1, t, 0, out, 28), 0);
    FT_EQ_MEM(out, &a[1], 16);
    FT_EQ_MEM(out + 16, b, 12);
    MPI_Type_free(&t);
}

/* A dup shares its original's tree and outlives it; a type built from a
 * decoded one reuses that tree. */
static void check_dup(void)
{
    MPI_Datatype v, d;
    FT_OK(MPI_Type_vector(3, 2, 5, MPI_INT, &v));
    FT_OK(MPI_Type_commit(&v));
    ferry__typeinfo_t info;
    FT_EQ(ferry__datatype_info(v, &info), 0);
    FT_OK(MPI_Type_dup(v, &d));
    MPI_Datatype parts[3] = {v, MPI_CHAR, v}, s; /* v is decoded: the struct reuses its tree */
    int lens[3] = {2, 3, 1};
    MPI_Aint disps[3] = {0, 200, -100};
    FT_OK(MPI_Type_create_struct(3, lens, disps, parts, &s));
    FT_OK(MPI_Type_commit(&s));
    check_host(s, 2, "struct of a decoded type");
    MPI_Type_free(&s);
    MPI_Type_free(&v);
    check_host(d, 2, "dup after free");
    MPI_Type_free(&d);
}

/* The k-th allocation of a decode fails, for every k: MPI_ERR_NO_MEM, no
 * leak (AddressSanitizer builds), and the next attempt succeeds. */
static void check_alloc_failures(void)
{
    MPI_Datatype vec, idx, sub, parts[3], t;
    int sizes[3] = {5, 6, 7}, subsizes[3] = {2, 3, 4}, starts[3] = {1, 1, 1}, lens[3] = {1, 2, 1};
    int ilens[4] = {1, 3, 0, 2}, idisps[4] = {9, 0, 4, 20};
    MPI_Aint disps[3] = {0, 64, 1024};
    FT_OK(MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &vec));
    FT_OK(MPI_Type_indexed(4, ilens, idisps, vec, &idx));
    FT_OK(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_SHORT_INT, &sub));
    parts[0] = idx, parts[1] = sub, parts[2] = MPI_INT;
    FT_OK(MPI_Type_create_struct(3, lens, disps, parts, &t));
    FT_OK(MPI_Type_commit(&t));
    ferry__typeinfo_t info;
    int k = 1, rc;
    do {
        ferry__alloc_fail_after(k++);
        rc = ferry__datatype_info(t, &info);
        ferry__alloc_fail_after(0);
        FT_CHECK(rc == 0 || rc == MPI_ERR_NO_MEM);
    } while (rc != 0 && k < 1000);
    FT_EQ(rc, 0);
    FT_CHECK(k > 3);
    check_host(t, 2, "after allocation failures");
    MPI_Type_free(&vec), MPI_Type_free(&idx), MPI_Type_free(&sub), MPI_Type_free(&t);
}

static void check_errors(void)
{
    int buf[8] = {0};
    char out[64];
    MPI_Datatype v;
    FT_OK(MPI_Type_vector(2, 1, -2, MPI_INT, &v));
    FT_OK(MPI_Type_commit(&v));
    FT_EQ(ferry__datatype_pack(buf + 4, 1, v, 4, out, 8), MPI_ERR_ARG);
    FT_EQ(ferry__datatype_pack(buf + 4, 1, v, -1, out, 1), MPI_ERR_ARG);
    MPI_Count n;
    FT_EQ(ferry__datatype_bytes_below(v, 1, 0, &n), MPI_ERR_ARG);
    ferry__typeinfo_t info;
    FT_EQ(ferry__datatype_info(MPI_DATATYPE_NULL, &info), MPI_ERR_TYPE);
    FT_EQ(ferry__datatype_info(v, &info), 0);
    FT_CHECK(!info.monotone);
    FT_CHECK(info.nonoverlapping);
    MPI_Type_free(&v);
}

static void check_segments(void)
{
    /* A vector whose blocks touch across elements: extent == stride * count. */
    MPI_Datatype v;
    FT_OK(MPI_Type_vector(4, 2, 3, MPI_INT, &v));
    MPI_Datatype r;
    FT_OK(MPI_Type_create_resized(v, 0, 4 * 12, &r));
    FT_OK(MPI_Type_commit(&r));
    ferry__datatype_cursor_t cur;
    ferry__datatype_segment_t segs[3];
    int n;
    ferry__datatype_cursor_init(&cur, r, 4, 64);
    FT_EQ(ferry__datatype_segments(&cur, segs, 3, &n), 0);
    FT_EQ(n, 3);
    FT_EQ(segs[0].offset, 4);
    FT_EQ(segs[0].length, 4);
    FT_EQ(segs[1].offset, 12);
    FT_EQ(segs[1].length, 8);
    FT_EQ(cur.pos, 4 + 4 + 8 + 8);
    MPI_Type_free(&v);
    MPI_Type_free(&r);
}

#if MPI_VERSION >= 4
static void check_large_count(void)
{
    enum { N = 11 };
    MPI_Datatype t[N];
    MPI_Count lens[3] = {2, 0, 3}, disps[3] = {40, 0, -16}, sizes[2] = {6, 5}, subs[2] = {3, 2}, starts[2] = {1, 2};
    MPI_Count idisps[3] = {5, -2, 1};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
    FT_OK(MPI_Type_vector_c(3, 2, -4, MPI_INT, &t[0]));
    FT_OK(MPI_Type_create_hindexed_c(3, lens, disps, MPI_DOUBLE, &t[1]));
    FT_OK(MPI_Type_create_struct_c(3, lens, disps, types, &t[2]));
    FT_OK(MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t[3]));
    FT_OK(MPI_Type_create_resized_c(t[0], -8, 64, &t[4]));
    MPI_Count gsizes[2] = {7, 4};
    int dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, dargs[2] = {2, MPI_DISTRIBUTE_DFLT_DARG};
    int psizes[2] = {2, 2};
    FT_OK(MPI_Type_create_darray_c(4, 3, 2, gsizes, dist, dargs, psizes, MPI_ORDER_FORTRAN, MPI_FLOAT, &t[5]));
    FT_OK(MPI_Type_contiguous_c(3, t[1], &t[6]));
    FT_OK(MPI_Type_create_hvector_c(2, 3, -40, MPI_SHORT, &t[7]));
    FT_OK(MPI_Type_indexed_c(3, lens, idisps, MPI_INT, &t[8]));
    FT_OK(MPI_Type_create_indexed_block_c(3, 2, idisps, MPI_DOUBLE, &t[9]));
    FT_OK(MPI_Type_create_hindexed_block_c(3, 2, disps, MPI_INT, &t[10]));
    for (int i = 0; i < N; i++) {
        FT_OK(MPI_Type_commit(&t[i]));
        check_host(t[i], 2, "large-count constructor");
    }
    for (int i = 0; i < N; i++) MPI_Type_free(&t[i]);
}
#else
static void check_large_count(void)
{
    if (ft_rank == 0) printf("large-count constructors: not in this MPI (MPI_VERSION %d)\n", MPI_VERSION);
}
#endif

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    check_named();
    check_darray();
    check_subarray_faces();
    check_huge_vector();
    check_far_apart();
    check_grids();
    check_uniform_list();
    check_f90();
    check_bottom();
    check_dup();
    check_errors();
    check_alloc_failures();
    check_segments();
    check_large_count();
    return ft_finish();
}

/*
 * ferry-bench types [--bytes N] [--reps N]: the datatype engine against the
 * host's MPI_Pack/MPI_Unpack and memcpy.
 *
 * Each workload builds a memory datatype (vectors of 4..16384-byte blocks,
 * 3-D subarray faces, random indexed, a struct of mixed basic types, and
 * DDTBench-like patterns: NAS LU and MG faces, an FFT transpose, a particle
 * struct), then times pack and unpack of the whole stream by ferry and by
 * the host, and a memcpy of the same number of bytes. Times are medians of
 * --reps runs; ratios below 1 mean ferry is faster. Every result is checked
 * byte for byte against the host first. Rank 0 alone measures (the engine
 * is per process). Then: per-call fixed cost, navigation time against block
 * count and skip, and tree sizes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "datatype/datatype.h"

typedef struct workload {
    const char *name;
    MPI_Datatype type;
    int count;
    MPI_Count lo, span; /* memory: offsets [lo, lo + span) from buf */
    int block;          /* vectors: bytes per block (stride twice that); 0 for the others */
} workload_t;

typedef struct types_config {
    bench_common_t common;
    long long bytes; /* packed bytes per workload, about */
} types_config_t;

static const types_config_t types_defaults = {.common = {.reps = 7}, .bytes = 256 << 10};

static const cli_option_t types_options[] = {
    {"bytes", 0, CLI_SIZE, offsetof(types_config_t, bytes), 16 << 10, 1 << 30, NULL,
     "packed bytes per workload, about (at least one 16 KiB block)"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_types_spec = {
    "ferry-bench types", "ferry-bench types [options]   (rank 0 alone measures)",
    "datatype engine vs host MPI_Pack/MPI_Unpack and memcpy", types_options, bench_shared_options,
    sizeof(types_config_t), &types_defaults, NULL, 0};

static int reps = 7; /* the configuration's, for time_op */

static void span_of(workload_t *w)
{
    MPI_Count lb, ext, tlb, text;
    MPI_Type_get_extent_x(w->type, &lb, &ext);
    MPI_Type_get_true_extent_x(w->type, &tlb, &text);
    w->lo = tlb;
    w->span = (w->count - 1) * ext + text;
}

/* Seconds per call of op, median over reps runs of `inner` calls. */
typedef void op_fn(void *ctx);
static double time_op(op_fn *op, void *ctx, int inner)
{
    double t[32];
    int n = reps < 32 ? reps : 32;
    for (int r = 0; r < n; r++) {
        double start = bench_now();
        for (int i = 0; i < inner; i++) op(ctx);
        t[r] = (bench_now() - start) / inner;
    }
    return bench_median(t, n);
}

typedef struct run {
    workload_t *w;
    char *buf;
    char *packed;
    MPI_Count bytes;
} run_t;

static void ferry_pack_op(void *p)
{
    run_t *r = p;
    ferry__datatype_pack(r->buf, r->w->count, r->w->type, 0, r->packed, r->bytes);
}

static void ferry_unpack_op(void *p)
{
    run_t *r = p;
    ferry__datatype_unpack(r->packed, r->bytes, r->buf, r->w->count, r->w->type, 0);
}

static void host_pack_op(void *p)
{
    run_t *r = p;
    int position = 0;
    MPI_Pack(r->buf, r->w->count, r->w->type, r->packed, (int)r->bytes, &position, MPI_COMM_SELF);
}

static void host_unpack_op(void *p)
{
    run_t *r = p;
    int position = 0;
    MPI_Unpack(r->packed, (int)r->bytes, &position, r->buf, r->w->count, r->w->type, MPI_COMM_SELF);
}

static void memcpy_op(void *p)
{
    run_t *r = p;
    memcpy(r->packed, r->buf + r->w->lo, (size_t)r->bytes);
}

/* What a hand-written pack of a vector costs: one memcpy per block. On
 * this kind of machine a memcpy of one contiguous run is up to twice as
 * fast per byte as memcpys of blocks from a strided source, even blocks of
 * 16 KiB where the per-block cost is nil; this loop shows that ceiling. */
static void block_loop_op(void *p)
{
    run_t *r = p;
    size_t block = (size_t)r->w->block;
    const char *src = r->buf + r->w->lo;
    for (MPI_Count i = 0; i < r->bytes / r->w->block; i++)
        memcpy(r->packed + (size_t)i * block, src + 2 * (size_t)i * block, block);
}

/* ferry's pack must equal the host's before anything is timed. */
static int verify(run_t *r)
{
    char *ref = malloc((size_t)r->bytes);
    int position = 0, ok = ref != NULL;
    if (ok) MPI_Pack(r->buf, r->w->count, r->w->type, ref, (int)r->bytes, &position, MPI_COMM_SELF);
    if (ok) ferry__datatype_pack(r->buf, r->w->count, r->w->type, 0, r->packed, r->bytes);
    ok = ok && memcmp(ref, r->packed, (size_t)r->bytes) == 0;
    free(ref);
    return ok;
}

static void record(types_config_t *cfg, const workload_t *w, MPI_Count bytes, const double t[5])
{
    bench_row_t *pack = bench_row(&cfg->common, "copies", w->name, "pack", "GB/s");
    bench_row_value(pack, "ferry", (double)bytes / t[0] / 1e9);
    bench_row_value(pack, "host", (double)bytes / t[1] / 1e9);
    bench_row_value(pack, "memcpy", (double)bytes / t[4] / 1e9);
    bench_row_extra(pack, "bytes", (double)bytes);
    if (w->block) bench_row_extra(pack, "block_bytes", w->block);
    bench_row_t *unpack = bench_row(&cfg->common, "copies", w->name, "unpack", "GB/s");
    bench_row_value(unpack, "ferry", (double)bytes / t[2] / 1e9);
    bench_row_value(unpack, "host", (double)bytes / t[3] / 1e9);
    bench_row_extra(unpack, "bytes", (double)bytes);
}

static void run_workload(types_config_t *cfg, workload_t *w)
{
    MPI_Count size;
    ferry__typeinfo_t info;
    MPI_Type_commit(&w->type);
    MPI_Type_size_x(w->type, &size);
    span_of(w);
    run_t r = {w, NULL, malloc((size_t)(size * w->count)), size * w->count};
    char *mem = malloc((size_t)w->span);
    r.buf = mem - w->lo;
    for (MPI_Count i = 0; i < w->span; i++) mem[i] = (char)(i * 7);
    ferry__datatype_info(w->type, &info);
    if (!verify(&r)) {
        printf("%-22s MISMATCH with host MPI_Pack\n", w->name);
    } else {
        int inner = (int)(4000000 / (r.bytes + 1000)) + 1;
        double fp = time_op(ferry_pack_op, &r, inner), hp = time_op(host_pack_op, &r, inner);
        double fu = time_op(ferry_unpack_op, &r, inner), hu = time_op(host_unpack_op, &r, inner);
        double mc = time_op(memcpy_op, &r, inner);
        char loop[16] = "     -";
        if (w->block) snprintf(loop, sizeof loop, "%6.2f", time_op(block_loop_op, &r, inner) / fp);
        printf("%-22s %9lld %7.2f %7.2f %6.2f %6.2f %6.2f %6.2f %s %5zu %7zu\n", w->name, (long long)r.bytes,
               r.bytes / fp / 1e9, r.bytes / hp / 1e9, fp / hp, fu / hu, mc / fp, mc / fu, loop, info.tree_nodes,
               info.tree_bytes);
        record(cfg, w, r.bytes, (double[5]){fp, hp, fu, hu, mc});
    }
    free(mem);
    free(r.packed);
    MPI_Type_free(&w->type);
}

static workload_t vector_of(const char *name, int block, MPI_Count bytes)
{
    workload_t w = {name, MPI_DATATYPE_NULL, 1, 0, 0, block};
    MPI_Type_vector((int)(bytes / block), block, 2 * block, MPI_BYTE, &w.type);
    return w;
}

/* Face `dim` of an n^3 array of doubles (C order). */
static workload_t face_of(const char *name, int n, int dim)
{
    int sizes[3] = {n, n, n}, subsizes[3] = {n, n, n}, starts[3] = {0, 0, 0};
    subsizes[dim] = 1;
    starts[dim] = n / 2;
    workload_t w = {name, MPI_DATATYPE_NULL, 1, 0, 0, 0};
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &w.type);
    return w;
}

static workload_t random_indexed(MPI_Count bytes)
{
    int n = (int)(bytes / 32);
    int *lens = malloc((size_t)n * sizeof *lens), *disps = malloc((size_t)n * sizeof *disps);
    unsigned seed = 12345, at = 0;
    for (int i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        lens[i] = 1 + (int)((seed >> 16) % 15); /* 1..15 ints, mean 8: 32 bytes */
        disps[i] = (int)at;
        at += (unsigned)lens[i] + 1 + (seed >> 8) % 8;
    }
    workload_t w = {"indexed random", MPI_DATATYPE_NULL, 1, 0, 0, 0};
    MPI_Type_indexed(n, lens, disps, MPI_INT, &w.type);
    free(lens);
    free(disps);
    return w;
}

/* struct { char c; double d; int i; short s; float f[3]; } */
static workload_t mixed_struct(MPI_Count bytes)
{
    int lens[5] = {1, 1, 1, 1, 3};
    MPI_Aint disps[5] = {0, 8, 16, 20, 24};
    MPI_Datatype types[5] = {MPI_CHAR, MPI_DOUBLE, MPI_INT, MPI_SHORT, MPI_FLOAT}, s;
    MPI_Type_create_struct(5, lens, disps, types, &s);
    workload_t w = {"struct mixed", MPI_DATATYPE_NULL, (int)(bytes / 27), 0, 0, 0};
    MPI_Type_create_resized(s, 0, 40, &w.type);
    MPI_Type_free(&s);
    return w;
}

/* NAS LU: a face of u(5, nx, ny, nz): 5 doubles per point, one plane. */
static workload_t nas_lu(int n)
{
    MPI_Datatype point, row;
    MPI_Type_contiguous(5, MPI_DOUBLE, &point);
    MPI_Type_vector(n, 1, n, point, &row); /* y-face: stride a row of points */
    workload_t w = {"NAS LU y-face", MPI_DATATYPE_NULL, 1, 0, 0, 0};
    MPI_Type_create_hvector(n, 1, (MPI_Aint)n * n * 40, row, &w.type);
    MPI_Type_free(&point);
    MPI_Type_free(&row);
    return w;
}

/* NAS MG: the x-face (stride n) of an n^3 array of doubles, nested vectors. */
static workload_t nas_mg(int n)
{
    MPI_Datatype column;
    MPI_Type_vector(n, 1, n, MPI_DOUBLE, &column);
    workload_t w = {"NAS MG x-face", MPI_DATATYPE_NULL, 1, 0, 0, 0};
    MPI_Type_create_hvector(n, 1, (MPI_Aint)n * n * 8, column, &w.type);
    MPI_Type_free(&column);
    return w;
}

/* FFT transpose: an n x n complex matrix read column by column. */
static workload_t fft_transpose(int n)
{
    MPI_Datatype column, col1;
    MPI_Type_vector(n, 1, n, MPI_C_DOUBLE_COMPLEX, &column);
    MPI_Type_create_resized(column, 0, 16, &col1);
    workload_t w = {"FFT transpose", MPI_DATATYPE_NULL, n, 0, 0, 0};
    MPI_Type_dup(col1, &w.type);
    MPI_Type_free(&column);
    MPI_Type_free(&col1);
    return w;
}

/* Particles: struct { double pos[3], vel[3]; int id; char flag; }, only pos and id sent. */
static workload_t particles(MPI_Count bytes)
{
    int lens[2] = {3, 1};
    MPI_Aint disps[2] = {0, 48};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT}, s;
    MPI_Type_create_struct(2, lens, disps, types, &s);
    workload_t w = {"particle struct", MPI_DATATYPE_NULL, (int)(bytes / 28), 0, 0, 0};
    MPI_Type_create_resized(s, 0, 56, &w.type);
    MPI_Type_free(&s);
    return w;
}

static void bench_copies(types_config_t *cfg, MPI_Count bytes)
{
    printf("\n%-22s %9s %7s %7s %6s %6s %6s %6s %6s %5s %7s\n", "workload", "bytes", "GB/s", "hostGB/s", "pack",
           "unpack", "pk/mc", "up/mc", "pk/lp", "nodes", "tree B");
    printf("%-22s %9s %7s %7s %6s %6s %6s %6s\n", "", "", "ferry", "", "f/host", "f/host", "", "");
    workload_t w[] = {
        vector_of("vector 4B blocks", 4, bytes),     vector_of("vector 8B blocks", 8, bytes),
        vector_of("vector 64B blocks", 64, bytes),   vector_of("vector 256B blocks", 256, bytes),
        vector_of("vector 1024B blocks", 1024, bytes), vector_of("vector 4096B blocks", 4096, bytes),
        vector_of("vector 16384B blocks", 16384, bytes), face_of("3-D face dim 0", 96, 0),
        face_of("3-D face dim 1", 96, 1),            face_of("3-D face dim 2", 96, 2),
        random_indexed(bytes),                       mixed_struct(bytes),
        nas_lu(48),                                  nas_mg(96),
        fft_transpose(128),                          particles(bytes),
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) run_workload(cfg, &w[i]);
}

typedef struct small {
    MPI_Datatype type;
    char buf[64], out[64];
} small_t;

static void small_pack_op(void *p)
{
    small_t *s = p;
    ferry__datatype_pack(s->buf, 1, s->type, 0, s->out, 8);
}

static void small_host_op(void *p)
{
    small_t *s = p;
    int position = 0;
    MPI_Pack(s->buf, 1, s->type, s->out, 64, &position, MPI_COMM_SELF);
}

/* Per-call cost of an 8-byte pack of a derived type (vector of two ints). */
static void bench_fixed_cost(types_config_t *cfg)
{
    small_t s;
    memset(s.buf, 1, sizeof s.buf);
    MPI_Type_vector(2, 1, 2, MPI_INT, &s.type);
    MPI_Type_commit(&s.type);
    double f = time_op(small_pack_op, &s, 200000), h = time_op(small_host_op, &s, 200000);
    printf("\nper-call fixed cost (8-byte pack of vector(2,1,2,int)): ferry %.0f ns, host MPI_Pack %.0f ns\n",
           f * 1e9, h * 1e9);
    bench_row_t *row = bench_row(&cfg->common, "per-call fixed cost", "8-byte pack of vector(2,1,2,int)", "pack", "ns");
    bench_row_value(row, "ferry", f * 1e9);
    bench_row_value(row, "host", h * 1e9);
    MPI_Type_free(&s.type);
}

typedef struct nav {
    MPI_Datatype type;
    MPI_Count total, next;
    MPI_Count sink;
} nav_t;

static void nav_op(void *p)
{
    nav_t *n = p;
    MPI_Count off;
    /* unsigned: the generator wraps around, which signed arithmetic may not */
    n->next = (MPI_Count)(((unsigned long long)n->next * 6364136223846793005ULL + 1442695040888963407ULL) &
                          0x7fffffffffffULL);
    ferry__datatype_offset(n->type, n->next % n->total, &off);
    n->sink += off;
}

typedef struct window {
    MPI_Datatype type;
    char *buf, out[4096];
    MPI_Count skip;
} window_t;

static void window_op(void *p)
{
    window_t *w = p;
    ferry__datatype_pack(w->buf, 1, w->type, w->skip, w->out, sizeof w->out);
}

/* A 4 KiB window of a 10^7-block vector costs the same at any skip. */
static void bench_skips(void)
{
    const MPI_Count blocks = 10000000;
    window_t w = {MPI_DATATYPE_NULL, malloc((size_t)blocks * 8), {0}, 0};
    if (!w.buf) return;
    memset(w.buf, 3, (size_t)blocks * 8);
    MPI_Type_vector((int)blocks, 1, 2, MPI_INT, &w.type);
    MPI_Type_commit(&w.type);
    printf("4 KiB pack window of vector(10^7, 1, 2, int):");
    const MPI_Count skips[] = {0, 4 * blocks / 2 + 1, 4 * blocks - 4096};
    for (int k = 0; k < 3; k++) {
        w.skip = skips[k];
        printf("  skip %lld: %.0f ns", (long long)skips[k], time_op(window_op, &w, 20000) * 1e9);
    }
    printf("\n");
    MPI_Type_free(&w.type);
    free(w.buf);
}

/* Navigation time for 10^3 vs 10^8 blocks, random skips; tree sizes. */
static void bench_navigation(void)
{
    printf("\n%-34s %10s %8s %7s %8s\n", "navigation (offset of byte n)", "blocks", "ns/op", "nodes", "tree B");
    const MPI_Count blocks[] = {1000, 100000000};
    for (int k = 0; k < 2; k++) {
        nav_t n = {MPI_DATATYPE_NULL, 4 * blocks[k], 1, 0};
        MPI_Type_create_hvector((int)blocks[k], 1, 64, MPI_INT, &n.type);
        MPI_Type_commit(&n.type);
        ferry__typeinfo_t info;
        ferry__datatype_info(n.type, &info);
        double t = time_op(nav_op, &n, 200000);
        printf("%-34s %10lld %8.1f %7zu %8zu\n", "hvector of 4-byte blocks", (long long)blocks[k], t * 1e9,
               info.tree_nodes, info.tree_bytes);
        MPI_Type_free(&n.type);
    }
    bench_skips();
    int sizes[3] = {1000, 1000, 10000}, subsizes[3] = {1000, 1, 10000}, starts[3] = {0, 500, 0};
    MPI_Datatype face;
    MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &face);
    MPI_Type_commit(&face);
    ferry__typeinfo_t info;
    ferry__datatype_info(face, &info);
    printf("filetype: 10^7-block subarray face: %zu nodes, %zu bytes of tree\n", info.tree_nodes, info.tree_bytes);
    MPI_Type_free(&face);
}

int ferry_bench_types(int argc, char **argv)
{
    types_config_t cfg;
    int rc = bench_parse(&bench_types_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    reps = cfg.common.reps;
    if (cfg.common.rank == 0) {
        printf("ferry-bench types: ~%lld packed bytes per workload, median of %d runs; ratios < 1: ferry faster\n",
               cfg.bytes, reps);
        bench_copies(&cfg, cfg.bytes);
        bench_fixed_cost(&cfg);
        bench_navigation();
    }
    bench_barrier();
    return bench_finish(&cfg.common, 0);
}

/*
 * ferry-bench btio: a BTIO-like 3-D array write and read.
 *
 * NAS BT-IO writes its solution, 5 doubles per grid point of an N^3 grid
 * (class S: 12, W: 24, A: 64, B: 102, C: 162), from every rank collectively
 * into one file in the global array's order. Here each rank owns one block
 * of a px * py * 1 decomposition (px the largest divisor of the rank count
 * not above its square root: 4 and 9 ranks give 2x2 and 3x3, as BT-IO's
 * square grids, 2 and 8 give 1x2 and 2x4 for the scaling runs), described
 * by a subarray filetype over
 * 40-byte cells; in the file a rank's data are runs of N/px cells (about 2
 * KiB for class B at 4 ranks, 1.3 KiB at 9), every rank's runs interleaved
 * with everyone else's. Memory is the rank's block, contiguous. One
 * write_all of the whole array, then one read_all, by ferry and by the
 * host's MPI-IO (alternating first) on fresh files; every value is checked
 * (written files byte for byte against each other, read data against the
 * values each cell must hold). Bandwidths are the whole array over the
 * slowest rank's time, for the call alone and open to close ("all").
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { VALUES = 5, MAX_REPS = BENCH_MAX_REPS };

typedef struct btio_config {
    bench_common_t common;
    int class_index; /* of btio_classes */
} btio_config_t;

static const char btio_class_names[] = "S,W,A,B,C";
static const int btio_class_sizes[] = {12, 24, 64, 102, 162};

static const btio_config_t btio_defaults = {.common = {.dir = "/dev/shm", .reps = 3}, .class_index = 3};

static const cli_option_t btio_options[] = {
    BENCH_OPTION_DIR(btio_config_t),
    {"class", 0, CLI_CHOICE, offsetof(btio_config_t, class_index), 0, 0, btio_class_names,
     "NAS problem class: grid points per dimension S 12, W 24, A 64, B 102, C 162"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_btio_spec = {
    "ferry-bench btio", "mpiexec -n <ranks> ferry-bench btio [options]",
    "BTIO-like 3-D array of 5 doubles per point, subarray views, write_all then read_all (host MPI-IO, ferry)",
    btio_options, bench_shared_options, sizeof(btio_config_t), &btio_defaults, NULL, 0};

typedef struct btio {
    int n;            /* grid points per dimension */
    int px, py;       /* rank grid */
    int sizes[3], subsizes[3], starts[3]; /* C order: z, y, x */
    long long cells;  /* this rank's */
    double *mem;
    MPI_Datatype cell, filetype;
    int rank, nprocs, reps;
    const char *base;
} btio_t;

static double value_of(const btio_t *b, long long z, long long y, long long x, int v)
{
    return (double)(((z * b->n + y) * b->n + x) * VALUES + v);
}

static void fill(btio_t *b, int zero)
{
    long long i = 0;
    for (int z = 0; z < b->subsizes[0]; z++)
        for (int y = 0; y < b->subsizes[1]; y++)
            for (int x = 0; x < b->subsizes[2]; x++)
                for (int v = 0; v < VALUES; v++, i++)
                    b->mem[i] = zero ? -1.0 : value_of(b, z + b->starts[0], y + b->starts[1], x + b->starts[2], v);
}

static int memory_ok(btio_t *b)
{
    double *got = b->mem;
    b->mem = malloc((size_t)b->cells * VALUES * sizeof(double));
    fill(b, 0);
    int bad = memcmp(got, b->mem, (size_t)b->cells * VALUES * sizeof(double)) != 0, any = 0;
    free(b->mem);
    b->mem = got;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return !any;
}

static int files_equal(const char *a, const char *b)
{
    enum { CHUNK = 1 << 20 };
    int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY), same = fa >= 0 && fb >= 0;
    char *x = malloc(CHUNK), *y = malloc(CHUNK);
    for (off_t off = 0; same;) {
        ssize_t na = pread(fa, x, CHUNK, off), nb = pread(fb, y, CHUNK, off);
        if (na != nb || na < 0 || memcmp(x, y, (size_t)na) != 0) same = 0;
        if (na <= 0) break;
        off += na;
    }
    free(x);
    free(y);
    close(fa);
    close(fb);
    return same;
}

/* Collective: rank 0 compares the two written files. */
static int same_files(const btio_t *b, const char *x, const char *y)
{
    int same = b->rank == 0 ? files_equal(x, y) : 0;
    MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return same;
}

static int setup(btio_t *b)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &b->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b->nprocs);
    for (int d = 1; d * d <= b->nprocs; d++)
        if (b->nprocs % d == 0) b->px = d;
    b->py = b->nprocs / b->px;
    if (b->py > b->n) {
        if (b->rank == 0) fprintf(stderr, "ferry-bench btio: more ranks than the class has grid rows\n");
        return 2;
    }
    int cx = b->rank % b->px, cy = b->rank / b->px;
    for (int d = 0; d < 3; d++) b->sizes[d] = b->n;
    b->subsizes[0] = b->n;
    b->starts[0] = 0;
    b->subsizes[1] = b->n / b->py + (cy < b->n % b->py);
    b->starts[1] = cy * (b->n / b->py) + (cy < b->n % b->py ? cy : b->n % b->py);
    b->subsizes[2] = b->n / b->px + (cx < b->n % b->px);
    b->starts[2] = cx * (b->n / b->px) + (cx < b->n % b->px ? cx : b->n % b->px);
    b->cells = (long long)b->subsizes[0] * b->subsizes[1] * b->subsizes[2];
    MPI_Type_contiguous(VALUES, MPI_DOUBLE, &b->cell);
    MPI_Type_commit(&b->cell);
    MPI_Type_create_subarray(3, b->sizes, b->subsizes, b->starts, MPI_ORDER_C, b->cell, &b->filetype);
    MPI_Type_commit(&b->filetype);
    b->mem = malloc((size_t)b->cells * VALUES * sizeof(double));
    return b->mem ? 0 : 1;
}

static bench_access_t access_of(btio_t *b, const char *path)
{
    bench_access_t a = {.path = path, .info = MPI_INFO_NULL, .disp = 0, .etype = b->cell, .filetype = b->filetype,
                        .buf = b->mem, .count = (int)b->cells, .memtype = b->cell, .collective = 1};
    return a;
}

/* seconds[write][ferry][call or all][rep] */
typedef double btio_times_t[2][2][2][MAX_REPS];

static int run_rep(btio_t *b, const char *dir, int rep, btio_times_t t)
{
    char path[2][600];
    int failed = 0;
    for (int k = 0; k < 2; k++) {
        int ferry = (k + rep) % 2;
        snprintf(path[ferry], sizeof path[ferry], "%s/%s.%d", dir, ferry ? "ferry" : "host", rep);
        fill(b, 0);
        bench_access_t a = access_of(b, path[ferry]);
        bench_outcome_t o = {0};
        bench_access_run(&a, ferry, 1, &o);
        t[1][ferry][0][rep] = o.call_seconds;
        t[1][ferry][1][rep] = o.seconds;
        failed |= o.failed;
    }
    if (!same_files(b, path[0], path[1])) {
        if (b->rank == 0) fprintf(stderr, "ferry-bench btio: ferry's file differs from the host's\n");
        failed = 1;
    }
    for (int k = 0; k < 2; k++) {
        int ferry = (k + rep) % 2;
        fill(b, 1);
        bench_drop_pages(path[ferry]);
        bench_access_t a = access_of(b, path[ferry]);
        bench_outcome_t o = {0};
        bench_access_run(&a, ferry, 0, &o);
        t[0][ferry][0][rep] = o.call_seconds;
        t[0][ferry][1][rep] = o.seconds;
        failed |= o.failed;
        if (!memory_ok(b)) {
            if (b->rank == 0) fprintf(stderr, "ferry-bench btio: %s read wrong values\n", ferry ? "ferry" : "host");
            failed = 1;
        }
    }
    if (b->rank == 0) {
        unlink(path[0]);
        unlink(path[1]);
    }
    return failed;
}

static void print_table(const btio_t *b, btio_times_t t, btio_config_t *cfg)
{
    char class_name[8];
    cli_format_value(&btio_options[1], cfg, class_name, sizeof class_name); /* [1]: --class */
    double mib = (double)b->n * b->n * b->n * VALUES * sizeof(double) / (1 << 20);
    printf("ferry-bench btio: class %s (%d^3 x %d doubles, %.1f MiB), %d ranks (%dx%d), runs of %d B, dir %s, "
           "median of %d\n",
           class_name, b->n, VALUES, mib, b->nprocs, b->px, b->py, (int)(b->n / b->px * VALUES * sizeof(double)),
           b->base, b->reps);
    printf("%-6s %11s %11s %7s %11s %11s %7s\n", "dir", "ferry MiB/s", "host MiB/s", "f/h", "ferry all", "host all",
           "f/h all");
    for (int w = 1; w >= 0; w--) {
        double f = mib / bench_median(t[w][1][0], b->reps), h = mib / bench_median(t[w][0][0], b->reps);
        double fa = mib / bench_median(t[w][1][1], b->reps), ha = mib / bench_median(t[w][0][1], b->reps);
        printf("%-6s %11.1f %11.1f %7.2f %11.1f %11.1f %7.2f\n", w ? "write" : "read", f, h, f / h, fa, ha, fa / ha);
        bench_row_t *call = bench_row(&cfg->common, "the call alone", class_name, w ? "write" : "read", "MiB/s");
        bench_row_value(call, "ferry", f);
        bench_row_value(call, "host", h);
        bench_row_extra(call, "run_bytes", (double)(b->n / b->px * VALUES * sizeof(double)));
        bench_row_t *all = bench_row(&cfg->common, "open to close", class_name, w ? "write" : "read", "MiB/s");
        bench_row_value(all, "ferry", fa);
        bench_row_value(all, "host", ha);
    }
}

int ferry_bench_btio(int argc, char **argv)
{
    btio_config_t cfg;
    int rc = bench_parse(&bench_btio_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    btio_t b = {.n = btio_class_sizes[cfg.class_index], .px = 1, .reps = cfg.common.reps, .base = cfg.common.dir};
    rc = setup(&b);
    if (rc != 0) {
        bench_finish(&cfg.common, 1);
        return rc;
    }
    const char *dir = bench_make_dir(b.base, "btio");
    static btio_times_t t;
    int failed = !dir;
    for (int rep = 0; dir && rep < b.reps; rep++) {
        failed |= run_rep(&b, dir, rep, t);
        bench_progress(&cfg.common, NULL, rep);
    }
    if (b.rank == 0 && dir) print_table(&b, t, &cfg);
    bench_remove_dir(dir);
    MPI_Type_free(&b.filetype);
    MPI_Type_free(&b.cell);
    free(b.mem);
    return bench_finish(&cfg.common, failed);
}

/*
 * ferry-bench views: the cost of a huge irregular file view (issue 20).
 *
 * The file is cut into --blocks blocks of 1-3 MPI_INTs (lengths from a
 * seeded generator), dealt round-robin to the ranks: rank r's filetype is
 * an MPI_Type_indexed of blocks r, r + P, r + 2P, ... (irregular, as a
 * mesh's cells owned by a partitioner come out). Per contender (host
 * MPI-IO, then ferry): open, set_view, one write_all of the rank's data,
 * one read_all back (bytes checked), close. Reported: the slowest rank's
 * set_view and write_all seconds, and the largest rank's peak resident
 * memory during the contender's part beyond what it held before (the
 * kernel's high-water mark, reset between contenders through
 * /proc/self/clear_refs), medians over repetitions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__ /* defined by the headers above */
#include <malloc.h>
#endif

#include "bench.h"

typedef struct views_config {
    bench_common_t common;
    long long blocks; /* over all ranks */
} views_config_t;

static const views_config_t views_defaults = {.common = {.dir = "/dev/shm", .reps = 1}, .blocks = 1000000};

static const cli_option_t views_options[] = {
    BENCH_OPTION_DIR(views_config_t),
    {"blocks", 0, CLI_SIZE, offsetof(views_config_t, blocks), 1, 1e9, NULL,
     "blocks of 1-3 MPI_INTs in the file, dealt round-robin to the ranks"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_views_spec = {
    "ferry-bench views",
    "mpiexec -n <ranks> ferry-bench views [options]",
    "set_view, write_all and read_all through an irregular view of many tiny blocks (host MPI-IO, ferry)",
    views_options,
    bench_shared_options,
    sizeof(views_config_t),
    &views_defaults,
    NULL,
    0};

/* This rank's blocks: displacements and lengths in ints, and their total. */
typedef struct blocks {
    int *disp, *len;
    int n;
    long long ints;
} blocks_t;

static int make_blocks(long long total, int rank, int nprocs, blocks_t *b)
{
    long long mine = total / nprocs + (rank < total % nprocs);
    b->disp = malloc((size_t)mine * sizeof *b->disp);
    b->len = malloc((size_t)mine * sizeof *b->len);
    if (!b->disp || !b->len || mine > 0x7fffffff) return 1;
    unsigned long long state = 20;
    long long at = 0;
    b->n = 0;
    b->ints = 0;
    for (long long i = 0; i < total; i++) {
        int len = 1 + (int)(bench_random(&state) % 3);
        if (i % nprocs == rank) {
            b->disp[b->n] = (int)at;
            b->len[b->n++] = len;
            b->ints += len;
        }
        at += len;
        if (at > 0x7fffffff - 4) return 1; /* MPI_Type_indexed's int displacements */
    }
    return 0;
}

/* Resident memory now and its high-water mark, in MiB (/proc/self/status). */
static void memory_mib(double *rss, double *peak)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    *rss = *peak = 0;
    while (f && fgets(line, sizeof line, f)) {
        long long kib = 0;
        if (sscanf(line, "VmRSS: %lld", &kib) == 1) *rss = kib / 1024.0;
        if (sscanf(line, "VmHWM: %lld", &kib) == 1) *peak = kib / 1024.0;
    }
    if (f) fclose(f);
}

/* Returns the heap's free pages to the kernel first: otherwise what the
 * previous contender freed stays resident, the next one reuses it without
 * growing, and its peak reads near zero. */
static void reset_peak(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

typedef struct measured {
    double set_view, write_all, peak_mib;
    int failed;
} measured_t;

typedef struct views_run {
    const char *path;
    MPI_Datatype filetype;
    int *data, *back;
    long long ints;
} views_run_t;

static double slowest(double seconds)
{
    double worst = 0;
    MPI_Allreduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static void host_part(const views_run_t *r, measured_t *m)
{
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, r->path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    double t0 = bench_now();
    if (rc == MPI_SUCCESS) rc = MPI_File_set_view(fh, 0, MPI_INT, r->filetype, "native", MPI_INFO_NULL);
    m->set_view = slowest(bench_now() - t0);
    t0 = bench_now();
    if (rc == MPI_SUCCESS) rc = MPI_File_write_at_all(fh, 0, r->data, (int)r->ints, MPI_INT, MPI_STATUS_IGNORE);
    m->write_all = slowest(bench_now() - t0);
    if (rc == MPI_SUCCESS) rc = MPI_File_read_at_all(fh, 0, r->back, (int)r->ints, MPI_INT, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = MPI_File_close(&fh);
    m->failed = rc != MPI_SUCCESS;
}

static void ferry_part(const views_run_t *r, measured_t *m)
{
    ferry_File fh;
    int rc = ferry_File_open(MPI_COMM_WORLD, r->path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    double t0 = bench_now();
    if (rc == MPI_SUCCESS) rc = ferry_File_set_view(fh, 0, MPI_INT, r->filetype, "native", MPI_INFO_NULL);
    m->set_view = slowest(bench_now() - t0);
    t0 = bench_now();
    if (rc == MPI_SUCCESS) rc = ferry_File_write_at_all(fh, 0, r->data, (int)r->ints, MPI_INT, MPI_STATUS_IGNORE);
    m->write_all = slowest(bench_now() - t0);
    if (rc == MPI_SUCCESS) rc = ferry_File_read_at_all(fh, 0, r->back, (int)r->ints, MPI_INT, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = ferry_File_close(&fh);
    m->failed = rc != MPI_SUCCESS;
}

/* One contender's part, its memory measured and its bytes checked. */
static void measure(const views_run_t *r, int ferry, measured_t *m)
{
    double before, peak;
    memset(r->back, 0, (size_t)r->ints * sizeof *r->back);
    bench_barrier();
    reset_peak();
    memory_mib(&before, &peak);
    if (ferry) ferry_part(r, m);
    else host_part(r, m);
    double now = 0, grown = 0;
    memory_mib(&now, &peak);
    grown = peak - before;
    MPI_Allreduce(&grown, &m->peak_mib, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int wrong = m->failed || memcmp(r->data, r->back, (size_t)r->ints * sizeof *r->data) != 0, any = 0;
    MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    m->failed = any;
}

static void report(views_config_t *cfg, measured_t m[2][BENCH_MAX_REPS])
{
    static const char *names[2] = {"host", "ferry"};
    const char *ops[3] = {"set_view", "write_all", "peak"};
    for (int op = 0; op < 3; op++) {
        bench_row_t *row = bench_row(&cfg->common, "irregular view", "views", ops[op], op == 2 ? "MiB" : "s");
        double med[2];
        for (int c = 0; c < 2; c++) {
            double v[BENCH_MAX_REPS];
            for (int i = 0; i < cfg->common.reps; i++)
                v[i] = op == 0 ? m[c][i].set_view : op == 1 ? m[c][i].write_all : m[c][i].peak_mib;
            med[c] = bench_median(v, cfg->common.reps);
            bench_row_value(row, names[c], med[c]);
        }
        if (cfg->common.rank == 0)
            printf("%-10s %12.3f %12.3f  %s (host, ferry; %lld blocks, %d ranks)\n", ops[op], med[0], med[1],
                   op == 2 ? "MiB peak beyond the start, largest rank" : "s, slowest rank", cfg->blocks,
                   cfg->common.nprocs);
    }
}

int ferry_bench_views(int argc, char **argv)
{
    views_config_t cfg;
    int rc = bench_parse(&bench_views_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    blocks_t b = {0};
    int failed = make_blocks(cfg.blocks, cfg.common.rank, cfg.common.nprocs, &b);
    views_run_t run = {.ints = b.ints};
    char path[600];
    const char *dir = bench_make_dir(cfg.common.dir, "views");
    snprintf(path, sizeof path, "%s/views", dir);
    run.path = path;
    run.data = malloc((size_t)(b.ints + 1) * sizeof *run.data);
    run.back = malloc((size_t)(b.ints + 1) * sizeof *run.back);
    failed |= !run.data || !run.back;
    for (long long i = 0; !failed && i < b.ints; i++) run.data[i] = (int)(i * 7 + cfg.common.rank);
    failed |= !failed && (MPI_Type_indexed(b.n, b.len, b.disp, MPI_INT, &run.filetype) != MPI_SUCCESS ||
                          MPI_Type_commit(&run.filetype) != MPI_SUCCESS);
    free(b.disp);
    free(b.len);
    static measured_t m[2][BENCH_MAX_REPS];
    for (int rep = 0; !failed && rep < cfg.common.reps; rep++) {
        for (int c = 0; c < 2; c++) {
            measure(&run, c, &m[c][rep]);
            failed |= m[c][rep].failed;
        }
        bench_progress(&cfg.common, "irregular view", rep);
    }
    if (!failed) report(&cfg, m);
    else if (cfg.common.rank == 0) fprintf(stderr, "ferry-bench views: a run failed or read back wrong bytes\n");
    if (run.filetype) MPI_Type_free(&run.filetype);
    free(run.data);
    free(run.back);
    bench_remove_dir(dir);
    return bench_finish(&cfg.common, failed);
}

/*
 * ferry-bench overlap: how much of a nonblocking write hides behind
 * computation (ferry's background requests, src/async/, against the host
 * MPI-IO's MPI_File_iwrite_at / MPI_File_iwrite_at_all).
 *
 * Each rank writes its own block of --size bytes. Per contender and
 * repetition (rotating order, fresh file): t_io = the write alone (blocking);
 * t_cpu = the compute loop alone, calibrated once to last about as long as
 * ferry's blocking write; (a) blocking write, then compute; (b) iwrite,
 * compute, MPI_Wait. Times are the slowest rank's, between barriers, medians
 * over repetitions. overlap = (a - b) / min(t_io, t_cpu): 1 when the shorter
 * phase is hidden entirely, 0 when nothing is. Needs MPI_THREAD_MULTIPLE
 * (ferry-bench asks for it for this workload only): below it ferry's
 * requests complete at initiation and overlap is 0 by construction.
 * --compute sleep replaces the loop by a sleep of the same length: on a
 * machine with no idle core, a spinning phase and a background write only
 * take turns on the CPUs, so sleeping shows the background progress alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { CONTENDERS = 2, MAX_REPS = BENCH_MAX_REPS };

typedef struct overlap_config {
    bench_common_t common;
    long long size; /* bytes per rank */
    int collective;
    int sleeping;   /* --compute sleep */
} overlap_config_t;

static const overlap_config_t overlap_defaults = {.common = {.dir = "/var/tmp", .reps = 5}, .size = 64LL << 20};

static const cli_option_t overlap_options[] = {
    BENCH_OPTION_DIR(overlap_config_t),
    {"size", 0, CLI_SIZE, offsetof(overlap_config_t, size), 4096, 2.0 * (1 << 30) - 1, NULL, "bytes per rank"},
    {"mode", 0, CLI_CHOICE, offsetof(overlap_config_t, collective), 0, 0, "independent,collective",
     "iwrite_at, or iwrite_at_all"},
    {"compute", 0, CLI_CHOICE, offsetof(overlap_config_t, sleeping), 0, 0, "spin,sleep",
     "the compute phase: a floating-point loop, or a sleep of the same length"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_overlap_spec = {
    "ferry-bench overlap", "mpiexec -n <ranks> ferry-bench overlap [options]",
    "iwrite + compute + wait against write then compute (host MPI-IO, ferry; MPI_THREAD_MULTIPLE)",
    overlap_options, bench_shared_options, sizeof(overlap_config_t), &overlap_defaults, NULL, 0};

typedef struct overlap_run {
    const char *path;
    MPI_Offset offset;
    char *buf;
    int len;
    int collective;
    long spins;     /* compute loop iterations */
    int sleeping;   /* the compute phase sleeps instead (--compute sleep) */
    double seconds; /* its length then */
    int failed;
} overlap_run_t;

/* The compute phase: floating-point work on registers, no memory traffic. */
static double compute(long spins)
{
    volatile double sink = 0.0;
    double x = 1.0;
    for (long i = 0; i < spins; i++) x = x * 1.0000001 + 1e-9;
    sink = x;
    return sink;
}

typedef struct contender {
    const char *name;
    int (*open)(const char *path, void **fh);
    int (*write)(void *fh, const overlap_run_t *run);                    /* blocking */
    int (*iwrite)(void *fh, const overlap_run_t *run, MPI_Request *req); /* nonblocking */
    int (*close)(void **fh);
} contender_t;

static int ferry_open(const char *path, void **fh)
{
    return ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, (ferry_File *)fh);
}
static int ferry_write(void *fh, const overlap_run_t *r)
{
    return r->collective ? ferry_File_write_at_all(fh, r->offset, r->buf, r->len, MPI_BYTE, MPI_STATUS_IGNORE)
                         : ferry_File_write_at(fh, r->offset, r->buf, r->len, MPI_BYTE, MPI_STATUS_IGNORE);
}
static int ferry_iwrite(void *fh, const overlap_run_t *r, MPI_Request *req)
{
    return r->collective ? ferry_File_iwrite_at_all(fh, r->offset, r->buf, r->len, MPI_BYTE, req)
                         : ferry_File_iwrite_at(fh, r->offset, r->buf, r->len, MPI_BYTE, req);
}
static int ferry_close(void **fh)
{
    return ferry_File_close((ferry_File *)fh);
}

static int host_open(const char *path, void **fh)
{
    MPI_File *file = malloc(sizeof *file);
    *fh = file;
    return MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, file);
}
static int host_write(void *fh, const overlap_run_t *r)
{
    MPI_File f = *(MPI_File *)fh;
    return r->collective ? MPI_File_write_at_all(f, r->offset, r->buf, r->len, MPI_BYTE, MPI_STATUS_IGNORE)
                         : MPI_File_write_at(f, r->offset, r->buf, r->len, MPI_BYTE, MPI_STATUS_IGNORE);
}
static int host_iwrite(void *fh, const overlap_run_t *r, MPI_Request *req)
{
    MPI_File f = *(MPI_File *)fh;
    return r->collective ? MPI_File_iwrite_at_all(f, r->offset, r->buf, r->len, MPI_BYTE, req)
                         : MPI_File_iwrite_at(f, r->offset, r->buf, r->len, MPI_BYTE, req);
}
static int host_close(void **fh)
{
    int rc = MPI_File_close((MPI_File *)*fh);
    free(*fh);
    *fh = NULL;
    return rc;
}

static const contender_t contenders[CONTENDERS] = {
    {"host", host_open, host_write, host_iwrite, host_close},
    {"ferry", ferry_open, ferry_write, ferry_iwrite, ferry_close},
};

/* The slowest rank's seconds for `what` (0 io, 1 compute, 2 blocking+compute, 3 iwrite+compute+wait). */
static double timed(const contender_t *c, overlap_run_t *run, int what)
{
    void *fh = NULL;
    if (c->open(run->path, &fh) != MPI_SUCCESS) run->failed = 1;
    bench_barrier();
    double start = bench_now();
    MPI_Request req = MPI_REQUEST_NULL;
    if (!run->failed && (what == 0 || what == 2) && c->write(fh, run) != MPI_SUCCESS) run->failed = 1;
    if (!run->failed && what == 3 && c->iwrite(fh, run, &req) != MPI_SUCCESS) run->failed = 1;
    if (what >= 1 && run->sleeping) usleep((useconds_t)(run->seconds * 1e6));
    else if (what >= 1) compute(run->spins);
    if (req != MPI_REQUEST_NULL && MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS) run->failed = 1;
    double mine = bench_now() - start, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (fh && c->close(&fh) != MPI_SUCCESS) run->failed = 1;
    return slowest;
}

/* Iterations of the compute loop that take about `seconds` (agreed: rank 0's). */
static long calibrate(double seconds)
{
    long spins = 1 << 20;
    double took = 0;
    while ((took = bench_now(), compute(spins), took = bench_now() - took) < 0.05) spins *= 2;
    long want = (long)((double)spins * seconds / took);
    MPI_Bcast(&want, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return want > 0 ? want : 1;
}

static void print_row(overlap_config_t *cfg, const char *name, double t[4])
{
    double hidden = t[2] - t[3], shorter = t[0] < t[1] ? t[0] : t[1];
    double overlap = shorter > 0 ? hidden / shorter : 0.0;
    printf("| %-5s | %8.1f | %8.1f | %8.1f | %8.1f | %5.2f |\n", name, 1e3 * t[0], 1e3 * t[1], 1e3 * t[2],
           1e3 * t[3], overlap);
    static const char *const phases[4] = {"write", "compute", "write+compute", "iwrite+compute+wait"};
    for (int what = 0; what < 4; what++) {
        bench_row_t *row = bench_row(&cfg->common, "times", phases[what], "write", "ms");
        bench_row_value(row, name, 1e3 * t[what]);
    }
    bench_row_value(bench_row(&cfg->common, "overlap", "hidden share", "write", "fraction"), name, overlap);
}

/* Every contender, every phase, in rotating order; times[contender][phase][rep]. */
static void measure(overlap_config_t *cfg, overlap_run_t *run, double t[CONTENDERS][4][MAX_REPS])
{
    for (int rep = 0; rep < cfg->common.reps; rep++) {
        for (int k = 0; k < CONTENDERS; k++) {
            int c = (k + rep) % CONTENDERS;
            for (int what = 0; what < 4; what++) t[c][what][rep] = timed(&contenders[c], run, what);
        }
        bench_progress(&cfg->common, NULL, rep);
    }
}

static void print_table(overlap_config_t *cfg, double t[CONTENDERS][4][MAX_REPS], int level, int failed)
{
    printf("ferry-bench overlap: %d ranks, %.0f MiB per rank, %s iwrite_at%s, compute: %s, dir %s, thread level "
           "%s, median of %d (ms)\n",
           cfg->common.nprocs, (double)cfg->size / (1 << 20), cfg->collective ? "collective" : "independent",
           cfg->collective ? "_all" : "", cfg->sleeping ? "sleep" : "spin", cfg->common.dir,
           level == MPI_THREAD_MULTIPLE ? "MULTIPLE" : "below MULTIPLE (no background progress)", cfg->common.reps);
    printf("| MPI-IO | write | compute | (a) write+compute | (b) iwrite+compute+wait | overlap |\n");
    printf("|---|---|---|---|---|---|\n");
    for (int c = 0; c < CONTENDERS; c++) {
        double m[4];
        for (int what = 0; what < 4; what++) m[what] = bench_median(t[c][what], cfg->common.reps);
        print_row(cfg, contenders[c].name, m);
    }
    if (failed) printf("ferry-bench overlap: FAILED (see errors above)\n");
}

int ferry_bench_overlap(int argc, char **argv)
{
    overlap_config_t cfg;
    int rc = bench_parse(&bench_overlap_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    int level = MPI_THREAD_SINGLE, rank = cfg.common.rank;
    MPI_Query_thread(&level);
    const char *dir = bench_make_dir(cfg.common.dir, "overlap");
    overlap_run_t run = {.len = (int)cfg.size, .offset = cfg.size * rank, .collective = cfg.collective,
                         .sleeping = cfg.sleeping, .buf = malloc((size_t)cfg.size)};
    if (!dir || !run.buf) return bench_finish(&cfg.common, 1);
    memset(run.buf, rank + 1, (size_t)cfg.size);
    char path[600];
    snprintf(path, sizeof path, "%s/file", dir);
    run.path = path;
    run.spins = 1;
    timed(&contenders[1], &run, 0); /* warm-up: pages, threads, host's first open */
    run.seconds = timed(&contenders[1], &run, 0);
    run.spins = calibrate(run.seconds);
    static double t[CONTENDERS][4][MAX_REPS];
    measure(&cfg, &run, t);
    int failed = 0;
    MPI_Allreduce(&run.failed, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) print_table(&cfg, t, level, failed);
    free(run.buf);
    bench_remove_dir(dir);
    return bench_finish(&cfg.common, failed);
}

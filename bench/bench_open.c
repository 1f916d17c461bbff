/*
 * ferry-bench open: the cost of opening and closing a file (issue 20, item
 * 4), ferry against the host's MPI-IO in the same run.
 *
 * Every rank opens one file on MPI_COMM_WORLD and closes it again, --cycles
 * times per repetition, in two cases: open and close alone, and with one
 * write_shared of 8 bytes in between (so a shared file pointer is really
 * used: ferry's comes from a pool slot, OMPIO's from its sharedfp
 * component, ROMIO's from its pointer file). Each cycle starts from a
 * barrier and is timed on every rank; the slowest rank's time counts, and
 * the table gives the median over all cycles of all repetitions. One
 * untimed cycle per contender and case comes first (ferry's first open on
 * a communicator makes its pool of pointers). After the write cycles every
 * rank's record must be in the file's first records exactly once.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { CASES = 2, CONTENDERS = 2, MAX_CYCLES = 1000 };

typedef struct open_config {
    bench_common_t common;
    int cycles; /* open+close cycles per repetition */
} open_config_t;

static const open_config_t open_defaults = {.common = {.dir = "/dev/shm", .reps = 5}, .cycles = 40};

static const cli_option_t open_options[] = {
    BENCH_OPTION_DIR(open_config_t),
    {"cycles", 0, CLI_INT, offsetof(open_config_t, cycles), 1, MAX_CYCLES, NULL,
     "open+close cycles per repetition and case"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_open_spec = {
    "ferry-bench open",
    "mpiexec -n <ranks> ferry-bench open [options]",
    "open+close of one file, alone and with one write_shared, repeated (host MPI-IO, ferry): median ms per cycle",
    open_options,
    bench_shared_options,
    sizeof(open_config_t),
    &open_defaults,
    NULL,
    0};

static const char *const case_names[CASES] = {"open+close", "open+write_shared+close"};
static const char *const contender_names[CONTENDERS] = {"host", "ferry"};

typedef struct open_run {
    const open_config_t *cfg;
    const char *path;
    double *ms[CASES][CONTENDERS]; /* reps * cycles, the slowest rank's */
    int failed;
} open_run_t;

/* One open, the write when `write_shared`, one close; returns the first failure. */
static int cycle(const char *path, int ferry, int write_shared, long long record)
{
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR, rc, close_rc;
    if (ferry) {
        ferry_File fh;
        rc = ferry_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh);
        if (rc != MPI_SUCCESS) return rc; /* agreed: every rank returns here */
        if (write_shared) rc = ferry_File_write_shared(fh, &record, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE);
        close_rc = ferry_File_close(&fh);
    } else {
        MPI_File fh;
        rc = MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh);
        if (rc != MPI_SUCCESS) return rc;
        if (write_shared) rc = MPI_File_write_shared(fh, &record, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE);
        close_rc = MPI_File_close(&fh);
    }
    return rc != MPI_SUCCESS ? rc : close_rc;
}

/* Every rank's record (its rank) in the file's first records exactly once. */
static int records_ok(const char *path, int nprocs)
{
    long long *seen = calloc((size_t)nprocs, sizeof *seen);
    int fd = open(path, O_RDONLY), ok = seen && fd >= 0;
    for (int i = 0; ok && i < nprocs; i++) {
        long long v = -1;
        ok = pread(fd, &v, sizeof v, (off_t)i * (off_t)sizeof v) == (ssize_t)sizeof v && v >= 0 && v < nprocs &&
             seen[v]++ == 0;
    }
    if (fd >= 0) close(fd);
    free(seen);
    return ok;
}

/* One repetition of one case and contender: the untimed cycle, then --cycles timed ones. */
static void run_cycles(open_run_t *run, int c, int k, int rep)
{
    const open_config_t *cfg = run->cfg;
    int n = cfg->cycles, bad = 0;
    double *mine = calloc((size_t)n, sizeof *mine);
    bad = !mine || cycle(run->path, k, c, cfg->common.rank) != MPI_SUCCESS;
    for (int i = 0; mine && i < n; i++) {
        bench_barrier();
        double start = bench_now();
        bad |= cycle(run->path, k, c, cfg->common.rank) != MPI_SUCCESS;
        mine[i] = 1e3 * (bench_now() - start);
    }
    if (mine) MPI_Allreduce(mine, run->ms[c][k] + (size_t)rep * (size_t)n, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    free(mine);
    bench_barrier();
    if (c == 1 && cfg->common.rank == 0 && !bad) bad = !records_ok(run->path, cfg->common.nprocs);
    if (bad)
        fprintf(stderr, "ferry-bench open: %s %s failed on rank %d\n", contender_names[k], case_names[c],
                cfg->common.rank);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    run->failed |= any;
}

static void run_reps(open_run_t *run)
{
    for (int rep = 0; rep < run->cfg->common.reps; rep++) {
        for (int c = 0; c < CASES; c++)
            for (int j = 0; j < CONTENDERS; j++) run_cycles(run, c, (j + rep) % CONTENDERS, rep);
        bench_progress(&run->cfg->common, NULL, rep);
    }
}

static void print_table(open_config_t *cfg, open_run_t *run)
{
    int all = cfg->common.reps * cfg->cycles;
    printf("ferry-bench open: %d ranks, %s %s, dir %s, %d cycles x %d reps, median ms per cycle (slowest rank)\n",
           cfg->common.nprocs, cfg->common.host.name, cfg->common.host.io, cfg->common.dir, cfg->cycles,
           cfg->common.reps);
    printf("%-26s %9s %9s %11s\n", "case", "host ms", "ferry ms", "ferry/host");
    for (int c = 0; c < CASES; c++) {
        double host = bench_median(run->ms[c][0], all), ferry = bench_median(run->ms[c][1], all);
        printf("%-26s %9.3f %9.3f %11.2f\n", case_names[c], host, ferry, ferry / host);
        bench_row_t *row = bench_row(&cfg->common, "open and close", case_names[c], "open", "ms");
        bench_row_value(row, "host", host);
        bench_row_value(row, "ferry", ferry);
        bench_row_extra(row, "cycles", (double)all);
    }
    if (run->failed) printf("ferry-bench open: FAILED (see errors above)\n");
}

int ferry_bench_open(int argc, char **argv)
{
    open_config_t cfg;
    int rc = bench_parse(&bench_open_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    open_run_t run = {.cfg = &cfg};
    size_t per = (size_t)cfg.common.reps * (size_t)cfg.cycles;
    for (int c = 0; c < CASES; c++)
        for (int k = 0; k < CONTENDERS; k++) run.ms[c][k] = calloc(per, sizeof(double));
    const char *dir = bench_make_dir(cfg.common.dir, "open");
    char path[600];
    if (dir) {
        snprintf(path, sizeof path, "%s/f", dir);
        run.path = path;
        run_reps(&run);
    }
    if (dir && cfg.common.rank == 0) print_table(&cfg, &run);
    bench_remove_dir(dir);
    for (int c = 0; c < CASES; c++)
        for (int k = 0; k < CONTENDERS; k++) free(run.ms[c][k]);
    return bench_finish(&cfg.common, !dir || run.failed);
}

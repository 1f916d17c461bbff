/*
 * Multi-level checkpoints on tools/cluster's nodes (issue 30; run by
 * tests/cluster/run-levels-cluster.sh). One double variable, MIB MiB per
 * rank, every rank a band of rows; value(g, step) = step * 1e9 + g.
 *
 *   ckpt_levels_job time    DIR LOCAL MIB REPS        alternating runs; medians (slowest rank) of
 *                                                     the shared-file write, level 1, level 1 + 2,
 *                                                     and a drained write's call and its drain
 *   ckpt_levels_job write   DIR LOCAL MIB STEP [die]  a multi-level write with partner and drain;
 *                                                     "die": every rank SIGKILLs itself while the
 *                                                     drain runs (FERRY_CKPT_DRAIN_DELAY holds it)
 *   ckpt_levels_job restart DIR LOCAL MIB STEP LEVEL  restart: must be STEP from LEVEL, every value
 *
 * DIR is a directory on the shared file system, LOCAL the node-local one.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ferry_ckpt.h"

enum { COLS = 1024 };
static int rank, nprocs;
static MPI_Offset rows;

static void die(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "ckpt_levels_job: rank %d: %s: %s\n", rank, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

#define OK(call)                                                                                                   \
    do {                                                                                                           \
        int rc_ = (call);                                                                                          \
        if (rc_ != MPI_SUCCESS) die(#call, rc_);                                                                   \
    } while (0)

static ferry_ckpt_t make(const char *base, const char *local, int partner, int drain)
{
    ferry_ckpt_options_t o = {.strategy = FERRY_CKPT_STEER, .local_dir = local, .partner = partner, .drain = drain};
    ferry_ckpt_t ck;
    int dims[2], id;
    MPI_Info_create(&o.info);
    MPI_Info_set(o.info, "ferry_ckpt_keep", "1"); /* node-local storage is memory */
    OK(ferry_ckpt_create(MPI_COMM_WORLD, base, &o, &ck));
    MPI_Info_free(&o.info);
    OK(ferry_ckpt_def_dim(ck, "y", rows * nprocs, &dims[0]));
    OK(ferry_ckpt_def_dim(ck, "x", COLS, &dims[1]));
    MPI_Offset start[2] = {rows * rank, 0}, count[2] = {rows, COLS};
    ferry_ckpt_var_t v = {.name = "t", .type = MPI_DOUBLE, .ndims = 2, .dimids = dims, .start = start, .count = count};
    OK(ferry_ckpt_def_var(ck, &v, &id));
    return ck;
}

static void fill(double *buf, long long step)
{
    for (MPI_Offset i = 0; i < rows * COLS; i++) buf[i] = (double)step * 1e9 + (double)(rows * COLS * rank + i);
}

static double slowest(double t)
{
    double max = 0;
    MPI_Allreduce(&t, &max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One timed write of set ck; when drained, compute_ms of "computation" (a sleep: the cores are
 * the drain's meanwhile) and then its drain_wait, timed into *drain. */
static double timed_write(ferry_ckpt_t ck, double *buf, long long step, double *drain, int compute_ms)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    OK(ferry_ckpt_write(ck, step, (double)step, (void *[]){buf}));
    double t = slowest(MPI_Wtime() - t0);
    if (drain) {
        if (compute_ms) usleep((useconds_t)compute_ms * 1000);
        t0 = MPI_Wtime();
        OK(ferry_ckpt_drain_wait(ck));
        *drain = slowest(MPI_Wtime() - t0);
    }
    return t;
}

static void run_time(const char *dir, const char *local, int reps, double *buf)
{
    enum { SETS = 5, ROWS = 7, COMPUTE_MS = 2000 };
    static const char *names[ROWS] = {"shared file (ferry_ckpt_write)", "level 1", "level 1 + partner",
                                      "drained: write call (levels 1+2)", "drained: drain_wait at once",
                                      "drained, 2 s compute: write call", "drained, 2 s compute: drain_wait"};
    char base[SETS][1024];
    for (int k = 0; k < SETS; k++) snprintf(base[k], sizeof base[k], "%s/time%d", dir, k);
    ferry_ckpt_t set[SETS] = {make(base[0], NULL, 0, 0), make(base[1], local, 0, 0), make(base[2], local, 1, 0),
                              make(base[3], local, 1, 1), make(base[4], local, 1, 1)};
    static const int row_of[SETS] = {0, 1, 2, 3, 5};
    double *t = calloc((size_t)reps * ROWS, sizeof *t);
    for (int r = 0; r < reps; r++) {
        fill(buf, r + 1);
        for (int k = 0; k < SETS; k++) { /* alternating: every rep runs each kind once, rotated */
            int kind = (k + r) % SETS, row = row_of[kind];
            t[row * reps + r] = timed_write(set[kind], buf, r + 1, kind >= 3 ? &t[(row + 1) * reps + r] : NULL,
                                            kind == 4 ? COMPUTE_MS : 0);
        }
    }
    for (int k = 0; rank == 0 && k < ROWS; k++)
        printf("| %-34s | %9.1f ms |\n", names[k], 1e3 * median(t + (size_t)k * reps, reps));
    for (int k = 0; k < SETS; k++) ferry_ckpt_free(&set[k]);
    free(t);
}

static void run_restart(ferry_ckpt_t ck, double *buf, long long step, int level)
{
    ferry_ckpt_info_t info;
    memset(buf, 0, (size_t)(rows * COLS) * sizeof *buf);
    double t0 = MPI_Wtime();
    OK(ferry_ckpt_restart(ck, (void *[]){buf}, &info));
    double t = slowest(MPI_Wtime() - t0);
    long long bad = 0, all = 0;
    for (MPI_Offset i = 0; i < rows * COLS; i++)
        bad += buf[i] != (double)step * 1e9 + (double)(rows * COLS * rank + i);
    MPI_Allreduce(&bad, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("restart: step %lld from level %d in %.1f ms, %lld wrong values (wanted step %lld, level %d)\n",
               info.step, info.level, 1e3 * t, all, step, level);
    if (info.step != step || info.level != level || all) MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 6) {
        if (rank == 0) fprintf(stderr, "usage: %s time|write|restart DIR LOCAL MIB N [die|LEVEL]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *mode = argv[1], *dir = argv[2], *local = argv[3];
    rows = (MPI_Offset)atoll(argv[4]) * (1 << 20) / (COLS * 8);
    long long n = atoll(argv[5]);
    double *buf = malloc((size_t)(rows * COLS) * sizeof *buf);
    char base[1024];
    snprintf(base, sizeof base, "%s/ml", dir);
    if (rank == 0) printf("ckpt_levels_job %s: %d ranks, %s MiB each, thread level %d\n", mode, nprocs, argv[4], provided);
    if (strcmp(mode, "time") == 0) run_time(dir, local, (int)n, buf);
    else {
        ferry_ckpt_t ck = make(base, local, 1, 1);
        if (strcmp(mode, "write") == 0) {
            fill(buf, n);
            OK(ferry_ckpt_write(ck, n, (double)n, (void *[]){buf}));
            if (argc > 6 && strcmp(argv[6], "die") == 0) {
                MPI_Barrier(MPI_COMM_WORLD); /* every rank's levels 1 and 2 are committed; the drain sleeps */
                if (rank == 0) printf("write: step %lld at levels 1-2, killing the job during its drain\n", n);
                fflush(stdout);
                kill(getpid(), SIGKILL);
            }
            OK(ferry_ckpt_drain_wait(ck));
            if (rank == 0) printf("write: step %lld at levels 1-3\n", n);
        } else run_restart(ck, buf, n, argc > 6 ? atoi(argv[6]) : 1);
        ferry_ckpt_free(&ck);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}

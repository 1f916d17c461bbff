/*
 * ferry-bench calls: the fixed cost of one collective call (issue 31 item
 * 2), ferry against the host's MPI-IO in the same run.
 *
 * Every rank makes --cycles write_at_all calls, then as many read_at_all
 * calls, of a small size per rank, each timed from a barrier on every rank
 * (the slowest rank's time counts; the table gives the median over all
 * cycles of all repetitions, in microseconds). Sizes 0, 1 KiB and 64 KiB
 * per rank, two shapes:
 *   regular    each rank's view starts at rank x size and every call is the
 *              same window of it (offset 0, size bytes): the checkpoint
 *              pattern, where ferry needs no allgather of the ranks' ranges;
 *   irregular  no view: rank r moves a size of its own (a seeded draw in
 *              [size/2, 3 size/2]) at its own explicit offset (the prefix sum
 *              of the draws), so every call tells the ranks' ranges anew.
 * After the cycles every rank reads its last write back with pread and
 * checks the bytes; the reads are checked against them too.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { SIZES = 3, SHAPES = 2, OPS = 2, CONTENDERS = 2, MAX_CYCLES = 2000 };

typedef struct calls_config {
    bench_common_t common;
    int cycles; /* calls per repetition, size, shape and operation */
} calls_config_t;

static const calls_config_t calls_defaults = {.common = {.dir = "/dev/shm", .reps = 5}, .cycles = 50};

static const cli_option_t calls_options[] = {
    BENCH_OPTION_DIR(calls_config_t),
    {"cycles", 0, CLI_INT, offsetof(calls_config_t, cycles), 1, MAX_CYCLES, NULL,
     "calls per repetition, size, shape and operation"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_calls_spec = {
    "ferry-bench calls",
    "mpiexec -n <ranks> ferry-bench calls [options]",
    "a collective call's fixed cost: write_at_all/read_at_all of 0, 1 KiB, 64 KiB per rank, regular and irregular "
    "(host MPI-IO, ferry): median us per call",
    calls_options,
    bench_shared_options,
    sizeof(calls_config_t),
    &calls_defaults,
    NULL,
    0};

static const long long sizes[SIZES] = {0, 1024, 65536};
static const char *const shape_names[SHAPES] = {"regular", "irregular"};
static const char *const op_names[OPS] = {"write_at_all", "read_at_all"};
static const char *const contender_names[CONTENDERS] = {"host", "ferry"};

/* One rank's part of one case: where its bytes go and how many. */
typedef struct calls_case {
    int size_index, shape;
    MPI_Offset disp;   /* the view's displacement (regular) or 0 */
    MPI_Offset offset; /* the calls' explicit offset, in bytes */
    int bytes;
} calls_case_t;

static void case_of(const calls_config_t *cfg, int size_index, int shape, calls_case_t *c)
{
    long long size = sizes[size_index];
    int rank = cfg->common.rank, n = cfg->common.nprocs;
    *c = (calls_case_t){.size_index = size_index, .shape = shape};
    if (shape == 0) {
        c->disp = (MPI_Offset)rank * size;
        c->bytes = (int)size;
        return;
    }
    unsigned long long state = 0x5eed + (unsigned long long)size_index;
    for (int r = 0; r <= rank && r < n; r++) {
        long long draw = size > 0 ? size / 2 + (long long)(bench_random(&state) % (unsigned long long)(size + 1)) : 0;
        if (r < rank) c->offset += draw;
        else c->bytes = (int)draw;
    }
}

typedef struct calls_run {
    const calls_config_t *cfg;
    const char *path;
    char *out, *in;
    double *us[SIZES][SHAPES][OPS][CONTENDERS]; /* reps * cycles, the slowest rank's */
    int failed;
} calls_run_t;

static void fill(char *buf, int bytes, int rank, int salt)
{
    for (int i = 0; i < bytes; i++) buf[i] = (char)(rank * 31 + i * 7 + salt);
}

/* The contender's handle: the host's MPI_File or ferry's. */
typedef struct calls_file {
    int ferry;
    MPI_File host;
    ferry_File mine;
} calls_file_t;

static int file_open(calls_file_t *f, const char *path, const calls_case_t *c)
{
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR, rc;
    if (f->ferry) {
        rc = ferry_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &f->mine);
        if (rc == MPI_SUCCESS && c->shape == 0)
            rc = ferry_File_set_view(f->mine, c->disp, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        return rc;
    }
    rc = MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &f->host);
    if (rc == MPI_SUCCESS && c->shape == 0) rc = MPI_File_set_view(f->host, c->disp, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    return rc;
}

static int file_call(calls_file_t *f, int write, const calls_case_t *c, char *buf)
{
    MPI_Status st;
    int rc, count = -1;
    if (f->ferry) {
        rc = write ? ferry_File_write_at_all(f->mine, c->offset, buf, c->bytes, MPI_BYTE, &st)
                   : ferry_File_read_at_all(f->mine, c->offset, buf, c->bytes, MPI_BYTE, &st);
    } else {
        rc = write ? MPI_File_write_at_all(f->host, c->offset, buf, c->bytes, MPI_BYTE, &st)
                   : MPI_File_read_at_all(f->host, c->offset, buf, c->bytes, MPI_BYTE, &st);
    }
    if (rc == MPI_SUCCESS) MPI_Get_count(&st, MPI_BYTE, &count);
    return rc != MPI_SUCCESS ? rc : count != c->bytes ? MPI_ERR_IO : MPI_SUCCESS;
}

static int file_close(calls_file_t *f)
{
    return f->ferry ? ferry_File_close(&f->mine) : MPI_File_close(&f->host);
}

/* The bytes this rank wrote last, read with pread (a network client's pages dropped first). */
static int written_ok(const char *path, const calls_case_t *c, const char *expected, char *scratch)
{
    if (c->bytes == 0) return 1;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ssize_t got = pread(fd, scratch, (size_t)c->bytes, c->disp + c->offset);
    close(fd);
    return got == c->bytes && memcmp(scratch, expected, (size_t)c->bytes) == 0;
}

/* --cycles timed calls of one operation; returns nonzero on any failure. */
static int timed_calls(calls_run_t *run, calls_file_t *f, const calls_case_t *c, int write, double *mine)
{
    int bad = 0;
    for (int i = 0; i < run->cfg->cycles; i++) {
        bench_barrier();
        double start = bench_now();
        bad |= file_call(f, write, c, write ? run->out : run->in) != MPI_SUCCESS;
        mine[i] = 1e6 * (bench_now() - start);
    }
    return bad;
}

/* One repetition of one case and contender: open, the write calls, sync-barrier-sync, the read
 * calls, close, then the bytes checked. */
static void run_case(calls_run_t *run, const calls_case_t *c, int k, int rep)
{
    const calls_config_t *cfg = run->cfg;
    int n = cfg->cycles, bad = 0, rank = cfg->common.rank;
    double *mine = calloc((size_t)n * OPS, sizeof *mine);
    calls_file_t f = {.ferry = k};
    fill(run->out, c->bytes, rank, rep);
    bad = !mine || file_open(&f, run->path, c) != MPI_SUCCESS;
    if (!bad) bad |= timed_calls(run, &f, c, 1, mine);
    if (!bad) bad |= (f.ferry ? ferry_File_sync(f.mine) : MPI_File_sync(f.host)) != MPI_SUCCESS;
    bench_barrier();
    if (!bad) bad |= (f.ferry ? ferry_File_sync(f.mine) : MPI_File_sync(f.host)) != MPI_SUCCESS;
    if (!bad) bad |= timed_calls(run, &f, c, 0, mine + n);
    if (!bad) bad |= file_close(&f) != MPI_SUCCESS;
    bad |= c->bytes > 0 && memcmp(run->in, run->out, (size_t)c->bytes) != 0;
    bad |= !written_ok(run->path, c, run->out, run->in);
    for (int op = 0; mine && op < OPS; op++)
        MPI_Allreduce(mine + (size_t)op * n, run->us[c->size_index][c->shape][op][k] + (size_t)rep * n, n,
                      MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    free(mine);
    if (bad)
        fprintf(stderr, "ferry-bench calls: %s %lld B %s wrong or failed on rank %d\n", contender_names[k],
                sizes[c->size_index], shape_names[c->shape], rank);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    run->failed |= any;
    if (rank == 0) unlink(run->path);
    bench_barrier();
}

static void run_reps(calls_run_t *run)
{
    for (int rep = 0; rep < run->cfg->common.reps; rep++) {
        for (int s = 0; s < SIZES; s++)
            for (int h = 0; h < SHAPES; h++) {
                calls_case_t c;
                case_of(run->cfg, s, h, &c);
                for (int j = 0; j < CONTENDERS; j++) run_case(run, &c, (j + rep + s) % CONTENDERS, rep);
            }
        bench_progress(&run->cfg->common, NULL, rep);
    }
}

static void print_table(calls_config_t *cfg, calls_run_t *run)
{
    int all = cfg->common.reps * cfg->cycles;
    printf("ferry-bench calls: %d ranks, %s %s, dir %s, %d calls x %d reps, median us per call (slowest rank)\n",
           cfg->common.nprocs, cfg->common.host.name, cfg->common.host.io, cfg->common.dir, cfg->cycles,
           cfg->common.reps);
    printf("%-8s %-10s %-13s %10s %10s %11s\n", "per rank", "shape", "call", "host us", "ferry us", "host/ferry");
    for (int s = 0; s < SIZES; s++)
        for (int h = 0; h < SHAPES; h++)
            for (int op = 0; op < OPS; op++) {
                double host = bench_median(run->us[s][h][op][0], all), ferry = bench_median(run->us[s][h][op][1], all);
                char label[48];
                snprintf(label, sizeof label, "%lld B %s", sizes[s], shape_names[h]);
                printf("%-8lld %-10s %-13s %10.1f %10.1f %11.2f\n", sizes[s], shape_names[h], op_names[op], host, ferry,
                       host / ferry);
                bench_row_t *row = bench_row(&cfg->common, "one collective call", label, op_names[op], "us");
                bench_row_value(row, "host", host);
                bench_row_value(row, "ferry", ferry);
                bench_row_extra(row, "bytes_per_rank", (double)sizes[s]);
            }
    if (run->failed) printf("ferry-bench calls: FAILED (see errors above)\n");
    fflush(stdout);
}

int ferry_bench_calls(int argc, char **argv)
{
    calls_config_t cfg;
    int rc = bench_parse(&bench_calls_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    calls_run_t run = {.cfg = &cfg, .out = malloc(2 * 65536), .in = malloc(2 * 65536)};
    size_t per = (size_t)cfg.common.reps * (size_t)cfg.cycles;
    for (int s = 0; s < SIZES; s++)
        for (int h = 0; h < SHAPES; h++)
            for (int op = 0; op < OPS; op++)
                for (int k = 0; k < CONTENDERS; k++) run.us[s][h][op][k] = calloc(per, sizeof(double));
    const char *dir = bench_make_dir(cfg.common.dir, "calls");
    char path[600];
    if (dir) {
        snprintf(path, sizeof path, "%s/f", dir);
        run.path = path;
        run_reps(&run);
    }
    if (dir && cfg.common.rank == 0) print_table(&cfg, &run);
    bench_remove_dir(dir);
    for (int s = 0; s < SIZES; s++)
        for (int h = 0; h < SHAPES; h++)
            for (int op = 0; op < OPS; op++)
                for (int k = 0; k < CONTENDERS; k++) free(run.us[s][h][op][k]);
    free(run.out);
    free(run.in);
    return bench_finish(&cfg.common, !dir || run.failed);
}

/*
 * ferry-bench contig: each rank writes, then reads, its own contiguous
 * block of the file (the foundation issue's workload).
 *
 * Contenders: plain POSIX pwrite/pread, the host's MPI-IO, ferry's
 * collective calls, and ferry's independent ones (write_at/read_at: the
 * collective path must be no slower than that). Each
 * repetition runs every contender on a fresh file, in rotating order; a
 * timed write covers open, write, sync and close; a timed read covers open,
 * read and close, after the written pages were dropped from the page cache
 * (posix_fadvise DONTNEED; a no-op on tmpfs). The table gives the median
 * bandwidth per contender and ferry's ratios to POSIX and to the host.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { CONTENDERS = 4, MAX_REPS = BENCH_MAX_REPS };

typedef struct contig_config {
    bench_common_t common;
    long long total; /* bytes in all */
} contig_config_t;

static const contig_config_t contig_defaults = {.common = {.dir = "/dev/shm", .reps = 3}, .total = 1LL << 30};

static const cli_option_t contig_options[] = {
    BENCH_OPTION_DIR(contig_config_t),
    {"total", 0, CLI_SIZE, offsetof(contig_config_t, total), 4096, 64.0 * (1LL << 30), NULL,
     "bytes in all, split evenly among the ranks (at most 2 GiB - 1 per rank: the host's int count)"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_contig_spec = {
    "ferry-bench contig", "mpiexec -n <ranks> ferry-bench contig [options]",
    "each rank writes then reads its own contiguous block (POSIX, host MPI-IO, ferry, ferry independent)",
    contig_options, bench_shared_options, sizeof(contig_config_t), &contig_defaults, NULL, 0};

typedef struct contig_run {
    const char *path;
    MPI_Offset offset;
    char *buf;
    size_t len;
    int failed;
    double call_start, call_end; /* around the data call (and sync), between barriers */
} contig_run_t;

/* Every contender brackets its data call (and sync) with these, so the
 * table can show the call alone besides open-to-close: with more ranks than
 * cores, MPICH's busy-polling collectives in open and close cost tens of
 * milliseconds that have nothing to do with the data path. */
static void call_begins(contig_run_t *run)
{
    bench_barrier();
    run->call_start = bench_now();
}

static void call_ends(contig_run_t *run)
{
    bench_barrier();
    run->call_end = bench_now();
}

static void report_failure(contig_run_t *run, const char *who, const char *op, int code)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (code) ferry_Error_string(code, text, &len);
    fprintf(stderr, "ferry-bench contig: %s %s failed on %s: %s\n", who, op, run->path, text);
    run->failed = 1;
}

static void posix_write(contig_run_t *run)
{
    int fd = open(run->path, O_WRONLY | O_CREAT, 0644);
    size_t done = 0;
    call_begins(run);
    while (fd >= 0 && done < run->len) {
        ssize_t n = pwrite(fd, run->buf + done, run->len - done, run->offset + (off_t)done);
        if (n <= 0) break;
        done += (size_t)n;
    }
    int synced = fd >= 0 && fsync(fd) == 0;
    call_ends(run);
    if (fd < 0 || done != run->len || !synced) report_failure(run, "posix", "write", 0);
    if (fd >= 0) close(fd);
}

static void posix_read(contig_run_t *run)
{
    int fd = open(run->path, O_RDONLY);
    size_t done = 0;
    call_begins(run);
    while (fd >= 0 && done < run->len) {
        ssize_t n = pread(fd, run->buf + done, run->len - done, run->offset + (off_t)done);
        if (n <= 0) break;
        done += (size_t)n;
    }
    call_ends(run);
    if (fd < 0 || done != run->len) report_failure(run, "posix", "read", 0);
    if (fd >= 0) close(fd);
}

static void host_write(contig_run_t *run)
{
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, run->path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    call_begins(run);
    if (rc == MPI_SUCCESS) rc = MPI_File_write_at_all(fh, run->offset, run->buf, (int)run->len, MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = MPI_File_sync(fh);
    call_ends(run);
    if (rc == MPI_SUCCESS) rc = MPI_File_close(&fh);
    if (rc != MPI_SUCCESS) report_failure(run, "host", "write", rc);
}

static void host_read(contig_run_t *run)
{
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, run->path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    call_begins(run);
    if (rc == MPI_SUCCESS) rc = MPI_File_read_at_all(fh, run->offset, run->buf, (int)run->len, MPI_BYTE, MPI_STATUS_IGNORE);
    call_ends(run);
    if (rc == MPI_SUCCESS) rc = MPI_File_close(&fh);
    if (rc != MPI_SUCCESS) report_failure(run, "host", "read", rc);
}

typedef int (*ferry_write_fn)(ferry_File, MPI_Offset, const void *, MPI_Count, MPI_Datatype, MPI_Status *);
typedef int (*ferry_read_fn)(ferry_File, MPI_Offset, void *, MPI_Count, MPI_Datatype, MPI_Status *);

static void ferry_write_with(contig_run_t *run, ferry_write_fn write_at)
{
    ferry_File fh;
    int rc = ferry_File_open(MPI_COMM_WORLD, run->path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    call_begins(run);
    if (rc == MPI_SUCCESS) rc = write_at(fh, run->offset, run->buf, (MPI_Count)run->len, MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = ferry_File_sync(fh);
    call_ends(run);
    if (rc == MPI_SUCCESS) rc = ferry_File_close(&fh);
    if (rc != MPI_SUCCESS) report_failure(run, "ferry", "write", rc);
}

static void ferry_read_with(contig_run_t *run, ferry_read_fn read_at)
{
    ferry_File fh;
    int rc = ferry_File_open(MPI_COMM_WORLD, run->path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    call_begins(run);
    if (rc == MPI_SUCCESS) rc = read_at(fh, run->offset, run->buf, (MPI_Count)run->len, MPI_BYTE, MPI_STATUS_IGNORE);
    call_ends(run);
    if (rc == MPI_SUCCESS) rc = ferry_File_close(&fh);
    if (rc != MPI_SUCCESS) report_failure(run, "ferry", "read", rc);
}

static void ferry_write(contig_run_t *run) { ferry_write_with(run, ferry_File_write_at_all_c); }
static void ferry_read(contig_run_t *run) { ferry_read_with(run, ferry_File_read_at_all_c); }
static void ferry_indep_write(contig_run_t *run) { ferry_write_with(run, ferry_File_write_at_c); }
static void ferry_indep_read(contig_run_t *run) { ferry_read_with(run, ferry_File_read_at_c); }

static const struct {
    const char *name;
    void (*write)(contig_run_t *);
    void (*read)(contig_run_t *);
} contenders[CONTENDERS] = {
    {"posix", posix_write, posix_read},
    {"host", host_write, host_read},
    {"ferry", ferry_write, ferry_read},
    {"ferry-indep", ferry_indep_write, ferry_indep_read},
};

/* Runs a phase; *whole: open to close, *call: the data call (and sync). */
static void timed(void (*phase)(contig_run_t *), contig_run_t *run, double *whole, double *call)
{
    bench_barrier();
    double start = bench_now();
    phase(run);
    bench_barrier();
    double times[2] = {bench_now() - start, run->call_end - run->call_start};
    MPI_Bcast(times, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    *whole = times[0];
    *call = times[1];
}

static void print_table(contig_config_t *cfg, const char *title, double w_s[CONTENDERS][MAX_REPS],
                        double r_s[CONTENDERS][MAX_REPS])
{
    double mib = (double)cfg->total / (1 << 20), w[CONTENDERS], r[CONTENDERS];
    int reps = cfg->common.reps;
    bench_row_t *rows[2] = {bench_row(&cfg->common, title, "contiguous", "write", "MiB/s"),
                            bench_row(&cfg->common, title, "contiguous", "read", "MiB/s")};
    printf("%s\n%-12s %12s %12s\n", title, "contender", "write MiB/s", "read MiB/s");
    for (int c = 0; c < CONTENDERS; c++) {
        w[c] = mib / bench_median(w_s[c], reps);
        r[c] = mib / bench_median(r_s[c], reps);
        printf("%-12s %12.0f %12.0f\n", contenders[c].name, w[c], r[c]);
        bench_row_value(rows[0], contenders[c].name, w[c]);
        bench_row_value(rows[1], contenders[c].name, r[c]);
    }
    printf("%-12s %12.3f %12.3f\n", "ferry/posix", w[2] / w[0], r[2] / r[0]);
    printf("%-12s %12.3f %12.3f\n", "ferry/host", w[2] / w[1], r[2] / r[1]);
    printf("%-12s %12.3f %12.3f\n", "coll/indep", w[2] / w[3], r[2] / r[3]);
}

static void drop_cached_pages(contig_run_t *run)
{
    int fd = open(run->path, O_RDONLY);
    if (fd >= 0) {
        posix_fadvise(fd, run->offset, (off_t)run->len, POSIX_FADV_DONTNEED);
        close(fd);
    }
    bench_barrier();
}

static int verify(const contig_run_t *run, int rank)
{
    for (size_t i = 0; i < run->len; i += 4096)
        if (run->buf[i] != (char)(rank + 1 + (int)(i >> 12))) return 0;
    return 1;
}

static void fill(contig_run_t *run, int rank)
{
    for (size_t i = 0; i < run->len; i += 4096) run->buf[i] = (char)(rank + 1 + (int)(i >> 12));
}

/* One repetition: every contender writes then reads a fresh file, in rotating order. */
static void run_rep(contig_run_t *run, const char *dir, int rep, double times[4][CONTENDERS][MAX_REPS])
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int k = 0; k < CONTENDERS; k++) {
        int c = (k + rep) % CONTENDERS;
        char path[600];
        snprintf(path, sizeof path, "%s/%s.%d", dir, contenders[c].name, rep);
        run->path = path;
        fill(run, rank);
        timed(contenders[c].write, run, &times[0][c][rep], &times[2][c][rep]);
        drop_cached_pages(run);
        memset(run->buf, 0, run->len);
        timed(contenders[c].read, run, &times[1][c][rep], &times[3][c][rep]);
        if (!verify(run, rank)) {
            fprintf(stderr, "ferry-bench contig: %s read back wrong data on rank %d\n", contenders[c].name, rank);
            run->failed = 1;
        }
        if (rank == 0) unlink(path);
    }
}

int ferry_bench_contig(int argc, char **argv)
{
    contig_config_t cfg;
    int rc = bench_parse(&bench_contig_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    int rank = cfg.common.rank, size = cfg.common.nprocs, reps = cfg.common.reps;
    if (cfg.total / size >= (1LL << 31)) {
        if (rank == 0) fprintf(stderr, "ferry-bench contig: --total gives more than 2 GiB - 1 per rank\n");
        return 2;
    }
    const char *dir = bench_make_dir(cfg.common.dir, "contig");
    if (!dir) return 1;
    contig_run_t run = {.len = (size_t)(cfg.total / size), .offset = (MPI_Offset)(cfg.total / size) * rank};
    run.buf = calloc(1, run.len);
    if (!run.buf) return 1;
    static double times[4][CONTENDERS][MAX_REPS]; /* [write, read, write call, read call] */
    for (int rep = 0; rep < reps; rep++) {
        run_rep(&run, dir, rep, times);
        bench_progress(&cfg.common, NULL, rep);
    }
    int failed = 0;
    MPI_Allreduce(&run.failed, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        double mib = (double)cfg.total / (1 << 20);
        printf("ferry-bench contig: %d ranks, %.0f MiB in all (%.0f MiB per rank, one call each), dir %s, median of %d\n",
               size, mib, mib / size, cfg.common.dir, reps);
        print_table(&cfg, "open to close (write: open, write_at_all, sync, close; read: open, read_at_all, close)",
                    times[0], times[1]);
        print_table(&cfg, "the data call alone (write: write_at_all and sync), between barriers", times[2], times[3]);
        if (failed) printf("ferry-bench contig: FAILED (see errors above)\n");
    }
    free(run.buf);
    bench_remove_dir(dir);
    return bench_finish(&cfg.common, failed);
}

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

enum { CONTENDERS = 4, MAX_REPS = 64 };

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
    {"host-mpiio", host_write, host_read},
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

static void print_table(const char *title, double mib, double w_s[CONTENDERS][MAX_REPS],
                        double r_s[CONTENDERS][MAX_REPS], int reps)
{
    double w[CONTENDERS], r[CONTENDERS];
    printf("%s\n%-12s %12s %12s\n", title, "contender", "write MiB/s", "read MiB/s");
    for (int c = 0; c < CONTENDERS; c++) {
        w[c] = mib / bench_median(w_s[c], reps);
        r[c] = mib / bench_median(r_s[c], reps);
        printf("%-12s %12.0f %12.0f\n", contenders[c].name, w[c], r[c]);
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

int ferry_bench_contig(int argc, char **argv)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *base = "/dev/shm";
    long long total = 1LL << 30;
    int reps = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dir")) base = argv[i + 1];
        else if (!strcmp(argv[i], "--total")) total = bench_parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    }
    if (total <= 0 || reps < 1 || reps > MAX_REPS) {
        if (rank == 0) fprintf(stderr, "usage: ferry-bench contig [--dir D] [--total BYTES] [--reps N]\n");
        return 2;
    }
    const char *dir = bench_make_dir(base, "contig");
    if (!dir) return 1;
    contig_run_t run = {.len = (size_t)(total / size), .offset = (MPI_Offset)(total / size) * rank};
    run.buf = malloc(run.len);
    if (!run.buf) return 1;
    memset(run.buf, 0, run.len);
    double write_s[CONTENDERS][MAX_REPS], read_s[CONTENDERS][MAX_REPS];
    double write_call_s[CONTENDERS][MAX_REPS], read_call_s[CONTENDERS][MAX_REPS];
    int failed = 0;
    for (int rep = 0; rep < reps; rep++) {
        for (int k = 0; k < CONTENDERS; k++) {
            int c = (k + rep) % CONTENDERS;
            char path[600];
            snprintf(path, sizeof path, "%s/%s.%d", dir, contenders[c].name, rep);
            run.path = path;
            fill(&run, rank);
            timed(contenders[c].write, &run, &write_s[c][rep], &write_call_s[c][rep]);
            drop_cached_pages(&run);
            memset(run.buf, 0, run.len);
            timed(contenders[c].read, &run, &read_s[c][rep], &read_call_s[c][rep]);
            if (!verify(&run, rank)) {
                fprintf(stderr, "ferry-bench contig: %s read back wrong data on rank %d\n", contenders[c].name, rank);
                run.failed = 1;
            }
            if (rank == 0) unlink(path);
        }
    }
    MPI_Allreduce(&run.failed, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        double mib = (double)total / (1 << 20);
        printf("ferry-bench contig: %d ranks, %.0f MiB in all (%.0f MiB per rank, one call each), dir %s, median of %d\n",
               size, mib, mib / size, base, reps);
        print_table("open to close (write: open, write_at_all, sync, close; read: open, read_at_all, close)", mib,
                    write_s, read_s, reps);
        print_table("the data call alone (write: write_at_all and sync), between barriers", mib, write_call_s,
                    read_call_s, reps);
        if (failed) printf("ferry-bench contig: FAILED (see errors above)\n");
    }
    free(run.buf);
    bench_remove_dir(dir);
    return failed ? 1 : 0;
}

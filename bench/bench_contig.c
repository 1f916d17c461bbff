/*
 * ferry-bench contig: each rank writes, then reads, its own contiguous
 * block of the file (the foundation issue's workload).
 *
 * Contenders: plain POSIX pwrite/pread, the host's MPI-IO, ferry. Each
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

enum { CONTENDERS = 3, MAX_REPS = 64 };

typedef struct contig_run {
    const char *path;
    MPI_Offset offset;
    char *buf;
    size_t len;
    int failed;
} contig_run_t;

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
    while (fd >= 0 && done < run->len) {
        ssize_t n = pwrite(fd, run->buf + done, run->len - done, run->offset + (off_t)done);
        if (n <= 0) break;
        done += (size_t)n;
    }
    if (fd < 0 || done != run->len || fsync(fd) != 0) report_failure(run, "posix", "write", 0);
    if (fd >= 0) close(fd);
}

static void posix_read(contig_run_t *run)
{
    int fd = open(run->path, O_RDONLY);
    size_t done = 0;
    while (fd >= 0 && done < run->len) {
        ssize_t n = pread(fd, run->buf + done, run->len - done, run->offset + (off_t)done);
        if (n <= 0) break;
        done += (size_t)n;
    }
    if (fd < 0 || done != run->len) report_failure(run, "posix", "read", 0);
    if (fd >= 0) close(fd);
}

static void host_write(contig_run_t *run)
{
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, run->path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) rc = MPI_File_write_at_all(fh, run->offset, run->buf, (int)run->len, MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = MPI_File_sync(fh);
    if (rc == MPI_SUCCESS) rc = MPI_File_close(&fh);
    if (rc != MPI_SUCCESS) report_failure(run, "host", "write", rc);
}

static void host_read(contig_run_t *run)
{
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, run->path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) rc = MPI_File_read_at_all(fh, run->offset, run->buf, (int)run->len, MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = MPI_File_close(&fh);
    if (rc != MPI_SUCCESS) report_failure(run, "host", "read", rc);
}

static void ferry_write(contig_run_t *run)
{
    ferry_File fh;
    int rc = ferry_File_open(MPI_COMM_WORLD, run->path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) rc = ferry_File_write_at_all_c(fh, run->offset, run->buf, (MPI_Count)run->len, MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = ferry_File_sync(fh);
    if (rc == MPI_SUCCESS) rc = ferry_File_close(&fh);
    if (rc != MPI_SUCCESS) report_failure(run, "ferry", "write", rc);
}

static void ferry_read(contig_run_t *run)
{
    ferry_File fh;
    int rc = ferry_File_open(MPI_COMM_WORLD, run->path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) rc = ferry_File_read_at_all_c(fh, run->offset, run->buf, (MPI_Count)run->len, MPI_BYTE, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = ferry_File_close(&fh);
    if (rc != MPI_SUCCESS) report_failure(run, "ferry", "read", rc);
}

static const struct {
    const char *name;
    void (*write)(contig_run_t *);
    void (*read)(contig_run_t *);
} contenders[CONTENDERS] = {
    {"posix", posix_write, posix_read},
    {"host-mpiio", host_write, host_read},
    {"ferry", ferry_write, ferry_read},
};

static double timed(void (*phase)(contig_run_t *), contig_run_t *run)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double start = bench_now();
    phase(run);
    MPI_Barrier(MPI_COMM_WORLD);
    double elapsed = bench_now() - start;
    MPI_Bcast(&elapsed, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return elapsed;
}

static void drop_cached_pages(contig_run_t *run)
{
    int fd = open(run->path, O_RDONLY);
    if (fd >= 0) {
        posix_fadvise(fd, run->offset, (off_t)run->len, POSIX_FADV_DONTNEED);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
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
    int failed = 0;
    for (int rep = 0; rep < reps; rep++) {
        for (int k = 0; k < CONTENDERS; k++) {
            int c = (k + rep) % CONTENDERS;
            char path[600];
            snprintf(path, sizeof path, "%s/%s.%d", dir, contenders[c].name, rep);
            run.path = path;
            fill(&run, rank);
            write_s[c][rep] = timed(contenders[c].write, &run);
            drop_cached_pages(&run);
            memset(run.buf, 0, run.len);
            read_s[c][rep] = timed(contenders[c].read, &run);
            if (!verify(&run, rank)) {
                fprintf(stderr, "ferry-bench contig: %s read back wrong data on rank %d\n", contenders[c].name, rank);
                run.failed = 1;
            }
            if (rank == 0) unlink(path);
        }
    }
    MPI_Allreduce(&run.failed, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        double mib = (double)total / (1 << 20), w[CONTENDERS], r[CONTENDERS];
        printf("ferry-bench contig: %d ranks, %.0f MiB in all (%.0f MiB per rank, one call each), dir %s, median of %d\n",
               size, mib, mib / size, base, reps);
        printf("%-12s %12s %12s\n", "contender", "write MiB/s", "read MiB/s");
        for (int c = 0; c < CONTENDERS; c++) {
            w[c] = mib / bench_median(write_s[c], reps);
            r[c] = mib / bench_median(read_s[c], reps);
            printf("%-12s %12.0f %12.0f\n", contenders[c].name, w[c], r[c]);
        }
        printf("%-12s %12.3f %12.3f\n", "ferry/posix", w[2] / w[0], r[2] / r[0]);
        printf("%-12s %12.3f %12.3f\n", "ferry/host", w[2] / w[1], r[2] / r[1]);
        if (failed) printf("ferry-bench contig: FAILED (see errors above)\n");
    }
    free(run.buf);
    bench_remove_dir(dir);
    return failed ? 1 : 0;
}

/*
 * ferry-bench container: N task-local files against one ferry container
 * (and SIONlib 1.7.6 when built with -DFERRY_SIONLIB_DIR=<its install>),
 * side by side in one run, rotating their order each repetition; plus
 * "sharedfile", every rank's bytes pwritten into one plain file, the
 * ceiling of any one-file container on the file system at hand, and
 * "fortran", the ferry container through its Fortran module (when built),
 * "collective", the ferry container in collective mode (collectors
 * write their group's chunks; --collectors, with --flush for flushes), and
 * "buddy", the ferry container with buddy copies (every stream written twice), and
 * "stdio", the ferry container through a stdio FILE (ferry_container_fopen):
 * fwrite and fread in --piece calls, as code written for task-local files.
 *
 * Three timed phases per contender and repetition, each from a barrier to
 * a barrier: create (create, open and close, no data: the metadata cost),
 * write (create, open, write the stream in --piece calls, optionally sync,
 * close) and read (open, read it all back and check it, close; the pages
 * dropped from the cache first, a no-op on tmpfs). The table gives median
 * times, bandwidths and ferry's ratios; metadata system calls are counted
 * by the contenders that know theirs (tools/bench/bench-container-syscalls.sh
 * counts every contender's with strace). --json FILE writes the results
 * as one JSON object (docs/report.md; ratios of ferry to every other
 * contender per row).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_container.h"
#include "ferry_container.h"
#include "progress/progress.h"

enum { MAX_CONTENDERS = 8, MAX_REPS = BENCH_MAX_REPS, PHASES = 3 };
enum { WRITE_CPU = PHASES, WRITE_DATA }; /* median_of's "phases": the write phase's processor time, its data calls */

void ctr_failed(ctr_job_t *job, const char *who, const char *what)
{
    fprintf(stderr, "ferry-bench container: %s on rank %d: %s: %s\n", who, job->rank, job->path, what);
    job->failed = 1;
}

/* ---- task-local files: one POSIX file per rank in one directory ---- */

static void tasklocal_name(const ctr_job_t *job, char *name, size_t len)
{
    snprintf(name, len, "%s.%06d", job->path, job->rank);
}

void ctr_pieces(ctr_job_t *job, ctr_step_fn *step, void *arg)
{
    if (job->bytes == 0) return;
    bench_barrier();
    double start = bench_now();
    for (long long done = 0; done < job->bytes;) {
        size_t len = job->bytes - done < (long long)job->piece ? (size_t)(job->bytes - done) : job->piece;
        if (step(job, arg, job->buf + done, len)) break;
        done += (long long)len;
    }
    bench_barrier();
    job->data_seconds = bench_now() - start;
}

/* Loops over partial transfers and EINTR, as a careful program would. */
static int posix_step(ctr_job_t *job, void *arg, unsigned char *data, size_t len)
{
    int fd = *(int *)arg, writing = job->writing;
    for (size_t done = 0; done < len;) {
        ssize_t n = writing ? write(fd, data + done, len - done) : read(fd, data + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ctr_failed(job, "tasklocal", n == 0 ? "short file" : strerror(errno));
            return 1;
        }
        done += (size_t)n;
    }
    return 0;
}

static void tasklocal_write(ctr_job_t *job)
{
    char name[640];
    tasklocal_name(job, name, sizeof name);
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    job->meta = 2 + (job->sync != 0);
    if (fd < 0) return ctr_failed(job, "tasklocal", strerror(errno));
    ctr_pieces(job, posix_step, &fd);
    if (job->sync && fsync(fd) != 0) ctr_failed(job, "tasklocal", strerror(errno));
    if (close(fd) != 0) ctr_failed(job, "tasklocal", strerror(errno));
}

static void tasklocal_read(ctr_job_t *job)
{
    char name[640];
    tasklocal_name(job, name, sizeof name);
    int fd = open(name, O_RDONLY);
    if (fd < 0) return ctr_failed(job, "tasklocal", strerror(errno));
    ctr_pieces(job, posix_step, &fd);
    close(fd);
}

/* ---- one shared file, plain POSIX: each rank pwrites its block-aligned share ----
 * No container logic at all: the ceiling of any one-file container on this
 * file system (a local one serializes writers of one file on its inode lock). */

typedef struct shared_cursor {
    int fd;
    off_t at;
} shared_cursor_t;

static int shared_step(ctr_job_t *job, void *arg, unsigned char *data, size_t len)
{
    shared_cursor_t *cur = arg;
    for (size_t done = 0; done < len;) {
        ssize_t n = job->writing ? pwrite(cur->fd, data + done, len - done, cur->at)
                                 : pread(cur->fd, data + done, len - done, cur->at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ctr_failed(job, "sharedfile", n == 0 ? "short file" : strerror(errno));
            return 1;
        }
        done += (size_t)n;
        cur->at += n;
    }
    return 0;
}

static void sharedfile_run(ctr_job_t *job)
{
    shared_cursor_t cur = {open(job->path, job->writing ? O_WRONLY | O_CREAT : O_RDONLY, 0644), 0};
    /* GlusterFS's distribute layer answers EEXIST to one of two clients creating one name at once. */
    if (cur.fd < 0 && errno == EEXIST && job->writing) cur.fd = open(job->path, O_WRONLY);
    cur.at = (off_t)job->rank * (off_t)((job->bytes + 4095) / 4096 * 4096);
    job->meta = 2 + (job->sync != 0);
    if (cur.fd < 0) return ctr_failed(job, "sharedfile", strerror(errno));
    ctr_pieces(job, shared_step, &cur);
    if (job->writing && job->sync && fsync(cur.fd) != 0) ctr_failed(job, "sharedfile", strerror(errno));
    if (close(cur.fd) != 0) ctr_failed(job, "sharedfile", strerror(errno));
}

static void tasklocal_remove(ctr_job_t *job)
{
    char name[640];
    tasklocal_name(job, name, sizeof name);
    unlink(name);
}

/* ---- one ferry container ---- */

static void ferry_failed(ctr_job_t *job, int code)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    ferry_Error_string(code, text, &len);
    ctr_failed(job, "ferry", text);
}

static int ferry_step(ctr_job_t *job, void *arg, unsigned char *data, size_t len)
{
    ferry_container_t c = arg;
    size_t done = 0;
    int rc = job->writing ? ferry_container_write(c, data, len, &done) : ferry_container_read(c, data, len, &done);
    long long end = data - job->buf + (long long)len, every = job->flush_every;
    /* Every rank flushes at the same byte counts: in collective mode a flush is collective. */
    if (rc == MPI_SUCCESS && job->writing && every && end / every > (end - (long long)len) / every)
        rc = ferry_container_flush(c);
    if (rc != MPI_SUCCESS) ferry_failed(job, rc);
    else if (done < len) ctr_failed(job, "ferry", "short stream");
    return rc != MPI_SUCCESS || done < len;
}

/* The container parameters the job asks for (chunk, durability, checksums). */
static ferry_container_params_t job_params(const ctr_job_t *job)
{
    ferry_container_params_t p = {0};
    p.chunk_size = job->chunk;
    p.durable = job->sync;
    p.data_checksums = job->checksums ? 1 : FERRY_CONTAINER_CHECKSUMS_OFF;
    return p;
}

/* How a contender moves a job's pieces through an open container handle. */
typedef void ctr_handle_fn(ctr_job_t *job, ferry_container_t c);

static void direct_pieces(ctr_job_t *job, ferry_container_t c)
{
    ctr_pieces(job, ferry_step, c);
}

static void ferry_write_with(ctr_job_t *job, int collector_size, int buddy, ctr_handle_fn *pieces)
{
    ferry_container_params_t p = job_params(job);
    ferry_container_modes_t modes = {collector_size, buddy};
    ferry_container_t c;
    int rc = ferry_container_open_write_modes(MPI_COMM_WORLD, job->path, &p, &modes, &c);
    if (rc != MPI_SUCCESS) return ferry_failed(job, rc);
    pieces(job, c);
    ferry_container_info_t info;
    ferry_container_info(c, &info);
    job->meta = info.metadata_calls + 1; /* and the close of the file */
    rc = ferry_container_close(&c);
    if (rc != MPI_SUCCESS) ferry_failed(job, rc);
}

static void ferry_read_with(ctr_job_t *job, ctr_handle_fn *pieces)
{
    ferry_container_t c;
    int rc = ferry_container_open_read(MPI_COMM_WORLD, job->path, &c);
    if (rc != MPI_SUCCESS) return ferry_failed(job, rc);
    pieces(job, c);
    ferry_container_close(&c);
}

static void ferry_write(ctr_job_t *job)
{
    ferry_write_with(job, 0, 0, direct_pieces);
}

static void buddy_write(ctr_job_t *job)
{
    ferry_write_with(job, 0, 1, direct_pieces);
}

static void buddy_remove(ctr_job_t *job)
{
    char name[640];
    snprintf(name, sizeof name, "%s.buddy", job->path);
    if (job->rank == 0) unlink(name);
    ctr_remove_shared(job);
}

static void collective_write(ctr_job_t *job)
{
    ferry_write_with(job, job->collectors ? job->collectors : FERRY_CONTAINER_COLLECTOR_PER_NODE, 0, direct_pieces);
}

static void ferry_read(ctr_job_t *job)
{
    ferry_read_with(job, direct_pieces);
}

/* ---- the ferry container through a stdio FILE (ferry_container_fopen) ---- */

static int stdio_step(ctr_job_t *job, void *arg, unsigned char *data, size_t len)
{
    FILE *f = arg;
    size_t done = job->writing ? fwrite(data, 1, len, f) : fread(data, 1, len, f);
    long long end = data - job->buf + (long long)len, every = job->flush_every;
    if (done == len && job->writing && every && end / every > (end - (long long)len) / every && fflush(f) != 0)
        done = 0;
    if (done < len) ctr_failed(job, "stdio", ferry_container_error_message());
    return done < len;
}

/* Opens a FILE over the handle's stream, runs the pieces through it and
 * closes it (so its buffer reaches the stream before the container closes). */
static void stdio_pieces(ctr_job_t *job, ferry_container_t c)
{
    FILE *f = ferry_container_fopen(c, job->writing ? "wb" : "rb");
    if (!f) return ctr_failed(job, "stdio", ferry_container_error_message());
    ctr_pieces(job, stdio_step, f);
    if (fclose(f) != 0) ctr_failed(job, "stdio", ferry_container_error_message());
}

static void stdio_write(ctr_job_t *job)
{
    ferry_write_with(job, 0, 0, stdio_pieces);
}

static void stdio_read(ctr_job_t *job)
{
    ferry_read_with(job, stdio_pieces);
}

void ctr_remove_shared(ctr_job_t *job)
{
    if (job->rank == 0) unlink(job->path);
}

static const ctr_contender_t builtin[] = {
    {"tasklocal", tasklocal_write, tasklocal_read, tasklocal_remove},
    {"ferry", ferry_write, ferry_read, ctr_remove_shared},
    {"sharedfile", sharedfile_run, sharedfile_run, ctr_remove_shared},
    {"collective", collective_write, ferry_read, ctr_remove_shared},
    {"buddy", buddy_write, ferry_read, buddy_remove},
    {"stdio", stdio_write, stdio_read, ctr_remove_shared},
};

/* ---- the run ---- */

typedef struct ctr_config {
    bench_common_t common;
    long long bytes, piece, chunk, flush;
    int sync, checksums, create_only, collectors;
    const char *only;
    const char *base; /* not an option: the run's own directory under --dir */
} ctr_config_t;

static const ctr_config_t ctr_defaults = {
    .common = {.dir = "/dev/shm", .reps = 3}, .bytes = 16 << 20, .piece = 1 << 20, .only = ""};

static const cli_option_t ctr_options[] = {
    BENCH_OPTION_DIR(ctr_config_t),
    {"bytes", 0, CLI_SIZE, offsetof(ctr_config_t, bytes), 0, 64.0 * (1LL << 30), NULL,
     "bytes per stream (rank); 0: create, open and close only"},
    {"piece", 0, CLI_SIZE, offsetof(ctr_config_t, piece), 1, 1LL << 30, NULL, "bytes per write or read call"},
    {"chunk", 0, CLI_SIZE, offsetof(ctr_config_t, chunk), 0, 1LL << 40, NULL,
     "chunk size asked of the containers; 0: the stream's bytes + 4 KiB (one chunk, as SIONlib needs)"},
    {"sync", 0, CLI_INT, offsetof(ctr_config_t, sync), 0, 1, NULL,
     "1: make the data durable before close (fsync; ferry: params.durable)"},
    {"checksums", 0, CLI_INT, offsetof(ctr_config_t, checksums), 0, 1, NULL, "1: ferry with data checksums"},
    {"flush", 0, CLI_SIZE, offsetof(ctr_config_t, flush), 0, 1LL << 40, NULL,
     "ferry and collective: flush after every this many bytes of a stream (0: only at close)"},
    {"collectors", 0, CLI_INT, offsetof(ctr_config_t, collectors), 0, 1 << 30, NULL,
     "collective: ranks per collector (0: one collector per node)"},
    {"only", 0, CLI_TEXT, offsetof(ctr_config_t, only), 0, 0, NULL,
     "contenders to run, comma-separated from tasklocal,ferry,sharedfile,collective,buddy,stdio,sionlib,fortran (unset: "
     "every one built; "
     "fortran: the ferry container through the Fortran module ferry_container); "
     "'baseline': none of them (the run strace subtracts when counting system calls)"},
    {"create-only", 0, CLI_INT, offsetof(ctr_config_t, create_only), 0, 1, NULL,
     "1: the create phase alone, one line per contender (tools/bench/bench-container-syscalls.sh)"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_container_spec = {
    "ferry-bench container", "mpiexec -n <streams> ferry-bench container [options]",
    "N task-local files vs one ferry container (vs SIONlib when built with it): create, write, read",
    ctr_options, bench_shared_options, sizeof(ctr_config_t), &ctr_defaults, NULL, 0};

typedef struct ctr_results {
    const ctr_contender_t *who[MAX_CONTENDERS];
    int n;
    double seconds[PHASES][MAX_CONTENDERS][MAX_REPS];
    double cpu[MAX_CONTENDERS][MAX_REPS]; /* write phase: user + system seconds summed over ranks */
    double floor[MAX_REPS]; /* the four collectives a container's open and close need, alone */
    double data[MAX_CONTENDERS][MAX_REPS]; /* write phase: the write calls alone */
    long long meta[MAX_CONTENDERS]; /* summed over ranks, -1 unknown */
    int failed;
} ctr_results_t;

static void fill(ctr_job_t *job)
{
    for (long long i = 0; i < job->bytes; i++) job->buf[i] = (unsigned char)(i * 31 + job->rank * 7 + 1);
}

static int check(const ctr_job_t *job)
{
    for (long long i = 0; i < job->bytes; i++)
        if (job->buf[i] != (unsigned char)(i * 31 + job->rank * 7 + 1)) return 0;
    return 1;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Runs one phase of one contender between barriers; returns the slowest
 * rank's time and, in *cpu, the processor time all ranks spent in it (on a
 * loaded machine the steadier measure of the work done). */
static double timed(void (*step)(ctr_job_t *), ctr_job_t *job, double *cpu)
{
    bench_barrier();
    double start = bench_now(), cpu_start = cpu_seconds();
    step(job);
    double mine = cpu_seconds() - cpu_start;
    bench_barrier();
    double wall = bench_now() - start;
    if (cpu) MPI_Allreduce(&mine, cpu, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return wall;
}

static void drop_pages(ctr_job_t *job, const ctr_contender_t *who)
{
    char name[640];
    if (strcmp(who->name, "tasklocal") == 0) tasklocal_name(job, name, sizeof name);
    else snprintf(name, sizeof name, "%s", job->path);
    int fd = open(name, O_RDONLY);
    if (fd >= 0 && (job->rank == 0 || strcmp(who->name, "tasklocal") == 0)) {
        fdatasync(fd);
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    }
    if (fd >= 0) close(fd);
    bench_barrier();
}

/* The collectives a one-file container's open and close cannot do without
 * (gather and scatter at open, gather and agreement at close), with no
 * file access: on a node with fewer cores than ranks, the floor under the
 * container's create time. */
static void collectives_alone(ctr_job_t *job)
{
    int64_t ask[6] = {0}, reply[14], *all = NULL;
    if (job->rank == 0) all = calloc((size_t)job->size, 14 * sizeof *all);
    ferry__progress_gather(ask, 6, MPI_INT64_T, all, 6, MPI_INT64_T, 0, MPI_COMM_WORLD);
    ferry__progress_scatter(all, 14, MPI_INT64_T, reply, 14, MPI_INT64_T, 0, MPI_COMM_WORLD);
    ferry__progress_gather(ask, 2, MPI_INT64_T, all, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
    ferry__progress_allreduce(ask, reply, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    free(all);
}

/* One repetition of one contender: create, write, read (checked). */
static void turn(const ctr_config_t *o, ctr_results_t *r, int c, int rep, ctr_job_t *job)
{
    const ctr_contender_t *who = r->who[c];
    snprintf(job->path, sizeof job->path, "%s/%s.%d", o->base, who->name, rep);
    job->bytes = 0;
    job->meta = -1;
    job->writing = 1;
    r->seconds[0][c][rep] = timed(who->write, job, NULL);
    long long meta = job->meta, sum = 0;
    MPI_Allreduce(&meta, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    r->meta[c] = meta < 0 ? -1 : sum;
    who->remove(job);
    if (o->create_only) return;
    job->bytes = o->bytes;
    fill(job);
    job->writing = 1;
    r->seconds[1][c][rep] = timed(who->write, job, &r->cpu[c][rep]);
    r->data[c][rep] = job->data_seconds;
    drop_pages(job, who);
    memset(job->buf, 0, (size_t)job->bytes);
    job->writing = 0;
    r->seconds[2][c][rep] = timed(who->read, job, NULL);
    if (!job->failed && !check(job)) ctr_failed(job, who->name, "read back wrong bytes");
    bench_barrier();
    who->remove(job);
}

/* The contenders asked for; --only baseline runs none (a baseline for counting
 * system calls with strace). Returns -1 when nothing fits. */
static int pick_contenders(const ctr_config_t *o, ctr_results_t *r)
{
    const ctr_contender_t *all[MAX_CONTENDERS] = {&builtin[0], &builtin[1], &builtin[2], &builtin[3],
                                                  &builtin[4], &builtin[5], bench_container_sionlib(),
                                                  bench_container_fortran()};
    for (int i = 0; i < MAX_CONTENDERS; i++)
        if (all[i] && (!o->only[0] || strstr(o->only, all[i]->name))) r->who[r->n++] = all[i];
    return r->n > 0 || strcmp(o->only, "baseline") == 0 ? 0 : -1;
}

static double median_of(ctr_results_t *r, int phase, int c, int reps)
{
    double copy[MAX_REPS];
    memcpy(copy, phase < PHASES ? r->seconds[phase][c] : phase == WRITE_CPU ? r->cpu[c] : r->data[c],
           (size_t)reps * sizeof copy[0]);
    return bench_median(copy, reps);
}

static void print_table(const ctr_config_t *o, ctr_results_t *r, int size)
{
    double mib = (double)o->bytes * size / 1048576.0;
    printf("ferry-bench container: %d streams (ranks), %s, %.1f MiB per stream in %zu-byte calls, chunk %lld, %s%s"
           "median of %d\n", size, o->common.dir, (double)o->bytes / 1048576.0, (size_t)o->piece, (long long)o->chunk,
           o->sync ? "synced before close, " : "", o->checksums ? "ferry with data checksums, " : "", o->common.reps);
    if (o->flush || o->collectors)
        printf("ferry and collective flush every %lld bytes; collective: %d ranks per collector (0: one per node)\n",
               o->flush, o->collectors);
    printf("%-10s %10s %14s %12s %12s %12s %10s %12s\n", "contender", "create s", "metadata calls", "write MiB/s",
           "(data only)", "read MiB/s", "write s", "write cpu s");
    for (int c = 0; c < r->n; c++) {
        double create = median_of(r, 0, c, o->common.reps), write = median_of(r, 1, c, o->common.reps);
        double read = median_of(r, 2, c, o->common.reps);
        char meta[32] = "n/a (strace)";
        if (r->meta[c] >= 0) snprintf(meta, sizeof meta, "%lld", r->meta[c]);
        printf("%-10s %10.4f %14s %12.1f %12.1f %12.1f %10.4f %12.4f\n", r->who[c]->name, create, meta, mib / write,
               mib / median_of(r, WRITE_DATA, c, o->common.reps), mib / read, write, median_of(r, WRITE_CPU, c, o->common.reps));
    }
}

static void print_ratio(const ctr_config_t *o, ctr_results_t *r, int a, int b)
{
    printf("%s / %s: create time %.3f, write bandwidth %.3f (data calls only %.3f), read bandwidth %.3f\n",
           r->who[a]->name, r->who[b]->name, median_of(r, 0, a, o->common.reps) / median_of(r, 0, b, o->common.reps),
           median_of(r, 1, b, o->common.reps) / median_of(r, 1, a, o->common.reps),
           median_of(r, WRITE_DATA, b, o->common.reps) / median_of(r, WRITE_DATA, a, o->common.reps),
           median_of(r, 2, b, o->common.reps) / median_of(r, 2, a, o->common.reps));
}

/* Every contender against task-local files, and ferry against the others. */
static void print_ratios(const ctr_config_t *o, ctr_results_t *r)
{
    double floor = bench_median(r->floor, o->common.reps);
    printf("the four collectives of a container's open and close alone, between the same barriers: %.4f s\n", floor);
    int tasklocal = -1, ferry = -1;
    for (int c = 0; c < r->n; c++) {
        if (!strcmp(r->who[c]->name, "tasklocal")) tasklocal = c;
        if (!strcmp(r->who[c]->name, "ferry")) ferry = c;
    }
    for (int c = 0; tasklocal >= 0 && c < r->n; c++)
        if (c != tasklocal) print_ratio(o, r, c, tasklocal);
    for (int c = 0; ferry >= 0 && c < r->n; c++)
        if (c != ferry && c != tasklocal) print_ratio(o, r, ferry, c);
}

/* The JSON rows (docs/report.md): one per table figure, ratios derived by the report. */
static void record_phase(bench_common_t *c, ctr_results_t *r, const char *table, const char *op, int phase)
{
    const ctr_config_t *o = (const ctr_config_t *)c;
    char label[32];
    snprintf(label, sizeof label, "%d streams", c->nprocs);
    int seconds = phase == 0 || phase == WRITE_CPU;
    bench_row_t *row = bench_row(c, table, label, op, seconds ? "s" : "MiB/s");
    double mib = (double)o->bytes * c->nprocs / 1048576.0;
    for (int k = 0; k < r->n; k++) {
        double t = median_of(r, phase, k, c->reps);
        bench_row_value(row, r->who[k]->name, seconds ? t : mib / t);
        if (phase == 0 && r->meta[k] >= 0) {
            char key[64];
            snprintf(key, sizeof key, "metadata_calls_%s", r->who[k]->name);
            bench_row_extra(row, key, (double)r->meta[k]);
        }
    }
    if (phase == 0) bench_row_extra(row, "collectives_alone_s", bench_median(r->floor, c->reps));
    bench_row_extra(row, "bytes_per_stream", (double)o->bytes);
}

static void record_rows(ctr_config_t *o, ctr_results_t *r)
{
    bench_common_t *c = &o->common;
    record_phase(c, r, "create, open, close (no data)", "create", 0);
    if (o->create_only) return;
    record_phase(c, r, "write, create to close", "write", 1);
    record_phase(c, r, "write, the data calls alone", "write", WRITE_DATA);
    record_phase(c, r, "write, processor time of all ranks", "write", WRITE_CPU);
    record_phase(c, r, "read, open-read-close", "read", 2);
}

/* Rank 0: the text tables. */
static void print_results(const ctr_config_t *o, ctr_results_t *r, int size)
{
    for (int c = 0; o->create_only && c < r->n; c++)
        /* (one line per contender: the system-call counting script reads them) */
        printf("ferry-bench container: %d streams, %s: create %s %.4f s\n", size, o->common.dir, r->who[c]->name,
               median_of(r, 0, c, o->common.reps));
    if (r->n == 0 || o->create_only) return;
    print_table(o, r, size);
    print_ratios(o, r);
    if (r->failed) printf("ferry-bench container: FAILED (see errors above)\n");
}

static void run_reps(ctr_config_t *o, ctr_results_t *r, ctr_job_t *job)
{
    job->piece = (size_t)o->piece;
    job->chunk = o->chunk;
    job->sync = o->sync;
    job->checksums = o->checksums;
    job->flush_every = o->flush;
    job->collectors = o->collectors;
    for (int rep = 0; rep < o->common.reps && job->buf; rep++) {
        r->floor[rep] = timed(collectives_alone, job, NULL);
        for (int k = 0; k < r->n; k++) turn(o, r, (k + rep) % r->n, rep, job);
        bench_progress(&o->common, NULL, rep);
    }
    if (!job->buf) ctr_failed(job, "ferry-bench", "out of memory");
    MPI_Allreduce(&job->failed, &r->failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
}

int ferry_bench_container(int argc, char **argv)
{
    ctr_config_t o;
    int rc = bench_parse(&bench_container_spec, argc, argv, &o);
    if (rc != CLI_RUN) return rc;
    ctr_results_t r = {.n = 0};
    ctr_job_t job = {.rank = o.common.rank, .size = o.common.nprocs};
    if (pick_contenders(&o, &r) != 0) {
        if (job.rank == 0) fprintf(stderr, "ferry-bench container: no contender named in --only '%s'\n", o.only);
        return CLI_EXIT_USAGE;
    }
    if (!o.chunk) o.chunk = o.bytes + 4096; /* one chunk holds the whole stream, as SIONlib needs */
    o.base = bench_make_dir(o.common.dir, "container");
    if (!o.base) return bench_finish(&o.common, 1);
    job.buf = malloc((size_t)o.bytes + 1);
    run_reps(&o, &r, &job);
    if (job.rank == 0) {
        print_results(&o, &r, job.size);
        record_rows(&o, &r);
    }
    free(job.buf);
    bench_remove_dir(o.base);
    return bench_finish(&o.common, r.failed);
}

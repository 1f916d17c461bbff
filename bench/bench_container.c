/*
 * ferry-bench container: N task-local files against one ferry container
 * (and SIONlib 1.7.6 when built with -DFERRY_SIONLIB_DIR=<its install>),
 * side by side in one run, rotating their order each repetition; plus
 * "sharedfile", every rank's bytes pwritten into one plain file, the
 * ceiling of any one-file container on the file system at hand.
 *
 * Three timed phases per contender and repetition, each from a barrier to
 * a barrier: create (create, open and close, no data: the metadata cost),
 * write (create, open, write the stream in --piece calls, optionally sync,
 * close) and read (open, read it all back and check it, close; the pages
 * dropped from the cache first, a no-op on tmpfs). The table gives median
 * times, bandwidths and ferry's ratios; metadata system calls are counted
 * by the contenders that know theirs (tools/bench-container-syscalls.sh
 * counts every contender's with strace). --json FILE appends the results
 * as one JSON object per run.
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

enum { MAX_CONTENDERS = 4, MAX_REPS = 64, PHASES = 3 };
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
    if (rc != MPI_SUCCESS) ferry_failed(job, rc);
    else if (done < len) ctr_failed(job, "ferry", "short stream");
    return rc != MPI_SUCCESS || done < len;
}

static void ferry_write(ctr_job_t *job)
{
    ferry_container_params_t p = {0};
    p.chunk_size = job->chunk;
    p.durable = job->sync;
    p.data_checksums = job->checksums;
    ferry_container_t c;
    int rc = ferry_container_open_write(MPI_COMM_WORLD, job->path, &p, &c);
    if (rc != MPI_SUCCESS) return ferry_failed(job, rc);
    ctr_pieces(job, ferry_step, c);
    ferry_container_info_t info;
    ferry_container_info(c, &info);
    job->meta = info.metadata_calls + 1; /* and the close of the file */
    rc = ferry_container_close(&c);
    if (rc != MPI_SUCCESS) ferry_failed(job, rc);
}

static void ferry_read(ctr_job_t *job)
{
    ferry_container_t c;
    int rc = ferry_container_open_read(MPI_COMM_WORLD, job->path, &c);
    if (rc != MPI_SUCCESS) return ferry_failed(job, rc);
    ctr_pieces(job, ferry_step, c);
    ferry_container_close(&c);
}

static void shared_remove(ctr_job_t *job)
{
    if (job->rank == 0) unlink(job->path);
}

static const ctr_contender_t builtin[] = {
    {"tasklocal", tasklocal_write, tasklocal_read, tasklocal_remove},
    {"ferry", ferry_write, ferry_read, shared_remove},
    {"sharedfile", sharedfile_run, sharedfile_run, shared_remove},
};

/* ---- the run ---- */

typedef struct ctr_options {
    const char *base, *json;
    long long bytes;
    size_t piece;
    MPI_Offset chunk;
    int reps, sync, checksums, create_only;
    char only[64];
} ctr_options_t;

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
static void turn(const ctr_options_t *o, ctr_results_t *r, int c, int rep, ctr_job_t *job)
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

/* The contenders asked for; --only none runs none (a baseline for counting
 * system calls with strace). Returns -1 when nothing fits. */
static int pick_contenders(const ctr_options_t *o, ctr_results_t *r)
{
    const ctr_contender_t *all[MAX_CONTENDERS] = {&builtin[0], &builtin[1], &builtin[2], bench_container_sionlib()};
    for (int i = 0; i < MAX_CONTENDERS; i++)
        if (all[i] && (!o->only[0] || strstr(o->only, all[i]->name))) r->who[r->n++] = all[i];
    return r->n > 0 || strcmp(o->only, "none") == 0 ? 0 : -1;
}

static double median_of(ctr_results_t *r, int phase, int c, int reps)
{
    double copy[MAX_REPS];
    memcpy(copy, phase < PHASES ? r->seconds[phase][c] : phase == WRITE_CPU ? r->cpu[c] : r->data[c],
           (size_t)reps * sizeof copy[0]);
    return bench_median(copy, reps);
}

static void print_table(const ctr_options_t *o, ctr_results_t *r, int size)
{
    double mib = (double)o->bytes * size / 1048576.0;
    printf("ferry-bench container: %d streams (ranks), %s, %.1f MiB per stream in %zu-byte calls, chunk %lld, %s%s"
           "median of %d\n", size, o->base, (double)o->bytes / 1048576.0, o->piece, (long long)o->chunk,
           o->sync ? "synced before close, " : "", o->checksums ? "ferry with data checksums, " : "", o->reps);
    printf("%-10s %10s %14s %12s %12s %12s %10s %12s\n", "contender", "create s", "metadata calls", "write MiB/s",
           "(data only)", "read MiB/s", "write s", "write cpu s");
    for (int c = 0; c < r->n; c++) {
        double create = median_of(r, 0, c, o->reps), write = median_of(r, 1, c, o->reps);
        double read = median_of(r, 2, c, o->reps);
        char meta[32] = "n/a (strace)";
        if (r->meta[c] >= 0) snprintf(meta, sizeof meta, "%lld", r->meta[c]);
        printf("%-10s %10.4f %14s %12.1f %12.1f %12.1f %10.4f %12.4f\n", r->who[c]->name, create, meta, mib / write,
               mib / median_of(r, WRITE_DATA, c, o->reps), mib / read, write, median_of(r, WRITE_CPU, c, o->reps));
    }
}

static void print_ratio(const ctr_options_t *o, ctr_results_t *r, int a, int b)
{
    printf("%s / %s: create time %.3f, write bandwidth %.3f (data calls only %.3f), read bandwidth %.3f\n",
           r->who[a]->name, r->who[b]->name, median_of(r, 0, a, o->reps) / median_of(r, 0, b, o->reps),
           median_of(r, 1, b, o->reps) / median_of(r, 1, a, o->reps),
           median_of(r, WRITE_DATA, b, o->reps) / median_of(r, WRITE_DATA, a, o->reps),
           median_of(r, 2, b, o->reps) / median_of(r, 2, a, o->reps));
}

/* Every contender against task-local files, and ferry against the others. */
static void print_ratios(const ctr_options_t *o, ctr_results_t *r)
{
    double floor = bench_median(r->floor, o->reps);
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

static void append_json(const ctr_options_t *o, ctr_results_t *r, int size)
{
    FILE *f = fopen(o->json, "a");
    if (!f) return perror(o->json);
    fprintf(f, "{\"workload\": \"container\", \"streams\": %d, \"dir\": \"%s\", \"bytes_per_stream\": %lld, "
               "\"piece\": %zu, \"chunk\": %lld, \"sync\": %d, \"checksums\": %d, \"reps\": %d, \"contenders\": {",
            size, o->base, o->bytes, o->piece, (long long)o->chunk, o->sync, o->checksums, o->reps);
    for (int c = 0; c < r->n; c++)
        fprintf(f, "%s\"%s\": {\"create_s\": %.6f, \"write_s\": %.6f, \"write_data_s\": %.6f, \"read_s\": %.6f, "
                   "\"write_cpu_s\": %.6f, \"metadata_calls\": %lld}", c ? ", " : "", r->who[c]->name,
                median_of(r, 0, c, o->reps), median_of(r, 1, c, o->reps), median_of(r, WRITE_DATA, c, o->reps),
                median_of(r, 2, c, o->reps), median_of(r, WRITE_CPU, c, o->reps), r->meta[c]);
    fprintf(f, "}, \"collectives_alone_s\": %.6f, \"failed\": %d}\n", bench_median(r->floor, o->reps), r->failed);
    fclose(f);
}

static int parse(int argc, char **argv, ctr_options_t *o)
{
    *o = (ctr_options_t){"/dev/shm", NULL, 16 << 20, 1 << 20, 0, 3, 0, 0, 0, ""};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dir")) o->base = argv[i + 1];
        else if (!strcmp(argv[i], "--bytes")) o->bytes = bench_parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--piece")) o->piece = (size_t)bench_parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--chunk")) o->chunk = bench_parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) o->reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--sync")) o->sync = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--json")) o->json = argv[i + 1];
        else if (!strcmp(argv[i], "--checksums")) o->checksums = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--create-only")) o->create_only = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--only")) snprintf(o->only, sizeof o->only, "%s", argv[i + 1]);
        else return -1;
    }
    if (!o->chunk) o->chunk = o->bytes + 4096; /* one chunk holds the whole stream, as SIONlib needs */
    return o->bytes < 0 || o->piece < 1 || o->chunk < 1 || o->reps < 1 || o->reps > MAX_REPS ? -1 : 0;
}

int ferry_bench_container(int argc, char **argv)
{
    ctr_options_t o;
    ctr_results_t r = {.n = 0};
    ctr_job_t job = {.rank = 0};
    MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &job.size);
    if (parse(argc, argv, &o) != 0 || pick_contenders(&o, &r) != 0) {
        if (job.rank == 0)
            fprintf(stderr, "usage: ferry-bench container [--dir D] [--bytes PER_STREAM] [--piece BYTES] [--chunk "
                            "BYTES] [--reps N] [--sync 0|1] [--checksums 0|1] [--only a,b|none] [--create-only 1] "
                            "[--json F]\n");
        return 2;
    }
    const char *dir = bench_make_dir(o.base, "container");
    if (!dir) return 1;
    ctr_options_t in_dir = o;
    in_dir.base = dir;
    job.buf = malloc((size_t)o.bytes + 1);
    job.piece = o.piece;
    job.chunk = o.chunk;
    job.sync = o.sync;
    job.checksums = o.checksums;
    for (int rep = 0; rep < o.reps && job.buf; rep++) {
        r.floor[rep] = timed(collectives_alone, &job, NULL);
        for (int k = 0; k < r.n; k++) turn(&in_dir, &r, (k + rep) % r.n, rep, &job);
    }
    MPI_Allreduce(&job.failed, &r.failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    for (int c = 0; job.rank == 0 && o.create_only && c < r.n; c++)
        /* (one line per contender: the system-call counting script reads them) */
        printf("ferry-bench container: %d streams, %s: create %s %.4f s\n", job.size, o.base, r.who[c]->name,
               median_of(&r, 0, c, o.reps));
    if (job.rank == 0 && r.n > 0 && !o.create_only) {
        print_table(&o, &r, job.size);
        print_ratios(&o, &r);
        if (o.json) append_json(&o, &r, job.size);
        if (r.failed) printf("ferry-bench container: FAILED (see errors above)\n");
    }
    free(job.buf);
    bench_remove_dir(dir);
    return r.failed ? 1 : 0;
}

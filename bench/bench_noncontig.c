/*
 * ferry-bench noncontig: the noncontig benchmark of seed 001 (section 4.1).
 *
 * Each rank moves `elements` MPI_INTs in blocks of `blocklen` elements. In
 * the file, blocks of the ranks alternate: rank p's filetype is a vector of
 * its blocks with stride nprocs * blocklen, displaced by p * blocklen. In
 * memory, a noncontiguous buffer is a vector with stride 2 * blocklen (a
 * hole as large as each block). The four cases c-c (each rank's own
 * contiguous region), nc-c, c-nc and nc-nc are written, then read back,
 * by ferry and by the host's MPI-IO in the same run.
 *
 * A repetition runs both contenders on a fresh file, the first of them
 * alternating. A write opens (read-write: data sieving writes read the
 * file; --amode wronly tries write-only), sets the view, writes, syncs and
 * closes; a read opens, sets the view and reads, after the file's pages were
 * dropped (posix_fadvise DONTNEED; a no-op on tmpfs). The main columns time
 * the write or read call alone (the slowest rank): under MPICH on a loaded
 * machine each collective in open, set_view, sync and close can take tens
 * of milliseconds of busy polling, which says nothing about the data path;
 * "f/h all" is the ratio from open to close. After each write every rank
 * checks its blocks in the file with pread; after each read it checks the
 * values and that holes in memory were left alone.
 *
 * The host's independent noncontiguous writes can be very slow (OMPIO
 * issues one system call per block), so a probe first times the host on a
 * sixteenth of the volume; when the full volume would take longer than
 * --host-budget seconds (open to close), the host runs on a volume scaled
 * to fit and the table says so (column "host MiB/rk"). Bandwidths are all
 * ranks' data over the slowest rank's time. --mode collective uses the
 * _all forms. Default: two sub-runs, blocks of 8 B and of 1 KiB, 4 MiB per
 * rank; --blocklen picks one. --holes k leaves k blocks after every
 * nprocs blocks of the file unwritten (so collective windows have holes:
 * issue 13 measured what keeping them intact costs). ferry and the host's volumes are printed in
 * the header and the "host MiB/rk" column. For ferry the table also gives
 * the file-system calls and the bytes data sieving moved beyond the data
 * (sums over ranks, from get_info, last repetition).
 *
 * --versus 'key=value ...' replaces the host by a second ferry contender
 * with those hints added to --hints (same run, alternating, fresh files),
 * and adds both contenders' exchange time (ferry_stats_exchange_seconds,
 * slowest rank, median) and the bytes shipped through node-shared memory
 * (ferry_cb_shm=disable against the default measures issue 20 item 6).
 *
 * The layer at the top (bench_access_run) is shared with bench_discontig.c.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* ---- one timed access through either library (shared) ---- */

typedef struct bench_file {
    int ferry;
    MPI_File host;
    ferry_File fh;
} bench_file_t;

static int file_open(bench_file_t *f, const bench_access_t *a, int write)
{
    int amode = write ? MPI_MODE_CREATE | (a->wronly ? MPI_MODE_WRONLY : MPI_MODE_RDWR) : MPI_MODE_RDONLY;
    if (f->ferry) return ferry_File_open(MPI_COMM_WORLD, a->path, amode, a->info, &f->fh);
    return MPI_File_open(MPI_COMM_WORLD, a->path, amode, a->info, &f->host);
}

static int file_set_view(bench_file_t *f, const bench_access_t *a)
{
    if (f->ferry) return ferry_File_set_view(f->fh, a->disp, a->etype, a->filetype, "native", MPI_INFO_NULL);
    return MPI_File_set_view(f->host, a->disp, a->etype, a->filetype, "native", MPI_INFO_NULL);
}

static int file_write(bench_file_t *f, const bench_access_t *a)
{
    if (f->ferry)
        return a->collective ? ferry_File_write_all(f->fh, a->buf, a->count, a->memtype, MPI_STATUS_IGNORE)
                             : ferry_File_write(f->fh, a->buf, a->count, a->memtype, MPI_STATUS_IGNORE);
    return a->collective ? MPI_File_write_all(f->host, a->buf, a->count, a->memtype, MPI_STATUS_IGNORE)
                         : MPI_File_write(f->host, a->buf, a->count, a->memtype, MPI_STATUS_IGNORE);
}

static int file_read(bench_file_t *f, const bench_access_t *a)
{
    if (f->ferry)
        return a->collective ? ferry_File_read_all(f->fh, a->buf, a->count, a->memtype, MPI_STATUS_IGNORE)
                             : ferry_File_read(f->fh, a->buf, a->count, a->memtype, MPI_STATUS_IGNORE);
    return a->collective ? MPI_File_read_all(f->host, a->buf, a->count, a->memtype, MPI_STATUS_IGNORE)
                         : MPI_File_read(f->host, a->buf, a->count, a->memtype, MPI_STATUS_IGNORE);
}

/* ferry's counters for this open file (both directions: a sieving write reads too). */
static int file_stats(bench_file_t *f, bench_outcome_t *out)
{
    MPI_Info info;
    if (!f->ferry) return MPI_SUCCESS;
    int rc = ferry_File_get_info(f->fh, &info);
    if (rc != MPI_SUCCESS) return rc;
    out->fs_calls = bench_info_number(info, "ferry_stats_fs_read_calls", 0) +
                    bench_info_number(info, "ferry_stats_fs_write_calls", 0);
    out->sieve_extra = bench_info_number(info, "ferry_stats_sieve_extra_bytes", 0);
    out->meta_bytes = bench_info_number(info, "ferry_stats_coll_meta_bytes", 0);
    out->agg_calls = bench_info_number(info, "ferry_stats_coll_aggregator_calls", 0);
    out->agg_targets = bench_info_number(info, "ferry_stats_coll_targets", 0);
    out->targets_max = out->agg_calls ? (double)out->agg_targets / (double)out->agg_calls : 0;
    out->shm_bytes = bench_info_number(info, "ferry_stats_coll_shm_bytes", 0);
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_Info_get(info, "ferry_stats_exchange_seconds", MPI_MAX_INFO_VAL, value, &flag);
    out->exchange_seconds = flag ? atof(value) : 0;
    MPI_Info_free(&info);
    return MPI_SUCCESS;
}

static int file_close(bench_file_t *f)
{
    return f->ferry ? ferry_File_close(&f->fh) : MPI_File_close(&f->host);
}

static void report(const bench_access_t *a, int ferry, const char *op, int code)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (ferry) ferry_Error_string(code, text, &len);
    else MPI_Error_string(code, text, &len);
    fprintf(stderr, "ferry-bench: %s %s failed on %s: %s\n", ferry ? "ferry" : "host", op, a->path, text);
}

static int access_steps(bench_file_t *f, const bench_access_t *a, int write, bench_outcome_t *out)
{
    const char *op = write ? "write" : "read";
    int rc = file_open(f, a, write), opened = rc == MPI_SUCCESS;
    if (rc == MPI_SUCCESS) rc = file_set_view(f, a);
    double start = bench_now();
    if (rc == MPI_SUCCESS) rc = write ? file_write(f, a) : file_read(f, a);
    out->call_seconds = bench_now() - start;
    if (rc == MPI_SUCCESS && write) rc = f->ferry ? ferry_File_sync(f->fh) : MPI_File_sync(f->host);
    if (rc == MPI_SUCCESS) rc = file_stats(f, out);
    if (rc != MPI_SUCCESS) report(a, f->ferry, op, rc);
    int close_rc = opened ? file_close(f) : MPI_SUCCESS;
    if (close_rc != MPI_SUCCESS) report(a, f->ferry, "close", close_rc);
    return rc != MPI_SUCCESS || close_rc != MPI_SUCCESS;
}

void bench_access_run(const bench_access_t *a, int ferry, int write, bench_outcome_t *out)
{
    bench_file_t f = {.ferry = ferry};
    bench_outcome_t mine = {0};
    bench_barrier();
    double start = bench_now();
    mine.failed = access_steps(&f, a, write, &mine);
    double times[2] = {bench_now() - start, mine.call_seconds}, slowest[2];
    MPI_Allreduce(times, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    out->seconds = slowest[0];
    out->call_seconds = slowest[1];
    long long mine_v[7] = {mine.fs_calls,  mine.sieve_extra, mine.failed,   mine.meta_bytes,
                           mine.agg_calls, mine.agg_targets, mine.shm_bytes},
              sum[7];
    MPI_Allreduce(mine_v, sum, 7, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    out->shm_bytes = sum[6];
    out->fs_calls = sum[0];
    out->sieve_extra = sum[1];
    out->failed = sum[2] != 0;
    out->meta_bytes = sum[3];
    out->agg_calls = sum[4];
    out->agg_targets = sum[5];
    double most[2] = {mine.targets_max, mine.exchange_seconds}, most_all[2];
    MPI_Allreduce(most, most_all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    out->targets_max = most_all[0];
    out->exchange_seconds = most_all[1];
}

MPI_Info bench_info_from(const char *hints)
{
    MPI_Info info;
    MPI_Info_create(&info);
    char copy[256];
    snprintf(copy, sizeof copy, "%s", hints);
    char *save = NULL;
    for (char *kv = strtok_r(copy, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) continue;
        *eq = '\0';
        MPI_Info_set(info, kv, eq + 1);
    }
    return info;
}

void bench_drop_pages(const char *path)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            close(fd);
        }
    }
    bench_barrier();
}

/* ---- the noncontig workload ---- */

enum { CASES = 4, MAX_REPS = BENCH_MAX_REPS, PROBE_SHARE = 16 };

static const struct {
    const char *name;
    int mem_nc, file_nc;
} cases[CASES] = {{"c-c", 0, 0}, {"nc-c", 1, 0}, {"c-nc", 0, 1}, {"nc-nc", 1, 1}};

typedef struct nc_config {
    bench_common_t common;
    long long elements; /* per rank, ferry's volume */
    long long bytes;    /* --bytes: per rank, instead of elements (0: not given) */
    int blocklen;       /* elements per block; 0: two sub-runs, 8 B and 1 KiB blocks */
    int collective, wronly;
    const char *hints;  /* ferry's hints ("key=value ..."); the host keeps its defaults */
    const char *versus; /* hints of a second ferry contender in place of the host, added to hints; NULL: the host */
    double host_budget; /* seconds a host write may take at most, about */
    int holes;          /* blocks no rank writes after every nprocs blocks of the file (--holes) */
    int rank, nprocs;
} nc_config_t;

static const nc_config_t nc_defaults = {.common = {.dir = "/dev/shm", .reps = 3}, .elements = 1 << 20,
                                        .host_budget = 1.0};

static const cli_option_t nc_options[] = {
    BENCH_OPTION_DIR(nc_config_t),
    {"elements", 0, CLI_SIZE, offsetof(nc_config_t, elements), 1, (1 << 26) - 1, NULL, "MPI_INTs per rank"},
    {"bytes", 0, CLI_SIZE, offsetof(nc_config_t, bytes), 4, 256.0 * (1 << 20) - 4, NULL,
     "bytes per rank, instead of --elements"},
    {"blocklen", 0, CLI_INT, offsetof(nc_config_t, blocklen), 1, 1 << 24, NULL,
     "MPI_INTs per block (default: two sub-runs, 2 and 256)"},
    {"mode", 0, CLI_CHOICE, offsetof(nc_config_t, collective), 0, 0, "independent,collective",
     "independent calls, or their _all forms"},
    {"amode", 0, CLI_CHOICE, offsetof(nc_config_t, wronly), 0, 0, "rdwr,wronly", "access mode of the written files"},
    {"hints", 0, CLI_TEXT, offsetof(nc_config_t, hints), 0, 0, NULL, "ferry's hints, 'key=value ...'"},
    {"versus", 0, CLI_TEXT, offsetof(nc_config_t, versus), 0, 0, NULL,
     "instead of the host, ferry again with these hints added to --hints ('key=value ...'); adds exchange times"},
    {"host-budget", 0, CLI_REAL, offsetof(nc_config_t, host_budget), 0.001, 3600, NULL,
     "seconds a host write may take, about; beyond, the host runs on a smaller volume"},
    {"holes", 0, CLI_INT, offsetof(nc_config_t, holes), 0, 1 << 20, NULL,
     "blocks no rank writes after every nprocs blocks of the file (collective windows with holes)"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_noncontig_spec = {
    "ferry-bench noncontig", "mpiexec -n <ranks> ferry-bench noncontig [options]",
    "seed 001's vector views, c-c/nc-c/c-nc/nc-nc, write then read (host MPI-IO, ferry)",
    nc_options, bench_shared_options, sizeof(nc_config_t), &nc_defaults, NULL, 0};

/* One case at one volume: the types, the buffer and the expected values. */
typedef struct nc_layout {
    int mem_nc, file_nc;
    long long elements;
    int blocklen, rank;
    int tile;         /* blocks per tile of the file: the ranks' blocks, then the holes */
    int *mem;         /* elements (c) or 2 * elements (nc) ints */
    MPI_Datatype memtype, filetype;
    bench_access_t access;
} nc_layout_t;

static int value_of(int rank, long long i)
{
    return (int)(((unsigned)rank << 26) + (unsigned)i + 1u);
}

static int layout_build(nc_layout_t *l, const char *path, const nc_config_t *cfg)
{
    int nblocks = (int)(l->elements / l->blocklen), b = l->blocklen;
    size_t ints = (size_t)l->elements * (l->mem_nc ? 2 : 1);
    l->mem = malloc(ints * sizeof *l->mem);
    if (!l->mem) return 1;
    l->memtype = MPI_INT;
    l->filetype = MPI_INT;
    bench_access_t a = {.path = path, .info = MPI_INFO_NULL, .etype = MPI_INT, .filetype = MPI_INT, .buf = l->mem,
                        .count = (int)l->elements, .memtype = MPI_INT, .collective = cfg->collective,
                        .wronly = cfg->wronly};
    a.disp = (MPI_Offset)l->rank * l->elements * (MPI_Offset)sizeof(int);
    if (l->mem_nc) {
        MPI_Type_vector(nblocks, b, 2 * b, MPI_INT, &l->memtype);
        MPI_Type_commit(&l->memtype);
        a.memtype = l->memtype;
        a.count = 1;
    }
    if (l->file_nc) {
        MPI_Type_vector(nblocks, b, l->tile * b, MPI_INT, &l->filetype);
        MPI_Type_commit(&l->filetype);
        a.filetype = l->filetype;
        a.disp = (MPI_Offset)l->rank * b * (MPI_Offset)sizeof(int);
    }
    l->access = a;
    return 0;
}

static void layout_free(nc_layout_t *l)
{
    if (l->memtype != MPI_INT) MPI_Type_free(&l->memtype);
    if (l->filetype != MPI_INT) MPI_Type_free(&l->filetype);
    free(l->mem);
}

/* Memory index of stream element i. */
static size_t mem_index(const nc_layout_t *l, long long i)
{
    return l->mem_nc ? (size_t)(i / l->blocklen * 2 * l->blocklen + i % l->blocklen) : (size_t)i;
}

/* Data where the type puts it, -1 in memory holes (fill) or 0 everywhere (clear). */
static void layout_fill(nc_layout_t *l, int data)
{
    size_t ints = (size_t)l->elements * (l->mem_nc ? 2 : 1);
    memset(l->mem, data ? 0xff : 0, ints * sizeof *l->mem);
    if (data)
        for (long long i = 0; i < l->elements; i++) l->mem[mem_index(l, i)] = value_of(l->rank, i);
}

/* After a read: the data arrived and the holes (cleared to 0) stayed 0. */
static int layout_check_memory(const nc_layout_t *l)
{
    size_t ints = (size_t)l->elements * (l->mem_nc ? 2 : 1);
    for (long long i = 0; i < l->elements; i++)
        if (l->mem[mem_index(l, i)] != value_of(l->rank, i)) return 0;
    for (size_t k = 0; l->mem_nc && k < ints; k++)
        if ((k / (size_t)l->blocklen) % 2 == 1 && l->mem[k] != 0) return 0;
    return 1;
}

/* File byte offset of stream element i. */
static off_t file_offset(const nc_layout_t *l, long long i)
{
    long long slot = l->file_nc ? i / l->blocklen * l->tile * l->blocklen + i % l->blocklen : i;
    return (off_t)(l->access.disp + slot * (long long)sizeof(int));
}

/* After a write: every element of this rank is where the view says (pread, one chunk at a time). */
static int layout_check_file(const nc_layout_t *l)
{
    enum { CHUNK = 1 << 20 };
    int fd = open(l->access.path, O_RDONLY), ok = fd >= 0;
    if (ok) (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); /* a network client's pages may be older */
    int *chunk = malloc(CHUNK);
    off_t chunk_at = -1;
    ssize_t got = 0;
    for (long long i = 0; ok && chunk && i < l->elements; i++) {
        off_t at = file_offset(l, i);
        if (chunk_at < 0 || at < chunk_at || at + (off_t)sizeof(int) > chunk_at + got) {
            chunk_at = at;
            got = pread(fd, chunk, CHUNK, at);
            ok = got >= (ssize_t)sizeof(int);
        }
        ok = ok && chunk[(at - chunk_at) / (off_t)sizeof(int)] == value_of(l->rank, i);
    }
    if (fd >= 0) close(fd);
    free(chunk);
    return ok && chunk;
}

typedef struct nc_result {
    double seconds[2][2][MAX_REPS]; /* [call, whole][write, read][rep] */
    double exchange[2][MAX_REPS];   /* [write, read][rep]: ferry's exchange seconds, slowest rank */
    long long shm_bytes[2];         /* [write, read], last repetition, summed over ranks */
    long long fs_calls[2], sieve_extra[2], meta_bytes[2]; /* [write, read], last repetition */
    long long elements;                    /* per rank */
    int failed;
    int wrong; /* the host's bytes were wrong, tolerated (FERRY_BENCH_HOST_WRONG_OK): the row says so */
} nc_result_t;

/* One write and one read by one contender on a fresh file. */
static void run_once(const nc_config_t *cfg, int c, int ferry, long long elements, const char *path,
                     nc_result_t *res, int rep)
{
    nc_layout_t l = {.mem_nc = cases[c].mem_nc, .file_nc = cases[c].file_nc, .elements = elements,
                     .blocklen = cfg->blocklen, .rank = cfg->rank, .tile = cfg->nprocs + cfg->holes};
    int bad = layout_build(&l, path, cfg);
    char hints[512];
    snprintf(hints, sizeof hints, "%s %s", cfg->hints ? cfg->hints : "", !ferry && cfg->versus ? cfg->versus : "");
    int through_ferry = ferry || cfg->versus != NULL;
    MPI_Info info = through_ferry ? bench_info_from(hints) : MPI_INFO_NULL;
    l.access.info = info;
    bench_outcome_t w = {0}, r = {0};
    if (!bad) {
        layout_fill(&l, 1);
        bench_access_run(&l.access, through_ferry, 1, &w);
        bad = w.failed || !layout_check_file(&l);
        bench_drop_pages(path);
        layout_fill(&l, 0);
        bench_access_run(&l.access, through_ferry, 0, &r);
        bad = bad || r.failed || !layout_check_memory(&l);
        layout_free(&l);
    }
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    if (bad)
        fprintf(stderr, "ferry-bench noncontig: %s %s wrong or failed on rank %d\n",
                ferry         ? "ferry"
                : cfg->versus ? "versus"
                              : "host",
                cases[c].name, cfg->rank);
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!through_ferry && bench_host_wrong_ok()) res->wrong |= any;
    else res->failed |= any;
    res->seconds[0][0][rep] = w.call_seconds;
    res->seconds[0][1][rep] = r.call_seconds;
    res->seconds[1][0][rep] = w.seconds;
    res->seconds[1][1][rep] = r.seconds;
    res->exchange[0][rep] = w.exchange_seconds;
    res->exchange[1][rep] = r.exchange_seconds;
    res->shm_bytes[0] = w.shm_bytes;
    res->shm_bytes[1] = r.shm_bytes;
    res->fs_calls[0] = w.fs_calls;
    res->fs_calls[1] = r.fs_calls;
    res->sieve_extra[0] = w.sieve_extra;
    res->sieve_extra[1] = r.sieve_extra;
    res->meta_bytes[0] = w.meta_bytes;
    res->meta_bytes[1] = r.meta_bytes;
    if (cfg->rank == 0) unlink(path);
    bench_barrier();
}

/* The host's volume: all of it unless a probe on 1/PROBE_SHARE says the write would exceed the budget. */
static long long host_elements(const nc_config_t *cfg, int c, const char *dir)
{
    long long probe = cfg->elements / PROBE_SHARE / cfg->blocklen * cfg->blocklen;
    if (probe < cfg->blocklen || cfg->versus) return cfg->elements;
    char path[600];
    snprintf(path, sizeof path, "%s/probe", dir);
    nc_result_t res = {0};
    run_once(cfg, c, 0, probe, path, &res, 0);
    /* open, set_view, sync and close cost the same at any volume; the call scales */
    double call = res.seconds[0][0][0], whole = res.seconds[1][0][0];
    double estimate = whole + call * ((double)cfg->elements / (double)probe - 1);
    MPI_Bcast(&estimate, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (estimate <= cfg->host_budget) return cfg->elements;
    long long n = (long long)((double)cfg->elements * cfg->host_budget / estimate) / cfg->blocklen * cfg->blocklen;
    return n < probe ? probe : n;
}

static double mib_per_s(const nc_config_t *cfg, long long elements, double *seconds)
{
    double mib = (double)elements * (double)sizeof(int) * cfg->nprocs / (1 << 20);
    return mib / bench_median(seconds, cfg->common.reps);
}

static void record_case(nc_config_t *cfg, const char *table, int c, int dir, const double mibs[4],
                        const nc_result_t res[2])
{
    bench_row_t *call = bench_row(&cfg->common, table, cases[c].name, dir ? "read" : "write", "MiB/s");
    bench_row_value(call, "ferry", mibs[0]);
    bench_row_value(call, "host", mibs[1]);
    bench_row_extra(call, "block_bytes", (double)cfg->blocklen * (double)sizeof(int));
    bench_row_extra(call, "host_bytes_per_rank", (double)res[0].elements * (double)sizeof(int));
    bench_row_extra(call, "ferry_fs_ops", (double)res[1].fs_calls[dir]);
    bench_row_extra(call, "ferry_sieve_bytes", (double)res[1].sieve_extra[dir]);
    bench_row_extra(call, "ferry_meta_bytes", (double)res[1].meta_bytes[dir]);
    if (res[0].wrong) bench_row_extra(call, "host_wrong", 1);
    char whole[200];
    snprintf(whole, sizeof whole, "%s, open to close", table);
    bench_row_t *all = bench_row(&cfg->common, whole, cases[c].name, dir ? "read" : "write", "MiB/s");
    bench_row_value(all, "ferry", mibs[2]);
    bench_row_value(all, "host", mibs[3]);
    bench_row_extra(all, "block_bytes", (double)cfg->blocklen * (double)sizeof(int));
}

/* --versus: both ferry contenders' exchange time (ms, median) and bytes through shared memory (MiB). */
static void print_exchange(const nc_config_t *cfg, nc_result_t res[2], int dir)
{
    double f = bench_median(res[1].exchange[dir], cfg->common.reps) * 1e3;
    double v = bench_median(res[0].exchange[dir], cfg->common.reps) * 1e3;
    printf(" %8.2f %8.2f %7.1f %7.1f", f, v, (double)res[1].shm_bytes[dir] / (1 << 20),
           (double)res[0].shm_bytes[dir] / (1 << 20));
}

static void print_case(nc_config_t *cfg, const char *table, int c, nc_result_t res[2])
{
    for (int dir = 0; dir < 2; dir++) {
        double f = mib_per_s(cfg, res[1].elements, res[1].seconds[0][dir]);
        double h = mib_per_s(cfg, res[0].elements, res[0].seconds[0][dir]);
        double fw = mib_per_s(cfg, res[1].elements, res[1].seconds[1][dir]);
        double hw = mib_per_s(cfg, res[0].elements, res[0].seconds[1][dir]);
        double host_mib = (double)res[0].elements * (double)sizeof(int) / (1 << 20);
        printf("%-6s %-5s %11.1f %10.1f%s %7.2f %7.2f %9.3f%s %9lld %9.2f %7lld", cases[c].name, dir ? "read" : "write",
               f, h, res[0].wrong ? "!" : " ", f / h, fw / hw, host_mib, res[0].elements < res[1].elements ? "*" : " ",
               res[1].fs_calls[dir],
               (double)res[1].sieve_extra[dir] / (1 << 20), res[1].meta_bytes[dir]);
        if (cfg->versus) print_exchange(cfg, res, dir);
        printf("\n");
        record_case(cfg, table, c, dir, (double[4]){f, h, fw, hw}, res);
    }
}

/* The sub-run's table name: "blocks of 8 B, collective". */
static void table_name(const nc_config_t *cfg, char *out, size_t cap)
{
    snprintf(out, cap, "blocks of %lld B, %s", (long long)cfg->blocklen * (long long)sizeof(int),
             cfg->collective ? "collective" : "independent");
}

static void print_header(const nc_config_t *cfg)
{
    long long bytes = (long long)cfg->blocklen * (long long)sizeof(int);
    printf("ferry-bench noncontig: %d ranks, %s, blocks of %lld B (%d MPI_INT), %.3f MiB per rank (ferry), "
           "dir %s, median of %d%s%s, %d hole blocks per tile\n",
           cfg->nprocs, cfg->collective ? "collective" : "independent", bytes, cfg->blocklen,
           (double)cfg->elements * (double)sizeof(int) / (1 << 20), cfg->common.dir, cfg->common.reps,
           cfg->hints ? ", ferry hints " : "", cfg->hints ? cfg->hints : "", cfg->holes);
    printf("%-6s %-5s %11s %11s %7s %7s %10s %9s %9s %7s", "case", "dir", "ferry MiB/s",
           cfg->versus ? "vs MiB/s" : "host MiB/s", cfg->versus ? "f/v" : "f/h", cfg->versus ? "f/v all" : "f/h all",
           cfg->versus ? "vs MiB/rk" : "host MiB/rk", "fs ops", "sieve MiB", "meta B");
    if (cfg->versus) printf(" %8s %8s %7s %7s", "exch ms", "vs exch", "shm MiB", "vs shm");
    printf("\n");
    if (cfg->versus) printf("versus: ferry with --hints and '%s' in place of the host\n", cfg->versus);
}

/* One sub-run: every case, both contenders, reps repetitions. */
static int run_blocklen(nc_config_t *cfg)
{
    const char *dir = bench_make_dir(cfg->common.dir, "noncontig");
    if (!dir) return 1;
    if (cfg->rank == 0) print_header(cfg);
    char table[160], what[200];
    table_name(cfg, table, sizeof table);
    int failed = 0, shrunk = 0, wrong = 0;
    for (int c = 0; c < CASES; c++) {
        nc_result_t res[2]; /* [host, ferry] */
        memset(res, 0, sizeof res);
        res[0].elements = host_elements(cfg, c, dir);
        res[1].elements = cfg->elements;
        snprintf(what, sizeof what, "%s, %s", table, cases[c].name);
        for (int rep = 0; rep < cfg->common.reps; rep++) {
            for (int k = 0; k < 2; k++) {
                int ferry = (k + rep) % 2;
                char path[600];
                snprintf(path, sizeof path, "%s/%s.%d.%d", dir, ferry ? "ferry" : "host", c, rep);
                run_once(cfg, c, ferry, res[ferry].elements, path, &res[ferry], rep);
            }
            bench_progress(&cfg->common, what, rep);
        }
        failed |= res[0].failed | res[1].failed;
        shrunk |= res[0].elements < res[1].elements;
        wrong |= res[0].wrong;
        if (cfg->rank == 0) print_case(cfg, table, c, res);
        if (cfg->rank == 0) fflush(stdout);
    }
    if (cfg->rank == 0)
        printf("MiB/s: the write or read call alone (slowest rank), all ranks' data; f/h all: ferry/host from open "
               "to close (set_view, sync); fs ops, sieve MiB: ferry's file-system calls and bytes sieved beyond the "
               "data, summed over ranks; meta B: bytes of metadata the ranks contributed to the collective call "
               "besides the data (inputs, two-phase set-up and final agreements; the view cache moves before the first call after set_view, counted apart)\n");
    if (cfg->rank == 0 && shrunk)
        printf("* the host ran on a smaller volume: at the full volume a write was estimated to take more than %.1f s\n",
               cfg->host_budget);
    if (cfg->rank == 0 && wrong)
        printf("! the host's bytes were wrong (FERRY_BENCH_HOST_WRONG_OK: its time is shown, the run goes on)\n");
    if (cfg->rank == 0 && failed) printf("ferry-bench noncontig: FAILED (see errors above)\n");
    bench_remove_dir(dir);
    return failed;
}

int ferry_bench_noncontig(int argc, char **argv)
{
    nc_config_t cfg;
    int rc = bench_parse(&bench_noncontig_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    cfg.rank = cfg.common.rank;
    cfg.nprocs = cfg.common.nprocs;
    if (cfg.bytes > 0) cfg.elements = cfg.bytes / (long long)sizeof(int);
    static const int default_blocklens[] = {2, 256}; /* 8 B and 1 KiB */
    int failed = 0;
    for (int i = 0; i < (cfg.blocklen ? 1 : 2); i++) {
        nc_config_t sub = cfg;
        if (!cfg.blocklen) sub.blocklen = default_blocklens[i];
        sub.elements = cfg.elements / sub.blocklen * sub.blocklen;
        if (sub.elements < sub.blocklen) sub.elements = sub.blocklen;
        failed |= run_blocklen(&sub);
    }
    return bench_finish(&cfg.common, failed);
}

/*
 * ferry-bench discontig: the discontiguous benchmark of seed 000 (section
 * 4.1.2), with guided prefetching (section 3.1.3) on the read side.
 *
 * The file is cut into blocks (1 KiB); a seeded random permutation deals
 * them to the ranks, so together they tile the file without holes or
 * overlap and each rank's blocks lie at random places. A rank's filetype
 * is an indexed type of its blocks in ascending order (MPI requires
 * monotone filetypes), resized to the whole file; its memory is one
 * contiguous buffer. One call per rank writes, or reads, all its blocks.
 *
 * Writes: the host's MPI-IO and ferry, each on a fresh file (alternating
 * first), opened read-write, with set_view, write, sync and close; rank 0
 * then checks every block of the file. Reads: every reader reads
 * ferry's file (checked above) after its pages were dropped (posix_fadvise
 * DONTNEED; on tmpfs there is no cold cache and prefetching cannot help),
 * in rotating order: the host, ferry with default hints, ferry with
 * access_style=random, ferry with prefetching off (ferry_prefetch_size=0),
 * and the same two without data sieving (romio_ds_read=disable), where
 * each block is one pread and announcing the blocks ahead matters most.
 * Every read is checked. As in noncontig (see bench_access_run), "MiB/s"
 * times the write or read call alone and "MiB/s all" open to close; both
 * are the whole file over the slowest rank's time; ratios are to the host.
 * With 4 or more ranks each rank's view is sparse (less than half of its
 * extent is data), which already turns ferry's prefetching on, so
 * access_style=random then changes nothing; with 2 ranks it does.
 *
 * ferry-bench mar: the multiple access range benchmark of seed 000
 * (section 2.2) on the same machinery. The file is cut into sub-ranges of
 * --range bytes; every (gap + 1)-th one is read, dealt round-robin to the
 * ranks, so each rank reads several sub-ranges interleaved with the other
 * ranks' and with unread gaps, in one call. ferry alone writes the file
 * (the writes are not the point); the readers are timed as above, so the
 * table compares the host, ferry's guided prefetching (the view announces
 * the sub-ranges ahead, as GPFS's multiple access range hint did) and
 * ferry with prefetching off, with and without data sieving. On tmpfs
 * prefetching has nothing to do: measure on disk.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { READERS = 6, MAX_REPS = BENCH_MAX_REPS };

static const struct {
    const char *name;
    int ferry;
    const char *hints; /* "key=value" pairs separated by spaces */
} readers[READERS] = {
    {"host", 0, ""},
    {"ferry", 1, ""},
    {"ferry access_style=random", 1, "access_style=random"},
    {"ferry prefetch off", 1, "ferry_prefetch_size=0"},
    {"ferry no sieve", 1, "romio_ds_read=disable"},
    {"ferry no sieve, prefetch off", 1, "romio_ds_read=disable ferry_prefetch_size=0"},
};

typedef struct dc_config {
    bench_common_t common;
    long long total;   /* file bytes */
    long long block;   /* bytes per block (mar: per sub-range) */
    int collective;
    unsigned long long seed;
    int gap;           /* mar: unread sub-ranges after each read one; 0: discontig's random deal */
    int rank, nprocs;
} dc_config_t;

static const dc_config_t discontig_defaults = {.common = {.dir = "/dev/shm", .reps = 5}, .total = 64 << 20,
                                               .block = 1024, .seed = 20021};
static const dc_config_t mar_defaults = {.common = {.dir = "/var/tmp", .reps = 3}, .total = 64 << 20,
                                         .block = 64 << 10, .gap = 1};

#define DC_MODE {"mode", 0, CLI_CHOICE, offsetof(dc_config_t, collective), 0, 0, "independent,collective", \
                 "independent read and write, or their _all forms"}
#define DC_TOTAL {"total", 0, CLI_SIZE, offsetof(dc_config_t, total), 4096, 2.0 * (1 << 30) - 1, NULL, \
                  "file bytes (rounded down to whole blocks)"}

static const cli_option_t discontig_options[] = {
    BENCH_OPTION_DIR(dc_config_t),
    DC_TOTAL,
    {"block", 0, CLI_SIZE, offsetof(dc_config_t, block), 4, 1 << 24, NULL, "bytes per block, a multiple of 4"},
    {"seed", 0, CLI_U64, offsetof(dc_config_t, seed), 0, 1.8e19, NULL, "seed of the blocks' random deal"},
    DC_MODE,
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

static const cli_option_t mar_options[] = {
    BENCH_OPTION_DIR(dc_config_t),
    DC_TOTAL,
    {"range", 0, CLI_SIZE, offsetof(dc_config_t, block), 4, 1 << 24, NULL, "bytes per sub-range, a multiple of 4"},
    {"gap", 0, CLI_INT, offsetof(dc_config_t, gap), 1, 64, NULL, "unread sub-ranges after each read one"},
    DC_MODE,
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_discontig_spec = {
    "ferry-bench discontig", "mpiexec -n <ranks> ferry-bench discontig [options]",
    "seed 000's blocks at random places through an indexed view, with guided prefetching (host MPI-IO, ferry)",
    discontig_options, bench_shared_options, sizeof(dc_config_t), &discontig_defaults, NULL, 0};

const cli_spec_t bench_mar_spec = {
    "ferry-bench mar", "mpiexec -n <ranks> ferry-bench mar [options]",
    "seed 000's multiple access ranges: interleaved sub-ranges read in one call, guided prefetch vs none "
    "(host MPI-IO, ferry)",
    mar_options, bench_shared_options, sizeof(dc_config_t), &mar_defaults, NULL, 0};

typedef struct dc_blocks {
    int n;          /* this rank's blocks */
    int *index;     /* their block numbers, ascending */
    char *mem;      /* n * block bytes */
    MPI_Datatype filetype;
} dc_blocks_t;


/* mar: every (gap + 1)-th block is read, the j-th of them by rank j % nprocs. */
static int deal_interleaved(const dc_config_t *cfg, dc_blocks_t *b)
{
    long long nb = cfg->total / cfg->block, stride = (long long)cfg->gap + 1;
    b->index = malloc(((size_t)(nb / stride / cfg->nprocs) + 1) * sizeof *b->index);
    if (!b->index) return 1;
    b->n = 0;
    for (long long j = cfg->rank; j * stride < nb; j += cfg->nprocs) b->index[b->n++] = (int)(j * stride);
    return 0;
}

/* Deals the file's blocks: a seeded shuffle, block perm[i] to rank i % nprocs. */
static int deal_blocks(const dc_config_t *cfg, dc_blocks_t *b)
{
    if (cfg->gap > 0) return deal_interleaved(cfg, b);
    long long nb = cfg->total / cfg->block;
    int *owner = malloc((size_t)nb * sizeof *owner), *perm = malloc((size_t)nb * sizeof *perm);
    b->index = malloc(((size_t)nb / (size_t)cfg->nprocs + 1) * sizeof *b->index);
    if (!owner || !perm || !b->index) {
        free(owner);
        free(perm);
        return 1;
    }
    for (long long i = 0; i < nb; i++) perm[i] = (int)i;
    bench_shuffle(perm, nb, cfg->seed);
    for (long long i = 0; i < nb; i++) owner[perm[i]] = (int)(i % cfg->nprocs);
    b->n = 0;
    for (long long k = 0; k < nb; k++)
        if (owner[k] == cfg->rank) b->index[b->n++] = (int)k;
    free(owner);
    free(perm);
    return 0;
}

static int build_filetype(const dc_config_t *cfg, dc_blocks_t *b)
{
    int *displs = malloc(((size_t)b->n + 1) * sizeof *displs);
    if (!displs) return 1;
    for (int i = 0; i < b->n; i++) displs[i] = b->index[i] * (int)cfg->block;
    MPI_Datatype blocks;
    MPI_Type_create_indexed_block(b->n, (int)cfg->block, displs, MPI_BYTE, &blocks);
    MPI_Type_create_resized(blocks, 0, (MPI_Aint)cfg->total, &b->filetype);
    MPI_Type_commit(&b->filetype);
    MPI_Type_free(&blocks);
    free(displs);
    return 0;
}

/* The 32-bit word w of block k. */
static uint32_t word_of(long long k, int w)
{
    return (uint32_t)(k * 257 + w + 1);
}

static void fill_block(char *dst, long long k, int block)
{
    for (int w = 0; w < block / 4; w++) {
        uint32_t v = word_of(k, w);
        memcpy(dst + 4 * w, &v, 4);
    }
}

static int block_ok(const char *src, long long k, int block)
{
    for (int w = 0; w < block / 4; w++) {
        uint32_t v;
        memcpy(&v, src + 4 * w, 4);
        if (v != word_of(k, w)) return 0;
    }
    return 1;
}

static int memory_ok(const dc_config_t *cfg, const dc_blocks_t *b)
{
    for (int i = 0; i < b->n; i++)
        if (!block_ok(b->mem + (size_t)i * (size_t)cfg->block, b->index[i], cfg->block)) return 0;
    return 1;
}

/* Whether block k holds data (mar leaves the gaps unwritten). */
static int block_written(const dc_config_t *cfg, long long k)
{
    return cfg->gap == 0 || k % (cfg->gap + 1) == 0;
}

/* The bytes moved by one write or read of all ranks. */
static double data_bytes(const dc_config_t *cfg)
{
    long long nb = cfg->total / cfg->block, stride = (long long)cfg->gap + 1;
    return (double)((nb + stride - 1) / stride * cfg->block);
}

/* Rank 0 reads the whole file and checks every written block (collective). */
static int file_ok(const dc_config_t *cfg, const char *path)
{
    int ok = 1;
    if (cfg->rank == 0) {
        enum { CHUNK = 1 << 20 };
        char *chunk = malloc(CHUNK);
        int fd = open(path, O_RDONLY);
        ok = chunk && fd >= 0;
        long long per = CHUNK / cfg->block;
        for (long long k = 0; ok && k < cfg->total / cfg->block; k += per) {
            ssize_t got = pread(fd, chunk, (size_t)(per * cfg->block), (off_t)(k * cfg->block));
            for (long long j = 0; ok && j < per && k + j < cfg->total / cfg->block; j++)
                ok = !block_written(cfg, k + j) ||
                     (got >= (j + 1) * cfg->block && block_ok(chunk + j * cfg->block, k + j, cfg->block));
        }
        if (fd >= 0) close(fd);
        free(chunk);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

typedef struct dc_result {
    double write_s[2][2][MAX_REPS], read_s[2][READERS][MAX_REPS]; /* [call, whole][contender][rep] */
    long long fs_calls[2 + READERS], sieve_extra[2 + READERS]; /* writes [host, ferry], then readers */
    int failed;
} dc_result_t;

static bench_access_t access_of(const dc_config_t *cfg, dc_blocks_t *b, const char *path, MPI_Info info)
{
    bench_access_t a = {.path = path, .info = info, .disp = 0, .etype = MPI_BYTE, .filetype = b->filetype,
                        .buf = b->mem, .count = b->n * cfg->block, .memtype = MPI_BYTE,
                        .collective = cfg->collective};
    return a;
}

static void note(dc_result_t *res, int slot, const bench_outcome_t *o)
{
    res->fs_calls[slot] = o->fs_calls;
    res->sieve_extra[slot] = o->sieve_extra;
    res->failed |= o->failed;
}

/* Both writers on fresh files (mar: ferry alone); ferry's file (checked) is left for the readers. */
static void write_phase(const dc_config_t *cfg, dc_blocks_t *b, const char *dir, int rep, dc_result_t *res)
{
    for (int k = cfg->gap ? 1 : 0; k < 2; k++) {
        int ferry = cfg->gap ? 1 : (k + rep) % 2;
        char path[600];
        snprintf(path, sizeof path, "%s/%s.%d", dir, ferry ? "ferry" : "host", rep);
        for (int i = 0; i < b->n; i++)
            fill_block(b->mem + (size_t)i * (size_t)cfg->block, b->index[i], cfg->block);
        bench_access_t a = access_of(cfg, b, path, MPI_INFO_NULL);
        bench_outcome_t o = {0};
        bench_access_run(&a, ferry, 1, &o);
        res->write_s[0][ferry][rep] = o.call_seconds;
        res->write_s[1][ferry][rep] = o.seconds;
        note(res, ferry, &o);
        if (!file_ok(cfg, path)) {
            if (cfg->rank == 0) fprintf(stderr, "%s: %s wrote a wrong file\n", cfg->common.spec->name, ferry ? "ferry" : "host");
            res->failed = 1;
        }
        if (cfg->rank == 0 && !ferry) unlink(path);
    }
}

static void read_phase(const dc_config_t *cfg, dc_blocks_t *b, const char *path, int rep, dc_result_t *res)
{
    for (int k = 0; k < READERS; k++) {
        int r = (k + rep) % READERS;
        MPI_Info info = bench_info_from(readers[r].hints);
        memset(b->mem, 0, (size_t)b->n * (size_t)cfg->block);
        bench_drop_pages(path);
        bench_access_t a = access_of(cfg, b, path, info);
        bench_outcome_t o = {0};
        bench_access_run(&a, readers[r].ferry, 0, &o);
        res->read_s[0][r][rep] = o.call_seconds;
        res->read_s[1][r][rep] = o.seconds;
        note(res, 2 + r, &o);
        int bad = !memory_ok(cfg, b), any = 0;
        MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any && cfg->rank == 0) fprintf(stderr, "%s: %s read wrong data\n", cfg->common.spec->name, readers[r].name);
        res->failed |= any;
        MPI_Info_free(&info);
    }
}

/* One contender's line: [call, whole] times, the host's, and ferry's counters. */
typedef struct dc_line {
    const char *op, *name;
    double *call, *whole, *host_call, *host_whole;
    long long fs_calls, sieve_extra;
} dc_line_t;

static void print_line(dc_config_t *cfg, const dc_line_t *l, bench_row_t *rows[2])
{
    double mib = data_bytes(cfg) / (1 << 20);
    int reps = cfg->common.reps;
    double v = mib / bench_median(l->call, reps), h = mib / bench_median(l->host_call, reps);
    double vw = mib / bench_median(l->whole, reps), hw = mib / bench_median(l->host_whole, reps);
    printf("%-5s %-28s %9.1f %7.2f %9.1f %7.2f %9lld %9.1f\n", l->op, l->name, v, v / h, vw, vw / hw, l->fs_calls,
           (double)l->sieve_extra / (1 << 20));
    bench_row_value(rows[0], l->name, v);
    bench_row_value(rows[1], l->name, vw);
    if (strncmp(l->name, "ferry", 5) != 0) return;
    char key[96];
    snprintf(key, sizeof key, "%s fs_ops", l->name);
    bench_row_extra(rows[0], key, (double)l->fs_calls);
    snprintf(key, sizeof key, "%s sieve_bytes", l->name);
    bench_row_extra(rows[0], key, (double)l->sieve_extra);
}

static void print_header(const dc_config_t *cfg)
{
    if (cfg->gap)
        printf("ferry-bench mar: %d ranks, %lld sub-ranges of %lld B, 1 in %d read, dealt round-robin, ",
               cfg->nprocs, cfg->total / cfg->block, cfg->block, cfg->gap + 1);
    else
        printf("ferry-bench discontig: %d ranks, %lld blocks of %lld B at random places (seed %llu), ", cfg->nprocs,
               cfg->total / cfg->block, cfg->block, cfg->seed);
    printf("%.0f MiB file, %s, dir %s, median of %d\n", (double)cfg->total / (1 << 20),
           cfg->collective ? "collective" : "independent", cfg->common.dir, cfg->common.reps);
    printf("%-34s %9s %7s %9s %7s %9s %9s\n", "contender", "MiB/s", "vs host", "MiB/s all", "vs host", "fs ops",
           "sieve MiB");
}

static void print_table(dc_config_t *cfg, dc_result_t *res)
{
    print_header(cfg);
    bench_row_t *rows[2] = {bench_row(&cfg->common, "the call alone", "write", "write", "MiB/s"),
                            bench_row(&cfg->common, "open to close", "write", "write", "MiB/s")};
    for (int f = cfg->gap ? 1 : 0; f < 2; f++) {
        dc_line_t l = {"write", f ? "ferry" : "host", res->write_s[0][f], res->write_s[1][f], res->write_s[0][0],
                       res->write_s[1][0], res->fs_calls[f], res->sieve_extra[f]};
        if (cfg->gap) l.host_call = l.call, l.host_whole = l.whole; /* no host writer: ratios to itself */
        print_line(cfg, &l, rows);
    }
    rows[0] = bench_row(&cfg->common, "the call alone", "read", "read", "MiB/s");
    rows[1] = bench_row(&cfg->common, "open to close", "read", "read", "MiB/s");
    for (int r = 0; r < READERS; r++) {
        dc_line_t l = {"read", readers[r].name, res->read_s[0][r], res->read_s[1][r], res->read_s[0][0],
                       res->read_s[1][0], res->fs_calls[2 + r], res->sieve_extra[2 + r]};
        print_line(cfg, &l, rows);
    }
    printf("MiB/s: the write or read call alone (slowest rank); MiB/s all: open to close (set_view, sync); fs ops, "
           "sieve MiB: ferry's file-system calls and bytes sieved beyond the data, summed over ranks\n");
    if (res->failed) printf("%s: FAILED (see errors above)\n", cfg->common.spec->name);
}

/* What the table cannot check: whole blocks, and each rank at least one. */
static int sane(const dc_config_t *cfg)
{
    long long per_rank = (long long)cfg->block * (cfg->gap + 1) * cfg->nprocs;
    if (cfg->block % 4 == 0 && cfg->total >= per_rank) return 1;
    if (cfg->rank == 0)
        fprintf(stderr, "%s: the block must be a multiple of 4 bytes and the file hold one (plus gaps) per rank\n",
                cfg->common.spec->name);
    return 0;
}

static int run_blocks(dc_config_t *cfg)
{
    cfg->rank = cfg->common.rank;
    cfg->nprocs = cfg->common.nprocs;
    if (!sane(cfg)) return 2;
    cfg->total = cfg->total / cfg->block * cfg->block;
    dc_blocks_t b = {0};
    int bad = deal_blocks(cfg, &b) || build_filetype(cfg, &b);
    if (!bad && !(b.mem = malloc((size_t)b.n * (size_t)cfg->block + 1))) bad = 1;
    const char *dir = bad ? NULL : bench_make_dir(cfg->common.dir, cfg->gap ? "mar" : "discontig");
    if (bad || !dir) return 1;
    dc_result_t *res = calloc(1, sizeof *res);
    for (int rep = 0; res && rep < cfg->common.reps; rep++) {
        char path[600];
        snprintf(path, sizeof path, "%s/ferry.%d", dir, rep);
        write_phase(cfg, &b, dir, rep, res);
        read_phase(cfg, &b, path, rep, res);
        if (cfg->rank == 0) unlink(path);
        bench_progress(&cfg->common, NULL, rep);
    }
    if (res && cfg->rank == 0) print_table(cfg, res);
    int failed = !res || res->failed;
    free(res);
    MPI_Type_free(&b.filetype);
    free(b.index);
    free(b.mem);
    bench_remove_dir(dir);
    return failed;
}

static int run_with(const cli_spec_t *spec, int argc, char **argv)
{
    dc_config_t cfg;
    int rc = bench_parse(spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    rc = run_blocks(&cfg);
    int finished = bench_finish(&cfg.common, rc != 0);
    return rc == 2 ? rc : finished;
}

int ferry_bench_discontig(int argc, char **argv)
{
    return run_with(&bench_discontig_spec, argc, argv);
}

int ferry_bench_mar(int argc, char **argv)
{
    return run_with(&bench_mar_spec, argc, argv);
}

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
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { READERS = 6, MAX_REPS = 32 };

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
    const char *base;
    long long total;   /* file bytes */
    int block;         /* bytes per block */
    int reps, collective;
    unsigned long long seed;
    int rank, nprocs;
} dc_config_t;

typedef struct dc_blocks {
    int n;          /* this rank's blocks */
    int *index;     /* their block numbers, ascending */
    char *mem;      /* n * block bytes */
    MPI_Datatype filetype;
} dc_blocks_t;

static unsigned long long next_random(unsigned long long *state)
{
    unsigned long long x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 2685821657736338717ULL;
}

/* Deals the file's blocks: a seeded shuffle, block perm[i] to rank i % nprocs. */
static int deal_blocks(const dc_config_t *cfg, dc_blocks_t *b)
{
    long long nb = cfg->total / cfg->block;
    int *owner = malloc((size_t)nb * sizeof *owner), *perm = malloc((size_t)nb * sizeof *perm);
    b->index = malloc(((size_t)nb / (size_t)cfg->nprocs + 1) * sizeof *b->index);
    if (!owner || !perm || !b->index) {
        free(owner);
        free(perm);
        return 1;
    }
    unsigned long long state = cfg->seed ? cfg->seed : 1;
    for (long long i = 0; i < nb; i++) perm[i] = (int)i;
    for (long long i = nb - 1; i > 0; i--) {
        long long j = (long long)(next_random(&state) % (unsigned long long)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
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
    for (int i = 0; i < b->n; i++) displs[i] = b->index[i] * cfg->block;
    MPI_Datatype blocks;
    MPI_Type_create_indexed_block(b->n, cfg->block, displs, MPI_BYTE, &blocks);
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

/* Rank 0 reads the whole file and checks every block (collective). */
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
                ok = got >= (j + 1) * cfg->block && block_ok(chunk + j * cfg->block, k + j, cfg->block);
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

/* Both writers on fresh files; returns ferry's file (checked) for the readers. */
static void write_phase(const dc_config_t *cfg, dc_blocks_t *b, const char *dir, int rep, dc_result_t *res)
{
    for (int k = 0; k < 2; k++) {
        int ferry = (k + rep) % 2;
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
            if (cfg->rank == 0) fprintf(stderr, "ferry-bench discontig: %s wrote a wrong file\n", ferry ? "ferry" : "host");
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
        if (any && cfg->rank == 0) fprintf(stderr, "ferry-bench discontig: %s read wrong data\n", readers[r].name);
        res->failed |= any;
        MPI_Info_free(&info);
    }
}

static void print_row(const dc_config_t *cfg, const char *name, double *call, double *whole, double *host_call,
                      double *host_whole, long long fs_calls, long long sieve_extra)
{
    double mib = (double)cfg->total / (1 << 20);
    double v = mib / bench_median(call, cfg->reps), h = mib / bench_median(host_call, cfg->reps);
    double vw = mib / bench_median(whole, cfg->reps), hw = mib / bench_median(host_whole, cfg->reps);
    printf("%-34s %9.1f %7.2f %9.1f %7.2f %9lld %9.1f\n", name, v, v / h, vw, vw / hw, fs_calls,
           (double)sieve_extra / (1 << 20));
}

static void print_table(const dc_config_t *cfg, dc_result_t *res)
{
    printf("ferry-bench discontig: %d ranks, %lld blocks of %d B at random places (seed %llu), %.0f MiB file, %s, "
           "dir %s, median of %d\n",
           cfg->nprocs, cfg->total / cfg->block, cfg->block, cfg->seed, (double)cfg->total / (1 << 20),
           cfg->collective ? "collective" : "independent", cfg->base, cfg->reps);
    printf("%-34s %9s %7s %9s %7s %9s %9s\n", "contender", "MiB/s", "vs host", "MiB/s all", "vs host", "fs ops",
           "sieve MiB");
    char name[64];
    for (int f = 0; f < 2; f++) {
        snprintf(name, sizeof name, "write %s", f ? "ferry" : "host");
        print_row(cfg, name, res->write_s[0][f], res->write_s[1][f], res->write_s[0][0], res->write_s[1][0],
                  res->fs_calls[f], res->sieve_extra[f]);
    }
    for (int r = 0; r < READERS; r++) {
        snprintf(name, sizeof name, "read  %s", readers[r].name);
        print_row(cfg, name, res->read_s[0][r], res->read_s[1][r], res->read_s[0][0], res->read_s[1][0],
                  res->fs_calls[2 + r], res->sieve_extra[2 + r]);
    }
    printf("MiB/s: the write or read call alone (slowest rank); MiB/s all: open to close (set_view, sync); fs ops, "
           "sieve MiB: ferry's file-system calls and bytes sieved beyond the data, summed over ranks\n");
    if (res->failed) printf("ferry-bench discontig: FAILED (see errors above)\n");
}

static int parse(dc_config_t *cfg, int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dir")) cfg->base = argv[i + 1];
        else if (!strcmp(argv[i], "--total")) cfg->total = bench_parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--block")) cfg->block = (int)bench_parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) cfg->reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) cfg->seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--mode")) cfg->collective = !strcmp(argv[i + 1], "collective");
        else return 0;
    }
    if (cfg->block >= 4 && cfg->block % 4 == 0) cfg->total = cfg->total / cfg->block * cfg->block;
    return argc % 2 == 1 && cfg->reps >= 1 && cfg->reps <= MAX_REPS && cfg->block >= 4 && cfg->block % 4 == 0 &&
           cfg->total >= (long long)cfg->block * cfg->nprocs && cfg->total < (1LL << 31);
}

int ferry_bench_discontig(int argc, char **argv)
{
    dc_config_t cfg = {.base = "/dev/shm", .total = 64 << 20, .block = 1024, .reps = 5, .seed = 20021};
    MPI_Comm_rank(MPI_COMM_WORLD, &cfg.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &cfg.nprocs);
    if (!parse(&cfg, argc, argv)) {
        if (cfg.rank == 0)
            fprintf(stderr, "usage: ferry-bench discontig [--dir D] [--total BYTES] [--block BYTES] [--reps R] "
                            "[--seed S] [--mode independent|collective]\n");
        return 2;
    }
    dc_blocks_t b = {0};
    int bad = deal_blocks(&cfg, &b) || build_filetype(&cfg, &b);
    if (!bad && !(b.mem = malloc((size_t)b.n * (size_t)cfg.block + 1))) bad = 1;
    const char *dir = bad ? NULL : bench_make_dir(cfg.base, "discontig");
    if (bad || !dir) return 1;
    dc_result_t *res = calloc(1, sizeof *res);
    for (int rep = 0; res && rep < cfg.reps; rep++) {
        char path[600];
        snprintf(path, sizeof path, "%s/ferry.%d", dir, rep);
        write_phase(&cfg, &b, dir, rep, res);
        read_phase(&cfg, &b, path, rep, res);
        if (cfg.rank == 0) unlink(path);
    }
    if (res && cfg.rank == 0) print_table(&cfg, res);
    int failed = !res || res->failed;
    free(res);
    MPI_Type_free(&b.filetype);
    free(b.index);
    free(b.mem);
    bench_remove_dir(dir);
    return failed ? 1 : 0;
}

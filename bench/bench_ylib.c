/*
 * ferry-bench ylib: the Y-Lib patterns of seed 002 (Dickens and Logan):
 * collective writes of a strided pattern onto a striped file, aggregators
 * talking to every storage target (ROMIO's conforming distribution) or to
 * one or two of them.
 *
 * The layout is given by hints on any file system: striping_unit (--stripe)
 * and striping_factor (--targets, default one per rank, as the paper's
 * stripe width equal to the process count). Each rank writes --bytes in
 * blocks of --block bytes, rank r's j-th block at file block j * P + r
 * (a vector filetype; memory contiguous), in one write_all. Contenders, each
 * on a fresh file in rotating order, all with the striping hints: the
 * host's MPI-IO, and ferry with ferry_cb_strategy auto, even, block_cyclic,
 * stripe_group with ferry_cb_group_size 1 (one-to-one) and 2 (one-to-two).
 * A timed write covers open, set_view, write_all, sync, close; the call
 * alone is timed too. From ferry's statistics (get_info
 * ferry_stats_coll_targets / ferry_stats_coll_aggregator_calls) the table
 * gives the distinct targets each aggregator touched per call: the mean
 * over aggregators and the largest. Rank 0 checks every word of every file.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { WRITERS = 6, MAX_REPS = BENCH_MAX_REPS };

typedef struct ylib_config {
    bench_common_t common;
    long long bytes;  /* per rank */
    long long block;  /* bytes per block of the strided pattern */
    long long stripe; /* striping_unit */
    int targets;      /* striping_factor; 0: one per rank */
} ylib_config_t;

static const ylib_config_t ylib_defaults = {.common = {.dir = "/dev/shm", .reps = 3}, .bytes = 16 << 20,
                                            .block = 64 << 10, .stripe = 256 << 10};

static const cli_option_t ylib_options[] = {
    BENCH_OPTION_DIR(ylib_config_t),
    {"bytes", 0, CLI_SIZE, offsetof(ylib_config_t, bytes), 4096, 2.0 * (1 << 30) - 1, NULL, "bytes per rank"},
    {"block", 0, CLI_SIZE, offsetof(ylib_config_t, block), 4, 1 << 24, NULL,
     "bytes per block of the strided pattern, a multiple of 4 dividing --bytes"},
    {"stripe", 0, CLI_SIZE, offsetof(ylib_config_t, stripe), 4096, 1 << 30, NULL, "striping_unit hint"},
    {"targets", 0, CLI_INT, offsetof(ylib_config_t, targets), 0, 1 << 16, NULL,
     "striping_factor hint (0: the number of ranks)"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_ylib_spec = {
    "ferry-bench ylib", "mpiexec -n <ranks> ferry-bench ylib [options]",
    "seed 002's Y-Lib: strided write_all on a striped layout (hints), even vs block_cyclic vs stripe_group "
    "k=1,2, storage targets per aggregator (host MPI-IO, ferry)",
    ylib_options, bench_shared_options, sizeof(ylib_config_t), &ylib_defaults, NULL, 0};

static const struct {
    const char *name;
    int ferry;
    const char *hints; /* besides the striping hints */
} writers[WRITERS] = {
    {"host", 0, ""},
    {"ferry", 1, ""},
    {"ferry even", 1, "ferry_cb_strategy=even"},
    {"ferry block_cyclic", 1, "ferry_cb_strategy=block_cyclic"},
    {"ferry stripe_group k=1", 1, "ferry_cb_strategy=stripe_group ferry_cb_group_size=1"},
    {"ferry stripe_group k=2", 1, "ferry_cb_strategy=stripe_group ferry_cb_group_size=2"},
};

typedef struct ylib_result {
    double seconds[2][WRITERS][MAX_REPS]; /* [call, whole] */
    bench_outcome_t last[WRITERS];        /* counters of the last repetition */
    int failed;
} ylib_result_t;

static void fill(const ylib_config_t *cfg, uint32_t *mem)
{
    long long words_per_block = cfg->block / 4, blocks = cfg->bytes / cfg->block;
    for (long long j = 0; j < blocks; j++) {
        long long at = (j * cfg->common.nprocs + cfg->common.rank) * cfg->block;
        for (long long w = 0; w < words_per_block; w++) mem[j * words_per_block + w] = bench_word_at(at + 4 * w);
    }
}

/* Collective: rank 0 reads the file and checks every word. */
static int file_ok(const ylib_config_t *cfg, const char *path)
{
    int ok = 1;
    if (cfg->common.rank == 0) {
        enum { CHUNK = 1 << 20 };
        uint32_t *chunk = malloc(CHUNK);
        int fd = open(path, O_RDONLY);
        long long size = cfg->bytes * cfg->common.nprocs;
        ok = chunk && fd >= 0;
        for (long long at = 0; ok && at < size; at += CHUNK) {
            ssize_t got = pread(fd, chunk, CHUNK, (off_t)at);
            ok = got == (size - at < CHUNK ? size - at : CHUNK);
            for (long long w = 0; ok && w < got / 4; w++) ok = chunk[w] == bench_word_at(at + 4 * w);
        }
        if (fd >= 0) close(fd);
        free(chunk);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

static MPI_Info hints_of(const ylib_config_t *cfg, int w)
{
    char text[256];
    snprintf(text, sizeof text, "striping_unit=%lld striping_factor=%d %s", cfg->stripe,
             cfg->targets ? cfg->targets : cfg->common.nprocs, writers[w].hints);
    return bench_info_from(text);
}

static void write_once(const ylib_config_t *cfg, bench_access_t *a, int w, int rep, ylib_result_t *res)
{
    MPI_Info info = hints_of(cfg, w);
    a->info = info;
    bench_outcome_t o = {0};
    bench_access_run(a, writers[w].ferry, 1, &o);
    MPI_Info_free(&info);
    res->seconds[0][w][rep] = o.call_seconds;
    res->seconds[1][w][rep] = o.seconds;
    res->last[w] = o;
    if (!file_ok(cfg, a->path) || o.failed) {
        if (cfg->common.rank == 0) fprintf(stderr, "ferry-bench ylib: %s wrote a wrong file\n", writers[w].name);
        res->failed = 1;
    }
    if (cfg->common.rank == 0) unlink(a->path);
}

static void run_reps(const ylib_config_t *cfg, bench_access_t *a, const char *dir, ylib_result_t *res)
{
    for (int rep = 0; rep < cfg->common.reps; rep++) {
        for (int k = 0; k < WRITERS; k++) {
            int w = (k + rep) % WRITERS;
            char path[600];
            snprintf(path, sizeof path, "%s/w%d.%d", dir, w, rep);
            a->path = path;
            write_once(cfg, a, w, rep, res);
        }
        bench_progress(&cfg->common, NULL, rep);
    }
}

static void print_writer(ylib_config_t *cfg, ylib_result_t *res, int w, bench_row_t *rows[2])
{
    double mib = (double)cfg->bytes * cfg->common.nprocs / (1 << 20);
    double v = mib / bench_median(res->seconds[0][w], cfg->common.reps);
    double vw = mib / bench_median(res->seconds[1][w], cfg->common.reps);
    double h = mib / bench_median(res->seconds[0][0], cfg->common.reps);
    const bench_outcome_t *o = &res->last[w];
    double mean = o->agg_calls ? (double)o->agg_targets / (double)o->agg_calls : 0;
    printf("%-24s %9.1f %7.2f %9.1f %6lld %8.2f %7.2f\n", writers[w].name, v, v / h, vw, o->agg_calls, mean,
           o->targets_max);
    bench_row_value(rows[0], writers[w].name, v);
    bench_row_value(rows[1], writers[w].name, vw);
    if (!writers[w].ferry) return;
    char key[96];
    snprintf(key, sizeof key, "%s aggregators", writers[w].name);
    bench_row_extra(rows[0], key, (double)o->agg_calls);
    snprintf(key, sizeof key, "%s targets mean", writers[w].name);
    bench_row_extra(rows[0], key, mean);
    snprintf(key, sizeof key, "%s targets max", writers[w].name);
    bench_row_extra(rows[0], key, o->targets_max);
}

static void print_table(ylib_config_t *cfg, ylib_result_t *res)
{
    printf("ferry-bench ylib: %d ranks, %.1f MiB per rank in blocks of %lld B (stride %d blocks), striping_unit %lld, "
           "striping_factor %d, dir %s, median of %d\n",
           cfg->common.nprocs, (double)cfg->bytes / (1 << 20), cfg->block, cfg->common.nprocs, cfg->stripe,
           cfg->targets ? cfg->targets : cfg->common.nprocs, cfg->common.dir, cfg->common.reps);
    printf("%-24s %9s %7s %9s %6s %8s %7s\n", "contender", "MiB/s", "vs host", "MiB/s all", "aggs", "targets",
           "max");
    bench_row_t *rows[2] = {bench_row(&cfg->common, "the call alone", "strided", "write", "MiB/s"),
                            bench_row(&cfg->common, "open to close", "strided", "write", "MiB/s")};
    bench_row_extra(rows[0], "block_bytes", (double)cfg->block);
    for (int w = 0; w < WRITERS; w++) print_writer(cfg, res, w, rows);
    printf("MiB/s: write_all and sync (slowest rank); all: open to close; aggs: ranks that aggregated; targets: "
           "distinct storage targets per aggregator per call (mean over aggregators), max: the largest\n");
    if (res->failed) printf("ferry-bench ylib: FAILED (see errors above)\n");
}

static int sane(const ylib_config_t *cfg)
{
    if (cfg->block % 4 == 0 && cfg->bytes % cfg->block == 0 && cfg->bytes / cfg->block < (1LL << 31)) return 1;
    if (cfg->common.rank == 0) fprintf(stderr, "ferry-bench ylib: --block must be a multiple of 4 dividing --bytes\n");
    return 0;
}

int ferry_bench_ylib(int argc, char **argv)
{
    ylib_config_t cfg;
    int rc = bench_parse(&bench_ylib_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    if (!sane(&cfg)) {
        bench_finish(&cfg.common, 1);
        return 2;
    }
    MPI_Datatype filetype;
    MPI_Type_vector((int)(cfg.bytes / cfg.block), (int)cfg.block, (int)cfg.block * cfg.common.nprocs, MPI_BYTE,
                    &filetype);
    MPI_Type_commit(&filetype);
    uint32_t *mem = malloc((size_t)cfg.bytes);
    const char *dir = bench_make_dir(cfg.common.dir, "ylib");
    ylib_result_t *res = calloc(1, sizeof *res);
    int failed = !mem || !dir || !res;
    if (!failed) {
        fill(&cfg, mem);
        bench_access_t a = {.disp = (MPI_Offset)cfg.common.rank * cfg.block, .etype = MPI_BYTE, .filetype = filetype,
                            .buf = mem, .count = (int)cfg.bytes, .memtype = MPI_BYTE, .collective = 1};
        run_reps(&cfg, &a, dir, res);
        if (cfg.common.rank == 0) print_table(&cfg, res);
        failed = res->failed;
    }
    bench_remove_dir(dir);
    MPI_Type_free(&filetype);
    free(res);
    free(mem);
    return bench_finish(&cfg.common, failed);
}

/*
 * ferry-bench scale: what one rank holds and exchanges in a collective
 * call at 10^5 ranks (issue 20 item 8), from ferry's own planning code
 * run for P virtual ranks in one process (src/coll/model.c), and the same
 * quantities measured in a real run, side by side.
 *
 * Patterns (every rank one collective write of its data):
 *   noncontig   8-byte elements dealt round-robin (--bytes per rank): one
 *               resized-double filetype at displacement 8 r; a regular call
 *   btio        the BT-IO-like subarray of ferry-bench btio (px * py * 1
 *               decomposition of an N^3 grid of 40-byte cells); ranks'
 *               lengths differ where N does not divide: an irregular call
 *   checkpoint  a 2-D array of doubles in equal --tile^2 tiles, one per
 *               rank on a px * py grid: a regular call
 *
 * Run on one rank, the model sweeps --ranks (P = 16 to 131072) with
 * --per-node ranks and --cores cores per node. Run under mpiexec with P > 1,
 * every rank also writes the pattern through ferry and the table puts the
 * model for that P (its nodes: this machine's one) beside what the run's
 * statistics say (ferry_stats_coll_*: rank 0's, the largest over ranks for
 * the view cache). The view cache's bytes are ferry's own estimate in both
 * (state.c; calibrated against resident memory by ferry-bench views).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "coll/coll.h"

enum { PATTERNS = 3, MAX_SWEEP = 32 };

typedef struct scale_config {
    bench_common_t common;
    const char *ranks; /* the model's sweep */
    int per_node, cores;
    int class_index; /* btio */
    long long bytes; /* noncontig, per rank */
    int tile;        /* checkpoint */
    int pattern;     /* PATTERNS: all */
} scale_config_t;

static const char *const pattern_names[PATTERNS] = {"noncontig", "btio", "checkpoint"};
static const char btio_classes[] = "auto,S,W,A,B,C,D,E";
static const int btio_sizes[] = {0, 12, 24, 64, 102, 162, 408, 1020};

static const scale_config_t scale_defaults = {.common = {.dir = "/dev/shm", .reps = 1},
                                              .ranks = "16,64,256,1024,4096,16384,65536,131072",
                                              .per_node = 64,
                                              .cores = 64,
                                              .class_index = 0,
                                              .bytes = 1 << 20,
                                              .tile = 256,
                                              .pattern = PATTERNS};

static const cli_option_t scale_options[] = {
    BENCH_OPTION_DIR(scale_config_t),
    {"ranks", 0, CLI_TEXT, offsetof(scale_config_t, ranks), 0, 0, NULL, "the model's rank counts, comma-separated"},
    {"per-node", 0, CLI_INT, offsetof(scale_config_t, per_node), 1, 1 << 20, NULL, "the model's ranks per node"},
    {"cores", 0, CLI_INT, offsetof(scale_config_t, cores), 1, 1 << 20, NULL, "the model's cores per node"},
    {"class", 0, CLI_CHOICE, offsetof(scale_config_t, class_index), 0, 0, btio_classes,
     "btio grid: S 12, W 24, A 64, B 102, C 162, D 408, E 1020 points per dimension (auto: E for the model "
     "sweep, A for the check)"},
    {"bytes", 0, CLI_SIZE, offsetof(scale_config_t, bytes), 8, 1LL << 30, NULL, "noncontig bytes per rank"},
    {"tile", 0, CLI_INT, offsetof(scale_config_t, tile), 1, 1 << 14, NULL, "checkpoint tile edge (doubles)"},
    {"pattern", 0, CLI_CHOICE, offsetof(scale_config_t, pattern), 0, 0, "noncontig,btio,checkpoint,all",
     "which pattern"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_scale_spec = {
    "ferry-bench scale",
    "ferry-bench scale [options]   (model sweep)   |   mpiexec -n <ranks> ferry-bench scale [options]   (check)",
    "per-rank memory, metadata bytes and planning time of a collective call at P virtual ranks (ferry's planning "
    "code), checked against a real run",
    scale_options,
    bench_shared_options,
    sizeof(scale_config_t),
    &scale_defaults,
    NULL,
    0};

/* One rank's part of a pattern: its view and its bytes. */
typedef struct pattern_view {
    MPI_Offset disp;
    MPI_Datatype etype, filetype; /* filetype committed, the caller frees it */
    MPI_Offset bytes;
} pattern_view_t;

/* px: the largest divisor of P not above its square root (ferry-bench btio's grid). */
static int grid_x(int nprocs)
{
    int px = 1;
    for (int d = 1; (long long)d * d <= nprocs; d++)
        if (nprocs % d == 0) px = d;
    return px;
}

/* Block `i` of n points split in `parts`: its start and length. */
static void split(int n, int parts, int i, int *start, int *len)
{
    *len = n / parts + (i < n % parts);
    *start = i * (n / parts) + (i < n % parts ? i : n % parts);
}

static void btio_view(const scale_config_t *cfg, int r, int nprocs, pattern_view_t *v)
{
    int n = cfg->class_index         ? btio_sizes[cfg->class_index]
            : cfg->common.nprocs > 1 ? 64
                                     : 1020,
        px = grid_x(nprocs), py = nprocs / px;
    int sizes[3] = {n, n, n}, subs[3] = {n, 0, 0}, starts[3] = {0, 0, 0};
    split(n, py, r / px, &starts[1], &subs[1]);
    split(n, px, r % px, &starts[2], &subs[2]);
    MPI_Datatype cell;
    MPI_Type_contiguous(40, MPI_BYTE, &cell);
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, cell, &v->filetype);
    MPI_Type_free(&cell);
    v->disp = 0;
    v->etype = MPI_BYTE;
    v->bytes = 40LL * subs[0] * subs[1] * subs[2];
}

static void checkpoint_view(const scale_config_t *cfg, int r, int nprocs, pattern_view_t *v)
{
    int px = grid_x(nprocs), py = nprocs / px, t = cfg->tile;
    int sizes[2] = {py * t, px * t}, subs[2] = {t, t}, starts[2] = {r / px * t, r % px * t};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &v->filetype);
    v->disp = 0;
    v->etype = MPI_BYTE;
    v->bytes = 8LL * t * t;
}

static void noncontig_view(const scale_config_t *cfg, int r, int nprocs, pattern_view_t *v)
{
    MPI_Type_create_resized(MPI_DOUBLE, 0, 8LL * nprocs, &v->filetype);
    v->disp = 8LL * r;
    v->etype = MPI_BYTE;
    v->bytes = cfg->bytes / 8 * 8;
}

static void pattern_view(const scale_config_t *cfg, int pattern, int r, int nprocs, pattern_view_t *v)
{
    if (pattern == 0) noncontig_view(cfg, r, nprocs, v);
    else if (pattern == 1) btio_view(cfg, r, nprocs, v);
    else checkpoint_view(cfg, r, nprocs, v);
    MPI_Type_commit(&v->filetype);
}

/* ---- the model ---------------------------------------------------------- */

typedef struct model_arg {
    const scale_config_t *cfg;
    int pattern, nprocs;
} model_arg_t;

static int model_rank(void *arg, int r, ferry__coll_model_rank_t *rank)
{
    const model_arg_t *a = arg;
    pattern_view_t v;
    pattern_view(a->cfg, a->pattern, r, a->nprocs, &v);
    int rc = ferry__view_build(&rank->view, v.disp, v.etype, v.filetype, "native", "(model)");
    MPI_Type_free(&v.filetype);
    rank->skip = 0;
    rank->bytes = v.bytes;
    return rc;
}

/* The model for P ranks, n per node, reported as the busiest rank: rank 0 (an aggregator). */
static int run_model(const scale_config_t *cfg, int pattern, int nprocs, int per_node, int cores,
                     ferry__coll_model_t *m)
{
    static model_arg_t arg;
    arg = (model_arg_t){cfg, pattern, nprocs};
    memset(m, 0, sizeof *m);
    m->nprocs = nprocs;
    m->per_node = per_node;
    m->cores = cores;
    m->write = 1;
    m->rank_of = model_rank;
    m->arg = &arg;
    ferry__hints_defaults(&m->hints);
    m->layout = (ferry__fs_layout_t){.block_size = 4096, .stripe_size = 4096, .stripe_count = 1};
    return ferry__coll_model_run(m);
}

static void print_model_header(void)
{
    printf("%8s %6s %11s %11s %11s %9s %11s %7s %5s %5s %11s %9s %9s  %s\n", "P", "shapes", "cache B", "state B",
           "update B", "meta out", "meta in", "regular", "aggs", "steps", "agg bufs B", "update ms", "call ms",
           "strategy");
}

static void print_model_row(const ferry__coll_model_t *m)
{
    const struct ferry__coll_model_out *o = &m->out;
    long long bufs = o->buffers.staging + o->buffers.incoming + o->buffers.window + o->buffers.per_call;
    printf("%8d %6d %11lld %11lld %11lld %9lld %11lld %7s %5d %5lld %11lld %9.2f %9.2f  %s\n", m->nprocs, o->shapes,
           (long long)o->cache_bytes, (long long)o->state_bytes, (long long)o->update_recv_bytes,
           (long long)o->meta_sent, (long long)o->meta_recv, o->regular ? "yes" : "no", o->naggs, (long long)o->steps,
           bufs, 1e3 * o->update_seconds, 1e3 * o->call_seconds, o->strategy);
}

static void record_model(bench_common_t *c, const char *pattern, const ferry__coll_model_t *m)
{
    const struct ferry__coll_model_out *o = &m->out;
    char label[32], table[64];
    snprintf(label, sizeof label, "P=%d", m->nprocs);
    snprintf(table, sizeof table, "scale model %s", pattern);
    /* Per rank: the view cache, all collective state, per call metadata in and out, planning CPU time. */
    const char *ops[] = {"view cache", "coll state", "meta recv", "meta sent", "call planning", "update planning"};
    const char *units[] = {"B", "B", "B", "B", "ms", "ms"};
    double values[] = {(double)o->cache_bytes, (double)o->state_bytes, (double)o->meta_recv,
                       (double)o->meta_sent,   1e3 * o->call_seconds,  1e3 * o->update_seconds};
    for (int i = 0; i < 6; i++) bench_row_value(bench_row(c, table, label, ops[i], units[i]), "model", values[i]);
}

static int sweep(scale_config_t *cfg, int pattern)
{
    printf("\nferry-bench scale: model, %s, %d ranks per node, %d cores per node (rank 0's view)\n",
           pattern_names[pattern], cfg->per_node, cfg->cores);
    print_model_header();
    int counts[MAX_SWEEP], n = 0, failed = 0;
    for (const char *p = cfg->ranks; *p && n < MAX_SWEEP; p = strchr(p, ',') ? strchr(p, ',') + 1 : "")
        counts[n++] = atoi(p);
    for (int i = 0; i < n && counts[i] > 0; i++) {
        ferry__coll_model_t m;
        int rc = run_model(cfg, pattern, counts[i], cfg->per_node, cfg->cores, &m);
        if (rc) {
            printf("%8d model failed (class %d)\n", counts[i], rc);
            failed = 1;
            continue;
        }
        print_model_row(&m);
        record_model(&cfg->common, pattern_names[pattern], &m);
        fflush(stdout);
    }
    return failed;
}

/* ---- the check against a real run -------------------------------------- */

typedef struct measured {
    long long meta_sent, meta_recv, cache_bytes, aggregators, update_recv;
    char strategy[96];
} measured_t;

/* Collective: one write_all of the pattern through ferry; rank 0's counters, the largest cache. */
static int measure(const scale_config_t *cfg, int pattern, const char *path, measured_t *out)
{
    pattern_view_t v;
    pattern_view(cfg, pattern, cfg->common.rank, cfg->common.nprocs, &v);
    char *data = calloc((size_t)v.bytes + 1, 1);
    ferry_File fh;
    int rc = ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS) rc = ferry_File_set_view(fh, v.disp, v.etype, v.filetype, "native", MPI_INFO_NULL);
    if (rc == MPI_SUCCESS) rc = ferry_File_write_all(fh, data, (int)v.bytes, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_Info info = MPI_INFO_NULL;
    if (rc == MPI_SUCCESS) rc = ferry_File_get_info(fh, &info);
    if (rc == MPI_SUCCESS) {
        long long mine[2] = {bench_info_number(info, "ferry_stats_coll_view_cache_bytes", -1),
                             bench_info_number(info, "ferry_stats_coll_aggregator_calls", -1)},
                  most = 0, aggs = 0;
        out->meta_sent = bench_info_number(info, "ferry_stats_coll_meta_bytes", -1);
        out->meta_recv = bench_info_number(info, "ferry_stats_coll_meta_recv_bytes", -1);
        out->update_recv = bench_info_number(info, "ferry_stats_coll_view_recv_bytes", -1);
        int flag = 0;
        MPI_Info_get(info, "ferry_stats_strategy", sizeof out->strategy - 1, out->strategy, &flag);
        MPI_Allreduce(&mine[0], &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&mine[1], &aggs, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        out->cache_bytes = most;
        out->aggregators = aggs;
        MPI_Info_free(&info);
    }
    if (rc == MPI_SUCCESS) rc = ferry_File_close(&fh);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        ferry_Error_string(rc, text, &len);
        fprintf(stderr, "ferry-bench scale: %s on rank %d: %s\n", pattern_names[pattern], cfg->common.rank, text);
    }
    MPI_Type_free(&v.filetype);
    free(data);
    return rc != MPI_SUCCESS;
}

/* One quantity of the check: printed, and recorded as a row (op: its JSON name). */
typedef struct quantity {
    const char *what, *op, *unit;
    double model, measured;
} quantity_t;

static void check_row(bench_common_t *c, const char *pattern, const quantity_t *q)
{
    char table[64], label[32];
    snprintf(table, sizeof table, "scale check %s", pattern);
    snprintf(label, sizeof label, "P=%d", c->nprocs);
    printf("%-26s %14.0f %14.0f %6s\n", q->what, q->model, q->measured, q->model == q->measured ? "same" : "DIFFER");
    bench_row_t *row = bench_row(c, table, label, q->op, q->unit);
    bench_row_value(row, "model", q->model);
    bench_row_value(row, "measured", q->measured);
}

static int check(scale_config_t *cfg, int pattern, const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, pattern_names[pattern]);
    measured_t got = {0};
    int failed = measure(cfg, pattern, path, &got), any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any || cfg->common.rank != 0) return any;
    ferry__coll_model_t m;
    int P = cfg->common.nprocs;
    if (run_model(cfg, pattern, P, P, (int)sysconf(_SC_NPROCESSORS_ONLN), &m) != 0) return 1;
    printf("\nferry-bench scale: check, %s, %d ranks on this node: model vs measured (rank 0)\n",
           pattern_names[pattern], P);
    printf("%-26s %14s %14s\n", "quantity", "model", "measured");
    const quantity_t quantities[] = {
        {"meta sent per call", "meta sent", "B", (double)m.out.meta_sent, (double)got.meta_sent},
        {"meta recv per call", "meta recv", "B", (double)m.out.meta_recv, (double)got.meta_recv},
        {"view cache per rank", "view cache", "B", (double)m.out.cache_bytes, (double)got.cache_bytes},
        {"recv at view update", "update recv", "B", (double)m.out.update_recv_bytes, (double)got.update_recv},
        {"aggregators", "aggregators", "ranks", m.out.naggs, (double)got.aggregators},
    };
    for (size_t i = 0; i < sizeof quantities / sizeof quantities[0]; i++)
        check_row(&cfg->common, pattern_names[pattern], &quantities[i]);
    printf("strategy  model:    %s\n          measured: %s\n", m.out.strategy, got.strategy);
    return 0;
}

int ferry_bench_scale(int argc, char **argv)
{
    scale_config_t cfg;
    int rc = bench_parse(&bench_scale_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    int failed = 0, first = cfg.pattern == PATTERNS ? 0 : cfg.pattern, last = cfg.pattern == PATTERNS ? 2 : cfg.pattern;
    const char *dir = cfg.common.nprocs > 1 ? bench_make_dir(cfg.common.dir, "scale") : NULL;
    for (int p = first; p <= last; p++) {
        if (cfg.common.nprocs > 1) failed |= !dir || check(&cfg, p, dir);
        else failed |= sweep(&cfg, p);
    }
    bench_remove_dir(dir);
    return bench_finish(&cfg.common, failed);
}

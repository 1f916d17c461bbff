/*
 * ferry-bench ckpt: checkpoint strategies (seed 004, POLCOMS) side by side.
 *
 * A 3-D field (nz * n * n doubles) and a 2-D one (n * n) over a px * py
 * grid of uneven blocks with halos of width 2 (the layout of an ocean model)
 * are checkpointed through ferry_ckpt with every strategy (gather, stack,
 * steer), collective and independent, on ferry and on the host MPI-IO (the
 * same code, a backend per file), and compared with a container-style write
 * of the same bytes (each rank's halo-free data, packed beforehand, written
 * contiguously at its offset, no header). Contenders rotate order each
 * repetition; each makes a new set and writes two checkpoints of it: the
 * second is timed (an application's every checkpoint but its first: what
 * the set keeps is in place, so no contender's time depends on what the one
 * before it left to the allocator), the first is shown beside it. Times are
 * the slowest rank's, barrier to barrier (open, write, sync, rename);
 * medians are printed with the ratios the issue asks for. Memory: the
 * module's peak (ferry_ckpt_peak_memory), the growth of the resident set's
 * high-water mark during the set's writes and the page faults of the timed
 * write (max over ranks). --only names the strategies to run.
 *
 * Options: ferry-bench ckpt --help (the table below).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "bench.h"
#include "ferry_ckpt.h"

enum { HALO = 2, MAX_REPS = BENCH_MAX_REPS, CONTENDERS = 14 };

typedef struct ckpt_config {
    bench_common_t common;
    int n, nz;
    const char *only;
} ckpt_config_t;

static const ckpt_config_t ckpt_defaults = {.common = {.dir = "/dev/shm", .reps = 3}, .n = 512, .nz = 20, .only = ""};

static const cli_option_t ckpt_options[] = {
    BENCH_OPTION_DIR(ckpt_config_t),
    {"n", 0, CLI_INT, offsetof(ckpt_config_t, n), 8, 1 << 20, NULL, "horizontal grid points per dimension (n x n)"},
    {"nz", 0, CLI_INT, offsetof(ckpt_config_t, nz), 1, 1 << 16, NULL, "levels of the 3-D field"},
    {"only", 0, CLI_TEXT, offsetof(ckpt_config_t, only), 0, 0, NULL,
     "run only the contenders named (gather, stack, steer, contig; e.g. 'gather,steer'); default all"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_ckpt_spec = {
    "ferry-bench ckpt", "mpiexec -n <ranks> ferry-bench ckpt [options]",
    "checkpoint strategies gather/stack/steer, collective/independent, against a contiguous write (host MPI-IO, "
    "ferry)",
    ckpt_options, bench_shared_options, sizeof(ckpt_config_t), &ckpt_defaults, NULL, 0};

typedef struct ckb {
    int n, nz, reps, rank, nprocs;
    const char *dir;
    MPI_Offset start[3], count[3];
    double *fields[2], *packed;
    long long packed_bytes, offset, total_bytes;
} ckb_t;

typedef struct contender {
    const char *name;
    int strategy, independent, io; /* strategy -1: the container-style write */
    int run;                       /* chosen by --only */
    double t[MAX_REPS], first[MAX_REPS], faults[MAX_REPS]; /* run_one */
    long long peak, rss;
} contender_t;

static const char *strategy_names[] = {"steer", "stack", "gather"};

/* This rank's uneven block of a px * py grid (px * py = nprocs, px the largest factor <= sqrt). */
static void decompose(ckb_t *b)
{
    int px = 1;
    for (int k = 1; k * k <= b->nprocs; k++)
        if (b->nprocs % k == 0) px = k;
    int py = b->nprocs / px, cx = b->rank % px, cy = b->rank / px;
    /* Uneven on purpose: the first blocks get the remainder and one more row each. */
    long long wy = b->n / py, wx = b->n / px;
    b->start[0] = 0, b->count[0] = b->nz;
    b->start[1] = cy * wy + (cy > 0), b->count[1] = cy == py - 1 ? b->n - b->start[1] : wy + (cy == 0);
    b->start[2] = cx * wx, b->count[2] = cx == px - 1 ? b->n - b->start[2] : wx;
}

static long long local_elems(const ckb_t *b, int levels)
{
    return (long long)levels * (b->count[1] + 2 * HALO) * (b->count[2] + 2 * HALO);
}

static void setup(ckb_t *b)
{
    decompose(b);
    for (int f = 0; f < 2; f++) {
        long long n = local_elems(b, f == 0 ? b->nz : 1);
        b->fields[f] = malloc((size_t)n * sizeof(double));
        for (long long i = 0; i < n; i++) b->fields[f][i] = (double)(i * 31 + b->rank) * 0.001 + f;
    }
    long long mine = (b->nz + 1) * b->count[1] * b->count[2];
    b->packed_bytes = mine * 8;
    b->packed = malloc((size_t)b->packed_bytes + 8);
    for (long long i = 0; i < mine; i++) b->packed[i] = (double)i;
    MPI_Exscan(&b->packed_bytes, &b->offset, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (b->rank == 0) b->offset = 0;
    MPI_Allreduce(&b->packed_bytes, &b->total_bytes, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
}

static ferry_ckpt_t open_set(const ckb_t *b, const contender_t *c, const char *base)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ferry_ckpt_keep", "1");
    ferry_ckpt_options_t o = {.strategy = c->strategy, .independent = c->independent, .io = c->io, .info = info};
    ferry_ckpt_t ck = NULL;
    int dims[3], id, halo[3] = {0, HALO, HALO};
    ferry_ckpt_create(MPI_COMM_WORLD, base, &o, &ck);
    MPI_Info_free(&info);
    ferry_ckpt_def_dim(ck, "level", b->nz, &dims[0]);
    ferry_ckpt_def_dim(ck, "y", b->n, &dims[1]);
    ferry_ckpt_def_dim(ck, "x", b->n, &dims[2]);
    ferry_ckpt_var_t v3 = {"temp", MPI_DOUBLE, 3, dims, b->start, b->count, halo, NULL, "degC"};
    ferry_ckpt_var_t v2 = {"eta", MPI_DOUBLE, 2, dims + 1, b->start + 1, b->count + 1, halo + 1, NULL, "m"};
    ferry_ckpt_def_var(ck, &v3, &id);
    ferry_ckpt_def_var(ck, &v2, &id);
    return ck;
}

/* The resident set (kB) or its high-water mark, from /proc/self/status. */
static long long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long long kb = 0;
    size_t len = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, len) == 0) kb = atoll(line + len + 1);
    if (f) fclose(f);
    return kb;
}

/* Resets the high-water mark to the current resident set (Linux: "5" > clear_refs). */
static long long rss_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) fputs("5", f), fclose(f);
    return status_kb("VmRSS:");
}

/* The page faults this process has taken (minor and major). */
static long long faults_now(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (long long)u.ru_minflt + u.ru_majflt;
}

/* One write of the set ck, step step; the slowest rank's seconds, or -1 on failure. */
static double timed_write(ferry_ckpt_t ck, const ckb_t *b, long long step)
{
    void *bufs[2] = {b->fields[0], b->fields[1]};
    bench_barrier();
    double t0 = bench_now();
    int failed = ferry_ckpt_write(ck, step, 0.0, bufs) != MPI_SUCCESS, any;
    double mine = bench_now() - t0, most;
    MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any ? -1 : most;
}

/* Writes number `write` (0 the first) of contender c in repetition rep: a checkpoint of its set (the
 * container-style write: its file again); the slowest rank's seconds, or -1 on failure. */
static double write_once(const ckb_t *b, const contender_t *c, ferry_ckpt_t ck, const char *base, int rep, int write)
{
    if (ck) return timed_write(ck, b, 2LL * rep + write + 1);
    bench_access_t a = {.path = base,
                        .info = MPI_INFO_NULL,
                        .disp = b->offset,
                        .etype = MPI_BYTE,
                        .filetype = MPI_BYTE,
                        .buf = b->packed,
                        .count = (int)b->packed_bytes,
                        .memtype = MPI_BYTE,
                        .collective = 0,
                        .wronly = 1};
    bench_outcome_t out = {0};
    bench_access_run(&a, c->io == FERRY_CKPT_IO_FERRY, 1, &out);
    return out.failed ? -1 : out.seconds;
}

/* Contender c's repetition rep: a new set, two checkpoints of it, the set freed. An application's
 * every checkpoint but its first is the second kind: what the set keeps between writes (staging
 * buffer, gather's root array, transfer types) is there, whatever the contenders before this one left
 * in the allocator. t[rep] is the second write's time, first[rep] the first's, faults[rep] the second
 * write's page faults (most of any rank); peak and RSS growth cover both writes. Returns 0, or -1 on
 * failure. */
static int run_one(const ckb_t *b, contender_t *c, const char *dir, int rep)
{
    char base[600];
    snprintf(base, sizeof base, "%s/%s_%s_%s", dir, c->strategy < 0 ? "contig" : strategy_names[c->strategy],
             c->independent ? "indep" : "coll", c->io ? "host" : "ferry");
#ifdef __GLIBC__
    malloc_trim(0); /* the free memory the contenders before left resident goes back to the system */
#endif
    long long before = rss_reset(), peak = 0, faults = 0;
    ferry_ckpt_t ck = c->strategy < 0 ? NULL : open_set(b, c, base);
    c->first[rep] = write_once(b, c, ck, base, rep, 0);
    if (c->first[rep] >= 0) {
        faults = faults_now();
        c->t[rep] = write_once(b, c, ck, base, rep, 1);
        faults = faults_now() - faults;
    }
    if (ck) peak = ferry_ckpt_peak_memory(ck), ferry_ckpt_free(&ck);
    long long mine[3] = {peak, (status_kb("VmHWM:") - before) * 1024, faults}, most[3];
    MPI_Allreduce(mine, most, 3, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    c->peak = most[0] > c->peak ? most[0] : c->peak;
    c->rss = most[1] > c->rss ? most[1] : c->rss;
    c->faults[rep] = (double)most[2];
    return c->first[rep] < 0 || c->t[rep] < 0 ? -1 : 0;
}

/* Every contender, marked run when only (--only) names its strategy or is empty; the number marked. */
static int make_contenders(contender_t *c, const char *only)
{
    int n = 0, chosen = 0;
    for (int io = 0; io < 2; io++) {
        for (int s = 2; s >= 0; s--)
            for (int indep = 0; indep < 2; indep++) c[n++] = (contender_t){.name = "", .strategy = s, .independent = indep, .io = io};
        c[n++] = (contender_t){.name = "contig", .strategy = -1, .independent = 1, .io = io};
    }
    for (int i = 0; i < n; i++) {
        c[i].run = !only[0] || strstr(only, c[i].strategy < 0 ? "contig" : strategy_names[c[i].strategy]);
        chosen += c[i].run;
    }
    return chosen;
}

static double median_of(const double *values, int reps)
{
    double t[MAX_REPS];
    memcpy(t, values, sizeof t);
    return bench_median(t, reps);
}

static const char *transfers_name(const contender_t *c)
{
    return c->independent ? "independent" : "collective";
}

/* One JSON row per strategy and transfers: ferry beside the host, with both's memory. */
static void record_rows(bench_common_t *common, const ckb_t *b, contender_t *c, const double *m)
{
    for (int i = 0; i < CONTENDERS / 2; i++) {
        const contender_t *f = &c[i], *h = &c[i + CONTENDERS / 2];
        char label[64];
        if (!f->run) continue;
        snprintf(label, sizeof label, "%s %s", f->strategy < 0 ? "contig" : strategy_names[f->strategy],
                 transfers_name(f));
        bench_row_t *row = bench_row(common, "checkpoint write", label, "write", "s");
        bench_row_value(row, "ferry", m[i]);
        bench_row_value(row, "host", m[i + CONTENDERS / 2]);
        bench_row_extra(row, "mib", (double)b->total_bytes / (1 << 20));
        bench_row_extra(row, "ferry_first", median_of(f->first, b->reps));
        bench_row_extra(row, "host_first", median_of(h->first, b->reps));
        bench_row_extra(row, "ferry_faults", median_of(f->faults, b->reps));
        bench_row_extra(row, "host_faults", median_of(h->faults, b->reps));
        bench_row_extra(row, "ferry_peak", (double)f->peak);
        bench_row_extra(row, "ferry_rss", (double)f->rss);
        bench_row_extra(row, "host_peak", (double)h->peak);
        bench_row_extra(row, "host_rss", (double)h->rss);
    }
}

static void print_ratios(const double *m)
{
    for (int io = 0; io < 2; io++) {
        const double *x = m + io * 7; /* gather coll, gather indep, stack coll, stack indep, steer coll, steer indep, contig */
        printf("%s: steer collective / gather collective = %.2f, / gather independent = %.2f; stack collective / contig = %.2f, "
               "stack independent / contig = %.2f\n", io ? "host" : "ferry", x[4] / x[0], x[4] / x[1], x[2] / x[6], x[3] / x[6]);
    }
    printf("ferry / host: gather %.2f, stack %.2f, steer %.2f (collective); contig %.2f\n", m[0] / m[7], m[2] / m[9],
           m[4] / m[11], m[6] / m[13]);
}

static void print_table(bench_common_t *common, const ckb_t *b, contender_t *c, int all)
{
    double mib = (double)b->total_bytes / (1 << 20), m[CONTENDERS];
    for (int i = 0; i < CONTENDERS; i++) m[i] = median_of(c[i].t, b->reps);
    printf("ferry-bench ckpt: %d ranks, %d x %d x %d + %d x %d doubles (%.1f MiB), %s, median of %d\n", b->nprocs, b->nz,
           b->n, b->n, b->n, b->n, mib, b->dir, b->reps);
    printf("| contender | transfers | MPI-IO | seconds | MiB/s | first write s | page faults | module peak | RSS "
           "growth |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < CONTENDERS; i++)
        if (c[i].run)
            printf("| %s | %s | %s | %.4f | %.0f | %.4f | %.0f | %lld | %lld |\n",
                   c[i].strategy < 0 ? "contig (container-style)" : strategy_names[c[i].strategy],
                   transfers_name(&c[i]), c[i].io ? "host" : "ferry", m[i], mib / m[i], median_of(c[i].first, b->reps),
                   median_of(c[i].faults, b->reps), c[i].peak, c[i].rss);
    if (all) print_ratios(m);
    record_rows(common, b, c, m);
}

int ferry_bench_ckpt(int argc, char **argv)
{
    ckpt_config_t cfg;
    int rc = bench_parse(&bench_ckpt_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    ckb_t b = {.n = cfg.n, .nz = cfg.nz, .reps = cfg.common.reps, .dir = cfg.common.dir};
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.nprocs);
    setup(&b);
    contender_t c[CONTENDERS];
    int chosen = make_contenders(c, cfg.only);
    if (!chosen && b.rank == 0) fprintf(stderr, "ferry-bench ckpt: no contender named in --only '%s'\n", cfg.only);
    const char *dir = chosen ? bench_make_dir(b.dir, "ckpt") : NULL;
    int failed = !dir;
    for (int rep = 0; rep < b.reps && !failed; rep++) {
        for (int k = 0; k < CONTENDERS && !failed; k++) {
            contender_t *x = &c[(k + rep * 5) % CONTENDERS];
            if (!x->run) continue;
            failed = run_one(&b, x, dir, rep) != 0;
        }
        bench_progress(&cfg.common, NULL, rep);
    }
    if (!failed && b.rank == 0) print_table(&cfg.common, &b, c, chosen == CONTENDERS);
    if (dir) bench_remove_dir(dir);
    free(b.fields[0]), free(b.fields[1]), free(b.packed);
    return bench_finish(&cfg.common, failed);
}

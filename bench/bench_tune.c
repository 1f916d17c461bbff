/*
 * ferry-bench tune: the measuring half of tools/ferry-tune. ferry alone,
 * a few access classes, each under every candidate set of hints named in
 * a file; tools/ferry-tune picks the winners and writes the FERRY_HINTS file.
 *
 * Classes (per rank, --bytes scaled as listed; write_all/write then
 * read_all/read of the same layout, pages dropped before the read):
 *   coll-contig    one contiguous block (2x), collective
 *   coll-strided   1 KiB blocks interleaved with the other ranks' (1x), collective
 *   coll-fine      16 B blocks interleaved (1/4x), collective
 *   indep-strided  256 B blocks interleaved (1/2x), independent (data sieving)
 *   indep-sparse   4 KiB blocks, three quarters of the file untouched (1/2x), independent
 * Candidates file: one per line, "label<TAB>group<TAB>hints", group coll,
 * indep or all (the classes the hints can change), hints "key=value ...";
 * '#' starts a comment. Each repetition runs every candidate on every class
 * of its group in rotating order, on fresh files. One JSON row per class
 * and direction, one contender per candidate ("ferry <label>", MiB/s).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { CLASSES = 5, MAX_CANDIDATES = BENCH_MAX_CONTENDERS, MAX_REPS = BENCH_MAX_REPS, LINE_MAX_BYTES = 512 };

typedef struct tune_config {
    bench_common_t common;
    long long bytes;        /* per rank, scaled per class */
    const char *candidates; /* the file */
} tune_config_t;

static const tune_config_t tune_defaults = {.common = {.dir = "/dev/shm", .reps = 3}, .bytes = 4 << 20};

static const cli_option_t tune_options[] = {
    BENCH_OPTION_DIR(tune_config_t),
    {"bytes", 0, CLI_SIZE, offsetof(tune_config_t, bytes), 64 << 10, 1 << 28, NULL,
     "bytes per rank, scaled per class"},
    {"candidates", 0, CLI_TEXT, offsetof(tune_config_t, candidates), 0, 0, NULL,
     "file of candidate hint sets: label<TAB>coll|indep|all<TAB>key=value ..."},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_tune_spec = {
    "ferry-bench tune", "mpiexec -n <ranks> ferry-bench tune --candidates FILE [options]   (run by tools/ferry-tune)",
    "ferry alone under candidate hint sets on a few access classes (the measurements ferry-tune picks from)",
    tune_options, bench_shared_options, sizeof(tune_config_t), &tune_defaults, NULL, 0};

static const struct {
    const char *name;
    int collective;
    int block;     /* bytes per block; 0: one contiguous block */
    int spacing;   /* a rank's blocks are spacing * nprocs blocks apart */
    int scale_num, scale_den;
    int group;     /* 0 coll, 1 indep */
} classes[CLASSES] = {
    {"coll-contig", 1, 0, 1, 2, 1, 0},    {"coll-strided", 1, 1024, 1, 1, 1, 0}, {"coll-fine", 1, 16, 1, 1, 4, 0},
    {"indep-strided", 0, 256, 1, 1, 2, 1}, {"indep-sparse", 0, 4096, 4, 1, 2, 1},
};

typedef struct candidate {
    char label[96];
    int group; /* 0 coll, 1 indep, 2 all */
    char hints[LINE_MAX_BYTES];
} candidate_t;

typedef struct tune_state {
    tune_config_t *cfg;
    candidate_t candidates[MAX_CANDIDATES];
    int count;
    char *mem;
    double seconds[CLASSES][2][MAX_CANDIDATES][MAX_REPS]; /* [class][write, read] */
    int failed;
} tune_state_t;

static int applies(const candidate_t *c, int k)
{
    return c->group == 2 || c->group == classes[k].group;
}

/* One "label<TAB>group<TAB>hints" line; 0 when it is a candidate. */
static int parse_candidate(char *line, candidate_t *c)
{
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == '#' || line[0] == '\0') return -1;
    char *group = strchr(line, '\t'), *hints = group ? strchr(group + 1, '\t') : NULL;
    if (!hints) return -2;
    *group++ = '\0';
    *hints++ = '\0';
    c->group = !strcmp(group, "coll") ? 0 : !strcmp(group, "indep") ? 1 : !strcmp(group, "all") ? 2 : -1;
    snprintf(c->label, sizeof c->label, "ferry %.80s", line);
    snprintf(c->hints, sizeof c->hints, "%s", hints);
    return c->group >= 0 ? 0 : -2;
}

static int read_candidates(tune_state_t *st)
{
    FILE *f = st->cfg->candidates ? fopen(st->cfg->candidates, "r") : NULL;
    char line[LINE_MAX_BYTES + 128];
    int bad = !f;
    while (f && !bad && fgets(line, sizeof line, f)) {
        int rc = parse_candidate(line, &st->candidates[st->count]);
        bad = rc == -2 || (rc == 0 && st->count == MAX_CANDIDATES);
        if (rc == 0 && !bad) st->count++;
    }
    if (f) fclose(f);
    return bad || st->count == 0;
}

static bench_access_t layout_of(tune_state_t *st, int k, MPI_Datatype *filetype)
{
    const tune_config_t *cfg = st->cfg;
    long long bytes = cfg->bytes * classes[k].scale_num / classes[k].scale_den;
    int p = cfg->common.nprocs, rank = cfg->common.rank, block = classes[k].block;
    bench_access_t a = {.info = MPI_INFO_NULL, .etype = MPI_BYTE, .filetype = MPI_BYTE, .buf = st->mem,
                        .count = (int)bytes, .memtype = MPI_BYTE, .collective = classes[k].collective};
    a.disp = (MPI_Offset)rank * bytes;
    *filetype = MPI_DATATYPE_NULL;
    if (block) {
        MPI_Type_vector((int)(bytes / block), block, block * classes[k].spacing * p, MPI_BYTE, filetype);
        MPI_Type_commit(filetype);
        a.filetype = *filetype;
        a.disp = (MPI_Offset)rank * block;
    }
    return a;
}

static void measure(tune_state_t *st, int k, int c, int rep, const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s.%d.%d", dir, classes[k].name, c, rep);
    MPI_Datatype filetype;
    bench_access_t a = layout_of(st, k, &filetype);
    a.path = path;
    a.info = bench_info_from(st->candidates[c].hints);
    bench_outcome_t w = {0}, r = {0};
    bench_access_run(&a, 1, 1, &w);
    bench_drop_pages(path);
    bench_access_run(&a, 1, 0, &r);
    st->seconds[k][0][c][rep] = w.call_seconds;
    st->seconds[k][1][c][rep] = r.call_seconds;
    st->failed |= w.failed || r.failed;
    MPI_Info_free(&a.info);
    if (filetype != MPI_DATATYPE_NULL) MPI_Type_free(&filetype);
    if (st->cfg->common.rank == 0) unlink(path);
}

static void run_reps(tune_state_t *st, const char *dir)
{
    for (int rep = 0; rep < st->cfg->common.reps; rep++) {
        for (int k = 0; k < CLASSES; k++)
            for (int i = 0; i < st->count; i++) {
                int c = (i + rep) % st->count;
                if (applies(&st->candidates[c], k)) measure(st, k, c, rep, dir);
            }
        bench_progress(&st->cfg->common, NULL, rep);
    }
}

static void print_class(tune_state_t *st, int k)
{
    const tune_config_t *cfg = st->cfg;
    double mib = (double)(cfg->bytes * classes[k].scale_num / classes[k].scale_den) * cfg->common.nprocs / (1 << 20);
    for (int dir = 0; dir < 2; dir++) {
        bench_row_t *row = bench_row(&st->cfg->common, classes[k].name, classes[k].name, dir ? "read" : "write",
                                     "MiB/s");
        bench_row_extra(row, "mib", mib);
        for (int c = 0; c < st->count; c++) {
            if (!applies(&st->candidates[c], k)) continue;
            double v = mib / bench_median(st->seconds[k][dir][c], cfg->common.reps);
            printf("%-14s %-5s %-40s %10.1f\n", classes[k].name, dir ? "read" : "write", st->candidates[c].label, v);
            bench_row_value(row, st->candidates[c].label, v);
        }
    }
}

int ferry_bench_tune(int argc, char **argv)
{
    tune_config_t cfg;
    int rc = bench_parse(&bench_tune_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    static tune_state_t st;
    memset(&st, 0, sizeof st);
    st.cfg = &cfg;
    if (read_candidates(&st)) {
        if (cfg.common.rank == 0) fprintf(stderr, "ferry-bench tune: --candidates names no readable, valid file\n");
        bench_finish(&cfg.common, 1);
        return 2;
    }
    st.mem = calloc(1, (size_t)cfg.bytes * 2);
    const char *dir = st.mem ? bench_make_dir(cfg.common.dir, "tune") : NULL;
    if (dir) run_reps(&st, dir);
    if (dir && cfg.common.rank == 0) {
        printf("ferry-bench tune: %d ranks, %lld B per rank (scaled per class), dir %s, median of %d (MiB/s)\n",
               cfg.common.nprocs, cfg.bytes, cfg.common.dir, cfg.common.reps);
        for (int k = 0; k < CLASSES; k++) print_class(&st, k);
    }
    bench_remove_dir(dir);
    free(st.mem);
    return bench_finish(&cfg.common, !dir || st.failed);
}

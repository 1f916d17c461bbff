/*
 * The failure matrix of issue 30 (driven by ckpt_faults.py): every case is a
 * checkpoint write that must fail, and after it the previous checkpoint must
 * stand.
 *
 *   ckpt_faults full <dir> <first>      full disk: <dir> is a small file system
 *                                       ("-": none, only the injected cases run)
 *   ckpt_faults rerun <dir> <first>     a second run in an old run's directory
 *   ckpt_faults mismatch <dir> <first>  definitions that differ between ranks
 *
 * For each case rank 0 prints "ckpt_faults: begin <i> <name>", then one line
 * "ckpt_faults: case <name>: <outcome>: <error string>" where outcome is
 * "refused" (every rank got an error, no .tmp is left, the previous
 * checkpoint verifies and restarts with its values), or what went wrong:
 * "SILENT" (a rank got MPI_SUCCESS), "WRONG" (an error of another class than
 * the case expects, or one that does not name the cause), "LOST" (the
 * previous checkpoint is gone or invalid), "TMP" (a temporary file was left). A case that does not return
 * within CASE_SECONDS is a hang: rank 0 prints "ckpt_faults: HANG <i>" and the
 * job ends (the driver starts it again from case i + 1). The program counts
 * the outcomes and fails at the end when any case went wrong.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_cases.h"
#include "fs/fs.h"

enum { CASE_SECONDS = 30, MAX_CASES = 64 };

typedef struct fcase {
    const char *name;
    int io, strategy, independent, fill; /* full: fill 0 injected ENOSPC, 1 part of the space, 2 none */
    int unreserved;                      /* full, host: as where fallocate is not supported */
    int series;                          /* full: the steps as records of one file */
    const char *kind;                    /* mismatch: what differs */
} fcase_t;

static int current_case;
static int bad_cases, refused_cases;

static void on_alarm(int sig)
{
    (void)sig;
    char line[64];
    int n = snprintf(line, sizeof line, "ckpt_faults: HANG %d\n", current_case);
    if (ft_rank == 0 && write(1, line, (size_t)n) < 0) _exit(125);
    _exit(124);
}

static void begin_case(int i, const char *name)
{
    current_case = i;
    if (ft_rank == 0) printf("ckpt_faults: begin %d %s\n", i, name);
    fflush(stdout);
    alarm(CASE_SECONDS);
}

/* A fresh empty directory <dir>/<name> (rank 0 makes it). */
static void fresh_dir(const char *dir, const char *name, char *out, size_t len)
{
    snprintf(out, len, "%s/%s", dir, name);
    if (ft_rank == 0) {
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", out, out);
        FT_CHECK(system(cmd) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static int tmp_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        n += len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0;
    }
    if (d) closedir(d);
    return n;
}

/* 1 on every rank when the restart of ck gives step with its values on every rank. */
static int restarts_at(ferry_ckpt_t ck, ckpt_case_var_t *v, long long step)
{
    ckpt_case_var_t want = *v;
    want.buf = NULL;
    cc_fill(&want, 0, step);
    memset(v->buf, 0x5A, v->bytes);
    ferry_ckpt_info_t info;
    int rc = ferry_ckpt_restart(ck, (void *[]){v->buf}, &info);
    int ok = rc == MPI_SUCCESS && info.step == step && memcmp(v->buf, want.buf, v->bytes) == 0, all = 0;
    free(want.buf);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* What a failed write must say: its class (0: any) and a part of its message on every rank (on
 * one rank at least when some_rank: MPICH's ROMIO tells only the rank that hit ENOSPC why, the
 * others get "Other I/O error"). */
typedef struct expect {
    int cls;
    const char *needle;
    int some_rank;
} expect_t;

/* Judges a write that had to fail: its codes on every rank, then the directory and the previous step. */
static void judge(const char *name, int rc, const expect_t *want, const char *dir, ferry_ckpt_t good, ckpt_case_var_t *v)
{
    const long long prev = 1;
    alarm(CASE_SECONDS);
    int succeeded = rc == MPI_SUCCESS, any_success = 0, wrong = 0, any_wrong = 0, named = 0, all_named = 0;
    if (!succeeded) wrong = want->cls && ft_class(rc) != want->cls;
    if (!succeeded) named = strstr(ft_errstr(rc), want->needle) != NULL;
    if (wrong || !named) fprintf(stderr, "ckpt_faults: rank %d: class %d, '%s'\n", ft_rank, ft_class(rc), ft_errstr(rc));
    MPI_Allreduce(&succeeded, &any_success, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Allreduce(&wrong, &any_wrong, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Allreduce(&named, &all_named, 1, MPI_INT, want->some_rank ? MPI_LOR : MPI_LAND, MPI_COMM_WORLD);
    any_wrong |= !all_named;
    char path[4200], msg[MPI_MAX_ERROR_STRING + 1] = "";
    if (!succeeded) snprintf(msg, sizeof msg, "%s", ft_errstr(rc));
    FT_OK(ferry_ckpt_path(good, prev, path, sizeof path));
    int tmps = ft_rank == 0 ? tmp_files(dir) : 0, exists = cc_exists(path);
    MPI_Bcast(&tmps, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int valid = exists && ferry_ckpt_verify(MPI_COMM_WORLD, path) == MPI_SUCCESS;
    valid = valid && restarts_at(good, v, prev);
    const char *outcome = any_success ? "SILENT" : any_wrong ? "WRONG" : !valid ? "LOST" : tmps ? "TMP" : "refused";
    if (ft_rank == 0) printf("ckpt_faults: case %s: %s: %s\n", name, outcome, msg);
    fflush(stdout);
    if (strcmp(outcome, "refused") == 0) refused_cases++;
    else bad_cases++;
    alarm(0);
}

/* ---- full disk ---------------------------------------------------------- */

static const char *io_names[] = {"ferry", "host"}, *strategy_names[] = {"steer", "stack", "gather"};
static const char *fill_names[] = {"injected", "part", "none"};

static ferry_ckpt_t full_set(const char *base, const fcase_t *c, ckpt_case_var_t *v)
{
    /* 800 KiB: a second one does not fit beside the first in 1200 KiB */
    cc_set_t s = {.base = base, .opt = {.strategy = c->strategy, .independent = c->independent, .io = c->io, .series = c->series}, .keep = 1,
                  .type = MPI_DOUBLE, .n = 320, .halo = 1, .seed = 5, .var = "temp"};
    return cc_make_set(&s, v);
}

/* Rank 0 fills the file system of dir up to the last byte. */
static void fill_up(const char *dir)
{
    if (ft_rank != 0) return;
    char path[1400];
    static char block[65536];
    snprintf(path, sizeof path, "%s/filler", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    FT_CHECK(fd >= 0);
    for (size_t n = sizeof block; n >= 1; n /= 2)
        while (write(fd, block, n) == (ssize_t)n) {}
    close(fd);
}

static void full_case(const char *mount, const fcase_t *c)
{
    char dir[1200], base[1300];
    fresh_dir(mount, "set", dir, sizeof dir);
    snprintf(base, sizeof base, "%s/ocean", dir);
    ckpt_case_var_t v;
    ferry_ckpt_t ck = full_set(base, c, &v);
    cc_fill(&v, 0, 1);
    FT_OK(ferry_ckpt_write(ck, 1, 1.0, (void *[]){v.buf}));
    if (c->fill == 2) fill_up(dir);
    if (c->fill == 0) FT_EQ(ferry__fs_fault_arm("write:1+:ENOSPC"), 0);
    if (c->unreserved) setenv("FERRY_CKPT_RESERVE", "0", 1);
    MPI_Barrier(MPI_COMM_WORLD);
    cc_fill(&v, 0, 2);
    int rc = ferry_ckpt_write(ck, 2, 2.0, (void *[]){v.buf});
    ferry__fs_fault_disarm();
    unsetenv("FERRY_CKPT_RESERVE");
    judge(c->name, rc, &(expect_t){c->fill == 0 ? MPI_ERR_NO_SPACE : 0, "device", c->io == FERRY_CKPT_IO_HOST}, dir, ck, &v);
    free(v.buf);
    FT_OK(ferry_ckpt_free(&ck));
    fresh_dir(mount, "set", dir, sizeof dir); /* frees the space for the next case */
}

static int full_cases(const char *mount, fcase_t *cases, char names[][80])
{
    int n = 0, has_fs = strcmp(mount, "-") != 0;
    for (int fill = 0; fill < 3; fill++)
        for (int io = 0; io < 3; io++) /* 2: the host without fallocate */
            for (int s = 0; s < 3; s++)
                for (int indep = 0; indep < 2; indep++) {
                    if (fill != 0 && !has_fs) continue;      /* no small file system: injected only */
                    if (fill == 0 && io != FERRY_CKPT_IO_FERRY) continue; /* injection reaches ferry's backend only */
                    snprintf(names[n], 80, "full-%s-%s-%s-%s", fill_names[fill], io == 2 ? "host-unreserved" : io_names[io],
                             strategy_names[s], indep ? "indep" : "coll");
                    cases[n] = (fcase_t){.name = names[n], .io = io ? FERRY_CKPT_IO_HOST : FERRY_CKPT_IO_FERRY,
                                         .strategy = s, .independent = indep, .fill = fill, .unreserved = io == 2};
                    n++;
                }
    for (int fill = 1; fill < 3 && has_fs; fill++) /* a series: the record is not counted, the file cut back */
        for (int io = 0; io < 3; io++) {
            snprintf(names[n], 80, "full-%s-%s-series-steer-coll", fill_names[fill], io == 2 ? "host-unreserved" : io_names[io]);
            cases[n] = (fcase_t){.name = names[n], .io = io ? FERRY_CKPT_IO_HOST : FERRY_CKPT_IO_FERRY, .fill = fill,
                                 .unreserved = io == 2, .series = 1};
            n++;
        }
    return n;
}

/* ---- a second run in one directory ------------------------------------- */

static ferry_ckpt_t simple_set(const char *base, int keep, ckpt_case_var_t *v)
{
    cc_set_t s = {.base = base, .keep = keep, .type = MPI_DOUBLE, .n = 48, .halo = 2, .seed = 6, .var = "eta"};
    return cc_make_set(&s, v);
}

static void write_steps(ferry_ckpt_t ck, ckpt_case_var_t *v, long long from, long long to)
{
    for (long long s = from; s <= to; s++) {
        cc_fill(v, 0, s);
        FT_OK(ferry_ckpt_write(ck, s, (double)s, (void *[]){v->buf}));
    }
}

/* Rank 0: which of steps 1..9 of base exist, as a string of digits. */
static void steps_on_disk(ferry_ckpt_t ck, char *out)
{
    char path[4200];
    int n = 0;
    for (long long s = 1; s <= 9; s++) {
        FT_OK(ferry_ckpt_path(ck, s, path, sizeof path));
        if (cc_exists(path)) out[n++] = (char)('0' + s);
    }
    out[n] = '\0';
    MPI_Bcast(out, 16, MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* A new run (keep K) writes step 1 where an old run left steps 4 and 5; then 2 and 3. */
static void rerun_case(const char *scratch, const fcase_t *c, int keep)
{
    char dir[1200], base[1300], on_disk[16];
    fresh_dir(scratch, c->name, dir, sizeof dir);
    snprintf(base, sizeof base, "%s/ocean", dir);
    ckpt_case_var_t v;
    ferry_ckpt_t old = simple_set(base, 2, &v);
    write_steps(old, &v, 4, 5);
    FT_OK(ferry_ckpt_free(&old));
    free(v.buf);
    ferry_ckpt_t ck = simple_set(base, keep, &v);
    v.buf = NULL;
    write_steps(ck, &v, 1, 1);
    steps_on_disk(ck, on_disk);
    int ok = strcmp(on_disk, "1") == 0 && restarts_at(ck, &v, 1);
    write_steps(ck, &v, 2, 3);
    steps_on_disk(ck, on_disk);
    ok = ok && strcmp(on_disk, keep == 1 ? "3" : "23") == 0 && restarts_at(ck, &v, 3);
    if (ft_rank == 0) printf("ckpt_faults: case %s: %s: steps on disk at the end: %s\n", c->name, ok ? "refused" : "LOST", on_disk);
    ok ? refused_cases++ : bad_cases++;
    free(v.buf);
    FT_OK(ferry_ckpt_free(&ck));
}

/* Restart falls back from a damaged step 7 to 6; the run goes on and writes 7 and 8. */
static void fallback_case(const char *scratch, const fcase_t *c)
{
    char dir[1200], base[1300], path[4200], on_disk[16];
    fresh_dir(scratch, c->name, dir, sizeof dir);
    snprintf(base, sizeof base, "%s/ocean", dir);
    ckpt_case_var_t v;
    ferry_ckpt_t ck = simple_set(base, 2, &v);
    write_steps(ck, &v, 6, 7);
    FT_OK(ferry_ckpt_path(ck, 7, path, sizeof path));
    if (ft_rank == 0) FT_CHECK(truncate(path, 100) == 0);
    MPI_Barrier(MPI_COMM_WORLD);
    int ok = restarts_at(ck, &v, 6);
    write_steps(ck, &v, 7, 8);
    steps_on_disk(ck, on_disk);
    ok = ok && strcmp(on_disk, "78") == 0 && restarts_at(ck, &v, 8);
    if (ft_rank == 0) printf("ckpt_faults: case %s: %s: steps on disk at the end: %s\n", c->name, ok ? "refused" : "LOST", on_disk);
    ok ? refused_cases++ : bad_cases++;
    free(v.buf);
    FT_OK(ferry_ckpt_free(&ck));
}

/* ---- definitions that differ between ranks ------------------------------ */

static const char *mismatch_kinds[] = {"extra-var", "dim-length", "dim-name", "var-name", "type",    "order",
                                       "strategy",  "transfers",  "format",   "overlap",  "ndims"};

/* Rows [r * n / P, (r + 1) * n / P) of a 2-D array; "overlap": rank 1 also takes rank 0's last row. */
static void slab(const char *kind, MPI_Offset n, MPI_Offset *start, MPI_Offset *count)
{
    start[0] = n * ft_rank / ft_size;
    count[0] = n * (ft_rank + 1) / ft_size - start[0];
    start[1] = 0;
    if (strcmp(kind, "overlap") == 0 && ft_rank == 1) start[0]--, count[0]++;
}

/* The set of a mismatch case ("" for the consistent one, "temp-only" for it without salt): temp
 * (double) and salt (float), filled with step's values; bufs in the order of the variable ids. */
static ferry_ckpt_t mismatch_set(const char *base, const char *kind, long long step, ckpt_case_var_t v[2], void **bufs)
{
    int last = ft_rank == ft_size - 1, first = ft_rank == 0, dims[2], id;
    ferry_ckpt_options_t o = {.strategy = !strcmp(kind, "strategy") && ft_rank == 1 ? FERRY_CKPT_STACK : FERRY_CKPT_STEER,
                              .independent = !strcmp(kind, "transfers") && first,
                              .format = !strcmp(kind, "format") && last ? FERRY_CKPT_CDF2 : FERRY_CKPT_CDF5};
    ferry_ckpt_t ck;
    FT_OK(ferry_ckpt_create(MPI_COMM_WORLD, base, &o, &ck));
    FT_OK(ferry_ckpt_def_dim(ck, !strcmp(kind, "dim-name") && last ? "lat" : "y", 24, &dims[0]));
    FT_OK(ferry_ckpt_def_dim(ck, "x", !strcmp(kind, "dim-length") && last ? 31 : 30, &dims[1]));
    const char *names[2] = {"temp", !strcmp(kind, "var-name") && last ? "salinity" : "salt"};
    int order = !strcmp(kind, "order") && last, nvars = strcmp(kind, "temp-only") ? 2 : 1;
    memset(v, 0, 2 * sizeof *v);
    for (int k = 0; k < nvars; k++) {
        ckpt_case_var_t *w = &v[order ? 1 - k : k];
        int which = (int)(w - v), halo[2] = {1, 1};
        w->ndims = 2;
        w->halo = 1;
        w->type = which == 0 ? MPI_DOUBLE : (!strcmp(kind, "type") && last ? MPI_INT : MPI_FLOAT);
        w->global[0] = 24, w->global[1] = 30;
        slab(kind, 24, w->start, w->count);
        w->count[1] = 30;
        cc_fill(w, which, step);
        int nd = !strcmp(kind, "ndims") && last && which == 1 ? 1 : 2;
        ferry_ckpt_var_t d = {.name = names[which], .type = w->type, .ndims = nd, .dimids = nd == 1 ? &dims[1] : dims,
                              .start = nd == 1 ? &w->start[1] : w->start, .count = nd == 1 ? &w->count[1] : w->count,
                              .halo = halo};
        FT_OK(ferry_ckpt_def_var(ck, &d, &id));
        bufs[id] = w->buf;
    }
    if (!strcmp(kind, "extra-var") && first) {
        static MPI_Offset s[1] = {0}, n[1] = {30};
        static double extra[30];
        ferry_ckpt_var_t d = {.name = "extra", .type = MPI_DOUBLE, .ndims = 1, .dimids = &dims[1], .start = s, .count = n};
        FT_OK(ferry_ckpt_def_var(ck, &d, &id));
        bufs[id] = extra;
    }
    return ck;
}

static void mismatch_case(const char *scratch, const fcase_t *c)
{
    char dir[1200], base[1300];
    fresh_dir(scratch, c->name, dir, sizeof dir);
    snprintf(base, sizeof base, "%s/ocean", dir);
    ckpt_case_var_t good[2], bad[2];
    void *good_bufs[3], *bad_bufs[3];
    ferry_ckpt_t ok = mismatch_set(base, "", 1, good, good_bufs);
    FT_OK(ferry_ckpt_write(ok, 1, 1.0, good_bufs));
    ferry_ckpt_t ck = mismatch_set(base, c->kind, 2, bad, bad_bufs);
    int rc = ferry_ckpt_write(ck, 2, 2.0, bad_bufs);
    /* judge() restarts a consistent set of the first variable only. */
    for (int k = 0; k < 2; k++) free(good[k].buf);
    ferry_ckpt_free(&ok);
    ok = mismatch_set(base, "temp-only", 1, good, good_bufs);
    int overlap = !strcmp(c->kind, "overlap");
    judge(c->name, rc, &(expect_t){overlap ? MPI_ERR_ARG : MPI_ERR_NOT_SAME, overlap ? "overlap" : "differ: rank 0 has", 0}, dir, ok, &good[0]);
    for (int k = 0; k < 2; k++) free(bad[k].buf), free(good[k].buf);
    ferry_ckpt_free(&ck);
    ferry_ckpt_free(&ok);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    FT_CHECK(argc == 4);
    signal(SIGALRM, on_alarm);
    const char *group = argv[1], *dir = argv[2];
    int first = atoi(argv[3]), n = 0;
    static fcase_t cases[MAX_CASES];
    static char names[MAX_CASES][80];
    if (!strcmp(group, "full")) n = full_cases(dir, cases, names);
    if (!strcmp(group, "rerun")) {
        cases[n++] = (fcase_t){.name = "rerun-keep1"};
        cases[n++] = (fcase_t){.name = "rerun-keep2"};
        cases[n++] = (fcase_t){.name = "restart-fallback-then-write"};
    }
    for (int k = 0; !strcmp(group, "mismatch") && k < (int)(sizeof mismatch_kinds / sizeof *mismatch_kinds); k++) {
        snprintf(names[n], 80, "mismatch-%s-np%d", mismatch_kinds[k], ft_size);
        cases[n] = (fcase_t){.name = names[n], .kind = mismatch_kinds[k]};
        n++;
    }
    const char *scratch = strcmp(group, "full") ? ft_scratch_dir() : dir;
    for (int i = first; i < n; i++) {
        begin_case(i, cases[i].name);
        if (!strcmp(group, "full")) full_case(strcmp(dir, "-") ? dir : ft_scratch_dir(), &cases[i]);
        else if (!strcmp(group, "mismatch")) mismatch_case(scratch, &cases[i]);
        else if (i < 2) rerun_case(scratch, &cases[i], i + 1);
        else fallback_case(scratch, &cases[i]);
        alarm(0);
    }
    if (ft_rank == 0) printf("ckpt_faults: %s from case %d: %d refused as they should be, %d went wrong\n", group, first, refused_cases, bad_cases);
    FT_EQ(bad_cases, 0);
    return ft_finish();
}

/*
 * The checkpoint case of the fault suite: one variable (doubles, a random
 * bisection, halos) through ferry_ckpt over ferry's MPI-IO or the host's.
 * Step 1 is written before the fault (its duration is the rehearsal); call
 * 1 writes step 2 under the fault, call 2 step 3 with the same set, call 3
 * (after the repair, a fresh set) restarts, then writes step 4 and restarts
 * again.
 *
 * The check: the restart finds the newest step every rank saw committed
 * (or, where ranks disagreed, one of the steps in doubt) with its values,
 * every step every rank saw committed still verifies (KEEP keeps them all),
 * and after step 4 the restart finds step 4. Temporary files left behind are
 * counted.
 */
#include <dirent.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_cases.h"
#include "cluster_faults.h"

enum { KEEP = 8, SEED = 7 };

static ferry_ckpt_t make_set(const fx_run_t *run, ckpt_case_var_t *v)
{
    double values = (double)(run->megabytes << 20) * ft_size / 8;
    cc_set_t s = {.base = run->data,
                  .opt = {.io = run->host ? FERRY_CKPT_IO_HOST : FERRY_CKPT_IO_FERRY},
                  .keep = KEEP,
                  .type = MPI_DOUBLE,
                  .n = (MPI_Offset)sqrt(values),
                  .halo = 1,
                  .seed = SEED,
                  .var = "t"};
    return cc_make_set(&s, v);
}

static void write_step(ferry_ckpt_t ck, ckpt_case_var_t *v, long long step, fx_outcome_t *o)
{
    cc_fill(v, 0, step); /* frees the buffer it replaces */
    void *bufs[1] = {v->buf};
    memset(o, 0, sizeof *o);
    double t0 = fx_now();
    fx_record(o, ferry_ckpt_write(ck, step, (double)step, bufs), t0);
}

/* Collective: restarts into v; the step found (-1: none) and the bytes that differ from that step's values. */
static long long restart(ferry_ckpt_t ck, ckpt_case_var_t *v, long long *wrong)
{
    ferry_ckpt_info_t info;
    cc_fill(v, 0, 999);
    void *bufs[1] = {v->buf};
    long long step = ferry_ckpt_restart(ck, bufs, &info) == MPI_SUCCESS ? info.step : -1, mine = 0;
    ckpt_case_var_t expected = *v;
    expected.buf = NULL;
    cc_fill(&expected, 0, step);
    for (size_t i = 0; step >= 0 && i < v->bytes; i++)
        mine += ((unsigned char *)v->buf)[i] != ((unsigned char *)expected.buf)[i];
    free(expected.buf);
    MPI_Allreduce(&mine, wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return step;
}

/* Whether every rank (1), no rank (0) or some ranks (-1) saw a call succeed. */
static int committed(const fx_outcome_t *all)
{
    int ok = 0;
    for (int r = 0; r < ft_size; r++) ok += all[r].cls == 0;
    return ok == ft_size ? 1 : ok == 0 ? 0 : -1;
}

static int tmp_files(const char *base)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s", base);
    DIR *d = opendir(dirname(dir));
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        n += len > 4 && !strcmp(e->d_name + len - 4, ".tmp");
    }
    if (d) closedir(d);
    return n;
}

/* Steps 2 and 3 (calls 1 and 2): the newest step sure to be there, the highest one in doubt, and
 * (bit s of range[2]) the steps every rank saw committed. */
static void expected_steps(fx_outcome_t *const all[2], long long range[3])
{
    range[0] = range[1] = 1;
    range[2] = 1 << 1;
    for (int k = 0; k < 2; k++) {
        int c = committed(all[k]);
        if (c == 1) range[0] = range[1] = k + 2;
        else if (c < 0) range[1] = k + 2;
        if (c == 1) range[2] |= 1 << (k + 2);
    }
}

/* Collective: call 3 and the check (rank 0 writes check.out). */
static void after_repair(const fx_run_t *run, fx_outcome_t *const all[2])
{
    long long range[3], wrong = 0, wrong_after = 0;
    if (ft_rank == 0) expected_steps(all, range);
    MPI_Bcast(range, 3, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    ckpt_case_var_t v;
    ferry_ckpt_t ck = make_set(run, &v);
    long long found = restart(ck, &v, &wrong);
    int bad = 0;
    for (long long step = 1; step <= 3; step++) {
        if (!(range[2] & 1 << step)) continue;
        char path[1200];
        ferry_ckpt_path(ck, step, path, sizeof path);
        bad += ferry_ckpt_verify(MPI_COMM_WORLD, path) != MPI_SUCCESS;
    }
    fx_outcome_t o;
    write_step(ck, &v, 4, &o);
    fx_report(run, "call3", &o, NULL);
    long long after = restart(ck, &v, &wrong_after);
    ferry_ckpt_free(&ck);
    free(v.buf);
    char text[512];
    snprintf(text, sizeof text,
             "restart_step\t%lld\nexpected_low\t%lld\nexpected_high\t%lld\nwrong_bytes\t%lld\nverify_failures\t%d\n"
             "tmp_left\t%d\nafter_step\t%lld\nwrong_after\t%lld\n",
             found, range[0], range[1], wrong, bad, ft_rank == 0 ? tmp_files(run->data) : 0, after, wrong_after);
    fx_mark(run, "check.out", text);
}

void fx_ckpt_case(const fx_run_t *run)
{
    ckpt_case_var_t v;
    ferry_ckpt_t ck = make_set(run, &v);
    fx_outcome_t o[2], closing, *all[2];
    write_step(ck, &v, 1, &o[0]);
    FT_EQ(o[0].cls, 0);
    char target[1200];
    ferry_ckpt_path(ck, 2, target, sizeof target - 4);
    strcat(target, ".tmp");
    fx_ready(run, o[0].t1 - o[0].t0, target);
    for (int k = 0; k < 2; k++) all[k] = calloc((size_t)ft_size, sizeof *all[k]);
    fx_begin_call(run);
    write_step(ck, &v, 2, &o[0]);
    fx_report(run, "call1", &o[0], all[0]);
    fx_wait(run, "next");
    write_step(ck, &v, 3, &o[1]);
    fx_report(run, "call2", &o[1], all[1]);
    memset(&closing, 0, sizeof closing);
    double t0 = fx_now();
    fx_record(&closing, ferry_ckpt_free(&ck), t0);
    fx_report(run, "close", &closing, NULL);
    free(v.buf);
    fx_wait(run, "repaired");
    after_repair(run, all);
    for (int k = 0; k < 2; k++) free(all[k]);
}

/*
 * ckpt_steps: checkpoints written step after step by one set (issue 31 item
 * 3). Steer and stack writes pack the blocks big-endian into a staging buffer
 * in the checksum's pass and keep their combined datatypes from one step to
 * the next; the files they write must be byte for byte those of the
 * converting path (ferry_ckpt_stage_limit 0), at every step, also when the
 * user's buffers move between steps (the kept types must follow them) and
 * when only some ranks' blocks would fit the limit (every rank then takes the
 * converting path); the user's buffers are never changed and every step
 * restarts with its own values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_cases.h"

enum { N = 96 };

/* Rank 0 compares two files byte for byte; the result for every rank. */
static void same_files(const char *a, const char *b)
{
    int same = 1;
    if (ft_rank == 0) {
        FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
        FT_CHECK(fa && fb);
        for (long at = 0; fa && fb && same; at++) {
            int ca = getc(fa), cb = getc(fb);
            if (ca != cb) {
                printf("ckpt_steps: %s and %s differ at byte %ld\n", a, b, at);
                same = 0;
            }
            if (ca == EOF) break;
        }
        if (fa) fclose(fa);
        if (fb) fclose(fb);
    }
    MPI_Bcast(&same, 1, MPI_INT, 0, MPI_COMM_WORLD);
    FT_CHECK(same);
}

static ferry_ckpt_t make(const char *name, int k, const char *limit, ckpt_case_var_t *v)
{
    char base[64];
    snprintf(base, sizeof base, "steps_%s_%d", name, k);
    cc_set_t s = {.base = ft_path(base), .opt = {.strategy = k & 1 ? FERRY_CKPT_STACK : FERRY_CKPT_STEER,
                                                 .io = k & 2 ? FERRY_CKPT_IO_HOST : FERRY_CKPT_IO_FERRY, .independent = (k & 4) != 0},
                  .keep = 3, .type = k & 1 ? MPI_FLOAT : MPI_DOUBLE, .n = N, .halo = 2, .seed = 31 + (uint64_t)k, .var = "t"};
    if (limit) setenv("FERRY_CKPT_STAGE_LIMIT", limit, 1);
    ferry_ckpt_t ck = cc_make_set(&s, v);
    unsetenv("FERRY_CKPT_STAGE_LIMIT");
    return ck;
}

/* Writes step from buf through both sets; the files agree, buf is unchanged, and the staged set restarts with it. */
static void step_both(ferry_ckpt_t staged, ferry_ckpt_t other, ckpt_case_var_t *v, void *buf, long long step)
{
    void *before = malloc(v->bytes + 1);
    memcpy(before, buf, v->bytes);
    FT_OK(ferry_ckpt_write(staged, step, (double)step, (void *[]){buf}));
    FT_CHECK(memcmp(before, buf, v->bytes) == 0);
    FT_OK(ferry_ckpt_write(other, step, (double)step, (void *[]){buf}));
    FT_CHECK(memcmp(before, buf, v->bytes) == 0);
    char a[4200], b[4200];
    FT_OK(ferry_ckpt_path(staged, step, a, (int)sizeof a));
    FT_OK(ferry_ckpt_path(other, step, b, (int)sizeof b));
    same_files(a, b);
    ckpt_case_var_t r = *v;
    r.buf = NULL;
    cc_fill(&r, 0, 999);
    ferry_ckpt_info_t info;
    FT_OK(ferry_ckpt_restart(staged, (void *[]){r.buf}, &info));
    FT_EQ(info.step, step);
    cc_check(&r, 0, step);
    free(r.buf);
    free(before);
}

/* Three steps; at step 2 the data come from a copy while the old buffer holds garbage. */
static void steps(int k, const char *limit)
{
    ckpt_case_var_t v, w;
    ferry_ckpt_t staged = make(limit ? "mid" : "staged", k, limit, &v), other = make("convert", k, "0", &w);
    cc_fill(&v, 0, 1);
    step_both(staged, other, &v, v.buf, 1);
    cc_fill(&v, 0, 2);
    void *moved = malloc(v.bytes + 1);
    memcpy(moved, v.buf, v.bytes);
    memset(v.buf, 0xEE, v.bytes); /* still allocated: a type kept at its address would write this */
    step_both(staged, other, &v, moved, 2);
    memcpy(v.buf, moved, v.bytes);
    free(moved);
    cc_fill(&v, 0, 3);
    step_both(staged, other, &v, v.buf, 3);
    free(v.buf);
    FT_OK(ferry_ckpt_free(&staged));
    FT_OK(ferry_ckpt_free(&other));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    for (int k = 0; k < 8; k++) steps(k, NULL);
    /* A limit between the ranks' block sizes: some ranks fit, the others not; every rank converts. */
    ckpt_case_var_t v;
    ferry_ckpt_t probe = make("probe", 0, NULL, &v);
    long long mine = (long long)(v.count[0] * v.count[1]) * 8, lo = 0, hi = 0;
    MPI_Allreduce(&mine, &lo, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &hi, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    FT_OK(ferry_ckpt_free(&probe));
    FT_CHECK(lo < hi);
    char limit[32];
    snprintf(limit, sizeof limit, "%lld", (lo + hi) / 2);
    steps(0, limit);
    steps(6, limit);
    return ft_finish();
}

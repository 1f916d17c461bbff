/*
 * FERRY_CKPT_AUTO (issue 30): gather for a small set whose ranks share one
 * node, steer for a large one or one spread over nodes (FERRY_CKPT_NODE_SIZE
 * plays 2 nodes), the choice the same on every rank and told by the file
 * (info.strategy after a restart, which also returns every value); an auto
 * series written on one node (gather) takes a record from a run on 4 nodes
 * (steer: a series file names no strategy); zeroed options stay steer; ranks asking auto and steer disagree (MPI_ERR_NOT_SAME
 * on every rank, never a hang).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_cases.h"

enum { SMALL = 128, LARGE = 600 }; /* doubles per side: 128 KiB and 2.7 MiB, around the 2 MiB limit */

static const char *names[] = {"steer", "stack", "gather", "auto"};

/* Writes step 3 of an n x n set with the given strategy, restarts it through a steered set and
 * returns the strategy the file says it was written with (checked the same on every rank). */
static int written_with(const char *name, ferry_ckpt_options_t opt, MPI_Offset n, const char *node_size)
{
    int strategy = opt.strategy;
    if (node_size) setenv("FERRY_CKPT_NODE_SIZE", node_size, 1);
    cc_set_t s = {.base = ft_path(name), .opt = opt, .keep = 1, .type = MPI_DOUBLE, .n = n,
                  .halo = 1, .seed = 5, .var = "t"};
    ckpt_case_var_t v, back;
    ferry_ckpt_t ck = cc_make_set(&s, &v);
    if (node_size) unsetenv("FERRY_CKPT_NODE_SIZE");
    cc_fill(&v, 0, 3);
    FT_OK(ferry_ckpt_write(ck, 3, 3.0, (void *[]){v.buf}));
    ferry_ckpt_free(&ck);
    s.opt.strategy = FERRY_CKPT_STEER;
    ck = cc_make_set(&s, &back);
    cc_fill(&back, 0, 99);
    ferry_ckpt_info_t info;
    FT_OK(ferry_ckpt_restart(ck, (void *[]){back.buf}, &info));
    FT_EQ(info.step, 3);
    cc_check(&back, 0, 3);
    ferry_ckpt_free(&ck);
    int lowest = 0, highest = 0;
    MPI_Allreduce(&info.strategy, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&info.strategy, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    FT_EQ(lowest, highest);
    if (ft_rank == 0)
        printf("ckpt_auto: %s%s, %lld x %lld doubles%s%s: written by %s\n", names[strategy], opt.series ? " series" : "",
               (long long)n, (long long)n, node_size ? ", nodes of " : "", node_size ? node_size : "",
               names[info.strategy]);
    free(v.buf);
    free(back.buf);
    return info.strategy;
}

/* A series under auto: written on one node, appended to as 4 nodes (FERRY_CKPT_NODE_SIZE=1), restarted. */
static void series_across_nodes(void)
{
    cc_set_t s = {.base = ft_path("auto_series_nodes"), .opt = {.strategy = FERRY_CKPT_AUTO, .series = 1},
                  .type = MPI_DOUBLE, .n = SMALL, .halo = 1, .seed = 5, .var = "t"};
    ckpt_case_var_t v;
    for (long long step = 1; step <= 2; step++) {
        if (step == 2) setenv("FERRY_CKPT_NODE_SIZE", "1", 1);
        ferry_ckpt_t ck = cc_make_set(&s, &v);
        unsetenv("FERRY_CKPT_NODE_SIZE");
        cc_fill(&v, 0, step);
        FT_OK(ferry_ckpt_write(ck, step, (double)step, (void *[]){v.buf}));
        ferry_ckpt_free(&ck);
        free(v.buf);
    }
    ferry_ckpt_t ck = cc_make_set(&s, &v);
    cc_fill(&v, 0, 99);
    ferry_ckpt_info_t info;
    FT_OK(ferry_ckpt_restart(ck, (void *[]){v.buf}, &info));
    FT_EQ(info.step, 2);
    cc_check(&v, 0, 2);
    ferry_ckpt_free(&ck);
    free(v.buf);
}

/* Rank 0 asks auto, the others steer: the first write names the difference on every rank. */
static void disagreeing(void)
{
    cc_set_t s = {.base = ft_path("auto_mixed"), .opt = {.strategy = ft_rank ? FERRY_CKPT_STEER : FERRY_CKPT_AUTO},
                  .type = MPI_DOUBLE, .n = SMALL, .halo = 1, .seed = 5, .var = "t"};
    ckpt_case_var_t v;
    ferry_ckpt_t ck = cc_make_set(&s, &v);
    cc_fill(&v, 0, 1);
    FT_FAILS_NAMING(MPI_ERR_NOT_SAME, "strategy", ferry_ckpt_write(ck, 1, 1.0, (void *[]){v.buf}));
    ferry_ckpt_free(&ck);
    free(v.buf);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    FT_CHECK(ft_size >= 2);
    /* ctest starts every rank on this machine: one node */
    const ferry_ckpt_options_t automatic = {.strategy = FERRY_CKPT_AUTO}, zeroed = {0};
    FT_EQ(written_with("auto_small", automatic, SMALL, NULL), FERRY_CKPT_GATHER);
    FT_EQ(written_with("auto_large", automatic, LARGE, NULL), FERRY_CKPT_STEER);
    FT_EQ(written_with("auto_nodes", automatic, SMALL, "1"), FERRY_CKPT_STEER);
    FT_EQ(written_with("auto_zeroed", zeroed, SMALL, NULL), FERRY_CKPT_STEER);
    FT_EQ(written_with("auto_gather", (ferry_ckpt_options_t){.strategy = FERRY_CKPT_GATHER}, LARGE, NULL),
          FERRY_CKPT_GATHER);
    series_across_nodes();
    disagreeing();
    return ft_finish();
}

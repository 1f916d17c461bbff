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

/* Writes step of set s, its ranks as nodes of node_size ranks (NULL: the real nodes). */
static void write_step(const cc_set_t *s, long long step, const char *node_size)
{
    ckpt_case_var_t v;
    if (node_size) setenv("FERRY_CKPT_NODE_SIZE", node_size, 1);
    ferry_ckpt_t ck = cc_make_set(s, &v);
    unsetenv("FERRY_CKPT_NODE_SIZE");
    cc_fill(&v, 0, step);
    FT_OK(ferry_ckpt_write(ck, step, (double)step, (void *[]){v.buf}));
    ferry_ckpt_free(&ck);
    free(v.buf);
}

/* Restarts set s through a steered set of its definitions: step with every value; returns the
 * strategy the file names, checked the same on every rank. */
static int restarted(cc_set_t s, long long step)
{
    ckpt_case_var_t v;
    s.opt.strategy = FERRY_CKPT_STEER;
    ferry_ckpt_t ck = cc_make_set(&s, &v);
    cc_fill(&v, 0, 99);
    ferry_ckpt_info_t info;
    FT_OK(ferry_ckpt_restart(ck, (void *[]){v.buf}, &info));
    FT_EQ(info.step, step);
    cc_check(&v, 0, step);
    ferry_ckpt_free(&ck);
    free(v.buf);
    int lowest = 0, highest = 0;
    MPI_Allreduce(&info.strategy, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&info.strategy, &highest, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    FT_EQ(lowest, highest);
    return info.strategy;
}

/* Writes step 3 of an n x n set with the given options and returns the strategy its file names. */
static int written_with(const char *name, ferry_ckpt_options_t opt, MPI_Offset n, const char *node_size)
{
    cc_set_t s = {.base = ft_path(name), .opt = opt, .keep = 1, .type = MPI_DOUBLE, .n = n, .halo = 1, .seed = 5,
                  .var = "t"};
    write_step(&s, 3, node_size);
    int strategy = restarted(s, 3);
    if (ft_rank == 0)
        printf("ckpt_auto: %s, %lld x %lld doubles%s%s: written by %s\n", names[opt.strategy], (long long)n,
               (long long)n, node_size ? ", nodes of " : "", node_size ? node_size : "", names[strategy]);
    return strategy;
}

/* A series under auto: written on one node (gather), appended to as 4 nodes (steer), restarted. */
static void series_across_nodes(void)
{
    cc_set_t s = {.base = ft_path("auto_series_nodes"), .opt = {.strategy = FERRY_CKPT_AUTO, .series = 1},
                  .type = MPI_DOUBLE, .n = SMALL, .halo = 1, .seed = 5, .var = "t"};
    write_step(&s, 1, NULL);
    write_step(&s, 2, "1");
    restarted(s, 2);
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

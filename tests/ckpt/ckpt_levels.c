/*
 * ckpt_levels: multi-level checkpoints (issue 30). 4 ranks play 2 nodes
 * (the test hook FERRY_CKPT_NODE_SIZE=2: ranks 0-1 node 0, ranks 2-3 node
 * 1), each node's local storage a directory of its own ("node%n"). Every
 * restart is checked value for value (bits) with untouched halos, and says
 * which level served it:
 *   - level 1 after a whole write; the drain's netCDF file exists; keep 2 prunes node-local files;
 *   - node 1's local files lost: level 2, the partner copies on node 0;
 *   - one rank's level-1 file damaged (a flipped data byte): level 2;
 *   - every node-local file lost: level 3, the drained netCDF file;
 *   - a drain that fails (a killed drain's outcome): ferry_ckpt_drain_wait
 *     says so on every rank, no netCDF file of that step, the older one
 *     stands, and the restart takes level 1 of the new step;
 *   - another decomposition: level 1 and 2 refused, level 3 serves;
 *   - nothing whole at any level: MPI_ERR_NO_SUCH_FILE on every rank;
 *   - one node only: level 2 skipped, a lost rank file falls to level 3; a set freed with its
 *     drain pending joins it on a thread (the netCDF file exists), else drops it (none).
 * Argument "single": MPI_THREAD_SINGLE (the drain runs at drain_wait), else
 * MPI_THREAD_MULTIPLE when the MPI gives it (a drain thread).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_cases.h"

enum { N = 64 };

static char local_root[512], node_dir[2][600];
static int threaded; /* MPI_THREAD_MULTIPLE: the drain runs on a thread */

/* Rank 0 removes the files of one simulated node (or all nodes: -1) whose name contains what; collective. */
static void lose(int node, const char *what)
{
    if (ft_rank == 0)
        for (int m = 0; m < 2; m++) {
            if (node >= 0 && m != node) continue;
            DIR *d = opendir(node_dir[m]);
            for (struct dirent *e; d && (e = readdir(d));) {
                char path[2000];
                if (e->d_name[0] == '.' || !strstr(e->d_name, what)) continue;
                snprintf(path, sizeof path, "%s/%s", node_dir[m], e->d_name);
                FT_CHECK(unlink(path) == 0);
            }
            if (d) closedir(d);
        }
    MPI_Barrier(MPI_COMM_WORLD);
}

static ferry_ckpt_t make(const char *base, uint64_t seed, int drain, ckpt_case_var_t *v)
{
    cc_set_t s = {.base = base, .opt = {.strategy = FERRY_CKPT_STEER, .local_dir = local_root, .partner = 1, .drain = drain},
                  .keep = 2, .type = MPI_DOUBLE, .n = N, .halo = 2, .seed = seed, .var = "t"};
    return cc_make_set(&s, v);
}

static void write_step(ferry_ckpt_t ck, ckpt_case_var_t *v, long long step)
{
    cc_fill(v, 0, step); /* frees the last buffer */
    FT_OK(ferry_ckpt_write(ck, step, 0.5 * (double)step, (void *[]){v->buf}));
}

/* Restarts into a buffer of 0x5A bytes; the step and level it must come from. */
static void restart_from(ferry_ckpt_t ck, ckpt_case_var_t *v, long long step, int level)
{
    ferry_ckpt_info_t info;
    memset(v->buf, 0x5A, v->bytes);
    FT_OK(ferry_ckpt_restart(ck, (void *[]){v->buf}, &info));
    FT_EQ(info.step, step);
    FT_EQ(info.level, level);
    FT_CHECK(info.time == 0.5 * (double)step);
    cc_check(v, 0, step);
}

/* Rank 0 flips one data byte (the last) of rank r's level-1 file of step on node m; collective. */
static void damage(int m, long long step, int r)
{
    if (ft_rank == 0) {
        char path[1200];
        snprintf(path, sizeof path, "%s/lv.%012lld.r%d", node_dir[m], step, r);
        FILE *f = fopen(path, "r+b");
        FT_CHECK(f && fseek(f, -1, SEEK_END) == 0);
        int c = getc(f);
        fseek(f, -1, SEEK_END);
        putc(c ^ 0x10, f);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void two_nodes(const char *base)
{
    ckpt_case_var_t v;
    char shared[1200];
    ferry_ckpt_t ck = make(base, 7, 1, &v);
    write_step(ck, &v, 1);
    write_step(ck, &v, 2);
    FT_OK(ferry_ckpt_drain_wait(ck));
    FT_OK(ferry_ckpt_path(ck, 2, shared, sizeof shared));
    FT_CHECK(cc_exists(shared));
    restart_from(ck, &v, 2, 1);
    lose(1, ".r"); /* node 1 (ranks 2 and 3, and the copies of ranks 0 and 1) lost */
    restart_from(ck, &v, 2, 2);
    write_step(ck, &v, 3); /* writes node 1's files again */
    char kept[1300];
    MPI_Barrier(MPI_COMM_WORLD); /* every rank prunes its own files after the write's agreement */
    snprintf(kept, sizeof kept, "%s/lv.%012d.r0", node_dir[0], 1); /* keep 2: step 1 pruned, 2 kept */
    FT_CHECK(!cc_exists(kept));
    snprintf(kept, sizeof kept, "%s/lv.%012d.r0", node_dir[0], 2);
    FT_CHECK(cc_exists(kept));
    snprintf(kept, sizeof kept, "%s/lv.%012d.r2.partner", node_dir[0], 2);
    FT_CHECK(cc_exists(kept));
    FT_OK(ferry_ckpt_drain_wait(ck));
    damage(0, 3, 1);
    restart_from(ck, &v, 3, 2);
    lose(-1, ".r"); /* every node-local file */
    restart_from(ck, &v, 3, 3);
    setenv("FERRY_CKPT_DRAIN_FAIL", "1", 1); /* the drain of step 4 dies */
    write_step(ck, &v, 4);
    FT_FAILS(MPI_ERR_IO, ferry_ckpt_drain_wait(ck));
    unsetenv("FERRY_CKPT_DRAIN_FAIL");
    FT_OK(ferry_ckpt_path(ck, 4, shared, sizeof shared));
    FT_CHECK(!cc_exists(shared));
    restart_from(ck, &v, 4, 1);
    lose(-1, ".000000000004."); /* step 4 lost on every node: step 3's netCDF file */
    restart_from(ck, &v, 3, 3);
    write_step(ck, &v, 5);
    FT_OK(ferry_ckpt_drain_wait(ck));
    ckpt_case_var_t w; /* another decomposition of the same variable: only the netCDF file fits it */
    ferry_ckpt_t other = make(base, 99, 0, &w);
    cc_fill(&w, 0, 5);
    restart_from(other, &w, 5, 3);
    lose(-1, ".r"); /* and nothing whole at any level */
    for (long long step = 1; step <= 5 && ft_rank == 0; step++) {
        FT_OK(ferry_ckpt_path(ck, step, shared, sizeof shared));
        unlink(shared);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    FT_FAILS_NAMING(MPI_ERR_NO_SUCH_FILE, "no step", ferry_ckpt_restart(ck, (void *[]){v.buf}, NULL));
    ferry_ckpt_free(&other);
    ferry_ckpt_free(&ck);
    free(w.buf);
    free(v.buf);
}

/* All 4 ranks on one node: no partner copies; a lost rank file falls back to the netCDF file. */
static void one_node(const char *base)
{
    ckpt_case_var_t v;
    setenv("FERRY_CKPT_NODE_SIZE", "4", 1);
    ferry_ckpt_t ck = make(base, 11, 1, &v);
    write_step(ck, &v, 1);
    FT_OK(ferry_ckpt_drain_wait(ck));
    restart_from(ck, &v, 1, 1);
    lose(0, "one.000000000001.r1");
    restart_from(ck, &v, 1, 3);
    write_step(ck, &v, 2); /* freed with its drain pending: joined on a thread, else dropped */
    ferry_ckpt_free(&ck);
    char shared[1200];
    free(v.buf);
    ck = make(base, 11, 1, &v); /* clears v */
    cc_fill(&v, 0, 0);
    FT_OK(ferry_ckpt_path(ck, 2, shared, sizeof shared));
    FT_EQ(cc_exists(shared), threaded);
    restart_from(ck, &v, 2, 1);
    ferry_ckpt_free(&ck);
    free(v.buf);
}

int main(int argc, char **argv)
{
    int single = argc > 1 && strcmp(argv[1], "single") == 0;
    int provided = single ? (ft_init(&argc, &argv), MPI_THREAD_SINGLE) : ft_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    if (ft_size != 4) {
        ft_skip("needs 4 ranks");
        return ft_finish();
    }
    if (ft_rank == 0) printf("ckpt_levels: thread level %d\n", provided);
    threaded = provided == MPI_THREAD_MULTIPLE;
    setenv("FERRY_CKPT_NODE_SIZE", "2", 1);
    snprintf(local_root, sizeof local_root, "%s", ft_path("local/node%n"));
    for (int m = 0; m < 2; m++) snprintf(node_dir[m], sizeof node_dir[m], "%s/node%d", ft_path("local"), m);
    if (ft_rank == 0) {
        FT_CHECK(mkdir(ft_path("local"), 0755) == 0);
        for (int m = 0; m < 2; m++) FT_CHECK(mkdir(node_dir[m], 0755) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    two_nodes(ft_path("lv"));
    one_node(ft_path("one"));
    return ft_finish();
}

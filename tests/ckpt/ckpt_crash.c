/*
 * kill -9 in the middle of a checkpoint (driven by ckpt_crash.sh).
 *
 *   ckpt_crash write <dir>    step 1, then steps 2, 3, ... back to back
 *                             until killed; writes <dir>/pids and <dir>/ready
 *   ckpt_crash restart <dir>  restarts (on any rank count) and checks that the
 *                             newest valid checkpoint holds its step's values
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt_cases.h"

static ferry_ckpt_t make_set(const char *dir, ckpt_case_var_t *v)
{
    char base[700];
    snprintf(base, sizeof base, "%s/ocean", dir);
    ferry_ckpt_t ck;
    FT_OK(ferry_ckpt_create(MPI_COMM_WORLD, base, NULL, &ck));
    memset(v, 0, sizeof *v);
    v->ndims = 3;
    v->halo = 2;
    v->type = MPI_DOUBLE;
    v->global[0] = 8, v->global[1] = 512, v->global[2] = 512;
    cc_block(3, v->global, ft_rank, ft_size, 7, v->start, v->count);
    int id;
    cc_define(ck, v, "temp", &id);
    return ck;
}

static void announce(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/pids", dir);
    for (int r = 0; r < ft_size; r++) {
        if (r == ft_rank) {
            FILE *f = fopen(path, "a");
            fprintf(f, "%ld\n", (long)getpid());
            fclose(f);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    snprintf(path, sizeof path, "%s/ready", dir);
    if (ft_rank == 0) fclose(fopen(path, "w"));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    FT_CHECK(argc >= 3);
    ckpt_case_var_t v;
    ferry_ckpt_t ck = make_set(argv[2], &v);
    if (strcmp(argv[1], "write") == 0) {
        for (long long step = 1; step < 100000; step++) {
            cc_fill(&v, 0, step);
            FT_OK(ferry_ckpt_write(ck, step, (double)step, (void *[]){v.buf}));
            if (step == 1) announce(argv[2]);
        }
    } else {
        ferry_ckpt_info_t info;
        cc_fill(&v, 0, 0);
        FT_OK(ferry_ckpt_restart(ck, (void *[]){v.buf}, &info));
        if (ft_rank == 0) printf("ckpt_crash: restarted from step %lld of %s (%d skipped)\n", info.step, info.path, info.fallbacks);
        FT_CHECK(info.step >= 1);
        cc_check(&v, 0, info.step);
    }
    free(v.buf);
    FT_OK(ferry_ckpt_free(&ck));
    return ft_finish();
}

/*
 * ckpt_host_failures: the host MPI's collectives failing inside the
 * checkpoint layer (issue 32). The test interposes MPI_Allgather,
 * MPI_Allreduce and MPI_Bcast (and the nonblocking forms progress/ starts
 * when it polls) and makes the k-th call of one of them return
 * MPI_ERR_OTHER on every rank, for every k up to the calls that a write, a
 * restart and a verify of a set make together. Each of the three must then
 * either succeed or fail on every rank with the same class and a message,
 * never hang or crash: a write that succeeded left a file that verifies; a
 * restart that succeeded holds the values of the step it reports (the new
 * one, or the one before when the write failed or the new file could not be
 * read); a verify fails only with MPI_ERR_INTERN (the host's failure, never
 * a verdict on a good file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_cases.h"
#include "host_failures.h"

enum { N = 24, MAX_K = 200 };
/* Every rank returned the same class; a failure carries a message. 1 when the call failed. */
static int agreed(int rc, const char *call, ft_host_op_t op, int k)
{
    int cls = rc == MPI_SUCCESS ? 0 : ft_class(rc), mine[2] = {cls, -cls}, low[2];
    PMPI_Allreduce(mine, low, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (low[0] != -low[1])
        ft_fail(__FILE__, __LINE__, "%s, %s #%d: ranks disagree: classes %d..%d", call, ft_host_op_names[op], k, low[0],
                -low[1]);
    if (cls && !ft_message[0])
        ft_fail(__FILE__, __LINE__, "%s, %s #%d: an error without a message", call, ft_host_op_names[op], k);
    return cls != 0;
}

/* One trial: a set with step 1 written; the k-th call of op fails during the write of step 2, the
 * restart and the verify of step 2's file. Returns 0 when the k-th call never came (k is past the
 * calls made). */
static int trial(ft_host_op_t op, int k, int strategy, int number)
{
    char base[64], path[4200];
    snprintf(base, sizeof base, "hf_%d", number);
    cc_set_t s = {.base = ft_path(base),
                  .opt = {.strategy = strategy, .format = FERRY_CKPT_CDF5},
                  .type = MPI_DOUBLE,
                  .n = N,
                  .halo = 1,
                  .seed = 7 + (uint64_t)number,
                  .var = "u"};
    ckpt_case_var_t v, r;
    ferry_ckpt_t ck = cc_make_set(&s, &v);
    cc_fill(&v, 0, 1);
    FT_OK(ferry_ckpt_write(ck, 1, 1.0, (void *[]){v.buf}));
    free(v.buf);
    v.buf = NULL;
    cc_fill(&v, 0, 2);
    r = v;
    r.buf = NULL;
    cc_fill(&r, 0, 999);
    FT_OK(ferry_ckpt_path(ck, 2, path, (int)sizeof path));
    ferry_ckpt_info_t info;
    ft_host_fail_arm(op, k);
    int wrote = ft_capture(ferry_ckpt_write(ck, 2, 2.0, (void *[]){v.buf}));
    int write_failed = agreed(wrote, "write", op, k);
    int restarted = ft_capture(ferry_ckpt_restart(ck, (void *[]){r.buf}, &info));
    int restart_failed = agreed(restarted, "restart", op, k);
    int verified = ft_capture(ferry_ckpt_verify(MPI_COMM_WORLD, path));
    int verify_failed = agreed(verified, "verify", op, k);
    int reached = ft_host_fail_disarm();
    if (!write_failed) FT_OK(ferry_ckpt_verify(MPI_COMM_WORLD, path));
    if (!restart_failed) {
        FT_CHECK(info.step == 2 || (info.step == 1 && (write_failed || info.fallbacks > 0)));
        cc_check(&r, 0, info.step);
    }
    if (verify_failed && !write_failed) FT_EQ(ft_class(verified), MPI_ERR_INTERN);
    FT_OK(ferry_ckpt_free(&ck));
    free(v.buf);
    free(r.buf);
    return reached;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    static const int strategies[3] = {FERRY_CKPT_STEER, FERRY_CKPT_STACK, FERRY_CKPT_GATHER};
    static const char *const names[3] = {"steer", "stack", "gather"};
    int number = 0;
    static const ft_host_op_t ops[3] = {FT_HOST_ALLGATHER, FT_HOST_ALLREDUCE, FT_HOST_BCAST};
    for (int o = 0; o < 3; o++)
        for (int i = 0; i < 3; i++) {
            ft_host_op_t op = ops[o];
            int k = 1;
            while (k <= MAX_K && trial(op, k, strategies[i], ++number)) k++;
            if (ft_rank == 0)
                printf("ckpt_host_failures: %s, %s: each of %d calls failed in turn\n", names[i], ft_host_op_names[op], k - 1);
            FT_CHECK(k > 1);      /* the injection reached the layer */
            FT_CHECK(k <= MAX_K); /* and ran out of calls to fail */
        }
    FT_CHECK(!trial(FT_HOST_NONE, 0, FERRY_CKPT_GATHER, ++number)); /* nothing armed: everything succeeds */
    return ft_finish();
}

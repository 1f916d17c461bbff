/*
 * The host MPI's collectives failing on purpose, for tests of ferry's
 * agreed errors (coll_host_failures, ckpt_host_failures,
 * container_host_failures): a test that compiles host_failures.c in
 * interposes MPI_Allgather, MPI_Allgatherv, MPI_Allreduce, MPI_Bcast,
 * MPI_Gather, MPI_Gatherv, MPI_Scatter and MPI_Scatterv and their
 * nonblocking forms (which progress/'s polling waits start), and once armed
 * the k-th call of one of them returns MPI_ERR_OTHER (without calling the
 * host, so without its error handler). A test arms every rank alike, so
 * every rank fails the same call, as a broken network would make them.
 */
#ifndef FERRY_TEST_HOST_FAILURES_H
#define FERRY_TEST_HOST_FAILURES_H

typedef enum {
    FT_HOST_NONE,
    FT_HOST_ALLGATHER,
    FT_HOST_ALLGATHERV,
    FT_HOST_ALLREDUCE,
    FT_HOST_BCAST,
    FT_HOST_GATHER,
    FT_HOST_GATHERV,
    FT_HOST_SCATTER,
    FT_HOST_SCATTERV,
    FT_HOST_OPS
} ft_host_op_t;

/* "MPI_Allgather", ...; "none" for FT_HOST_NONE. */
extern const char *const ft_host_op_names[FT_HOST_OPS];

/* From now on the k-th call (k >= 1) of op fails; until then and after it, every call goes to the host. */
void ft_host_fail_arm(ft_host_op_t op, int k);
/* Back to the host for every call; 1 when the armed call came (and failed). */
int ft_host_fail_disarm(void);

#endif

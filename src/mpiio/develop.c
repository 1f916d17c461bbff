/*
 * Develop mode: collective calls check that the arguments MPI requires to
 * be identical on every rank are (file name and amode at open, datarep and
 * etype extent at set_view, size at set_size and preallocate, flag at
 * set_atomicity). Each rank compares fingerprints of its arguments with its
 * left neighbour's (one exchange), and one agreement spreads a mismatch:
 * the rank that saw it returns MPI_ERR_NOT_SAME naming the argument and the
 * two ranks, the others the same class naming that rank. When develop mode
 * is off nothing here runs.
 */
#include <stdlib.h>
#include <string.h>

#include "mpiio/mpiio.h"

int ferry__develop_from_environment(void)
{
    const char *v = getenv("FERRY_DEVELOP");
    return v && *v && strcmp(v, "0") != 0;
}

uint64_t ferry__develop_hash(const void *bytes, size_t len)
{
    const unsigned char *p = bytes;
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

enum { DEVELOP_MAX_ARGS = 4 };

int ferry__develop_check(MPI_Comm comm, int local_cls, const char *op, const ferry__develop_arg_t *args, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    uint64_t mine[DEVELOP_MAX_ARGS] = {0}, left[DEVELOP_MAX_ARGS] = {0};
    for (int i = 0; i < n && i < DEVELOP_MAX_ARGS; i++) mine[i] = args[i].fingerprint;
    int to = rank + 1 < size ? rank + 1 : MPI_PROC_NULL, from = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int cls = local_cls;
    if (MPI_Sendrecv(mine, DEVELOP_MAX_ARGS, MPI_UINT64_T, to, 0, left, DEVELOP_MAX_ARGS, MPI_UINT64_T, from, 0, comm,
                     MPI_STATUS_IGNORE) != MPI_SUCCESS && cls == 0)
        cls = ferry__error_set(MPI_ERR_INTERN, "ferry: %s: develop-mode exchange failed", op);
    for (int i = 0; cls == 0 && from != MPI_PROC_NULL && i < n; i++)
        if (mine[i] != left[i])
            cls = ferry__error_set(MPI_ERR_NOT_SAME, "ferry: %s: argument '%s' differs between rank %d and rank %d",
                                   op, args[i].name, from, rank);
    return ferry__error_agree(comm, cls, op);
}

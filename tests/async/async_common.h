/*
 * Shared by the async tests: start-up at the thread level named by argv[1]
 * ("multiple" or "single"), and completing a failed request.
 */
#ifndef FERRY_ASYNC_COMMON_H
#define FERRY_ASYNC_COMMON_H

#include <string.h>

#include "ferry_test.h"

/* Initializes MPI at the level argv[1] names; returns 1 to run the test, 0
 * to skip it (MULTIPLE asked for but not provided: prints why). Failed
 * requests report through MPI_COMM_WORLD's error handler (async.h), so it
 * is set to MPI_ERRORS_RETURN. */
static inline int at_start(int *argc, char ***argv, int *background)
{
    int multiple = *argc > 1 && strcmp((*argv)[1], "multiple") == 0;
    int provided = ft_init_thread(argc, argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    *background = provided == MPI_THREAD_MULTIPLE;
    if (multiple && !*background) {
        ft_skip("MPI_THREAD_MULTIPLE not provided (got level %d)", provided);
        return 0;
    }
    if (ft_rank == 0) printf("thread level %d, requests run %s\n", provided, *background ? "in the background" : "at initiation");
    return 1;
}

/* A request that must fail with cls and a message containing needle,
 * whether the failure comes at initiation (rc) or at MPI_Wait. */
static inline void at_expect_fail(const char *file, int line, int rc, MPI_Request *request, int cls,
                                  const char *needle)
{
    if (rc == MPI_SUCCESS) {
        /* MPI_Wait returns the code; it leaves status.MPI_ERROR alone (MPI-3.1 3.2.5). */
        rc = MPI_Wait(request, MPI_STATUS_IGNORE);
    }
    ft_expect_fail(file, line, "request", rc, cls, needle);
}

#endif

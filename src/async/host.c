/*
 * Starting a generalized request: the one place where async/ depends on
 * which MPI hosts it.
 *
 * MPICH 4.0.2's MPI_Waitall aborts (an assertion in request_impl.c,
 * "generalized requests should already be finished") when its array holds
 * MPI_REQUEST_NULL beside a generalized request that is still pending: the
 * path it takes for arrays with null entries assumes generalized requests
 * were completed earlier, which it does only for requests with a wait
 * function. So on MPICH, requests are started with MPIX_Grequest_start and
 * a wait function that lets MPICH's loop breathe (MPICH calls it until the
 * request is complete; the worker completes it) and a poll function that
 * does nothing. Open MPI takes the standard MPI_Grequest_start.
 */
#include <time.h>

#include "async/async_int.h"

#if defined(MPICH)
static int poll_nothing(void *state, MPI_Status *status)
{
    (void)state, (void)status;
    return MPI_SUCCESS;
}

static int wait_a_little(int count, void **states, double timeout, MPI_Status *status)
{
    (void)count, (void)states, (void)timeout, (void)status;
    struct timespec pause = {0, 20000};
    nanosleep(&pause, NULL);
    return MPI_SUCCESS;
}
#endif

int ferry__async_grequest_start(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free_fn,
                                MPI_Grequest_cancel_function *cancel, void *state, MPI_Request *request)
{
#if defined(MPICH)
    return MPIX_Grequest_start(query, free_fn, cancel, poll_nothing, wait_a_little, state, request);
#else
    return MPI_Grequest_start(query, free_fn, cancel, state, request);
#endif
}

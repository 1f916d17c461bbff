/*
 * Process-wide set-up and tear-down.
 *
 * ferry initializes itself on first use after MPI_Init and frees its
 * registries when MPI_Finalize deletes MPI_COMM_SELF's attributes (the
 * standard's finalize hook, MPI-3.1 8.7.1), so a clean program leaks nothing.
 * Files the program left open are closed there first (core/live.c), while
 * MPI still works: their windows and communicators must go before the host
 * finalizes (MPICH 4.0 aborts on a window left behind).
 */
#include <pthread.h>

#include "core/core.h"
#include "datarep/datarep.h"
#include "error/error.h"
#include "trace/trace.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result;

static int on_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)attr;
    (void)extra;
    ferry__handle_close_all(); /* files the program left open: MPI objects must go before MPI does */
    ferry__handle_live_finalize();
    ferry__handle_finalize();
    ferry__error_finalize();
    ferry__errhandler_finalize();
    ferry__trace_finalize();
    ferry__datarep_finalize();
    MPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

static void initialize(void)
{
    int keyval;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_finalize, &keyval, NULL) != MPI_SUCCESS ||
        MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL) != MPI_SUCCESS)
        init_result = MPI_ERR_INTERN;
}

int ferry__core_init(void)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
        return ferry__error_set(MPI_ERR_OTHER, "ferry: MPI is not initialized (or already finalized)");
    pthread_once(&init_once, initialize);
    if (init_result) return ferry__error_set(init_result, "ferry: cannot register the MPI_Finalize hook");
    return 0;
}

const char *ferry_version(void)
{
    return FERRY_VERSION;
}

/*
 * core's set-up: the finalize hook (base/process.c) and core's own
 * tear-down registered with it.
 *
 * ferry initializes itself on first use after MPI_Init (or in the
 * drop-in's MPI_Init) and frees its registries when MPI_Finalize runs the
 * hook, so a clean program leaks nothing. Files the program left open are
 * closed first (core/live.c), while MPI still works: their windows and
 * communicators must go before the host finalizes (MPICH 4.0 aborts on a
 * window left behind). Every other module registers its own tear-down.
 */
#include <pthread.h>

#include "base/process.h"
#include "core/core.h"
#include "error/error.h"

static pthread_once_t register_once = PTHREAD_ONCE_INIT;
static int register_result;

static void register_teardown(void)
{
    ferry__process_at_finalize_first(ferry__handle_close_all);
    /* The last registered runs first: the live slots go before the Fortran table. */
    register_result = ferry__process_at_finalize(ferry__handle_finalize);
    if (register_result == 0) register_result = ferry__process_at_finalize(ferry__handle_live_finalize);
}

int ferry__core_init(void)
{
    int cls = ferry__process_init();
    if (cls == MPI_ERR_OTHER) return ferry__error_set(cls, "ferry: MPI is not initialized (or already finalized)");
    if (cls != 0) return ferry__error_set(cls, "ferry: cannot register the MPI_Finalize hook");
    pthread_once(&register_once, register_teardown);
    if (register_result) return ferry__error_set(register_result, "ferry: cannot register core's finalize functions");
    return 0;
}

int ferry_core_init(void)
{
    return ferry__core_init();
}

const char *ferry_version(void)
{
    return FERRY_VERSION;
}

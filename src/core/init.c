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
 *
 * ferry also defines MPI_Finalize: it lets ferry's threads finish their
 * MPI calls (ferry_core_quiesce) before the host's MPI_Finalize begins,
 * which the hook, running inside it, is too late for.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

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

void ferry_core_quiesce(void)
{
    ferry__process_quiesce();
}

/* The program's MPI_Finalize, when libferry comes before the MPI library in
 * its search order (linked with -lferry before -lmpi, or statically): ferry's
 * threads stop calling MPI first, then the next definition runs (a
 * profiling tool's or the host's). */
__attribute__((visibility("default"))) int MPI_Finalize(void)
{
    ferry__process_quiesce();
    int (*next)(void) = NULL;
    void *symbol = dlsym(RTLD_NEXT, "MPI_Finalize");
    memcpy(&next, &symbol, sizeof next); /* ISO C has no cast from object to function pointers */
    return next ? next() : PMPI_Finalize();
}

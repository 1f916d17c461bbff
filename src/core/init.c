/*
 * Process-wide set-up and tear-down.
 *
 * ferry initializes itself on first use after MPI_Init and frees its
 * registries when MPI_Finalize deletes MPI_COMM_SELF's attributes (the
 * standard's finalize hook, MPI-3.1 8.7.1), so a clean program leaks nothing.
 * Files the program left open are closed there first (core/live.c), while
 * MPI still works: their windows and communicators must go before the host
 * finalizes (MPICH 4.0 aborts on a window left behind).
 *
 * MPI_Finalize deletes MPI_COMM_SELF's attributes in the reverse order of
 * their setting (MPI-3.1 8.7.1), and libraries close their own files in
 * theirs: HDF5 sets its hook in H5open, before its first MPI_File_open,
 * and closes the files a program left open there. ferry's hook must come
 * after such hooks, i.e. be set before them: the drop-in sets it up in
 * MPI_Init (ferry_core_init); a program linked to ferry directly gets it
 * at its first ferry call. It is ferry's only hook: modules stop their
 * state from it (ferry__core_at_finalize), after the files are closed.
 */
#include <pthread.h>

#include "core/core.h"
#include "datarep/datarep.h"
#include "error/error.h"
#include "trace/trace.h"

enum { MAX_FINALIZERS = 8 };

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result;
static pthread_mutex_t finalizers_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*finalizers[MAX_FINALIZERS])(void);
static int nfinalizers;

int ferry__core_at_finalize(void (*fn)(void))
{
    pthread_mutex_lock(&finalizers_lock);
    int full = nfinalizers == MAX_FINALIZERS;
    if (!full) finalizers[nfinalizers++] = fn;
    pthread_mutex_unlock(&finalizers_lock);
    return full ? ferry__error_set(MPI_ERR_INTERN, "ferry: too many finalize functions") : 0;
}

static void run_finalizers(void)
{
    pthread_mutex_lock(&finalizers_lock);
    while (nfinalizers > 0) {
        void (*fn)(void) = finalizers[--nfinalizers];
        pthread_mutex_unlock(&finalizers_lock);
        fn();
        pthread_mutex_lock(&finalizers_lock);
    }
    pthread_mutex_unlock(&finalizers_lock);
}

static int on_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)attr;
    (void)extra;
    ferry__handle_close_all(); /* files the program left open: MPI objects must go before MPI does */
    run_finalizers();
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

int ferry_core_init(void)
{
    return ferry__core_init();
}

const char *ferry_version(void)
{
    return FERRY_VERSION;
}

/*
 * ferry's one MPI_Finalize hook and the tear-downs registered with it.
 *
 * MPI_Finalize deletes MPI_COMM_SELF's attributes in the reverse order of
 * their setting (MPI-3.1 8.7.1), and libraries close their own files in
 * theirs: HDF5 sets its hook in H5open, before its first MPI_File_open,
 * and closes the files a program left open there. ferry's hook must come
 * after such hooks, i.e. be set before them: the drop-in sets it up in
 * MPI_Init (ferry_core_init); a program linked to ferry directly gets it
 * at its first ferry call.
 */
#include <pthread.h>

#include "base/process.h"

enum { MAX_FINALIZERS = 16, MAX_QUIESCERS = 4 };

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result;
static pthread_mutex_t finalizers_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*finalizers[MAX_FINALIZERS])(void);
static int nfinalizers;
static void (*first_finalizer)(void);
static void (*quiescers[MAX_QUIESCERS])(void);
static int nquiescers;

static void run_finalizers(void)
{
    pthread_mutex_lock(&finalizers_lock);
    void (*first)(void) = first_finalizer;
    pthread_mutex_unlock(&finalizers_lock);
    if (first) first();
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
    run_finalizers();
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

int ferry__process_init(void)
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) return MPI_ERR_OTHER;
    pthread_once(&init_once, initialize);
    return init_result;
}

int ferry__process_at_finalize(void (*fn)(void))
{
    if (ferry__process_init() != 0) return MPI_ERR_INTERN;
    pthread_mutex_lock(&finalizers_lock);
    int full = nfinalizers == MAX_FINALIZERS;
    if (!full) finalizers[nfinalizers++] = fn;
    pthread_mutex_unlock(&finalizers_lock);
    return full ? MPI_ERR_INTERN : 0;
}

int ferry__process_at_quiesce(void (*fn)(void))
{
    pthread_mutex_lock(&finalizers_lock);
    int full = nquiescers == MAX_QUIESCERS;
    if (!full) quiescers[nquiescers++] = fn;
    pthread_mutex_unlock(&finalizers_lock);
    return full ? MPI_ERR_INTERN : 0;
}

void ferry__process_quiesce(void)
{
    pthread_mutex_lock(&finalizers_lock);
    int n = nquiescers;
    pthread_mutex_unlock(&finalizers_lock);
    for (int i = 0; i < n; i++) quiescers[i](); /* set once, never removed */
}

int ferry__process_world_ranks(MPI_Comm comm)
{
    int same = MPI_UNEQUAL;
    if (MPI_Comm_compare(comm, MPI_COMM_WORLD, &same) != MPI_SUCCESS) same = MPI_UNEQUAL;
    return same == MPI_IDENT || same == MPI_CONGRUENT;
}

void ferry__process_at_finalize_first(void (*fn)(void))
{
    pthread_mutex_lock(&finalizers_lock);
    first_finalizer = fn;
    pthread_mutex_unlock(&finalizers_lock);
}

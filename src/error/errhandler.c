/*
 * File error handlers: the registry of ferry-created handlers, the default
 * handler (FERRY_FILE_NULL's), and each file's slot (the entry points are
 * in mpiio/errhandler.c).
 *
 * Handlers are created by the host (its PMPI_File_create_errhandler, so the
 * caller gets a genuine MPI_Errhandler it may free with MPI_Errhandler_free)
 * and ferry remembers which function each one stands for. A file captures
 * the function when the handler is set, so freeing the handle later leaves
 * the file's handler working, as MPI requires.
 *
 * References (MPI-3.1 8.3.4, 13.7): every file, and the FERRY_FILE_NULL
 * default once set, holds one host reference to its handler, and
 * get_errhandler hands its caller a new one to free. So get+free rounds,
 * and a creator freeing its handle while files hold it, leave the host's
 * count where it belongs, and a handle ferry returns stays valid.
 */
#include <pthread.h>
#include <stdio.h>

#include "base/alloc.h"
#include "base/process.h"
#include "error/error.h"

typedef struct errhandler_entry {
    MPI_Errhandler handle;
    ferry_File_errhandler_function *function;
} errhandler_entry_t;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static errhandler_entry_t *registry;
static size_t registry_count, registry_capacity;

/* The handler on FERRY_FILE_NULL: MPI_ERRORS_RETURN until the caller sets one. */
static ferry__errhandler_slot_t default_slot; /* MPI_ERRHANDLER_NULL is not a constant expression in every host */
static int default_set;
static pthread_once_t teardown_once = PTHREAD_ONCE_INIT;

static void finalize(void)
{
    pthread_mutex_lock(&registry_lock);
    ferry__free(registry);
    registry = NULL;
    registry_count = registry_capacity = 0;
    if (default_set) PMPI_Errhandler_free(&default_slot.handle);
    default_set = 0;
    pthread_mutex_unlock(&registry_lock);
}

static void register_teardown(void)
{
    (void)ferry__process_at_finalize(finalize); /* without MPI there is nothing to free */
}

/* One more host reference to eh. MPI has no MPI_Errhandler_dup; the
 * host's own MPI_File_get_errhandler is what adds a reference, so eh sits
 * on the host's MPI_FILE_NULL for the moment it takes (ferry serves every
 * file, so no host file operation sees it there). Under registry_lock. */
static void host_retain(MPI_Errhandler eh)
{
    /* The host's own PMPI_File_*: the drop-in exports those names as ferry's
     * (a plain call would come back here and wait for registry_lock for ever). */
    typedef int get_fn(MPI_File, MPI_Errhandler *);
    typedef int set_fn(MPI_File, MPI_Errhandler);
    get_fn *get = (get_fn *)ferry__host_function("PMPI_File_get_errhandler");
    set_fn *set = (set_fn *)ferry__host_function("PMPI_File_set_errhandler");
    if (!get) get = PMPI_File_get_errhandler;
    if (!set) set = PMPI_File_set_errhandler;
    MPI_Errhandler saved = MPI_ERRORS_RETURN, extra = MPI_ERRORS_RETURN;
    get(MPI_FILE_NULL, &saved);
    set(MPI_FILE_NULL, eh);
    get(MPI_FILE_NULL, &extra); /* the reference this function adds */
    set(MPI_FILE_NULL, saved);
    PMPI_Errhandler_free(&saved);
}

static void host_release(MPI_Errhandler eh)
{
    PMPI_Errhandler_free(&eh);
}

static int is_predefined(MPI_Errhandler eh)
{
#ifdef MPI_ERRORS_ABORT
    if (eh == MPI_ERRORS_ABORT) return 1;
#endif
    return eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL;
}

static ferry_File_errhandler_function *function_of(MPI_Errhandler eh)
{
    ferry_File_errhandler_function *fn = NULL;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = registry_count; i-- > 0;)
        if (registry[i].handle == eh) {
            fn = registry[i].function;
            break;
        }
    pthread_mutex_unlock(&registry_lock);
    return fn;
}

/* The host's PMPI_File_create_errhandler: the drop-in exports that name as
 * ferry_File_create_errhandler, so it is found through base/host.c. */
static int host_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    typedef int create_fn(MPI_File_errhandler_function *, MPI_Errhandler *);
    create_fn *host = (create_fn *)ferry__host_function("PMPI_File_create_errhandler");
    return (host ? host : PMPI_File_create_errhandler)(fn, errhandler);
}

/* Makes room for one more entry; under registry_lock. */
static int grow_registry(void)
{
    if (registry_count < registry_capacity) return 0;
    size_t grown = registry_capacity ? registry_capacity * 2 : 8;
    errhandler_entry_t *bigger = ferry__realloc(registry, grown * sizeof *bigger);
    if (!bigger) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: File_create_errhandler: out of memory");
    registry = bigger;
    registry_capacity = grown;
    return 0;
}

int ferry__errhandler_create(ferry_File_errhandler_function *fn, MPI_Errhandler *eh)
{
    pthread_once(&teardown_once, register_teardown);
    int rc = host_create_errhandler((MPI_File_errhandler_function *)(void (*)(void))fn, eh);
    if (rc != MPI_SUCCESS) return ferry__error_host(rc, "File_create_errhandler", "", "MPI_File_create_errhandler");
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_count; i++)
        if (registry[i].handle == *eh) registry[i] = registry[--registry_count]; /* a reused handle value */
    int cls = grow_registry();
    if (cls == 0) registry[registry_count++] = (errhandler_entry_t){*eh, fn};
    pthread_mutex_unlock(&registry_lock);
    if (cls) MPI_Errhandler_free(eh);
    return cls;
}

int ferry__errhandler_set(ferry__errhandler_slot_t *slot, MPI_Errhandler eh)
{
    ferry_File_errhandler_function *fn = is_predefined(eh) ? NULL : function_of(eh);
    if (!is_predefined(eh) && !fn)
        return ferry__error_set(MPI_ERR_ARG, "ferry: File_set_errhandler: not a file error handler (create it with "
                                             "MPI_File_create_errhandler)");
    pthread_once(&teardown_once, register_teardown);
    pthread_mutex_lock(&registry_lock);
    host_retain(eh); /* before the old one goes: they may be the same */
    if (!slot) {
        slot = &default_slot;
        if (!default_set) slot->handle = MPI_ERRHANDLER_NULL;
        default_set = 1;
    }
    if (slot->handle != MPI_ERRHANDLER_NULL) host_release(slot->handle);
    *slot = (ferry__errhandler_slot_t){eh, fn};
    pthread_mutex_unlock(&registry_lock);
    return 0;
}

/* The slot a NULL slot stands for, copied under registry_lock. */
static ferry__errhandler_slot_t current(const ferry__errhandler_slot_t *slot)
{
    if (slot) return *slot;
    return default_set ? default_slot : (ferry__errhandler_slot_t){MPI_ERRORS_RETURN, NULL};
}

MPI_Errhandler ferry__errhandler_get(const ferry__errhandler_slot_t *slot)
{
    pthread_mutex_lock(&registry_lock);
    MPI_Errhandler eh = current(slot).handle;
    host_retain(eh); /* the caller's, to free */
    pthread_mutex_unlock(&registry_lock);
    return eh;
}

void ferry__errhandler_inherit(ferry__errhandler_slot_t *slot)
{
    pthread_mutex_lock(&registry_lock);
    *slot = current(NULL);
    host_retain(slot->handle);
    pthread_mutex_unlock(&registry_lock);
}

void ferry__errhandler_drop(ferry__errhandler_slot_t *slot)
{
    if (slot->handle == MPI_ERRHANDLER_NULL) return; /* a file that failed before it took one */
    pthread_mutex_lock(&registry_lock);
    host_release(slot->handle);
    *slot = (ferry__errhandler_slot_t){MPI_ERRHANDLER_NULL, NULL};
    pthread_mutex_unlock(&registry_lock);
}

void ferry__errhandler_invoke(const ferry__errhandler_slot_t *slot, ferry_File fh, MPI_Comm comm, int code)
{
    pthread_mutex_lock(&registry_lock);
    ferry__errhandler_slot_t h = current(slot);
    pthread_mutex_unlock(&registry_lock);
    if (h.handle == MPI_ERRORS_RETURN) return;
    if (h.fn) {
        ferry_File handle = fh;
        h.fn(&handle, &code);
        return;
    }
    /* MPI_ERRORS_ARE_FATAL (and MPI-4's MPI_ERRORS_ABORT) */
    char message[MPI_MAX_ERROR_STRING];
    int len = 0;
    ferry_Error_string(code, message, &len);
    fprintf(stderr, "%s\nferry: aborting (MPI_ERRORS_ARE_FATAL)\n", message);
    MPI_Abort(comm, code);
}

/*
 * File error handlers.
 *
 * Handlers are created by the host (its PMPI_File_create_errhandler, so the
 * caller gets a genuine MPI_Errhandler it may free with MPI_Errhandler_free)
 * and ferry remembers which function each one stands for. A file captures
 * the function when the handler is set, so freeing the handle later leaves
 * the file's handler working, as MPI requires.
 */
#include <pthread.h>
#include <stdio.h>

#include "core/core.h"
#include "error/error.h"

typedef struct errhandler_entry {
    MPI_Errhandler handle;
    ferry_File_errhandler_function *function;
} errhandler_entry_t;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static errhandler_entry_t *registry;
static size_t registry_count, registry_capacity;

/* The handler on FERRY_FILE_NULL: MPI_ERRORS_RETURN until the caller sets one. */
static MPI_Errhandler default_handle; /* MPI_ERRHANDLER_NULL is not a constant expression in every host */
static ferry_File_errhandler_function *default_function;
static int default_set;

static int is_predefined(MPI_Errhandler eh)
{
#ifdef MPI_ERRORS_ABORT
    if (eh == MPI_ERRORS_ABORT) return 1;
#endif
    return eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL;
}

ferry_File_errhandler_function *ferry__errhandler_function(MPI_Errhandler eh)
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
 * ferry_File_create_errhandler, so it is found through core/host.c. */
static int host_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    typedef int create_fn(MPI_File_errhandler_function *, MPI_Errhandler *);
    create_fn *host = (create_fn *)ferry__host_function("PMPI_File_create_errhandler");
    return (host ? host : PMPI_File_create_errhandler)(fn, errhandler);
}

int ferry_File_create_errhandler(ferry_File_errhandler_function *file_errhandler_fn, MPI_Errhandler *errhandler)
{
    int init_cls = ferry__core_init();
    if (init_cls) return ferry__error_return(FERRY_FILE_NULL, init_cls);
    if (!file_errhandler_fn || !errhandler)
        return ferry__error_return(FERRY_FILE_NULL,
                                   ferry__error_set(MPI_ERR_ARG, "ferry: File_create_errhandler: NULL argument"));
    int rc = host_create_errhandler((MPI_File_errhandler_function *)(void (*)(void))file_errhandler_fn, errhandler);
    if (rc != MPI_SUCCESS) return rc;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < registry_count; i++)
        if (registry[i].handle == *errhandler) registry[i] = registry[--registry_count]; /* a reused handle value */
    if (registry_count == registry_capacity) {
        size_t grown = registry_capacity ? registry_capacity * 2 : 8;
        errhandler_entry_t *bigger = ferry__realloc(registry, grown * sizeof *bigger);
        if (!bigger) {
            pthread_mutex_unlock(&registry_lock);
            MPI_Errhandler_free(errhandler);
            return ferry__error_return(FERRY_FILE_NULL,
                                       ferry__error_set(MPI_ERR_NO_MEM, "ferry: File_create_errhandler: out of memory"));
        }
        registry = bigger;
        registry_capacity = grown;
    }
    registry[registry_count++] = (errhandler_entry_t){*errhandler, file_errhandler_fn};
    pthread_mutex_unlock(&registry_lock);
    return MPI_SUCCESS;
}

/* Checks that eh is a predefined or a ferry-created file handler and
 * returns the function behind it in *fn. */
static int resolve_handler(MPI_Errhandler eh, ferry_File_errhandler_function **fn)
{
    *fn = NULL;
    if (is_predefined(eh)) return 0;
    *fn = ferry__errhandler_function(eh);
    if (!*fn)
        return ferry__error_set(MPI_ERR_ARG,
                                "ferry: File_set_errhandler: not a file error handler (create it with "
                                "MPI_File_create_errhandler)");
    return 0;
}

/* FERRY_FILE_NULL names the default handler; anything else must be an open file. */
static int check_handle(ferry_File file, const char *op)
{
    return file == FERRY_FILE_NULL ? 0 : ferry__handle_check_live(file, op);
}

int ferry_File_set_errhandler(ferry_File file, MPI_Errhandler errhandler)
{
    int init_cls = ferry__core_init();
    if (init_cls) return ferry__error_return(FERRY_FILE_NULL, init_cls);
    ferry_File_errhandler_function *fn;
    int cls = check_handle(file, "File_set_errhandler");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    cls = resolve_handler(errhandler, &fn);
    if (cls) return ferry__error_return(file, cls);
    if (file == FERRY_FILE_NULL) {
        pthread_mutex_lock(&registry_lock);
        default_handle = errhandler;
        default_function = fn;
        default_set = 1;
        pthread_mutex_unlock(&registry_lock);
    } else {
        file->errhandler = errhandler;
        file->errfn = fn;
    }
    return MPI_SUCCESS;
}

MPI_Errhandler ferry__errhandler_default(void)
{
    pthread_mutex_lock(&registry_lock);
    MPI_Errhandler eh = default_set ? default_handle : MPI_ERRORS_RETURN;
    pthread_mutex_unlock(&registry_lock);
    return eh;
}

int ferry_File_get_errhandler(ferry_File file, MPI_Errhandler *errhandler)
{
    int init_cls = ferry__core_init();
    if (init_cls) return ferry__error_return(FERRY_FILE_NULL, init_cls);
    int cls = check_handle(file, "File_get_errhandler");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!errhandler)
        return ferry__error_return(file, ferry__error_set(MPI_ERR_ARG, "ferry: File_get_errhandler: NULL argument"));
    *errhandler = file == FERRY_FILE_NULL ? ferry__errhandler_default() : file->errhandler;
    return MPI_SUCCESS;
}

void ferry__errhandler_invoke(ferry_File fh, int code)
{
    MPI_Errhandler eh;
    ferry_File_errhandler_function *fn;
    if (fh != FERRY_FILE_NULL) {
        eh = fh->errhandler;
        fn = fh->errfn;
    } else {
        pthread_mutex_lock(&registry_lock);
        eh = default_set ? default_handle : MPI_ERRORS_RETURN;
        fn = default_set ? default_function : NULL;
        pthread_mutex_unlock(&registry_lock);
    }
    if (eh == MPI_ERRORS_RETURN) return;
    if (fn) {
        ferry_File handle = fh;
        fn(&handle, &code);
        return;
    }
    /* MPI_ERRORS_ARE_FATAL (and MPI-4's MPI_ERRORS_ABORT) */
    char message[MPI_MAX_ERROR_STRING];
    int len = 0;
    ferry_Error_string(code, message, &len);
    fprintf(stderr, "%s\nferry: aborting (MPI_ERRORS_ARE_FATAL)\n", message);
    MPI_Abort(fh != FERRY_FILE_NULL ? fh->comm : MPI_COMM_WORLD, code);
}

int ferry_File_call_errhandler(ferry_File fh, int errorcode)
{
    int init_cls = ferry__core_init();
    if (init_cls) return ferry__error_return(FERRY_FILE_NULL, init_cls);
    int cls = check_handle(fh, "File_call_errhandler");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    ferry__errhandler_invoke(fh, errorcode);
    return MPI_SUCCESS;
}

void ferry__errhandler_finalize(void)
{
    pthread_mutex_lock(&registry_lock);
    ferry__free(registry);
    registry = NULL;
    registry_count = registry_capacity = 0;
    default_set = 0;
    pthread_mutex_unlock(&registry_lock);
}

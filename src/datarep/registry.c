/*
 * The representation registry: "native" and "internal" (ferry's internal
 * representation is native), "external32", and representations registered
 * with ferry_Register_datarep[_c], which live until MPI_Finalize. Entries are
 * never removed before then, so find() can hand out borrowed pointers; the
 * list is guarded by a mutex for MPI_THREAD_MULTIPLE callers.
 */
#include <pthread.h>
#include <string.h>

#include "base/alloc.h"
#include "base/process.h"
#include "datarep/datarep_int.h"
#include "error/error.h"

static const ferry__datarep_t builtin[] = {
    {.name = "native", .kind = FERRY__DR_NATIVE},
    {.name = "internal", .kind = FERRY__DR_NATIVE},
    {.name = "external32", .kind = FERRY__DR_EXTERNAL32},
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static ferry__datarep_t *registered;

static const ferry__datarep_t *lookup(const char *name)
{
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        if (!strcmp(builtin[i].name, name)) return &builtin[i];
    for (const ferry__datarep_t *r = registered; r; r = r->next)
        if (!strcmp(r->name, name)) return r;
    return NULL;
}

int ferry__datarep_find(const char *name, const ferry__datarep_t **rep)
{
    pthread_mutex_lock(&registry_lock);
    *rep = name ? lookup(name) : NULL;
    pthread_mutex_unlock(&registry_lock);
    if (*rep) return 0;
    return ferry__error_set(MPI_ERR_UNSUPPORTED_DATAREP, "ferry: data representation '%s' is not supported",
                            name ? name : "(null)");
}

const char *ferry__datarep_name(const ferry__datarep_t *rep)
{
    return rep->name;
}

int ferry__datarep_is_native(const ferry__datarep_t *rep)
{
    return rep->kind == FERRY__DR_NATIVE;
}

static int check_name(const char *name)
{
    if (!name || !name[0])
        return ferry__error_set(MPI_ERR_ARG, "ferry: MPI_Register_datarep: empty data representation name");
    if (strlen(name) >= MPI_MAX_DATAREP_STRING)
        return ferry__error_set(MPI_ERR_ARG, "ferry: MPI_Register_datarep: name '%.32s...' longer than %d",
                                name, MPI_MAX_DATAREP_STRING - 1);
    return 0;
}

/* Adds a copy of proto (everything but name and next filled in) as `name`. */
static int add(const char *name, const ferry__datarep_t *proto)
{
    FERRY_TRY(check_name(name));
    if (!proto->extent_fn)
        return ferry__error_set(MPI_ERR_ARG, "ferry: MPI_Register_datarep '%s': NULL dtype_file_extent_fn", name);
    ferry__datarep_t *rep = ferry__calloc(1, sizeof *rep);
    if (!rep) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory registering '%s'", name);
    *rep = *proto;
    strcpy(rep->name, name);
    rep->kind = FERRY__DR_USER;
    pthread_mutex_lock(&registry_lock);
    int dup = lookup(name) != NULL;
    if (!dup) rep->next = registered, registered = rep;
    pthread_mutex_unlock(&registry_lock);
    if (!dup) return 0;
    ferry__free(rep);
    return ferry__error_set(MPI_ERR_DUP_DATAREP, "ferry: MPI_Register_datarep: '%s' is already defined", name);
}

static pthread_once_t teardown_once = PTHREAD_ONCE_INIT;
static int teardown_result;

static void register_teardown(void)
{
    teardown_result = ferry__process_at_finalize(ferry__datarep_finalize);
}

static int register_rep(const char *name, const ferry__datarep_t *proto)
{
    pthread_once(&teardown_once, register_teardown); /* MPI_Finalize frees the registry */
    int cls = teardown_result ? ferry__error_set(MPI_ERR_INTERN, "ferry: MPI_Register_datarep '%s': cannot register "
                                                 "the MPI_Finalize hook (MPI not initialized?)", name)
                              : 0;
    if (cls == 0) cls = add(name, proto);
    return ferry__error_return_default(cls);
}

int ferry_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                           MPI_Datarep_conversion_function *write_conversion_fn,
                           MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    ferry__datarep_t proto = {
        .read.fn = read_conversion_fn == MPI_CONVERSION_FN_NULL ? NULL : read_conversion_fn,
        .write.fn = write_conversion_fn == MPI_CONVERSION_FN_NULL ? NULL : write_conversion_fn,
        .extent_fn = dtype_file_extent_fn,
        .extra_state = extra_state,
    };
    return register_rep(datarep, &proto);
}

int ferry_Register_datarep_c(const char *datarep, ferry_Datarep_conversion_function_c *read_conversion_fn,
                             ferry_Datarep_conversion_function_c *write_conversion_fn,
                             MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    ferry__datarep_t proto = {
        .read.fn_c = read_conversion_fn,
        .write.fn_c = write_conversion_fn,
        .extent_fn = dtype_file_extent_fn,
        .extra_state = extra_state,
    };
    return register_rep(datarep, &proto);
}

void ferry__datarep_finalize(void)
{
    pthread_mutex_lock(&registry_lock);
    ferry__datarep_t *r = registered;
    registered = NULL;
    pthread_mutex_unlock(&registry_lock);
    while (r) {
        ferry__datarep_t *next = r->next;
        ferry__free(r);
        r = next;
    }
}

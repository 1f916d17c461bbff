/*
 * The container's private communicators, one per caller communicator,
 * cached on it as an attribute: duplicating a communicator costs the host
 * one or more collectives of its own (agreeing on a context id), so a
 * program that opens a container every checkpoint on the same communicator
 * pays for it once. Containers opened on one communicator share its
 * duplicate, which is safe because their collective calls follow the
 * caller's order on that communicator, as MPI requires of the caller's
 * own. The duplicate goes when the caller frees its communicator, or at
 * MPI_Finalize (a hook on MPI_COMM_SELF deletes the remaining attributes).
 *
 * The attribute holds the duplicate's Fortran handle itself, so caching
 * cannot fail on one rank and not on another (which would make their
 * next opens call different collectives); the list kept for MPI_Finalize is
 * best effort.
 */
#include <pthread.h>
#include <stdint.h>

#include "container/container_int.h"
#include "core/core.h"
#include "error/error.h"
#include "progress/progress.h"

typedef struct cached_comm {
    MPI_Comm owner;
    struct cached_comm *next;
} cached_comm_t;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int cache_keyval = MPI_KEYVAL_INVALID, keyval_cls;
static cached_comm_t *owners; /* communicators holding a duplicate, for MPI_Finalize */

static void unlist(MPI_Comm owner)
{
    pthread_mutex_lock(&cache_lock);
    for (cached_comm_t **link = &owners; *link; link = &(*link)->next)
        if ((*link)->owner == owner) {
            cached_comm_t *gone = *link;
            *link = gone->next;
            ferry__free(gone);
            break;
        }
    pthread_mutex_unlock(&cache_lock);
}

static int forget(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)keyval, (void)extra;
    MPI_Comm dup = MPI_Comm_f2c((MPI_Fint)(intptr_t)attr);
    unlist(comm);
    MPI_Comm_free(&dup);
    return MPI_SUCCESS;
}

/* At MPI_Finalize: the duplicates of communicators still alive. */
static int at_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)attr, (void)extra;
    for (;;) {
        pthread_mutex_lock(&cache_lock);
        MPI_Comm owner = owners ? owners->owner : MPI_COMM_NULL;
        pthread_mutex_unlock(&cache_lock);
        if (owner == MPI_COMM_NULL) break;
        MPI_Comm_delete_attr(owner, cache_keyval); /* calls forget, which unlists it */
        unlist(owner);                             /* in case the host did not */
    }
    MPI_Comm_free_keyval(&cache_keyval);
    MPI_Comm_free_keyval(&keyval);
    return MPI_SUCCESS;
}

static void make_keyvals(void)
{
    int finalize_keyval;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget, &cache_keyval, NULL) != MPI_SUCCESS ||
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &finalize_keyval, NULL) != MPI_SUCCESS ||
        MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL) != MPI_SUCCESS)
        keyval_cls = MPI_ERR_INTERN;
}

int ferry__container_private_comm(MPI_Comm comm, MPI_Comm *out)
{
    void *attr = NULL;
    int found = 0;
    pthread_once(&keyval_once, make_keyvals);
    if (keyval_cls) return ferry__error_set(keyval_cls, "ferry container: cannot cache communicators");
    MPI_Comm_get_attr(comm, cache_keyval, &attr, &found);
    if (found) return *out = MPI_Comm_f2c((MPI_Fint)(intptr_t)attr), 0;
    /* Collective: the first open on comm finds no duplicate on every rank alike. */
    if (ferry__progress_comm_dup(comm, out) != MPI_SUCCESS || *out == MPI_COMM_NULL)
        return ferry__error_set(MPI_ERR_COMM, "ferry container: cannot duplicate the communicator");
    MPI_Comm_set_attr(comm, cache_keyval, (void *)(intptr_t)MPI_Comm_c2f(*out));
    cached_comm_t *entry = ferry__calloc(1, sizeof *entry);
    if (!entry) return 0; /* the duplicate outlives MPI_Finalize's clean-up, nothing worse */
    entry->owner = comm;
    pthread_mutex_lock(&cache_lock);
    entry->next = owners;
    owners = entry;
    pthread_mutex_unlock(&cache_lock);
    return 0;
}

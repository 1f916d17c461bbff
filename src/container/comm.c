/*
 * The container's private communicators, one per caller communicator,
 * cached on it as an attribute: duplicating a communicator costs the host
 * one or more collectives of its own (agreeing on a context id), so a
 * program that opens a container every checkpoint on the same communicator
 * pays for it once. Containers opened on one communicator share its
 * duplicate, which is safe because their collective calls follow the
 * caller's order on that communicator, as MPI requires of the caller's
 * own. The duplicate is freed when the caller frees its communicator (the
 * attribute's delete callback); one cached on a communicator that lives to
 * the end (MPI_COMM_WORLD) is reclaimed by MPI_Finalize with the host's
 * other communicators, not freed from a finalize hook: MPI_Comm_free from
 * inside MPI_Finalize's attribute callbacks was followed by rare segfaults
 * in Open MPI 4.1.4's finalize (2 in about 200 runs under load).
 *
 * The attribute holds the duplicate's Fortran handle itself, so caching
 * cannot fail on one rank and not on another (which would make their next
 * opens call different collectives).
 */
#include <pthread.h>
#include <stdint.h>

#include "container/container_int.h"
#include "error/error.h"
#include "progress/progress.h"

static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int cache_keyval = MPI_KEYVAL_INVALID, keyval_cls;

static int forget(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    MPI_Comm dup = MPI_Comm_f2c((MPI_Fint)(intptr_t)attr);
    MPI_Comm_free(&dup);
    return MPI_SUCCESS;
}

static void make_keyval(void)
{
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget, &cache_keyval, NULL) != MPI_SUCCESS)
        keyval_cls = MPI_ERR_INTERN;
}

int ferry__container_private_comm(MPI_Comm comm, MPI_Comm *out)
{
    void *attr = NULL;
    int found = 0;
    pthread_once(&keyval_once, make_keyval);
    if (keyval_cls) return ferry__error_set(keyval_cls, "ferry container: cannot cache communicators");
    MPI_Comm_get_attr(comm, cache_keyval, &attr, &found);
    if (found) return *out = MPI_Comm_f2c((MPI_Fint)(intptr_t)attr), 0;
    /* Collective: the first open on comm finds no duplicate on every rank alike. */
    if (ferry__progress_comm_dup(comm, out) != MPI_SUCCESS || *out == MPI_COMM_NULL)
        return ferry__error_set(MPI_ERR_COMM, "ferry container: cannot duplicate the communicator");
    MPI_Comm_set_attr(comm, cache_keyval, (void *)(intptr_t)MPI_Comm_c2f(*out));
    return 0;
}

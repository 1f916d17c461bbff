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
 *
 * Collective mode's collector groups (collect.c) are communicators too,
 * split from the private one: they are cached on it, one per (files,
 * collector_size) asked, and freed with it. A group is cached only after
 * every rank agreed it was made, its list node allocated before that.
 */
#include <stdlib.h>
#include <pthread.h>
#include <stdint.h>

#include "container/container_int.h"
#include "error/error.h"
#include "progress/progress.h"

static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int cache_keyval = MPI_KEYVAL_INVALID, group_keyval = MPI_KEYVAL_INVALID, keyval_cls;

struct ferry__container_group {
    int files, collector_size;
    MPI_Comm comm;
    struct ferry__container_group *next;
};

static int forget(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    MPI_Comm dup = MPI_Comm_f2c((MPI_Fint)(intptr_t)attr);
    MPI_Comm_free(&dup);
    return MPI_SUCCESS;
}

static int forget_groups(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    for (struct ferry__container_group *g = attr, *next; g; g = next) {
        next = g->next;
        MPI_Comm_free(&g->comm);
        free(g);
    }
    return MPI_SUCCESS;
}

static void make_keyval(void)
{
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget, &cache_keyval, NULL) != MPI_SUCCESS ||
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget_groups, &group_keyval, NULL) != MPI_SUCCESS)
        keyval_cls = MPI_ERR_INTERN;
}

MPI_Comm ferry__container_group_find(MPI_Comm comm, int files, int collector_size)
{
    void *attr = NULL;
    int found = 0;
    pthread_once(&keyval_once, make_keyval);
    if (keyval_cls) return MPI_COMM_NULL;
    MPI_Comm_get_attr(comm, group_keyval, &attr, &found);
    for (struct ferry__container_group *g = found ? attr : NULL; g; g = g->next)
        if (g->files == files && g->collector_size == collector_size) return g->comm;
    return MPI_COMM_NULL;
}

struct ferry__container_group *ferry__container_group_node(void)
{
    return calloc(1, sizeof(struct ferry__container_group));
}

void ferry__container_group_keep(MPI_Comm comm, struct ferry__container_group *node, int files, int collector_size,
                                 MPI_Comm group)
{
    void *attr = NULL;
    int found = 0;
    *node = (struct ferry__container_group){files, collector_size, group, NULL};
    MPI_Comm_get_attr(comm, group_keyval, &attr, &found);
    struct ferry__container_group *head = found ? attr : NULL;
    if (head) { /* behind the head: the attribute keeps its value */
        node->next = head->next;
        head->next = node;
    } else {
        MPI_Comm_set_attr(comm, group_keyval, node);
    }
}

int ferry__container_private_comm(MPI_Comm comm, const char *path, MPI_Comm *out)
{
    void *attr = NULL;
    int found = 0;
    pthread_once(&keyval_once, make_keyval);
    if (keyval_cls) return ferry__error_set(keyval_cls, "ferry container: cannot cache communicators");
    MPI_Comm_get_attr(comm, cache_keyval, &attr, &found);
    if (found) return *out = MPI_Comm_f2c((MPI_Fint)(intptr_t)attr), 0;
    /* Collective: the first open on comm finds no duplicate on every rank alike. */
    int rc = ferry__progress_comm_dup(comm, out);
    if (rc != MPI_SUCCESS) {
        *out = MPI_COMM_NULL;
        return ferry__error_host(rc, "ferry container open", path ? path : "(null)",
                                 "MPI_Comm_dup (the container's private communicator)");
    }
    if (*out == MPI_COMM_NULL)
        return ferry__error_set(MPI_ERR_COMM, "ferry container: duplicating the communicator gave MPI_COMM_NULL");
    MPI_Comm_set_attr(comm, cache_keyval, (void *)(intptr_t)MPI_Comm_c2f(*out));
    return 0;
}

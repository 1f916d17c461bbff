/*
 * The parallel handle's life: a private duplicate of the caller's
 * communicator (comm.c: so the container's collectives never meet the
 * caller's traffic), the physical files this rank has open, and the API exit.
 * Every file-system open, close, sync, stat and size change the handle
 * makes is counted (ferry_container_info_t.metadata_calls).
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"
#include "progress/progress.h"

int64_t ferry__container_hash(const void *bytes, size_t len)
{
    const unsigned char *p = bytes;
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
    return (int64_t)(h >> 1);
}

int ferry__container_return(int cls)
{
    return ferry__error_code(cls);
}

int ferry__container_host(ferry_container_t c, int rc, const char *what, const char *call)
{
    return ferry__error_host(rc, what, c->path ? c->path : "(null)", call);
}

int ferry__container_agree(ferry_container_t c, int cls, const char *what)
{
    int agreed = ferry__error_agree(c->comm, cls, what);
    char own[256]; /* how error/ words the failure of the agreement's own reduction: the call alone */
    snprintf(own, sizeof own, "ferry: %s: ", what);
    if (!agreed || cls || strncmp(ferry__error_message(), own, strlen(own)) != 0) return agreed;
    return ferry__container_fail(agreed, c->path ? c->path : "(null)", c->rank, what);
}

int ferry__container_handle_create(MPI_Comm comm, const char *path, int writing, ferry_container_t *result,
                                   int *local_cls, ferry_container_t *out)
{
    *out = NULL;
    if (result) *result = NULL;
    if (comm == MPI_COMM_NULL) return ferry__error_set(MPI_ERR_COMM, "ferry container: MPI_COMM_NULL");
    ferry_container_t c = ferry__calloc(1, sizeof *c);
    if (!c) return ferry__error_set(MPI_ERR_NO_MEM, "ferry container: out of memory");
    c->file_comm = MPI_COMM_NULL;
    c->collect_comm = MPI_COMM_NULL;
    c->collect_unit = MPI_DATATYPE_NULL;
    c->writing = writing;
    int cls = ferry__container_private_comm(comm, path, &c->comm);
    if (cls) {
        ferry__free(c);
        return cls;
    }
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->nprocs);
    c->path = path ? ferry__strdup(path) : NULL;
    c->path_hash = c->path ? ferry__container_hash(c->path, strlen(c->path)) : 0;
    *local_cls = c->path ? 0 : path ? ferry__error_set(MPI_ERR_NO_MEM, "ferry container: out of memory")
                                    : ferry__error_set(MPI_ERR_ARG, "ferry container: NULL path on rank %d", c->rank);
    if (!result && !*local_cls)
        *local_cls = ferry__error_set(MPI_ERR_ARG, "ferry container: NULL handle pointer on rank %d", c->rank);
    *out = c;
    return 0;
}

int ferry__container_handle_hand_over(ferry_container_t c, int cls, ferry_container_t *result)
{
    if (cls || !result) {
        ferry__container_handle_free(c);
        return ferry__container_return(cls);
    }
    *result = c;
    return MPI_SUCCESS;
}

void ferry__container_handle_free(ferry_container_t c)
{
    if (!c) return;
    ferry__container_cookies_orphan(c);
    for (int i = 0; i < c->nstreams; i++) ferry__container_stream_release(&c->streams[i]);
    if (c->buddy) ferry__container_stream_release(c->buddy);
    ferry__free(c->buddy);
    for (int i = 0; i < c->nfiles; i++) ferry__fs_close(c->files[i].fs);
    if (c->file_comm != MPI_COMM_NULL) MPI_Comm_free(&c->file_comm);
    if (c->collect_unit != MPI_DATATYPE_NULL) MPI_Type_free(&c->collect_unit);
    ferry__free(c->streams);
    ferry__free(c->files);
    ferry__free(c->entries);
    ferry__free(c->path);
    ferry__free(c);
}

int ferry__container_handle_file(ferry_container_t c, uint32_t k, int flags, ferry__fs_file_t **fs)
{
    for (int i = 0; i < c->nfiles; i++)
        if (c->files[i].index == k) return *fs = c->files[i].fs, 0;
    ferry__container_open_file_t *grown = ferry__realloc(c->files, (size_t)(c->nfiles + 1) * sizeof *grown);
    char *name = k >= FERRY__CONTAINER_BUDDY_FILE ? ferry__container_buddy_file_path(c->path, k - FERRY__CONTAINER_BUDDY_FILE)
                                                  : ferry__container_file_path(c->path, k);
    if (grown) c->files = grown;
    if (!grown || !name) {
        ferry__free(name);
        return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    }
    c->meta_calls += flags & FERRY_FS_WRITE ? 1 : 2; /* open, and the driver's fstat of a read-only open */
    int cls = ferry__fs_open(name, flags, fs);
    ferry__free(name);
    if (cls) return cls;
    c->files[c->nfiles++] = (ferry__container_open_file_t){k, *fs};
    return 0;
}

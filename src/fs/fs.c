/*
 * Driver selection, what every driver's files share (locks that also
 * exclude threads) and the errno -> error class mapping.
 */
#include "fs/fs.h"

#include <errno.h>
#include <stdio.h>

#include "error/error.h"
#include "fs/fs_int.h"

const ferry__fs_ops_t *ferry__fs_driver_for(const char *path)
{
    (void)path;
    return &ferry__fs_posix;
}

int ferry__fs_open(const char *name, int flags, ferry__fs_file_t **file)
{
    ferry__fs_name_t resolved;
    FERRY_TRY(ferry__fs_resolve(name, "open", &resolved));
    FERRY_TRY(ferry__fs_driver_for(resolved.path)->open(resolved.path, flags, file));
    (*file)->kind = resolved.kind;
    (*file)->readable = (flags & FERRY_FS_READ) != 0;
    if (((*file)->ranges = ferry__fs_ranges_create())) return 0;
    (*file)->ops->close(*file);
    *file = NULL;
    return ferry__error_set(MPI_ERR_NO_MEM, "ferry: open '%s': out of memory", name);
}

int ferry__fs_close(ferry__fs_file_t *file)
{
    if (!file) return 0;
    ferry__fs_ranges_free(file->ranges);
    return file->ops->close(file);
}

int ferry__fs_lock(ferry__fs_file_t *f, MPI_Offset off, MPI_Offset len, int mode)
{
    FERRY_TRY(ferry__fs_ranges_take(f, off, len, mode == FERRY_FS_LOCK_WRITE));
    int rc = f->ops->lock(f, off, len, mode);
    if (rc != 0) ferry__fs_ranges_give(f->ranges, off, len);
    return rc;
}

int ferry__fs_unlock(ferry__fs_file_t *f, MPI_Offset off, MPI_Offset len)
{
    int rc = f->ops->unlock(f, off, len);
    ferry__fs_ranges_give(f->ranges, off, len);
    return rc;
}

int ferry__fs_sync(ferry__fs_file_t *f)
{
    pthread_mutex_lock(&f->ranges->mutex);
    ferry__fs_leases_drop_locked(f);
    pthread_mutex_unlock(&f->ranges->mutex);
    return f->ops->sync(f);
}

int ferry__fs_layout_report(const ferry__fs_layout_t *layout, MPI_Info info)
{
    char value[32];
    const struct {
        const char *key;
        long long value;
    } numbers[] = {{"ferry_fs_block_size", layout->block_size},
                   {"ferry_fs_stripe_size", layout->stripe_size},
                   {"ferry_fs_stripe_count", layout->stripe_count}};
    int rc = MPI_Info_set(info, "ferry_fs_layout", layout->kind[0] ? layout->kind : "unknown");
    for (size_t i = 0; rc == MPI_SUCCESS && i < sizeof numbers / sizeof numbers[0]; i++) {
        snprintf(value, sizeof value, "%lld", numbers[i].value);
        rc = MPI_Info_set(info, numbers[i].key, value);
    }
    if (rc == MPI_SUCCESS) /* GlusterFS-like clients: coherence.c and posix.c's direct reads */
        rc = MPI_Info_set(info, "ferry_fs_client_cache",
                          layout->client_caches ? "dropped at sync and locks, read direct inside locks" : "none");
    return rc == MPI_SUCCESS ? 0 : MPI_ERR_INFO;
}

int ferry__fs_remove(const char *name)
{
    ferry__fs_name_t resolved;
    FERRY_TRY(ferry__fs_resolve(name, "delete", &resolved));
    return ferry__fs_driver_for(resolved.path)->remove(resolved.path);
}

int ferry__fs_errno_class(int err)
{
    switch (err) {
    case ENOENT: return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case ENOSPC: return MPI_ERR_NO_SPACE;
#ifdef EDQUOT
    case EDQUOT: return MPI_ERR_QUOTA;
#endif
    case EROFS: return MPI_ERR_READ_ONLY;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP: return MPI_ERR_BAD_FILE;
    case ETXTBSY:
    case EBUSY: return MPI_ERR_FILE_IN_USE;
    case ENOMEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_IO;
    }
}

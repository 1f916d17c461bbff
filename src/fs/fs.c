/*
 * Driver selection and the errno -> error class mapping.
 */
#include "fs/fs.h"

#include <errno.h>

const ferry__fs_ops_t *ferry__fs_driver_for(const char *path)
{
    (void)path;
    return &ferry__fs_posix;
}

int ferry__fs_open(const char *path, int flags, ferry__fs_file_t **file)
{
    return ferry__fs_driver_for(path)->open(path, flags, file);
}

int ferry__fs_close(ferry__fs_file_t *file)
{
    return file ? file->ops->close(file) : 0;
}

int ferry__fs_remove(const char *path)
{
    return ferry__fs_driver_for(path)->remove(path);
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

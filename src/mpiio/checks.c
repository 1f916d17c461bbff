/*
 * Argument checks shared by the entry points.
 */
#include <stdint.h>

#include "datatype/datatype.h"
#include "mpiio/mpiio.h"

int ferry__check_file(ferry_File fh, const char *op)
{
    if (fh == FERRY_FILE_NULL) return ferry__error_set(MPI_ERR_FILE, "ferry: %s: invalid file handle (MPI_FILE_NULL)", op);
    return 0;
}

int ferry__check_readable(ferry_File fh, const char *op)
{
    if (fh->amode & MPI_MODE_WRONLY)
        return ferry__error_set(MPI_ERR_ACCESS, "ferry: %s '%s': file was opened MPI_MODE_WRONLY", op, fh->filename);
    return 0;
}

int ferry__check_writable(ferry_File fh, const char *op)
{
    if (fh->amode & MPI_MODE_RDONLY)
        return ferry__error_set(MPI_ERR_READ_ONLY, "ferry: %s '%s': file was opened MPI_MODE_RDONLY", op,
                                fh->filename);
    return 0;
}

int ferry__check_not_sequential(ferry_File fh, const char *op)
{
    if (fh->amode & MPI_MODE_SEQUENTIAL)
        return ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                                "ferry: %s '%s': file was opened MPI_MODE_SEQUENTIAL, which allows shared file "
                                "pointer access only",
                                op, fh->filename);
    return 0;
}

int ferry__check_buffer(ferry_File fh, MPI_Count count, MPI_Datatype type, const char *op)
{
    if (count < 0) return ferry__error_set(MPI_ERR_COUNT, "ferry: %s '%s': negative count", op, fh->filename);
    ferry__typeinfo_t info;
    int cls = ferry__datatype_info(type, &info);
    if (cls == MPI_ERR_NO_MEM) return ferry__error_set(cls, "ferry: %s '%s': out of memory decoding the datatype", op, fh->filename);
    if (cls != 0) return ferry__error_set(MPI_ERR_TYPE, "ferry: %s '%s': invalid datatype", op, fh->filename);
    if (info.size > 0 && count > INT64_MAX / info.size)
        return ferry__error_set(MPI_ERR_COUNT, "ferry: %s '%s': count * datatype size overflows", op, fh->filename);
    MPI_Count file_size = info.size;
    cls = ferry__datarep_size(fh->view.rep, type, &file_size);
    if (cls != 0) return cls;
    if (file_size % fh->view.etype_size != 0)
        return ferry__error_set(MPI_ERR_TYPE,
                                "ferry: %s '%s': datatype size %lld is not a multiple of the etype size %lld", op,
                                fh->filename, (long long)file_size, (long long)fh->view.etype_size);
    return 0;
}

int ferry__memory_bytes(ferry_File fh, MPI_Datatype type, MPI_Count count, MPI_Count file_bytes, MPI_Count *bytes)
{
    return ferry__datarep_native_bytes(fh->view.rep, type, count, file_bytes, bytes);
}

void ferry__status_set_bytes(MPI_Status *status, MPI_Count bytes)
{
    if (status == MPI_STATUS_IGNORE) return;
    /* Both hosts keep a status's count in bytes, so MPI_Get_count and
     * MPI_Get_elements with the caller's datatype work from this. */
    MPI_Status_set_elements_x(status, MPI_BYTE, bytes);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
}

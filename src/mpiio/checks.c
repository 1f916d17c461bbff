/*
 * Argument checks shared by the entry points.
 */
#include <stdint.h>

#include "datatype/datatype.h"
#include "mpiio/mpiio.h"

int ferry__check_file(ferry_File fh, const char *op)
{
    if (fh == FERRY_FILE_NULL) return ferry__error_set(MPI_ERR_FILE, "ferry: %s: invalid file handle (MPI_FILE_NULL)", op);
    return ferry__handle_check_live(fh, op);
}

int ferry__check_readable(ferry_File fh, const char *op)
{
    if (fh->target.amode & MPI_MODE_WRONLY)
        return ferry__error_set(MPI_ERR_ACCESS, "ferry: %s '%s': file was opened MPI_MODE_WRONLY", op,
                                fh->target.filename);
    return 0;
}

int ferry__check_writable(ferry_File fh, const char *op)
{
    if (fh->target.amode & MPI_MODE_RDONLY)
        return ferry__error_set(MPI_ERR_READ_ONLY, "ferry: %s '%s': file was opened MPI_MODE_RDONLY", op,
                                fh->target.filename);
    return 0;
}

int ferry__check_not_sequential(ferry_File fh, const char *op)
{
    if (fh->target.amode & MPI_MODE_SEQUENTIAL)
        return ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                                "ferry: %s '%s': file was opened MPI_MODE_SEQUENTIAL, which allows shared file "
                                "pointer access only",
                                op, fh->target.filename);
    return 0;
}

/* No mapping lies below Linux's default vm.mmap_min_addr: a transfer whose
 * first byte would lie there has no valid buffer. */
enum { LOWEST_MAPPED_ADDRESS = 65536 };

int ferry__check_memory(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype type, const char *op)
{
    /* The common case costs one comparison. A NULL buffer is MPI_BOTTOM in
     * both hosts, legal with a datatype of absolute addresses, so the test
     * is where the data would start, not the pointer. */
    if ((uintptr_t)buf >= LOWEST_MAPPED_ADDRESS || count <= 0) return 0;
    ferry__typeinfo_t info;
    if (ferry__datatype_info(type, &info) != 0 || info.size == 0) return 0; /* check_buffer reports a bad type */
    MPI_Count lowest = info.true_lb; /* of element 0; a negative extent puts the last element lowest */
    if (info.extent < 0) lowest = count - 1 > INT64_MAX / -info.extent ? INT64_MIN : lowest + (count - 1) * info.extent;
    if (lowest >= LOWEST_MAPPED_ADDRESS - (MPI_Count)(uintptr_t)buf) return 0;
    return ferry__error_set(MPI_ERR_BUFFER,
                            "ferry: %s '%s': invalid buffer %p for %lld elements of %lld bytes: the data would start "
                            "at address %lld",
                            op, fh->target.filename, buf, (long long)count, (long long)info.size,
                            (long long)((MPI_Count)(uintptr_t)buf + (lowest == INT64_MIN ? 0 : lowest)));
}

int ferry__check_committed(ferry_File fh, MPI_Datatype type, const char *what, const char *op)
{
    if (type == MPI_DATATYPE_NULL)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: %s '%s': %s is MPI_DATATYPE_NULL", op, fh->target.filename, what);
    if (!ferry__datatype_committed(type))
        return ferry__error_set(MPI_ERR_TYPE, "ferry: %s '%s': %s is not committed (MPI_Type_commit)", op,
                                fh->target.filename, what);
    return 0;
}

int ferry__check_buffer(ferry_File fh, MPI_Count count, MPI_Datatype type, const char *op)
{
    if (count < 0) return ferry__error_set(MPI_ERR_COUNT, "ferry: %s '%s': negative count", op, fh->target.filename);
    FERRY_TRY(ferry__check_committed(fh, type, "datatype", op));
    ferry__typeinfo_t info;
    int cls = ferry__datatype_info(type, &info);
    if (cls == MPI_ERR_NO_MEM)
        return ferry__error_set(cls, "ferry: %s '%s': out of memory decoding the datatype", op, fh->target.filename);
    if (cls != 0) return ferry__error_set(MPI_ERR_TYPE, "ferry: %s '%s': invalid datatype", op, fh->target.filename);
    if (info.size > 0 && count > INT64_MAX / info.size)
        return ferry__error_set(MPI_ERR_COUNT, "ferry: %s '%s': count * datatype size overflows", op,
                                fh->target.filename);
    MPI_Count file_size = info.size;
    cls = ferry__datarep_size(fh->target.view.rep, type, &file_size);
    if (cls != 0) return cls;
    if (file_size % fh->target.view.etype_size != 0)
        return ferry__error_set(MPI_ERR_TYPE,
                                "ferry: %s '%s': datatype size %lld is not a multiple of the etype size %lld", op,
                                fh->target.filename, (long long)file_size, (long long)fh->target.view.etype_size);
    return 0;
}

int ferry__memory_bytes(ferry_File fh, MPI_Datatype type, MPI_Count count, MPI_Count file_bytes, MPI_Count *bytes)
{
    return ferry__datarep_native_bytes(fh->target.view.rep, type, count, file_bytes, bytes);
}

void ferry__status_set_bytes(MPI_Status *status, MPI_Count bytes)
{
    if (status == MPI_STATUS_IGNORE || status == NULL) return; /* NULL is MPI_STATUS_IGNORE on Open MPI only */
    /* Both hosts keep a status's count in bytes, so MPI_Get_count and
     * MPI_Get_elements with the caller's datatype work from this. */
    MPI_Status_set_elements_x(status, MPI_BYTE, bytes);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
}

/*
 * Independent I/O to a contiguous file range.
 */
#include "datatype/datatype.h"
#include "error/error.h"
#include "indep/indep.h"

static int stage_size(ferry_File fh, MPI_Count total, MPI_Count *stage)
{
    *stage = total < fh->hints.pack_buffer_size ? total : fh->hints.pack_buffer_size;
    if ((uint64_t)*stage > SIZE_MAX)
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: staging buffer for '%s' exceeds the address space",
                                fh->filename);
    return 0;
}

int ferry__indep_write(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype type,
                       MPI_Count *done)
{
    ferry__typeinfo_t info;
    *done = 0;
    FERRY_TRY(ferry__datatype_info(type, &info));
    MPI_Count total = count * info.size;
    if (total == 0) return 0;
    if (ferry__datatype_stream_contiguous(&info, count)) {
        FERRY_TRY(ferry__fs_pwrite(fh->fs, ferry__datatype_at(buf, info.true_lb), (size_t)total, offset));
        *done = total;
        return 0;
    }
    MPI_Count stage;
    FERRY_TRY(stage_size(fh, total, &stage));
    char *staging = ferry__malloc((size_t)stage);
    if (!staging) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: write '%s': out of memory", fh->filename);
    int rc = 0;
    while (*done < total && rc == 0) {
        MPI_Count piece = total - *done < stage ? total - *done : stage;
        rc = ferry__datatype_pack(buf, count, type, *done, staging, piece);
        if (rc == 0) rc = ferry__fs_pwrite(fh->fs, staging, (size_t)piece, offset + *done);
        if (rc == 0) *done += piece;
    }
    ferry__free(staging);
    return rc;
}

int ferry__indep_read(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype type,
                      MPI_Count *done)
{
    ferry__typeinfo_t info;
    *done = 0;
    FERRY_TRY(ferry__datatype_info(type, &info));
    MPI_Count total = count * info.size;
    if (total == 0) return 0;
    size_t got = 0;
    if (ferry__datatype_stream_contiguous(&info, count)) {
        FERRY_TRY(ferry__fs_pread(fh->fs, ferry__datatype_at(buf, info.true_lb), (size_t)total, offset, &got));
        *done = (MPI_Count)got;
        return 0;
    }
    MPI_Count stage;
    FERRY_TRY(stage_size(fh, total, &stage));
    char *staging = ferry__malloc((size_t)stage);
    if (!staging) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: read '%s': out of memory", fh->filename);
    int rc = 0;
    while (*done < total && rc == 0) {
        MPI_Count piece = total - *done < stage ? total - *done : stage;
        rc = ferry__fs_pread(fh->fs, staging, (size_t)piece, offset + *done, &got);
        if (rc == 0) rc = ferry__datatype_unpack(staging, (MPI_Count)got, buf, count, type, *done);
        if (rc == 0) *done += (MPI_Count)got;
        if ((MPI_Count)got < piece) break; /* end of file */
    }
    ferry__free(staging);
    return rc;
}

/*
 * Typed-buffer windows through the host's MPI_Pack/MPI_Unpack.
 *
 * MPI_Pack works in whole elements and int sizes, so a window is copied as
 * a partial first element, runs of whole elements (each run under INT_MAX
 * bytes), and a partial last element. Partial elements go through a
 * one-element scratch buffer. Temporary: issue 3's engine replaces this file.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "core/core.h"
#include "datatype/datatype.h"
#include "error/error.h"

static int host_failure(const char *op)
{
    return ferry__error_set(MPI_ERR_TYPE, "ferry: %s of a memory datatype failed in the host MPI", op);
}

static int pack_elements(const void *buf, MPI_Count first, MPI_Count n, MPI_Datatype type,
                         const ferry__typeinfo_t *info, void *dst)
{
    int position = 0;
    if (MPI_Pack(ferry__datatype_at(buf, first * info->extent), (int)n, type, dst, (int)(n * info->size), &position,
                 MPI_COMM_SELF) != MPI_SUCCESS)
        return host_failure("MPI_Pack");
    return 0;
}

static int unpack_elements(const void *src, MPI_Count first, MPI_Count n, MPI_Datatype type,
                           const ferry__typeinfo_t *info, void *buf)
{
    int position = 0;
    if (MPI_Unpack(src, (int)(n * info->size), &position, ferry__datatype_at(buf, first * info->extent), (int)n, type,
                   MPI_COMM_SELF) != MPI_SUCCESS)
        return host_failure("MPI_Unpack");
    return 0;
}

/* Largest run of whole elements that MPI_Pack's int sizes allow. */
static MPI_Count run_limit(const ferry__typeinfo_t *info)
{
    MPI_Count limit = INT_MAX / info->size;
    return limit > INT_MAX ? INT_MAX : limit;
}

typedef enum { TO_STREAM_BUFFER, FROM_STREAM_BUFFER } direction_t;

static int transfer(direction_t dir, void *contig, MPI_Count len, void *buf, MPI_Count count, MPI_Datatype type,
                    MPI_Count skip)
{
    ferry__typeinfo_t info;
    FERRY_TRY(ferry__datatype_info(type, &info));
    if (len == 0 || info.size == 0) return 0;
    if (skip < 0 || len < 0 || skip + len > count * info.size)
        return ferry__error_set(MPI_ERR_INTERN, "ferry: stream window outside the buffer");
    if (info.size > INT_MAX)
        return ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                                "ferry: noncontiguous memory elements over 2 GiB need the datatype engine");
    unsigned char *scratch = NULL;
    int rc = 0;
    char *cursor = contig;
    while (len > 0 && rc == 0) {
        MPI_Count element = skip / info.size, inside = skip % info.size;
        MPI_Count piece;
        if (inside != 0 || len < info.size) {
            if (!scratch && !(scratch = ferry__malloc((size_t)info.size))) {
                rc = ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory staging a datatype element");
                break;
            }
            piece = info.size - inside < len ? info.size - inside : len;
            rc = pack_elements(buf, element, 1, type, &info, scratch);
            if (rc == 0 && dir == TO_STREAM_BUFFER) {
                memcpy(cursor, scratch + inside, (size_t)piece);
            } else if (rc == 0) {
                memcpy(scratch + inside, cursor, (size_t)piece);
                rc = unpack_elements(scratch, element, 1, type, &info, buf);
            }
        } else {
            MPI_Count n = len / info.size < run_limit(&info) ? len / info.size : run_limit(&info);
            piece = n * info.size;
            rc = dir == TO_STREAM_BUFFER ? pack_elements(buf, element, n, type, &info, cursor)
                                         : unpack_elements(cursor, element, n, type, &info, buf);
        }
        cursor += piece;
        skip += piece;
        len -= piece;
    }
    ferry__free(scratch);
    return rc;
}

int ferry__datatype_pack(const void *buf, MPI_Count count, MPI_Datatype type, MPI_Count skip, void *dst,
                         MPI_Count len)
{
    return transfer(TO_STREAM_BUFFER, dst, len, (void *)buf, count, type, skip);
}

int ferry__datatype_unpack(const void *src, MPI_Count len, void *buf, MPI_Count count, MPI_Datatype type,
                           MPI_Count skip)
{
    return transfer(FROM_STREAM_BUFFER, (void *)src, len, buf, count, type, skip);
}

/*
 * Split collective data access (MPI-3.1 13.4.5), ordered ones included.
 *
 * The begin call performs the whole collective transfer (every rank takes
 * part, ending in the agreement) and records its outcome; the end call
 * returns it. The standard allows a begin to complete the operation, and
 * the caller may not touch the buffer in between anyway. At most one split
 * collective may be active per file handle: a begin while one is active
 * fails at once on the rank that broke the rule, which takes no part in a
 * collective the other ranks did not call (it used to, and the next
 * collective then hung); the next collective call on the file fails on
 * every rank, naming that rank (ferry__split_misuse). An end without its
 * begin, of another kind, or with another buffer fails locally.
 */
#include <string.h>

#include "mpiio/access.h"
#include "mpiio/mpiio.h"

static int begin(ferry__request_t *req)
{
    const ferry__access_t *call = req->call;
    ferry_File fh = req->fh;
    int cls = ferry__check_file(fh, call->name);
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (fh->split.kind) {
        fh->split.misused_begin = call->name;
        fh->split.misused_active = fh->split.kind;
        return ferry__error_return(fh, ferry__error_set(MPI_ERR_OTHER,
                                                        "ferry: %s '%s': split collective %s is still active on this "
                                                        "file; the next collective call on the file reports this on "
                                                        "every rank",
                                                        call->name, fh->target.filename, fh->split.kind));
    }
    MPI_Count bytes = 0;
    cls = ferry__access_blocking(req, &bytes);
    if (cls == 0) {
        fh->split.kind = call->name;
        fh->split.buf = req->buf;
        fh->split.bytes = bytes;
    }
    return ferry__error_return(fh, cls);
}

static int end(ferry_File fh, const char *begin_name, const char *end_name, const void *buf, MPI_Status *status)
{
    int cls = ferry__check_file(fh, end_name);
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!fh->split.kind || strcmp(fh->split.kind, begin_name) != 0)
        cls = ferry__error_set(MPI_ERR_OTHER, "ferry: %s '%s': no active %s on this file%s%s", end_name,
                               fh->target.filename, begin_name, fh->split.kind ? " (active: " : "",
                               fh->split.kind ? fh->split.kind : "");
    else if (buf != fh->split.buf)
        cls = ferry__error_set(MPI_ERR_BUFFER, "ferry: %s '%s': buffer differs from the one given to %s", end_name,
                               fh->target.filename, begin_name);
    if (cls == 0) {
        ferry__status_set_bytes(status, fh->split.bytes);
        fh->split.kind = NULL;
        fh->split.buf = NULL;
    }
    return ferry__error_return(fh, cls);
}

int ferry__split_misuse(ferry_File fh, int local_cls, const char *op)
{
    const char *misused = fh->split.misused_begin;
    if (!misused) return local_cls;
    fh->split.misused_begin = NULL;
    if (local_cls) return local_cls;
    return ferry__error_set(MPI_ERR_OTHER,
                            "ferry: %s '%s': this rank called %s earlier while split collective %s was active (one "
                            "split collective per file handle at a time), and took no part in it",
                            op, fh->target.filename, misused, fh->split.misused_active);
}

int ferry_File_read_at_all_begin_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                   MPI_Datatype datatype)
{
    return begin(FERRY__REQUEST(FERRY_CALL_READ_AT_ALL_BEGIN, fh, offset, buf, count, datatype));
}
int ferry_File_write_at_all_begin_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                    MPI_Datatype datatype)
{
    return begin(FERRY__REQUEST(FERRY_CALL_WRITE_AT_ALL_BEGIN, fh, offset, buf, count, datatype));
}
int ferry_File_read_all_begin_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return begin(FERRY__REQUEST(FERRY_CALL_READ_ALL_BEGIN, fh, 0, buf, count, datatype));
}
int ferry_File_write_all_begin_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return begin(FERRY__REQUEST(FERRY_CALL_WRITE_ALL_BEGIN, fh, 0, buf, count, datatype));
}
int ferry_File_read_at_all_begin(ferry_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype)
{
    return ferry_File_read_at_all_begin_c(fh, offset, buf, count, datatype);
}
int ferry_File_write_at_all_begin(ferry_File fh, MPI_Offset offset, const void *buf, int count,
                                  MPI_Datatype datatype)
{
    return ferry_File_write_at_all_begin_c(fh, offset, buf, count, datatype);
}
int ferry_File_read_all_begin(ferry_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return ferry_File_read_all_begin_c(fh, buf, count, datatype);
}
int ferry_File_write_all_begin(ferry_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    return ferry_File_write_all_begin_c(fh, buf, count, datatype);
}
int ferry_File_read_at_all_end(ferry_File fh, void *buf, MPI_Status *status)
{
    return end(fh, "read_at_all_begin", "read_at_all_end", buf, status);
}
int ferry_File_write_at_all_end(ferry_File fh, const void *buf, MPI_Status *status)
{
    return end(fh, "write_at_all_begin", "write_at_all_end", buf, status);
}
int ferry_File_read_all_end(ferry_File fh, void *buf, MPI_Status *status)
{
    return end(fh, "read_all_begin", "read_all_end", buf, status);
}
int ferry_File_write_all_end(ferry_File fh, const void *buf, MPI_Status *status)
{
    return end(fh, "write_all_begin", "write_all_end", buf, status);
}
int ferry_File_read_ordered_begin_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return begin(FERRY__REQUEST(FERRY_CALL_READ_ORDERED_BEGIN, fh, 0, buf, count, datatype));
}
int ferry_File_write_ordered_begin_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return begin(FERRY__REQUEST(FERRY_CALL_WRITE_ORDERED_BEGIN, fh, 0, buf, count, datatype));
}
int ferry_File_read_ordered_begin(ferry_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return ferry_File_read_ordered_begin_c(fh, buf, count, datatype);
}
int ferry_File_write_ordered_begin(ferry_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    return ferry_File_write_ordered_begin_c(fh, buf, count, datatype);
}
int ferry_File_read_ordered_end(ferry_File fh, void *buf, MPI_Status *status)
{
    return end(fh, "read_ordered_begin", "read_ordered_end", buf, status);
}
int ferry_File_write_ordered_end(ferry_File fh, const void *buf, MPI_Status *status)
{
    return end(fh, "write_ordered_begin", "write_ordered_end", buf, status);
}

/*
 * Blocking data access: explicit offsets and the individual file pointer,
 * independent and collective (MPI-3.1 13.4.2, 13.4.3).
 *
 * Every read and write entry point is one line that builds its request
 * (its row of the descriptor table, calls.c, and its arguments) for
 * ferry__access().
 */
#include "async/async.h"
#include "coll/coll.h"
#include "indep/indep.h"
#include "mpiio/mpiio.h"
#include "mpiio/access.h"

static int check_access(const ferry__request_t *req)
{
    const ferry__access_t *call = req->call;
    ferry_File fh = req->fh;
    FERRY_TRY(call->write ? ferry__check_writable(fh, call->name) : ferry__check_readable(fh, call->name));
    if (!call->shared) FERRY_TRY(ferry__check_not_sequential(fh, call->name));
    return ferry__check_buffer(fh, req->count, req->type, call->name);
}

/* The view may limit where data access can reach (view.h). */
static int check_window(const ferry__request_t *req)
{
    ferry_File fh = req->fh;
    MPI_Count size = 0;
    FERRY_TRY(ferry__datarep_size(fh->target.view.rep, req->type, &size));
    return ferry__view_check_access(&fh->target.view, req->skip, req->count * size, req->call->name,
                                    fh->target.filename);
}

static void count_transfer(ferry__stats_t *stats, int write, MPI_Count bytes)
{
    if (write) {
        stats->write_calls++;
        stats->write_bytes += bytes;
    } else {
        stats->read_calls++;
        stats->read_bytes += bytes;
    }
}

int ferry__access_check(ferry__request_t *req)
{
    ferry_File fh = req->fh;
    FERRY_TRY(check_access(req));
    MPI_Offset at = req->call->individual ? fh->position : req->offset;
    FERRY_TRY(ferry__check_offset(fh, at, &req->skip, req->call->name));
    return check_window(req);
}

int ferry__access_move(ferry__request_t *req)
{
    /* Through an empty view the arguments are checked, then nothing moves (view.h). */
    if (ferry__view_is_empty(&req->fh->target.view)) req->count = 0;
    int cls = req->local_cls;
    if (req->fh->target.view.self_overlapping) cls = ferry__access_read_overlapping(req); /* read-only files only */
    else if (req->call->collective) cls = ferry__coll_transfer(req);
    else if (cls == 0) cls = ferry__indep_transfer(req);
    if (cls == 0) count_transfer(req->ctx->stats, req->call->write, req->done);
    return cls;
}

int ferry__access_transfer(ferry__request_t *req)
{
    const ferry__access_t *call = req->call;
    ferry_File fh = req->fh;
    req->done = 0;
    /* Collectives run in initiation order: the file's pending nonblocking
     * ones first (async.h). */
    if (call->collective) {
        ferry__async_drain(fh);
        req->local_cls = ferry__split_misuse(fh, req->local_cls, call->name);
    }
    if (req->local_cls == 0) req->local_cls = ferry__check_memory(fh, req->buf, req->count, req->type, call->name);
    if (call->shared) req->local_cls = ferry__access_shared_offset(req);
    if (req->local_cls == 0) req->local_cls = ferry__access_check(req);
    int cls = ferry__access_move(req);
    /* A call that failed anywhere leaves every rank's pointer where it was. */
    if (call->individual && cls == 0) fh->position += req->done / fh->target.view.etype_size;
    return cls;
}

int ferry__access_blocking(ferry__request_t *req, MPI_Count *bytes)
{
    ferry__context_t ctx = ferry__context_of_file(req->fh);
    req->target = &req->fh->target; /* the file is live: checked by the caller */
    req->ctx = &ctx;
    *bytes = 0;
    int cls = ferry__access_transfer(req);
    if (cls == 0) cls = ferry__memory_bytes(req->fh, req->type, req->count, req->done, bytes);
    req->ctx = NULL; /* ctx ends here */
    return cls;
}

int ferry__access(ferry__request_t *req, MPI_Status *status)
{
    int cls = ferry__check_file(req->fh, req->call->name);
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    MPI_Count bytes = 0;
    cls = ferry__access_blocking(req, &bytes);
    if (cls == 0) ferry__status_set_bytes(status, bytes);
    return ferry__error_return(req->fh, cls);
}

int ferry_File_read_at_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_READ_AT, fh, offset, buf, count, datatype), status);
}
int ferry_File_read_at_all_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_READ_AT_ALL, fh, offset, buf, count, datatype), status);
}
int ferry_File_write_at_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_WRITE_AT, fh, offset, buf, count, datatype), status);
}
int ferry_File_write_at_all_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_WRITE_AT_ALL, fh, offset, buf, count, datatype), status);
}
int ferry_File_read_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_READ, fh, 0, buf, count, datatype), status);
}
int ferry_File_read_all_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_READ_ALL, fh, 0, buf, count, datatype), status);
}
int ferry_File_write_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_WRITE, fh, 0, buf, count, datatype), status);
}
int ferry_File_write_all_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_WRITE_ALL, fh, 0, buf, count, datatype), status);
}

/* The int-count forms are the large-count forms with a smaller count. */
int ferry_File_read_at(ferry_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return ferry_File_read_at_c(fh, offset, buf, count, datatype, status);
}
int ferry_File_read_at_all(ferry_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return ferry_File_read_at_all_c(fh, offset, buf, count, datatype, status);
}
int ferry_File_write_at(ferry_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                        MPI_Status *status)
{
    return ferry_File_write_at_c(fh, offset, buf, count, datatype, status);
}
int ferry_File_write_at_all(ferry_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    return ferry_File_write_at_all_c(fh, offset, buf, count, datatype, status);
}
int ferry_File_read(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_read_c(fh, buf, count, datatype, status);
}
int ferry_File_read_all(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_read_all_c(fh, buf, count, datatype, status);
}
int ferry_File_write(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_write_c(fh, buf, count, datatype, status);
}
int ferry_File_write_all(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_write_all_c(fh, buf, count, datatype, status);
}

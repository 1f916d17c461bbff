/*
 * Reads through a view that touches file bytes twice (view.h:
 * self_overlapping), which MPI-3.1 13.3 allows on a file opened
 * MPI_MODE_RDONLY and MPICH's ROMIO accepts (MPICH's io/tst_fileview).
 *
 * Stream order is not file order there, and the data paths of indep/
 * (data sieving) and coll/ (file domains) walk the file in stream order.
 * So such a read is served here: the stream window is cut into batches of
 * at most ferry_pack_buffer_size bytes, each segment read with its own
 * file-system call into the staging buffer in stream order, then unpacked
 * into the caller's memory. A read stops at the first segment that meets
 * the end of file: what came before it is what the call read. A collective
 * read takes part in the collective with nothing to move, so ranks with
 * ordinary views still aggregate among themselves and every rank gets the
 * agreed outcome. These views are rare (no library ferry knows sets them),
 * so the path is simple rather than fast.
 */
#include "coll/coll.h"
#include "mpiio/access.h"
#include "mpiio/mpiio.h"

enum { SEGMENTS = 64 };

/* Stream bytes [from, from + len) of the request's window into data: *got
 * short of len only at end of file. */
static int read_batch(const ferry__request_t *req, char *data, MPI_Offset from, MPI_Count len, MPI_Count *got)
{
    ferry_File fh = req->fh;
    ferry__datatype_segment_t segs[SEGMENTS];
    ferry__view_cursor_t cursor;
    ferry__view_cursor_init(&cursor, &fh->target.view, req->skip + from, len);
    *got = 0;
    for (int n = 1; n > 0;) {
        FERRY_TRY(ferry__view_segments(&cursor, segs, SEGMENTS, &n));
        for (int i = 0; i < n; i++) {
            size_t have = 0;
            FERRY_TRY(ferry__fs_pread(fh->target.fs, req->ctx->stats, data + *got, (size_t)segs[i].length,
                                      segs[i].offset, &have));
            *got += (MPI_Count)have;
            if ((MPI_Count)have < segs[i].length) return 0; /* end of file */
        }
    }
    return 0;
}

/* Moves stream bytes [from, from + len) of the file stream into the memory. */
static int unpack(const ferry__request_t *req, ferry__datarep_stream_t *convert, const char *data, MPI_Count len,
                  MPI_Count from)
{
    if (convert) return ferry__datarep_stream_unpack(convert, data, len, from);
    return ferry__datatype_unpack(data, len, req->buf, req->count, req->type, from);
}

static int read_all_batches(ferry__request_t *req, char *staging, MPI_Count batch, ferry__datarep_stream_t *convert,
                            MPI_Count total)
{
    for (MPI_Count done = 0; done < total;) {
        MPI_Count len = total - done < batch ? total - done : batch, got = 0;
        int rc = read_batch(req, staging, done, len, &got);
        if (rc == 0 && got > 0) rc = unpack(req, convert, staging, got, done);
        if (rc != 0) return rc;
        done += got;
        req->done += got;
        if (got < len) break;
    }
    return 0;
}

/* Atomic mode: one shared lock from the view's displacement to the end of
 * the tiles the window reaches, so no atomic writer's bytes are seen half. */
static int read_locked(ferry__request_t *req, char *staging, MPI_Count batch, ferry__datarep_stream_t *convert,
                       MPI_Count total)
{
    ferry_File fh = req->fh;
    if (!fh->target.atomicity) return read_all_batches(req, staging, batch, convert, total);
    const ferry__view_t *v = &fh->target.view;
    MPI_Offset tiles = (req->skip + total - 1) / v->tile_size + 1, span = tiles * v->tile_extent + v->tile_end;
    int rc = ferry__fs_lock(fh->target.fs, v->disp, span, FERRY_FS_LOCK_READ);
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION)
        return ferry__error_set(rc, "ferry: %s '%s': atomic mode needs byte-range locks, which the file system refuses",
                                req->call->name, fh->target.filename);
    if (rc != 0) return rc;
    rc = read_all_batches(req, staging, batch, convert, total);
    int unlock_rc = ferry__fs_unlock(fh->target.fs, v->disp, span);
    return rc ? rc : unlock_rc;
}

static int read_here(ferry__request_t *req)
{
    ferry_File fh = req->fh;
    MPI_Count size = 0;
    FERRY_TRY(ferry__datarep_size(fh->target.view.rep, req->type, &size));
    MPI_Count total = req->count * size;
    if (total == 0) return 0;
    MPI_Count batch = total < fh->target.hints.pack_buffer_size ? total : fh->target.hints.pack_buffer_size;
    char *staging = ferry__scratch_take(req->ctx->staging, (size_t)batch);
    if (!staging)
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: %s '%s': out of memory staging %lld bytes", req->call->name,
                                fh->target.filename, (long long)batch);
    ferry__datarep_stream_t *convert = NULL;
    int rc = 0;
    if (!ferry__datarep_is_native(fh->target.view.rep))
        rc = ferry__datarep_stream_open(fh->target.view.rep,
                                        &(ferry__datarep_memory_t){req->buf, req->count, req->type}, &convert);
    if (rc == 0) rc = read_locked(req, staging, batch, convert, total);
    ferry__datarep_stream_close(convert);
    ferry__scratch_give(req->ctx->staging, staging);
    return rc;
}

int ferry__access_read_overlapping(ferry__request_t *req)
{
    int cls = req->local_cls ? req->local_cls : read_here(req);
    if (!req->call->collective) return cls;
    MPI_Count count = req->count;
    req->count = 0; /* this rank's part is done: it takes part with nothing to move */
    req->local_cls = cls;
    cls = ferry__coll_transfer(req);
    req->count = count;
    return cls;
}

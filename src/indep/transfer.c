/*
 * One independent transfer: batches of view stream bytes, each staged (or
 * used in place), cut into rounds of segments, each round served by the
 * way the cost model picks.
 */
#include <stdatomic.h>
#include <string.h>

#include "error/error.h"
#include "indep/indep_int.h"

/* Memory used in place needs no staging; its batches only bound prefetching. */
enum { DIRECT_BATCH = 64 << 20 };

/* Memory pieces at least this long make a typed-to-typed copy (one cursor
 * step per piece) cheaper than packing then unpacking every byte. */
enum { TYPED_COPY_MIN_RUN = 256, TYPED_COPY_PROBE = 64 << 10 };

/* The memory's shape: used in place, or (reads of long pieces) copied typed to typed. */
static int shape_memory(ferry__transfer_t *t)
{
    const ferry__request_t *req = t->req;
    ferry__typeinfo_t info;
    FERRY_TRY(ferry__datatype_info(req->type, &info));
    int native = ferry__datarep_is_native(t->file->view.rep);
    if (native && ferry__datatype_stream_contiguous(&info, req->count))
        t->direct = ferry__datatype_at(req->buf, info.true_lb);
    if (!t->write && !t->direct && native && t->total > 0) {
        MPI_Count mean = 0;
        FERRY_TRY(
            ferry__datatype_mean_run(req->type, t->total < TYPED_COPY_PROBE ? t->total : TYPED_COPY_PROBE, &mean));
        t->typed_copy = mean >= TYPED_COPY_MIN_RUN;
    }
    return 0;
}

static int setup(ferry__transfer_t *t, const ferry__request_t *req)
{
    const ferry__target_t *file = req->target;
    *t = (ferry__transfer_t){.req = req, .file = file, .write = req->call->write, .stats = req->ctx->stats};
    /* From here on teardown() can run. */
    MPI_Count file_size;
    FERRY_TRY(ferry__datarep_size(file->view.rep, req->type, &file_size));
    t->total = req->count * file_size;
    FERRY_TRY(shape_memory(t));
    MPI_Count batch = t->direct ? DIRECT_BATCH : file->hints.pack_buffer_size;
    t->batch = t->total < batch ? t->total : batch;
    t->shared = file->nprocs > 1 || !(file->amode & MPI_MODE_UNIQUE_OPEN);
    t->lock_writes = t->write && t->shared && !atomic_load(file->locks_refused);
    if (t->total > 0) {
        FERRY_TRY(ferry__view_file_offset(&file->view, req->skip + t->total - 1, &t->file_end));
        t->file_end++;
    }
    if (!ferry__datarep_is_native(file->view.rep) && t->total > 0)
        FERRY_TRY(ferry__datarep_stream_open(file->view.rep,
                                             &(ferry__datarep_memory_t){req->buf, req->count, req->type}, &t->convert));
    if (!t->direct && t->batch > 0 && !(t->staging = ferry__scratch_take(req->ctx->staging, (size_t)t->batch)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: %s '%s': out of memory staging %lld bytes", req->call->name,
                                file->filename, (long long)t->batch);
    return 0;
}

static void teardown(ferry__transfer_t *t)
{
    ferry__datarep_stream_close(t->convert);
    ferry__scratch_give(t->req->ctx->staging, t->staging);
    ferry__scratch_give(t->req->ctx->sieve, t->window.buf);
}

/* Moves stream bytes [t->req->skip + start, + len) between data and the file;
 * *moved falls short of len only at end of file (reads). */
static int move_batch(ferry__transfer_t *t, MPI_Offset start, MPI_Count len, char *data, MPI_Count *moved)
{
    ferry__datatype_segment_t segs[FERRY_INDEP_SEGMENTS];
    ferry__view_cursor_t cursor;
    ferry__view_cursor_init(&cursor, &t->file->view, t->req->skip + start, len);
    *moved = 0;
    while (*moved < len) {
        ferry__round_t round = {segs, 0, data + *moved, 0};
        FERRY_TRY(ferry__view_segments(&cursor, segs, FERRY_INDEP_SEGMENTS, &round.n));
        if (round.n == 0) break;
        for (int i = 0; i < round.n; i++) round.bytes += segs[i].length;
        MPI_Count got = 0;
        if (ferry__indep_choose(t, &round) == FERRY_SERVE_SIEVE) {
            /* The first round stands for the batch: sieve the rest of it, no segments. */
            int refused = 0;
            int rc = ferry__indep_sieve(t, t->req->skip + start + *moved, len - *moved, data + *moved, &got, &refused);
            *moved += got;
            if (rc != 0 || !refused) return rc;
            ferry__view_cursor_init(&cursor, &t->file->view, t->req->skip + start + *moved, len - *moved);
            continue;
        }
        int rc = ferry__indep_vectored(t, &round, &got);
        if (rc == 0 && t->typed_copy && got > 0)
            rc = ferry__datatype_unpack(round.data, got, t->req->buf, t->req->count, t->req->type, start + *moved);
        *moved += got;
        if (rc != 0) return rc;
        if (got < round.bytes) break; /* end of file */
    }
    return 0;
}

/* Stream bytes [from, from + len) of the memory, in the view's representation. */
static int pack_window(ferry__transfer_t *t, MPI_Count from, char *data, MPI_Count len)
{
    if (t->convert) return ferry__datarep_stream_pack(t->convert, from, data, len);
    return ferry__datatype_pack(t->req->buf, t->req->count, t->req->type, from, data, len);
}

static int unpack_window(ferry__transfer_t *t, const char *data, MPI_Count len, MPI_Count from)
{
    if (t->convert) return ferry__datarep_stream_unpack(t->convert, data, len, from);
    return ferry__datatype_unpack(data, len, t->req->buf, t->req->count, t->req->type, from);
}

static int run(ferry__transfer_t *t, MPI_Count *done)
{
    ferry__indep_prefetch_decide(t);
    ferry__indep_prefetch(t, t->req->skip, t->total);
    while (*done < t->total) {
        MPI_Count len = t->total - *done < t->batch ? t->total - *done : t->batch;
        char *data = t->direct ? t->direct + *done : t->staging;
        if (t->write && !t->direct)
            FERRY_TRY(pack_window(t, *done, data, len));
        ferry__indep_prefetch(t, t->req->skip + *done + len, t->total - *done - len);
        MPI_Count moved = 0;
        int rc = move_batch(t, *done, len, data, &moved);
        if (!t->write && !t->direct && !t->typed_copy && moved > 0 && rc == 0)
            rc = unpack_window(t, data, moved, *done);
        if (!t->write) ferry__indep_release(t, t->req->skip + *done, moved);
        *done += moved;
        if (rc != 0) return rc;
        if (moved < len) break;
    }
    return 0;
}

/* Atomic mode (MPI-3.1 13.6.1): the transfer holds one lock over every
 * byte from its first to its last, exclusive for writes and shared for
 * reads, so overlapping transfers of other processes come wholly before or
 * after it. Locks of one open file merge, so the per-window locks of
 * sieving and vectored writes are skipped: unlocking one would release part
 * of this one. A file system without locks cannot be atomic: an error. */
static int lock_atomic(ferry__transfer_t *t, MPI_Offset *first)
{
    const ferry__target_t *file = t->file;
    FERRY_TRY(ferry__view_file_offset(&file->view, t->req->skip, first));
    MPI_Offset len = t->file_end - *first;
    int leased = 0; /* another open file writes lock-free there: this write sieves nothing */
    int rc = t->write ? ferry__fs_lock_rmw(file->fs, *first, len, &leased)
                      : ferry__fs_lock(file->fs, *first, len, FERRY_FS_LOCK_READ);
    t->sieve_refused = leased;
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION)
        return ferry__error_set(rc, "ferry: %s '%s': atomic mode needs byte-range locks, which the file system refuses",
                                t->write ? "write" : "read", file->filename);
    if (rc != 0) return rc;
    t->atomic = 1;
    t->lock_writes = 0;
    return 0;
}

int ferry__indep_transfer(ferry__request_t *req)
{
    ferry__transfer_t t;
    MPI_Offset first = 0;
    MPI_Count done = 0;
    int rc = setup(&t, req);
    if (rc == 0 && req->target->atomicity && t.total > 0) rc = lock_atomic(&t, &first);
    if (rc == 0) rc = run(&t, &done);
    if (t.atomic) {
        int unlock_rc = ferry__fs_unlock(req->target->fs, first, t.file_end - first);
        if (rc == 0) rc = unlock_rc;
    }
    teardown(&t);
    req->done += done;
    return rc;
}

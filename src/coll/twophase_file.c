/*
 * Two-phase collective access: an aggregator's window against the file.
 *
 *   write  the aggregator unpacks each rank's bytes into its window through
 *          the sender's view layout and writes the window once. A window
 *          whose data leave holes (not when one rank covers it, nor when
 *          the views' known coverage or a coverage mask shows that the
 *          ranks' data cover every byte) never has a byte of a hole
 *          rewritten that another writer may have changed: its pieces are
 *          written one call each, or, when that costs more, the window is
 *          read, patched and written back under an exclusive byte-range
 *          lock on it, which every ferry write of the file respects (each
 *          locks what it writes: docs/coll.md). Every window is written
 *          under that lock, so no piece lands inside another writer's
 *          read-modify-write either.
 *   read   the aggregator reads the span its ranks need and packs each
 *          rank's range. Bytes past end of file are not sent; a rank's
 *          received bytes are then the prefix of its stream below end of
 *          file.
 *
 * Also write-behind: the writeback of a large call's windows starts before
 * the call's closing agreement.
 */
#include <string.h>

#include "coll/twophase_int.h"
#include "error/error.h"

/* File bytes [*first, *last) spanned by the shares in my window. */
static int share_span(exchange_t *x, const step_t *st, MPI_Offset *first, MPI_Offset *last, MPI_Offset *total,
                      int *contributors)
{
    *first = INT64_MAX;
    *last = *total = 0;
    *contributors = 0;
    for (int k = 0; k < st->nin; k++) {
        const share_t *sh = &st->in[k];
        if (sh->s1 == sh->s0) continue;
        ferry__view_t view = ferry__coll_view(x->s, sh->peer);
        MPI_Offset lo, hi;
        FERRY_TRY(ferry__view_file_offset(&view, sh->s0, &lo));
        FERRY_TRY(ferry__view_file_offset(&view, sh->s1 - 1, &hi));
        if (lo < *first) *first = lo;
        if (hi + 1 > *last) *last = hi + 1;
        *total += sh->s1 - sh->s0;
        (*contributors)++;
    }
    return 0;
}

/* Whether the shares cover every byte of [first, last): marks them in a
 * mask through the same views (the bytes, not lists of pieces). */
static int covered_by_mask(exchange_t *x, const step_t *st, MPI_Offset first, MPI_Offset last, int *covered)
{
    size_t span = (size_t)(last - first);
    if (!x->mask && !(x->mask = ferry__scratch_take(&x->s->mask, (size_t)x->d->window)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective write '%s': out of memory", x->file->filename);
    memset(x->mask, 0, span);
    for (int k = 0; k < st->nin; k++) {
        const share_t *sh = &st->in[k];
        ferry__view_t view = ferry__coll_view(x->s, sh->peer);
        FERRY_TRY(ferry__view_buffer_mark(&view, x->mask, first, sh->s0, sh->s1 - sh->s0));
    }
    *covered = memchr(x->mask, 0, span) == NULL;
    return 0;
}

/* Whether the shares cover [first, last) by the views' known coverage
 * (state.c): every rank's call includes all its view's bytes there. */
static int covered_by_views(exchange_t *x, const step_t *st, MPI_Offset first, MPI_Offset last, int *covered)
{
    *covered = 0;
    if (x->s->covered_from < 0 || first < x->s->covered_from) return 0;
    for (int r = 0, k = 0; r < x->file->nprocs; r++) {
        ferry__view_t view = ferry__coll_view(x->s, r);
        MPI_Offset b0, b1;
        FERRY_TRY(ferry__view_stream_below(&view, first, &b0));
        FERRY_TRY(ferry__view_stream_below(&view, last, &b1));
        share_t none = {.peer = r}, *sh = k < st->nin && st->in[k].peer == r ? &st->in[k++] : &none;
        if (b1 > b0 && (sh->s0 > b0 || sh->s1 < b1)) return 0;
    }
    *covered = 1;
    return 0;
}

/* The file's size, asked at the first window that needs it: a window its
 * shares cover whole (most calls) never does, and on a network client the
 * answer is a round trip to the server. Taken after other aggregators of
 * the call may have written, it can only be larger: a window is then read
 * where it could have been skipped, never skipped where it must be read. */
static int known_eof(exchange_t *x)
{
    return x->eof >= 0 ? 0 : ferry__fs_size(x->file->fs, &x->eof);
}

/* Whether the shares leave holes in [first, last) (the window then needs
 * care: its other bytes belong to whoever else writes the file). */
static int window_has_holes(exchange_t *x, const step_t *st, int *holes)
{
    const window_t *w = &x->win;
    MPI_Offset span = w->last - w->first;
    *holes = 0;
    if (w->total == span && w->contributors == 1) return 0; /* one monotone view: no byte twice, no hole */
    int covered = 0;
    if (w->total >= span) FERRY_TRY(covered_by_views(x, st, w->first, w->last, &covered));
    if (w->total >= span && !covered) {
        FERRY_TRY(known_eof(x));
        /* Past the end of file a mask would cost more than the zeros it spares. */
        if (w->first < x->eof) FERRY_TRY(covered_by_mask(x, st, w->first, w->last, &covered));
    }
    *holes = !covered;
    return 0;
}

/* The file pieces of the shares in my window, one file-system call each
 * when `write` (straight from the shares' bytes, which are in file order
 * per rank); counting stops once past `most` when only counting. */
static int walk_pieces(exchange_t *x, const step_t *st, MPI_Offset most, int write, MPI_Offset *pieces)
{
    ferry__datatype_segment_t segs[32];
    *pieces = 0;
    for (int k = 0; k < st->nin && (write || *pieces <= most); k++) {
        const share_t *sh = &st->in[k];
        if (sh->s1 == sh->s0) continue;
        const char *bytes = ferry__coll_share_bytes(x, st, sh);
        ferry__view_t view = ferry__coll_view(x->s, sh->peer); /* the cursor points at it */
        ferry__view_cursor_t cursor;
        ferry__view_cursor_init(&cursor, &view, sh->s0, sh->s1 - sh->s0);
        int n = 1;
        while (n > 0 && (write || *pieces <= most)) {
            FERRY_TRY(ferry__view_segments(&cursor, segs, 32, &n));
            for (int i = 0; write && i < n; bytes += segs[i].length, i++)
                FERRY_TRY(ferry__fs_pwrite(x->file->fs, x->ctx->stats, bytes, (size_t)segs[i].length, segs[i].offset));
            *pieces += n;
        }
    }
    return 0;
}

/* A window with holes: its pieces one call each (the holes untouched), or
 * the span read, patched and written back under the window's lock,
 * whichever costs less; only pieces when the file cannot be read back or
 * locked. Reading costs nothing past the end of file. */
static int choose_holes_way(exchange_t *x, const step_t *st)
{
    window_t *w = &x->win;
    w->way = WRITE_PIECES;
    if (!x->file->readable || atomic_load(x->file->locks_refused)) return 0;
    FERRY_TRY(known_eof(x));
    MPI_Offset span = w->last - w->first, below_eof = x->eof > w->first ? x->eof - w->first : 0;
    double call = ferry__coll_call_cost(&x->file->layout), byte = ferry__coll_byte_cost(&x->file->layout);
    double patch = 2 * call + (double)((below_eof < span ? below_eof : span) + span) * byte;
    double spare = patch - (double)w->total * byte;
    MPI_Offset most = spare > 0 ? (MPI_Offset)(spare / call) : 0, pieces = 0;
    FERRY_TRY(walk_pieces(x, st, most, 0, &pieces));
    if (pieces > most) w->way = WRITE_PATCHED;
    return 0;
}

/* Locks my window against the other writers of the file, who guard what
 * they write (fs.h): none of their bytes lands in a hole between my read
 * and my write, none of mine between theirs. Where another open file
 * writes without locks (a lease: patching, rmw, finds it), the window is
 * written piecewise under the lock. A file system that refuses locks gets
 * none from now on (and no patched windows). */
static int lock_window(exchange_t *x, int patching)
{
    window_t *w = &x->win;
    if (atomic_load(x->file->locks_refused)) return 0;
    int leased = 0;
    int rc = patching ? ferry__fs_lock_rmw(x->file->fs, w->first, w->last - w->first, &leased)
                      : ferry__fs_lock(x->file->fs, w->first, w->last - w->first, FERRY_FS_LOCK_WRITE);
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION) {
        atomic_store(x->file->locks_refused, 1);
        return 0;
    }
    w->locked = rc == 0;
    if (leased) w->way = WRITE_PIECES;
    return rc;
}

/* Past the old end of file: only the data regions (file-system holes read
 * as zeros), which there are the last page of this aggregator's previous
 * window and whatever another writer put there meanwhile; a fresh file's
 * windows so cost no read, as before issue 13. (Below it the data run on,
 * and on tmpfs finding their end walks every page: read the span whole.) */
static int read_data_regions(exchange_t *x)
{
    window_t *w = &x->win;
    memset(x->window, 0, (size_t)(w->last - w->first));
    for (MPI_Offset at = w->first, start, end; at < w->last; at = end) {
        ferry__fs_data_region(x->file->fs, at, &start, &end);
        if (start >= w->last) break;
        start = start > at ? start : at;
        end = end < w->last ? end : w->last;
        size_t have = 0;
        FERRY_TRY(ferry__fs_pread(x->file->fs, x->ctx->stats, x->window + (start - w->first), (size_t)(end - start),
                                  start, &have));
        x->ctx->stats->sieve_extra_bytes += (long long)have;
        if ((MPI_Offset)have < end - start) break; /* end of file */
    }
    return 0;
}

/* Patched windows: under the lock, what the file holds now (zeros past its end). */
static int read_holes(exchange_t *x)
{
    window_t *w = &x->win;
    FERRY_TRY(lock_window(x, 1));
    if (!w->locked || w->way == WRITE_PIECES) {
        w->way = WRITE_PIECES; /* refused, or leased elsewhere: never write a hole unlocked */
        return 0;
    }
    FERRY_TRY(known_eof(x));
    if (w->first >= x->eof) return read_data_regions(x);
    size_t have = 0, span = (size_t)(w->last - w->first);
    FERRY_TRY(ferry__fs_pread(x->file->fs, x->ctx->stats, x->window, span, w->first, &have));
    x->ctx->stats->sieve_extra_bytes += (long long)have;
    memset(x->window + have, 0, span - have);
    return 0;
}

/* Writes, before the next step is posted: plans my window of step st and,
 * unless its pieces go one by one, builds it (reading the holes under the
 * lock when patched). */
int ferry__coll_prepare_window(exchange_t *x, const step_t *st)
{
    window_t *w = &x->win;
    FERRY_TRY(share_span(x, st, &w->first, &w->last, &w->total, &w->contributors));
    if (w->contributors == 0) return 0;
    int holes = 0;
    FERRY_TRY(window_has_holes(x, st, &holes));
    if (holes) FERRY_TRY(choose_holes_way(x, st));
    if (w->way == WRITE_PATCHED) FERRY_TRY(read_holes(x));
    for (int k = 0; w->way != WRITE_PIECES && k < st->nin; k++) {
        const share_t *sh = &st->in[k];
        ferry__view_t view = ferry__coll_view(x->s, sh->peer);
        if (sh->s1 > sh->s0)
            FERRY_TRY(ferry__view_buffer_copy(&view, x->window, w->first, sh->s0, sh->s1 - sh->s0,
                                              ferry__coll_share_bytes(x, st, sh), 1));
    }
    return 0;
}

/* Writes my window (unless this rank failed) and releases its lock. */
int ferry__coll_finish_window(exchange_t *x, const step_t *st)
{
    window_t *w = &x->win;
    MPI_Offset pieces = 0;
    int rc = 0;
    if (!x->failed && w->contributors > 0 && !w->locked) rc = lock_window(x, 0);
    if (!x->failed && w->contributors > 0 && rc == 0)
        rc = w->way == WRITE_PIECES
                 ? walk_pieces(x, st, 0, 1, &pieces)
                 : ferry__fs_pwrite(x->file->fs, x->ctx->stats, x->window, (size_t)(w->last - w->first), w->first);
    int unlocked = w->locked ? ferry__fs_unlock(x->file->fs, w->first, w->last - w->first) : 0;
    return rc ? rc : unlocked;
}

/* Reads: reads the span of my window's shares and packs each rank's bytes
 * below end of file into incoming; shrinks shares that reach past the end. */
int ferry__coll_read_window(exchange_t *x, step_t *st)
{
    MPI_Offset first, last, total;
    int contributors;
    FERRY_TRY(share_span(x, st, &first, &last, &total, &contributors));
    if (contributors == 0) return 0;
    size_t have = 0;
    FERRY_TRY(ferry__fs_pread(x->file->fs, x->ctx->stats, x->window, (size_t)(last - first), first, &have));
    x->ctx->stats->sieve_extra_bytes += (long long)have > total ? (long long)have - total : 0;
    for (int k = 0; k < st->nin; k++) {
        share_t *sh = &st->in[k];
        if (sh->s1 == sh->s0) continue;
        ferry__view_t view = ferry__coll_view(x->s, sh->peer);
        if ((MPI_Offset)have < last - first) {
            MPI_Offset below;
            FERRY_TRY(ferry__view_stream_below(&view, first + (MPI_Offset)have, &below));
            if (below < sh->s1) sh->s1 = below > sh->s0 ? below : sh->s0;
        }
        if (sh->s1 > sh->s0)
            FERRY_TRY(ferry__view_buffer_copy(&view, x->window, first, sh->s0, sh->s1 - sh->s0,
                                              ferry__coll_share_bytes(x, st, sh), 0));
    }
    return 0;
}

void ferry__coll_write_behind(const ferry__request_t *req, MPI_Offset offset, MPI_Offset len, MPI_Offset call_bytes)
{
    const ferry__target_t *file = req->target;
    MPI_Offset threshold = file->hints.write_behind;
    if (threshold == 0 || call_bytes < threshold || len <= 0 || file->layout.memory_backed) return;
    ferry__fs_advise(file->fs, offset, len, FERRY_FS_WRITEBACK);
    req->ctx->stats->writeback_bytes += len;
}

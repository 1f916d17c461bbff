/*
 * Two-phase collective access: the steps.
 *
 * In step t every aggregator a serves its t-th window [wlo, whi) (domains.c).
 * Which stream bytes of rank r fall into it follows from r's cached view
 * alone (monotone views: one stream range, found by navigation in O(depth)),
 * so sender and aggregator compute the same ranges and only data travels:
 * one message per pair that has data, nothing else.
 *
 *   write  ranks pack their ranges (or send straight from contiguous
 *          memory); the aggregator unpacks each into its window through
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
 *          rank's range; ranks receive straight into contiguous memory or
 *          unpack. Bytes past end of file are not sent; a rank's received
 *          bytes are then the prefix of its stream below end of file.
 *
 * Pipelining: two steps are in flight. A write posts step t+1's messages
 * before the aggregator writes window t; a read packs and posts step t+1
 * before the ranks unpack step t. So each step has its own message
 * buffers (two slots, used alternately).
 *
 * Errors never hang: a dry run of the steps sizes every buffer before the
 * first message, and one allreduce agrees that every rank is set up; from
 * then on a rank whose pack, read or write fails keeps posting its messages
 * (stale bytes) and skips its file access, so every rank takes every step,
 * and the caller's final agreement reports the failing rank's error.
 *
 * Memory: an aggregator holds one window (a third of cb_buffer_size) and
 * two steps' incoming bytes (a third each unless views overlap); senders
 * with noncontiguous memory stage two steps' outgoing bytes; senders with
 * contiguous memory send from it.
 */
#include <string.h>

#include "coll/coll_int.h"
#include "error/error.h"
#include "progress/progress.h"

/* Data; through a node-shared slab (shipping.c): "go" (aggregator to rank:
 * the slot is free, writes, or filled, reads; carries the ticket) and
 * "done" (rank to aggregator: bytes put, or taken). */
enum { TAG = 0x7e1, TAG_GO = 0x7e2, TAG_DONE = 0x7e3 };

typedef struct share {
    MPI_Offset s0, s1; /* view stream bytes */
    MPI_Offset want;   /* s1 - s0 as planned (reads may shrink s1 at end of file) */
    MPI_Offset at;     /* offset of its bytes in the step's staging (in the aggregator's slot: shm) */
    MPI_Offset ticket[2]; /* shm: where in the slot and (reads) how many bytes, sent with "go" */
    int shm;              /* travels through the aggregator's slab, not a message */
    int peer;             /* the aggregator's index (out), or the rank (in) */
} share_t;

/* One step's plan and messages. Shares are kept only where bytes move, in
 * peer order, so a step's bookkeeping grows with the pairs that exchange
 * data (a tile's few neighbours), not with the ranks. */
typedef struct step {
    share_t *out;            /* my bytes in an aggregator's window, per such aggregator */
    share_t *in;             /* a rank's bytes in my window (aggregators), per such rank */
    int nout, nin;           /* planned; a dry run (no lists) only counts */
    int cap_out, cap_in;     /* the lists' room: the most any step plans */
    int mine_out, mine_in;   /* my share of my own window in each list, or -1 */
    MPI_Offset wlo, whi;     /* my window, when I aggregate */
    char *staging, *incoming; /* my outgoing bytes (noncontiguous memory), my window's incoming ones */
    ferry__scratch_slot_t *staging_slot, *incoming_slot;
    MPI_Request *reqs;
    MPI_Status *statuses;
    int nreqs, first_mine;   /* requests posted; where my receives from aggregators start (reads) */
    int slot;                /* 0 or 1: this step's slot of every slab */
    MPI_Request *go, *later; /* shm: writes' "go" to wait for before packing; reads' "done", waited for
                              * before the slot is used again (or at the end of the call) */
    int ngo, nlater;
} step_t;

/* How an aggregator writes a window its shares leave holes in (a window
 * without holes is one pwrite): its pieces one call each, or read, patched
 * and written back under the window's lock. */
typedef enum { WRITE_SPAN, WRITE_PIECES, WRITE_PATCHED } write_way_t;

/* The window an aggregator is writing. */
typedef struct window {
    MPI_Offset first, last; /* file bytes spanned by its shares */
    MPI_Offset total;       /* bytes of the shares */
    int contributors;       /* ranks with a share */
    write_way_t way;
    int locked;             /* [first, last) is locked */
} window_t;

typedef struct exchange {
    const ferry__coll_call_t *call;
    ferry_File fh;               /* call->req->fh */
    const ferry__context_t *ctx; /* call->req->ctx: communicator, counters, staging */
    int write;                   /* call->req->call->write */
    ferry__coll_state_t *s;
    const ferry__domains_t *d;
    int me_agg;              /* my aggregator index, -1 if none */
    char *direct;            /* memory as one run of stream bytes, or NULL */
    ferry__window_cursor_t *cursors;
    step_t steps[2];
    char *window, *mask;
    window_t win;            /* the window being written (aggregators) */
    MPI_Offset eof;          /* file size before anyone wrote in this call (writing aggregators) */
    MPI_Count done;
    int failed;              /* sticky error class of this rank */
    ferry__coll_shm_t *shm;  /* node-shared slabs this call ships through, or NULL: messages only */
} exchange_t;

int ferry__coll_share(const ferry__view_t *view, const ferry__coll_rank_t *rank, MPI_Offset wlo, MPI_Offset whi,
                      MPI_Offset *s0, MPI_Offset *s1)
{
    *s0 = *s1 = 0;
    if (rank->bytes == 0 || whi <= rank->lo || wlo >= rank->hi) return 0;
    MPI_Offset b0, b1;
    FERRY_TRY(ferry__view_stream_below(view, wlo, &b0));
    FERRY_TRY(ferry__view_stream_below(view, whi, &b1));
    *s0 = b0 > rank->skip ? b0 : rank->skip;
    *s1 = b1 < rank->skip + rank->bytes ? b1 : rank->skip + rank->bytes;
    if (*s1 < *s0) *s1 = *s0;
    return 0;
}

/* --- bytes between a window buffer and a view's stream ------------------ */

/* My bytes for an aggregator (sh in st->out): in place in contiguous memory, or staged. */
static char *my_bytes(const exchange_t *x, const step_t *st, const share_t *sh)
{
    return x->direct ? x->direct + (sh->s0 - x->call->ranks[x->fh->rank].skip) : st->staging + sh->at;
}

/* My bytes for an aggregator in its slab (shm shares, after its "go"). */
static char *slab_bytes(const exchange_t *x, const step_t *st, const share_t *sh)
{
    return ferry__coll_shm_slot(x->shm, x->d->aggs[sh->peer], st->slot) + sh->ticket[0];
}

/* Where a rank's bytes of my window are (sh in st->in): my own never travel. */
static char *share_bytes(const exchange_t *x, const step_t *st, const share_t *sh)
{
    if (sh->peer == x->fh->rank) return my_bytes(x, st, &st->out[st->mine_out]);
    return sh->shm ? ferry__coll_shm_slot(x->shm, x->fh->rank, st->slot) + sh->at : st->incoming + sh->at;
}

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
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective write '%s': out of memory", x->fh->filename);
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
    for (int r = 0, k = 0; r < x->fh->nprocs; r++) {
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
    /* Past the old end of file a mask would cost more than the zeros it spares. */
    if (w->total >= span && !covered && w->first < x->eof)
        FERRY_TRY(covered_by_mask(x, st, w->first, w->last, &covered));
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
        const char *bytes = share_bytes(x, st, sh);
        ferry__view_t view = ferry__coll_view(x->s, sh->peer); /* the cursor points at it */
        ferry__view_cursor_t cursor;
        ferry__view_cursor_init(&cursor, &view, sh->s0, sh->s1 - sh->s0);
        int n = 1;
        while (n > 0 && (write || *pieces <= most)) {
            FERRY_TRY(ferry__view_segments(&cursor, segs, 32, &n));
            for (int i = 0; write && i < n; bytes += segs[i].length, i++)
                FERRY_TRY(ferry__fs_pwrite(x->fh->fs, x->ctx->stats, bytes, (size_t)segs[i].length, segs[i].offset));
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
    if (!x->fh->readable || atomic_load(&x->fh->locks_refused)) return 0;
    MPI_Offset span = w->last - w->first, below_eof = x->eof > w->first ? x->eof - w->first : 0;
    double call = ferry__coll_call_cost(&x->fh->layout), byte = ferry__coll_byte_cost(&x->fh->layout);
    double patch = 2 * call + (double)((below_eof < span ? below_eof : span) + span) * byte;
    double spare = patch - (double)w->total * byte;
    MPI_Offset most = spare > 0 ? (MPI_Offset)(spare / call) : 0, pieces = 0;
    FERRY_TRY(walk_pieces(x, st, most, 0, &pieces));
    if (pieces > most) w->way = WRITE_PATCHED;
    return 0;
}

/* Locks my window against the other writers of the file, who lock what
 * they write: none of their bytes lands in a hole between my read and my
 * write, none of mine between theirs. A file system that refuses locks
 * gets none from now on (and no patched windows). */
static int lock_window(exchange_t *x)
{
    window_t *w = &x->win;
    if (atomic_load(&x->fh->locks_refused)) return 0;
    int rc = ferry__fs_lock(x->fh->fs, w->first, w->last - w->first, FERRY_FS_LOCK_WRITE);
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION) {
        atomic_store(&x->fh->locks_refused, 1);
        return 0;
    }
    w->locked = rc == 0;
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
        ferry__fs_data_region(x->fh->fs, at, &start, &end);
        if (start >= w->last) break;
        start = start > at ? start : at;
        end = end < w->last ? end : w->last;
        size_t have = 0;
        FERRY_TRY(ferry__fs_pread(x->fh->fs, x->ctx->stats, x->window + (start - w->first), (size_t)(end - start),
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
    FERRY_TRY(lock_window(x));
    if (!w->locked) {
        w->way = WRITE_PIECES; /* the file system refused: never write a hole unlocked */
        return 0;
    }
    if (w->first >= x->eof) return read_data_regions(x);
    size_t have = 0, span = (size_t)(w->last - w->first);
    FERRY_TRY(ferry__fs_pread(x->fh->fs, x->ctx->stats, x->window, span, w->first, &have));
    x->ctx->stats->sieve_extra_bytes += (long long)have;
    memset(x->window + have, 0, span - have);
    return 0;
}

/* Writes, before the next step is posted: plans my window of step st and,
 * unless its pieces go one by one, builds it (reading the holes under the
 * lock when patched). */
static int prepare_window(exchange_t *x, const step_t *st)
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
                                              share_bytes(x, st, sh), 1));
    }
    return 0;
}

/* Writes my window (unless this rank failed) and releases its lock. */
static int finish_window(exchange_t *x, const step_t *st)
{
    window_t *w = &x->win;
    MPI_Offset pieces = 0;
    int rc = 0;
    if (!x->failed && w->contributors > 0 && !w->locked) rc = lock_window(x);
    if (!x->failed && w->contributors > 0 && rc == 0)
        rc = w->way == WRITE_PIECES
                 ? walk_pieces(x, st, 0, 1, &pieces)
                 : ferry__fs_pwrite(x->fh->fs, x->ctx->stats, x->window, (size_t)(w->last - w->first), w->first);
    int unlocked = w->locked ? ferry__fs_unlock(x->fh->fs, w->first, w->last - w->first) : 0;
    return rc ? rc : unlocked;
}

/* Reads: reads the span of my window's shares and packs each rank's bytes
 * below end of file into incoming; shrinks shares that reach past the end. */
static int read_window(exchange_t *x, step_t *st)
{
    MPI_Offset first, last, total;
    int contributors;
    FERRY_TRY(share_span(x, st, &first, &last, &total, &contributors));
    if (contributors == 0) return 0;
    size_t have = 0;
    FERRY_TRY(ferry__fs_pread(x->fh->fs, x->ctx->stats, x->window, (size_t)(last - first), first, &have));
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
            FERRY_TRY(
                ferry__view_buffer_copy(&view, x->window, first, sh->s0, sh->s1 - sh->s0, share_bytes(x, st, sh), 0));
    }
    return 0;
}

/* --- planning one step --------------------------------------------------- */

static int take(ferry__scratch_slot_t *slot, MPI_Offset size, char **buf, const char *file)
{
    if (!(*buf = ferry__scratch_take(slot, (size_t)(size > 0 ? size : 1))))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory for %lld bytes", file,
                                (long long)size);
    return 0;
}

/* Whether file rank r's bytes and mine meet in a slab: another rank of my node. */
static int through_slab(const exchange_t *x, int r)
{
    return x->shm && r != x->fh->rank && ferry__coll_shm_slot(x->shm, r, 0) != NULL;
}

/* Keeps a planned share that moves bytes: in list (when it has room; a
 * dry run has none and counts), its index in *mine when it is my own. */
static void keep_share(const share_t *sh, share_t *list, int *n, int cap, int own, int *mine)
{
    if (sh->want == 0) return;
    if (*n < cap) list[*n] = *sh;
    if (own) *mine = *n;
    (*n)++;
}

/* My shares of every aggregator's next window. */
static int plan_out(exchange_t *x, step_t *st, MPI_Offset *out)
{
    const ferry__domains_t *d = x->d;
    int me = x->fh->rank;
    ferry__view_t mine = ferry__coll_view(x->s, me);
    for (int a = 0; a < d->naggs; a++) {
        MPI_Offset wlo = 0, whi = 0;
        if (!ferry__coll_next_window(d, a, &x->cursors[a], &wlo, &whi)) wlo = whi = 0;
        if (a == x->me_agg) st->wlo = wlo, st->whi = whi;
        share_t sh = {.peer = a, .at = *out, .shm = through_slab(x, d->aggs[a])};
        FERRY_TRY(ferry__coll_share(&mine, &x->call->ranks[me], wlo, whi, &sh.s0, &sh.s1));
        sh.want = sh.s1 - sh.s0;
        if (!x->direct) *out += sh.want; /* shm shares too: the call may keep messages */
        keep_share(&sh, st->out, &st->nout, st->cap_out, a == x->me_agg, &st->mine_out);
    }
    return 0;
}

/* Every rank's share of my window (aggregators). */
static int plan_in(exchange_t *x, step_t *st, MPI_Offset *in, MPI_Offset *local)
{
    for (int r = 0; x->me_agg >= 0 && r < x->fh->nprocs; r++) {
        share_t sh = {.peer = r, .shm = through_slab(x, r)};
        ferry__view_t view = ferry__coll_view(x->s, r);
        FERRY_TRY(ferry__coll_share(&view, &x->call->ranks[r], st->wlo, st->whi, &sh.s0, &sh.s1));
        sh.want = sh.s1 - sh.s0;
        MPI_Offset *room = sh.shm ? local : in;
        sh.at = *room;
        if (r != x->fh->rank) *room += sh.want;
        keep_share(&sh, st->in, &st->nin, st->cap_in, r == x->fh->rank, &st->mine_in);
    }
    return 0;
}

/* The next step's windows and shares (every rank computes every
 * aggregator's window; the cursors advance once per step): what I send
 * (*out bytes to stage) and, aggregating, what I receive (*in by message,
 * *local through my slab). */
static int plan_step(exchange_t *x, step_t *st, MPI_Offset *out, MPI_Offset *in, MPI_Offset *local)
{
    *out = *in = *local = 0;
    st->wlo = st->whi = 0;
    st->nout = st->nin = 0;
    st->mine_out = st->mine_in = -1;
    FERRY_TRY(plan_out(x, st, out));
    FERRY_TRY(plan_in(x, st, in, local));
    if ((st->out && st->nout > st->cap_out) || (st->in && st->nin > st->cap_in))
        return ferry__error_set(MPI_ERR_INTERN, "ferry: collective '%s': a step planned more shares than its dry run",
                                x->fh->filename);
    return 0;
}

/* The most any step needs: bytes to stage, to receive (messages alone,
 * should the call keep them: some slab too small) and through my slab, and
 * shares kept. */
typedef struct step_needs {
    MPI_Offset out, in, local;
    int shares_out, shares_in;
} step_needs_t;

/* A dry run of every step sizes the message buffers once, before any
 * message: afterwards nothing can fail in a way that stops a rank from
 * posting its messages, so the steps need no agreement of their own. */
static int plan_sizes(exchange_t *x, step_needs_t *most)
{
    *most = (step_needs_t){0};
    step_t dry = {0};
    for (MPI_Offset t = 0; t < x->d->steps; t++) {
        MPI_Offset out, in, local;
        FERRY_TRY(plan_step(x, &dry, &out, &in, &local));
        most->out = out > most->out ? out : most->out;
        most->in = in + local > most->in ? in + local : most->in;
        most->local = local > most->local ? local : most->local;
        most->shares_out = dry.nout > most->shares_out ? dry.nout : most->shares_out;
        most->shares_in = dry.nin > most->shares_in ? dry.nin : most->shares_in;
    }
    memset(x->cursors, 0, (size_t)x->d->naggs * sizeof *x->cursors);
    return 0;
}

/* Whether this call's slabs would hold every step's bytes, and whether the
 * window must grow for that (a file whose windows or cb_buffer_size are
 * larger than those of the file that made it). */
typedef struct slab_need {
    int fits, grow;
    MPI_Offset slot; /* what the call wants (the same on every rank) */
} slab_need_t;

static int setup_step(exchange_t *x, step_t *st, const step_needs_t *most);

static int size_buffers(exchange_t *x, slab_need_t *need)
{
    step_needs_t most;
    FERRY_TRY(plan_sizes(x, &most));
    if (x->shm) {
        MPI_Offset have = ferry__coll_shm_slot_bytes(x->shm);
        need->slot = ferry__coll_shm_slot_want(x->fh, x->d->window);
        need->grow = need->slot > have;
        need->fits = most.local <= (need->grow ? need->slot : have);
    }
    for (int i = 0; i < 2; i++) {
        step_t *st = &x->steps[i];
        FERRY_TRY(setup_step(x, st, &most));
        if (x->me_agg >= 0) FERRY_TRY(take(st->incoming_slot, most.in, &st->incoming, x->fh->filename));
        FERRY_TRY(take(st->staging_slot, most.out, &st->staging, x->fh->filename));
    }
    return 0;
}

/* --- moving one step's data ---------------------------------------------- */

static int message_failed(const exchange_t *x, int peer)
{
    return ferry__error_set(MPI_ERR_OTHER, "ferry: collective '%s': message to rank %d failed", x->fh->filename, peer);
}

static int exchange_failed(const exchange_t *x)
{
    return ferry__error_set(MPI_ERR_OTHER, "ferry: collective '%s': data exchange failed", x->fh->filename);
}

/* One message of a step: data, or a handshake. */
typedef struct message {
    void *buf;
    MPI_Offset bytes;
    int peer, tag;
} message_t;

static int post(const exchange_t *x, MPI_Request *req, int send, message_t m)
{
    int rc = send ? MPI_Isend(m.buf, (int)m.bytes, MPI_BYTE, m.peer, m.tag, x->ctx->comm, req)
                  : MPI_Irecv(m.buf, (int)m.bytes, MPI_BYTE, m.peer, m.tag, x->ctx->comm, req);
    return rc == MPI_SUCCESS ? 0 : message_failed(x, m.peer);
}

static char nothing; /* the buffer of "done", which carries no bytes */

/* Writes: pack and send my shares; reads: receive them. Shares through a
 * slab wait for the aggregator's "go" instead (writes pack after it). */
static int post_to_aggregators(exchange_t *x, step_t *st)
{
    const ferry__request_t *c = x->call->req;
    MPI_Offset skip = c->skip;
    int failed = 0;
    st->first_mine = st->nreqs;
    for (int k = 0; k < st->nout; k++) {
        share_t *sh = &st->out[k];
        char *bytes = my_bytes(x, st, sh);
        if (k == st->mine_out) { /* my own window: no message (writes still stage noncontiguous memory) */
            if (x->write && !x->direct && !failed)
                failed = ferry__datatype_pack(c->buf, c->count, c->type, sh->s0 - skip, bytes, sh->want);
            continue;
        }
        int peer = x->d->aggs[sh->peer];
        if (sh->shm) {
            MPI_Request *go = x->write ? &st->go[st->ngo++] : &st->reqs[st->nreqs++];
            FERRY_TRY(post(x, go, 0, (message_t){sh->ticket, sizeof sh->ticket, peer, TAG_GO}));
            continue;
        }
        /* A failed pack still sends: the aggregator is waiting for the message. */
        if (x->write && !x->direct && !failed)
            failed = ferry__datatype_pack(c->buf, c->count, c->type, sh->s0 - skip, bytes, sh->want);
        FERRY_TRY(post(x, &st->reqs[st->nreqs++], x->write, (message_t){bytes, sh->want, peer, TAG}));
    }
    return failed;
}

/* Aggregators, a rank of my node: "go" with where its bytes go in my slot
 * (writes) or are and how many (reads), and the receive of its "done". */
static int signal_rank(exchange_t *x, step_t *st, share_t *sh)
{
    int r = sh->peer;
    sh->ticket[0] = sh->at;
    sh->ticket[1] = sh->s1 - sh->s0;
    FERRY_TRY(post(x, &st->reqs[st->nreqs++], 1, (message_t){sh->ticket, sizeof sh->ticket, r, TAG_GO}));
    MPI_Request *done = x->write ? &st->reqs[st->nreqs++] : &st->later[st->nlater++];
    return post(x, done, 0, (message_t){&nothing, 0, r, TAG_DONE});
}

/* Aggregators: receive the shares of my window (writes), or send them (reads). */
static int post_to_ranks(exchange_t *x, step_t *st)
{
    for (int k = 0; k < st->nin; k++) {
        share_t *sh = &st->in[k];
        /* Reads: a rank expecting bytes gets a message, empty when they all lie past end of file. */
        if (k == st->mine_in) continue;
        if (sh->shm) FERRY_TRY(signal_rank(x, st, sh));
        else
            FERRY_TRY(post(x, &st->reqs[st->nreqs++], !x->write,
                           (message_t){st->incoming + sh->at, sh->s1 - sh->s0, sh->peer, TAG}));
    }
    return 0;
}

/* Posts a planned step: receives before sends, so a rank's own messages match. */
static int post_step(exchange_t *x, step_t *st)
{
    st->nreqs = st->ngo = 0;
    if (x->shm && !x->write && x->me_agg >= 0) ferry__coll_shm_fence(x->shm); /* my slot is packed */
    int rc = post_to_ranks(x, st);
    int sent = post_to_aggregators(x, st);
    return rc ? rc : sent;
}

/* Waits for n requests, counting the time as exchange. */
static int wait_requests(exchange_t *x, int n, MPI_Request *reqs, MPI_Status *statuses)
{
    double start = ferry__stats_clock();
    int rc = ferry__progress_waitall(n, reqs, statuses);
    x->ctx->stats->exchange_seconds += ferry__stats_clock() - start;
    return rc == MPI_SUCCESS ? 0 : exchange_failed(x);
}

/* "done" to every aggregator whose slot holds some of my bytes this step,
 * its request at reqs[(*n)++]. */
static int post_done(const exchange_t *x, const step_t *st, MPI_Request *reqs, int *n)
{
    for (int k = 0; k < st->nout; k++)
        if (st->out[k].shm)
            FERRY_TRY(post(x, &reqs[(*n)++], 1, (message_t){&nothing, 0, x->d->aggs[st->out[k].peer], TAG_DONE}));
    return 0;
}

/* Writes, after the aggregators' "go": my shares into their slots, then
 * "done" to each (also when packing failed, or nothing was put because a
 * "go" never came: they are waiting for it). */
static int put_shares(exchange_t *x, step_t *st, int put)
{
    const ferry__request_t *c = x->call->req;
    int failed = 0;
    ferry__coll_shm_fence(x->shm);
    for (int k = 0; k < st->nout; k++) {
        const share_t *sh = &st->out[k];
        if (!sh->shm || !put) continue;
        char *slab = slab_bytes(x, st, sh);
        if (x->direct) memcpy(slab, x->direct + (sh->s0 - c->skip), (size_t)sh->want);
        else if (!failed) failed = ferry__datatype_pack(c->buf, c->count, c->type, sh->s0 - c->skip, slab, sh->want);
        x->ctx->stats->coll_shm_bytes += sh->want;
    }
    ferry__coll_shm_fence(x->shm);
    FERRY_TRY(post_done(x, st, st->reqs, &st->nreqs));
    return failed;
}

static int wait_step(exchange_t *x, step_t *st)
{
    int rc = wait_requests(x, st->ngo, st->go, st->statuses), put = 0;
    if (st->ngo > 0) put = put_shares(x, st, rc == 0);
    int waited = wait_requests(x, st->nreqs, st->reqs, st->statuses);
    if (x->shm) ferry__coll_shm_fence(x->shm); /* what the others put in my slot, or in theirs for me */
    return rc ? rc : waited ? waited : put;
}

/* Reads, after taking a step's bytes (or failing to): "done" to every
 * aggregator whose slot held some of mine, so it may fill the slot again. */
static int release_slots(exchange_t *x, step_t *st)
{
    if (!x->shm) return 0;
    ferry__coll_shm_fence(x->shm);
    return post_done(x, st, st->later, &st->nlater);
}

/* Before a step's slot is used again, and at the end of the call: the
 * "done" messages of its previous use (reads). */
static int settle(exchange_t *x, step_t *st)
{
    int rc = wait_requests(x, st->nlater, st->later, st->statuses);
    st->nlater = 0;
    return rc;
}

/* Reads: count what arrived (the prefix below end of file) and unpack staged bytes. */
static int take_delivery(exchange_t *x, const step_t *st)
{
    const ferry__request_t *c = x->call->req;
    MPI_Offset skip = c->skip;
    int k = st->first_mine;
    for (int i = 0; i < st->nout; i++) {
        const share_t *sh = &st->out[i];
        int got = 0;
        const char *from = my_bytes(x, st, sh);
        if (i == st->mine_out) got = (int)(st->in[st->mine_in].s1 - st->in[st->mine_in].s0); /* read in place */
        else if (sh->shm) {
            k++;
            got = (int)(sh->ticket[1] < sh->want ? sh->ticket[1] : sh->want);
            from = slab_bytes(x, st, sh);
            if (x->direct) memcpy(x->direct + (sh->s0 - skip), from, (size_t)got);
            x->ctx->stats->coll_shm_bytes += got;
        } else MPI_Get_count(&st->statuses[k++], MPI_BYTE, &got);
        if (got > 0 && !x->direct)
            FERRY_TRY(ferry__datatype_unpack(from, got, c->buf, c->count, c->type, sh->s0 - skip));
        x->done += got;
    }
    return 0;
}

/* --- the call ------------------------------------------------------------- */

/* The entries a step's lists hold for n shares out and p in (the most a
 * step plans): the shares, requests and statuses for the data messages
 * and, where the call may use node-shared slabs, their "go" and "done"
 * (one more each, so none is empty). */
typedef struct step_counts {
    size_t out, in, messages, go, later;
} step_counts_t;

static step_counts_t step_counts(size_t n, size_t p, int slabs)
{
    return (step_counts_t){.out = n + 1,
                           .in = p + 1,
                           .messages = (slabs ? 2 : 1) * (n + p) + 1,
                           .go = slabs ? n + 1 : 1,
                           .later = slabs ? n + p + 1 : 1};
}

/* What setup_step allocates (the scaling model's count). */
static MPI_Offset step_bookkeeping_bytes(step_counts_t c)
{
    size_t requests = c.messages + c.go + c.later;
    return (MPI_Offset)((c.out + c.in) * sizeof(share_t) + requests * sizeof(MPI_Request) +
                        c.messages * sizeof(MPI_Status));
}

static int setup_step(exchange_t *x, step_t *st, const step_needs_t *most)
{
    int slabs = ferry__coll_shm_wanted(x->fh, x->ctx->comm);
    step_counts_t c = step_counts((size_t)most->shares_out, (size_t)most->shares_in, slabs);
    st->cap_out = most->shares_out, st->cap_in = most->shares_in;
    st->out = ferry__calloc(c.out, sizeof *st->out);
    st->in = ferry__calloc(c.in, sizeof *st->in);
    st->reqs = ferry__calloc(c.messages, sizeof *st->reqs);
    st->statuses = ferry__calloc(c.messages, sizeof *st->statuses);
    st->go = ferry__calloc(c.go, sizeof *st->go);
    st->later = ferry__calloc(c.later, sizeof *st->later);
    if (!st->out || !st->in || !st->reqs || !st->statuses || !st->go || !st->later)
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory", x->fh->filename);
    return 0;
}

static void teardown_step(step_t *st)
{
    if (st->staging_slot) ferry__scratch_give(st->staging_slot, st->staging);
    if (st->incoming_slot) ferry__scratch_give(st->incoming_slot, st->incoming);
    ferry__free(st->out);
    ferry__free(st->in);
    ferry__free(st->reqs);
    ferry__free(st->statuses);
    ferry__free(st->go);
    ferry__free(st->later);
}

static int setup(exchange_t *x, const ferry__coll_call_t *call)
{
    memset(x, 0, sizeof *x);
    x->call = call;
    x->fh = call->req->fh;
    x->ctx = call->req->ctx;
    x->write = call->req->call->write;
    x->s = x->fh->coll;
    x->d = call->domains;
    x->eof = -1;
    x->me_agg = -1;
    x->steps[1].slot = 1;
    for (int a = 0; a < x->d->naggs; a++)
        if (x->d->aggs[a] == x->fh->rank) x->me_agg = a;
    x->steps[0].staging_slot = x->ctx->staging, x->steps[0].incoming_slot = &x->s->incoming[0];
    x->steps[1].staging_slot = &x->s->staging2, x->steps[1].incoming_slot = &x->s->incoming[1];
    if (!(x->cursors = ferry__calloc((size_t)x->d->naggs, sizeof *x->cursors)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory", x->fh->filename);
    ferry__typeinfo_t info;
    const ferry__request_t *req = call->req;
    FERRY_TRY(ferry__datatype_info(req->type, &info));
    if (ferry__datatype_stream_contiguous(&info, req->count)) x->direct = ferry__datatype_at(req->buf, info.true_lb);
    if (x->me_agg >= 0 && !(x->window = ferry__scratch_take(&x->s->window, (size_t)x->d->window)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory for a %lld-byte window",
                                x->fh->filename, (long long)x->d->window);
    return 0;
}

static void teardown(exchange_t *x)
{
    teardown_step(&x->steps[0]);
    teardown_step(&x->steps[1]);
    ferry__scratch_give(&x->s->window, x->window);
    ferry__scratch_give(&x->s->mask, x->mask);
    ferry__free(x->cursors);
}

static void keep_first(exchange_t *x, int rc)
{
    if (!x->failed) x->failed = rc;
}

/* Plans and posts step st. A rank that has failed still posts (stale
 * bytes) so that nobody waits; the call fails anyway at its agreement. */
static void begin_step(exchange_t *x, step_t *st)
{
    MPI_Offset out, in, local;
    keep_first(x, settle(x, st));                       /* reads: every rank took its bytes of this slot's last step */
    keep_first(x, plan_step(x, st, &out, &in, &local)); /* the dry run already succeeded */
    if (!x->write && x->me_agg >= 0) keep_first(x, x->failed ? 0 : read_window(x, st));
    keep_first(x, post_step(x, st));
}

static void write_steps(exchange_t *x)
{
    begin_step(x, &x->steps[0]);
    for (MPI_Offset t = 0; t < x->d->steps; t++) {
        step_t *cur = &x->steps[t % 2], *next = &x->steps[(t + 1) % 2];
        /* The next step's buffers are free once window t-1 is written (its messages were
         * unpacked, its slab slot emptied): its data travel, and through slabs its "go" leaves,
         * while I wait for step t and write its window, not after. */
        if (t + 1 < x->d->steps) begin_step(x, next);
        keep_first(x, wait_step(x, cur));
        for (int k = 0; k < cur->nout; k++) x->done += cur->out[k].want;
        x->win = (window_t){0};
        if (!x->failed && x->me_agg >= 0) x->failed = prepare_window(x, cur);
        keep_first(x, finish_window(x, cur));
        if (!x->failed)
            ferry__coll_write_behind(x->call->req, x->win.first, x->win.last - x->win.first,
                                     x->d->steps * x->d->window);
    }
}

static void read_steps(exchange_t *x)
{
    begin_step(x, &x->steps[0]);
    for (MPI_Offset t = 0; t < x->d->steps; t++) {
        step_t *cur = &x->steps[t % 2], *next = &x->steps[(t + 1) % 2];
        /* The next window is read and sent while this step's data arrive. */
        if (t + 1 < x->d->steps) begin_step(x, next);
        int rc = wait_step(x, cur);
        if (!x->failed) x->failed = rc ? rc : take_delivery(x, cur);
        keep_first(x, release_slots(x, cur));
    }
    keep_first(x, settle(x, &x->steps[0]));
    keep_first(x, settle(x, &x->steps[1]));
}

/* Collective: 1 on every rank when any rank could not set the call up (or
 * the host could not tell: then this rank failed, x->failed says why).
 * Also agrees whether the call ships through the slabs: not when any rank
 * does not hold the window (none, or another thread's call has it) or any
 * aggregator's step would overflow its slot (views that overlap); and
 * whether the window grows first (then it does, on every rank). */
static int anyone_failed(exchange_t *x, const slab_need_t *need)
{
    int mine = (x->failed != 0) | (!need->fits << 1) | (need->grow << 2), any = 1;
    int rc = ferry__progress_allreduce(&mine, &any, 1, MPI_INT, MPI_BOR, x->ctx->comm);
    x->ctx->stats->coll_meta_bytes += (long long)sizeof mine;
    x->ctx->stats->coll_meta_recv_bytes += (long long)sizeof any;
    if (rc != MPI_SUCCESS && !x->failed)
        x->failed = ferry__error_host(rc, "collective", x->fh->filename, "MPI_Allreduce");
    if (rc != MPI_SUCCESS || (any & 3)) x->shm = NULL;
    if (x->shm && (any & 5) == 4 && !ferry__coll_shm_grow(x->shm, x->ctx->comm, need->slot)) x->shm = NULL;
    return (any & 1) || rc != MPI_SUCCESS;
}

int ferry__coll_plan_buffers(const ferry__coll_call_t *call, ferry__coll_buffers_t *plan)
{
    exchange_t x;
    int rc = setup(&x, call);
    step_needs_t most = {0};
    if (rc == 0) rc = plan_sizes(&x, &most);
    plan->staging = 2 * most.out; /* two steps in flight */
    plan->incoming = 2 * most.in;
    plan->window = x.me_agg >= 0 ? x.d->window : 0;
    int slabs = ferry__coll_shm_wanted(x.fh, x.ctx->comm);
    plan->per_call = 2 * step_bookkeeping_bytes(step_counts((size_t)most.shares_out, (size_t)most.shares_in, slabs)) +
                     x.d->naggs * (MPI_Offset)sizeof(ferry__window_cursor_t);
    teardown(&x);
    return rc;
}

int ferry__coll_two_phase(const ferry__coll_call_t *call)
{
    exchange_t x;
    x.failed = setup(&x, call);
    /* Every rank, whatever its set-up; held until the call ends, whether it ships through it or not. */
    ferry__coll_shm_t *held = ferry__coll_shm_attach(x.fh, x.ctx->comm, x.d->window);
    x.shm = held;
    /* Wanted but not held: no slabs on any rank. */
    slab_need_t need = {.fits = held || !ferry__coll_shm_wanted(x.fh, x.ctx->comm)};
    if (!x.failed) x.failed = size_buffers(&x, &need);
    /* Before the agreement below, so no aggregator has written yet. */
    if (!x.failed && x.write && x.me_agg >= 0) x.failed = ferry__fs_size(x.fh->fs, &x.eof);
    if (!anyone_failed(&x, &need) && x.d->steps > 0) {
        if (x.write) write_steps(&x);
        else read_steps(&x);
    }
    call->req->done += x.done;
    teardown(&x);
    ferry__coll_shm_detach(held);
    return x.failed;
}

void ferry__coll_write_behind(const ferry__request_t *req, MPI_Offset offset, MPI_Offset len, MPI_Offset call_bytes)
{
    ferry_File fh = req->fh;
    MPI_Offset threshold = fh->hints.write_behind;
    if (threshold == 0 || call_bytes < threshold || len <= 0 || fh->layout.memory_backed) return;
    ferry__fs_advise(fh->fs, offset, len, FERRY_FS_WRITEBACK);
    req->ctx->stats->writeback_bytes += len;
}

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
 *          the sender's view layout and writes the window once. It reads
 *          the window first only when the data leave holes there: not
 *          when one rank covers it, not past the old end of file (holes
 *          there are zeros), and not when a coverage mask shows the
 *          ranks' data cover every byte.
 *   read   the aggregator reads the span its ranks need and packs each
 *          rank's range; ranks receive straight into contiguous memory or
 *          unpack. Bytes past end of file are not sent; a rank's received
 *          bytes are then the prefix of its stream below end of file.
 *
 * Errors never hang: every step begins with one allreduce of "did anything
 * fail on any rank", so all ranks leave the loop at the same step; the
 * caller's final agreement reports the failing rank's error. Memory: an
 * aggregator holds a window (at most half of cb_buffer_size) and the step's
 * incoming bytes (the other half unless views overlap); senders with
 * noncontiguous memory stage one step's outgoing bytes.
 */
#include <string.h>

#include "coll/coll_int.h"
#include "error/error.h"

enum { TAG = 0x7e1 };

typedef struct share {
    MPI_Offset s0, s1; /* view stream bytes */
    MPI_Offset want;   /* s1 - s0 as planned (reads may shrink s1 at end of file) */
    MPI_Offset at;     /* offset of its bytes in the step's staging */
} share_t;

typedef struct exchange {
    const ferry__coll_call_t *call;
    ferry_File fh;
    ferry__coll_state_t *s;
    const ferry__domains_t *d;
    int me_agg;                  /* my aggregator index, -1 if none */
    char *direct;                /* memory as one run of stream bytes, or NULL */
    ferry__window_cursor_t *cursors;
    MPI_Offset *wlo, *whi;       /* per aggregator: this step's window (wlo == whi: none) */
    share_t *out;                /* per aggregator: my bytes in its window */
    share_t *in;                 /* per rank: its bytes in my window */
    MPI_Request *reqs;
    char *staging, *window, *incoming, *mask;
    MPI_Offset staging_size, incoming_size;
    MPI_Offset eof;              /* file size when the call began (aggregators), -1 unknown */
    MPI_Count done;
    int failed;                  /* sticky error class of this rank */
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

/* Copies stream bytes [s0, s0 + len) of view between data and the window
 * buffer that holds file bytes from `first` on. */
static int place(const ferry__view_t *view, char *window, MPI_Offset first, MPI_Offset s0, MPI_Count len,
                 char *data, int into_window)
{
    if (view->contiguous) {
        char *at = window + (view->disp + s0 - first);
        memcpy(into_window ? at : data, into_window ? data : at, (size_t)len);
        return 0;
    }
    char *origin = ferry__datatype_at(window, view->disp - first);
    MPI_Count tiles = (s0 + len) / view->tile_size + 1;
    return into_window ? ferry__datatype_unpack(data, len, origin, tiles, view->layout, s0)
                       : ferry__datatype_pack(origin, tiles, view->layout, s0, data, len);
}

/* File bytes [*first, *last) spanned by the shares in my window. */
static int share_span(exchange_t *x, MPI_Offset *first, MPI_Offset *last, MPI_Offset *total, int *contributors)
{
    *first = INT64_MAX;
    *last = *total = 0;
    *contributors = 0;
    for (int r = 0; r < x->fh->nprocs; r++) {
        const share_t *sh = &x->in[r];
        if (sh->s1 == sh->s0) continue;
        MPI_Offset lo, hi;
        FERRY_TRY(ferry__view_file_offset(&x->s->views[r], sh->s0, &lo));
        FERRY_TRY(ferry__view_file_offset(&x->s->views[r], sh->s1 - 1, &hi));
        if (lo < *first) *first = lo;
        if (hi + 1 > *last) *last = hi + 1;
        *total += sh->s1 - sh->s0;
        (*contributors)++;
    }
    return 0;
}

/* Whether the shares cover every byte of [first, last): marks them in a
 * mask through the same views (the bytes, not lists of pieces). */
static int covered_by_mask(exchange_t *x, MPI_Offset first, MPI_Offset last, int *covered)
{
    char ones[4096];
    memset(ones, 1, sizeof ones);
    size_t span = (size_t)(last - first);
    if (!x->mask && !(x->mask = ferry__scratch_take(&x->s->mask, (size_t)x->d->window)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective write '%s': out of memory", x->fh->filename);
    memset(x->mask, 0, span);
    for (int r = 0; r < x->fh->nprocs; r++)
        for (MPI_Offset p = x->in[r].s0; p < x->in[r].s1; p += (MPI_Offset)sizeof ones) {
            MPI_Count n = x->in[r].s1 - p < (MPI_Offset)sizeof ones ? x->in[r].s1 - p : (MPI_Count)sizeof ones;
            FERRY_TRY(place(&x->s->views[r], x->mask, first, p, n, (char *)ones, 1));
        }
    *covered = memchr(x->mask, 0, span) == NULL;
    return 0;
}

static int file_size_at_start(exchange_t *x)
{
    if (x->eof < 0) FERRY_TRY(ferry__fs_size(x->fh->fs, &x->eof));
    return 0;
}

/* Fills the window with what the file holds where the shares leave holes. */
static int fill_holes(exchange_t *x, MPI_Offset first, MPI_Offset last, MPI_Offset total, int contributors)
{
    MPI_Offset span = last - first;
    if (total == span && contributors == 1) return 0; /* one monotone view: no byte twice, no hole */
    FERRY_TRY(file_size_at_start(x));
    size_t have = 0;
    if (first < x->eof) {
        int covered = 0;
        if (total >= span) FERRY_TRY(covered_by_mask(x, first, last, &covered));
        if (covered) return 0;
        FERRY_TRY(ferry__fs_pread(x->fh->fs, x->window, (size_t)span, first, &have));
        x->fh->stats.sieve_extra_bytes += (long long)have;
    }
    memset(x->window + have, 0, (size_t)span - have); /* never-written bytes are zeros */
    return 0;
}

static int write_window(exchange_t *x)
{
    MPI_Offset first, last, total;
    int contributors;
    FERRY_TRY(share_span(x, &first, &last, &total, &contributors));
    if (contributors == 0) return 0;
    FERRY_TRY(fill_holes(x, first, last, total, contributors));
    for (int r = 0; r < x->fh->nprocs; r++) {
        const share_t *sh = &x->in[r];
        if (sh->s1 > sh->s0)
            FERRY_TRY(place(&x->s->views[r], x->window, first, sh->s0, sh->s1 - sh->s0, x->incoming + sh->at, 1));
    }
    return ferry__fs_pwrite(x->fh->fs, x->window, (size_t)(last - first), first);
}

/* Reads the span of my window's shares and packs each rank's bytes below
 * end of file into incoming; shrinks shares that reach past the end. */
static int read_window(exchange_t *x)
{
    MPI_Offset first, last, total;
    int contributors;
    FERRY_TRY(share_span(x, &first, &last, &total, &contributors));
    if (contributors == 0) return 0;
    size_t have = 0;
    FERRY_TRY(ferry__fs_pread(x->fh->fs, x->window, (size_t)(last - first), first, &have));
    x->fh->stats.sieve_extra_bytes += (long long)have > total ? (long long)have - total : 0;
    for (int r = 0; r < x->fh->nprocs; r++) {
        share_t *sh = &x->in[r];
        if (sh->s1 == sh->s0) continue;
        if ((MPI_Offset)have < last - first) {
            MPI_Offset below;
            FERRY_TRY(ferry__view_stream_below(&x->s->views[r], first + (MPI_Offset)have, &below));
            if (below < sh->s1) sh->s1 = below > sh->s0 ? below : sh->s0;
        }
        if (sh->s1 > sh->s0)
            FERRY_TRY(place(&x->s->views[r], x->window, first, sh->s0, sh->s1 - sh->s0, x->incoming + sh->at, 0));
    }
    return 0;
}

/* --- planning one step --------------------------------------------------- */

static int ensure(ferry__scratch_slot_t *slot, char **buf, MPI_Offset *have, MPI_Offset need, const char *file)
{
    if (*buf && *have >= need) return 0;
    if (*buf) ferry__scratch_give(slot, *buf);
    *have = 0;
    if (!(*buf = ferry__scratch_take(slot, (size_t)(need > 0 ? need : 1))))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory for %lld bytes", file,
                                (long long)need);
    *have = need;
    return 0;
}

static int plan_step(exchange_t *x)
{
    const ferry__domains_t *d = x->d;
    int me = x->fh->rank;
    MPI_Offset out_total = 0, in_total = 0;
    for (int a = 0; a < d->naggs; a++) {
        if (!ferry__coll_next_window(d, a, &x->cursors[a], &x->wlo[a], &x->whi[a])) x->wlo[a] = x->whi[a] = 0;
        share_t *sh = &x->out[a];
        FERRY_TRY(ferry__coll_share(&x->s->views[me], &x->call->ranks[me], x->wlo[a], x->whi[a], &sh->s0, &sh->s1));
        sh->at = out_total;
        sh->want = sh->s1 - sh->s0;
        if (!x->direct) out_total += sh->s1 - sh->s0;
    }
    if (x->me_agg >= 0) {
        MPI_Offset wlo = x->wlo[x->me_agg], whi = x->whi[x->me_agg];
        for (int r = 0; r < x->fh->nprocs; r++) {
            share_t *sh = &x->in[r];
            FERRY_TRY(ferry__coll_share(&x->s->views[r], &x->call->ranks[r], wlo, whi, &sh->s0, &sh->s1));
            sh->at = in_total;
            sh->want = sh->s1 - sh->s0;
            in_total += sh->s1 - sh->s0;
        }
        FERRY_TRY(ensure(&x->s->incoming, &x->incoming, &x->incoming_size, in_total, x->fh->filename));
    }
    return ensure(&x->fh->staging, &x->staging, &x->staging_size, out_total, x->fh->filename);
}

/* --- moving one step's data ---------------------------------------------- */

/* My bytes for aggregator a: in place in contiguous memory, or staged. */
static char *my_bytes(exchange_t *x, int a)
{
    const share_t *sh = &x->out[a];
    return x->direct ? x->direct + (sh->s0 - x->call->ranks[x->fh->rank].skip) : x->staging + sh->at;
}

static int post_to_aggregators(exchange_t *x, int *n)
{
    const ferry__coll_call_t *c = x->call;
    MPI_Offset skip = c->ranks[x->fh->rank].skip;
    int failed = 0;
    for (int a = 0; a < x->d->naggs; a++) {
        const share_t *sh = &x->out[a];
        MPI_Count len = sh->s1 - sh->s0;
        if (len == 0) continue;
        char *bytes = my_bytes(x, a);
        /* A failed pack still sends: the aggregator is waiting for the message. */
        if (c->write && !x->direct && !failed)
            failed = ferry__datatype_pack(c->buf, c->count, c->type, sh->s0 - skip, bytes, len);
        int rc = c->write ? MPI_Isend(bytes, (int)len, MPI_BYTE, x->d->aggs[a], TAG, x->fh->comm, &x->reqs[(*n)++])
                          : MPI_Irecv(bytes, (int)len, MPI_BYTE, x->d->aggs[a], TAG, x->fh->comm, &x->reqs[(*n)++]);
        if (rc != MPI_SUCCESS)
            return ferry__error_set(MPI_ERR_OTHER, "ferry: collective '%s': message to rank %d failed", x->fh->filename,
                                    x->d->aggs[a]);
    }
    return failed;
}

static int post_to_ranks(exchange_t *x, int *n)
{
    for (int r = 0; r < x->fh->nprocs; r++) {
        const share_t *sh = &x->in[r];
        /* Reads: a rank expecting bytes gets a message, empty when they all lie past end of file. */
        if (sh->want == 0) continue;
        int len = (int)(sh->s1 - sh->s0);
        int rc = x->call->write ? MPI_Irecv(x->incoming + sh->at, len, MPI_BYTE, r, TAG, x->fh->comm, &x->reqs[(*n)++])
                                : MPI_Isend(x->incoming + sh->at, len, MPI_BYTE, r, TAG, x->fh->comm, &x->reqs[(*n)++]);
        if (rc != MPI_SUCCESS)
            return ferry__error_set(MPI_ERR_OTHER, "ferry: collective '%s': message to rank %d failed", x->fh->filename, r);
    }
    return 0;
}

static int wait_all(exchange_t *x, int n, MPI_Status *statuses)
{
    double start = ferry__stats_clock();
    int rc = MPI_Waitall(n, x->reqs, statuses);
    x->fh->stats.exchange_seconds += ferry__stats_clock() - start;
    return rc == MPI_SUCCESS ? 0
                             : ferry__error_set(MPI_ERR_OTHER, "ferry: collective '%s': data exchange failed",
                                                x->fh->filename);
}

/* Reads: count what arrived (the prefix below end of file) and unpack staged bytes. */
static int take_delivery(exchange_t *x, const MPI_Status *statuses, int first_status)
{
    const ferry__coll_call_t *c = x->call;
    MPI_Offset skip = c->ranks[x->fh->rank].skip;
    int k = first_status;
    for (int a = 0; a < x->d->naggs; a++) {
        const share_t *sh = &x->out[a];
        if (sh->want == 0) continue;
        int got = 0;
        MPI_Get_count(&statuses[k++], MPI_BYTE, &got);
        if (got > 0 && !x->direct)
            FERRY_TRY(ferry__datatype_unpack(my_bytes(x, a), got, c->buf, c->count, c->type, sh->s0 - skip));
        x->done += got;
    }
    return 0;
}

static int write_step(exchange_t *x)
{
    int n = 0;
    if (x->me_agg >= 0) FERRY_TRY(post_to_ranks(x, &n));
    int rc = post_to_aggregators(x, &n);
    int waited = wait_all(x, n, MPI_STATUSES_IGNORE);
    FERRY_TRY(rc);
    FERRY_TRY(waited);
    for (int a = 0; a < x->d->naggs; a++) x->done += x->out[a].s1 - x->out[a].s0;
    return x->me_agg >= 0 ? write_window(x) : 0;
}

static int read_step(exchange_t *x, MPI_Status *statuses)
{
    int n = 0, mine = 0;
    /* An aggregator whose read failed still sends (stale bytes) so nobody waits; the call fails anyway. */
    int rc = x->me_agg >= 0 ? read_window(x) : 0;
    if (x->me_agg >= 0) {
        int posted = post_to_ranks(x, &n);
        if (rc == 0) rc = posted;
    }
    mine = n;
    int posted = post_to_aggregators(x, &n);
    if (rc == 0) rc = posted;
    int waited = wait_all(x, n, statuses);
    if (rc == 0) rc = waited;
    return rc == 0 ? take_delivery(x, statuses, mine) : rc;
}

/* --- the call ------------------------------------------------------------- */

static int setup(exchange_t *x, const ferry__coll_call_t *call)
{
    memset(x, 0, sizeof *x);
    x->call = call;
    x->fh = call->fh;
    x->s = call->fh->coll;
    x->d = call->domains;
    x->eof = -1;
    x->me_agg = -1;
    for (int a = 0; a < x->d->naggs; a++)
        if (x->d->aggs[a] == x->fh->rank) x->me_agg = a;
    int p = x->fh->nprocs, n = x->d->naggs;
    x->cursors = ferry__calloc((size_t)n, sizeof *x->cursors);
    x->wlo = ferry__calloc((size_t)n, sizeof *x->wlo);
    x->whi = ferry__calloc((size_t)n, sizeof *x->whi);
    x->out = ferry__calloc((size_t)n, sizeof *x->out);
    x->in = ferry__calloc((size_t)p, sizeof *x->in);
    x->reqs = ferry__calloc((size_t)(n + p), sizeof *x->reqs);
    if (!x->cursors || !x->wlo || !x->whi || !x->out || !x->in || !x->reqs)
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory", x->fh->filename);
    ferry__typeinfo_t info;
    FERRY_TRY(ferry__datatype_info(call->type, &info));
    if (ferry__datatype_stream_contiguous(&info, call->count))
        x->direct = ferry__datatype_at(call->buf, info.true_lb);
    if (x->me_agg >= 0 && !(x->window = ferry__scratch_take(&x->s->window, (size_t)x->d->window)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory for a %lld-byte window",
                                x->fh->filename, (long long)x->d->window);
    return 0;
}

static void teardown(exchange_t *x)
{
    ferry__scratch_give(&x->fh->staging, x->staging);
    ferry__scratch_give(&x->s->incoming, x->incoming);
    ferry__scratch_give(&x->s->window, x->window);
    ferry__scratch_give(&x->s->mask, x->mask);
    ferry__free(x->cursors);
    ferry__free(x->wlo);
    ferry__free(x->whi);
    ferry__free(x->out);
    ferry__free(x->in);
    ferry__free(x->reqs);
}

/* Collective: 1 on every rank when any rank has failed. */
static int anyone_failed(exchange_t *x)
{
    int mine = x->failed != 0, any = 1;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, x->fh->comm);
    return any;
}

int ferry__coll_two_phase(const ferry__coll_call_t *call, MPI_Count *done)
{
    exchange_t x;
    x.failed = setup(&x, call);
    MPI_Status *statuses = ferry__calloc((size_t)(x.d->naggs + x.fh->nprocs), sizeof *statuses);
    if (!statuses && !x.failed) x.failed = ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective: out of memory");
    for (MPI_Offset t = 0; t < x.d->steps; t++) {
        if (!x.failed) x.failed = plan_step(&x);
        if (anyone_failed(&x)) break;
        x.failed = call->write ? write_step(&x) : read_step(&x, statuses);
    }
    ferry__free(statuses);
    *done = x.done;
    teardown(&x);
    return x.failed;
}

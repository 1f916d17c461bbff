/*
 * Two-phase collective access: the call and its steps (the plan, and the
 * loop that runs it). The file side of a window is twophase_file.c, the
 * traffic between ranks twophase_transport.c (twophase_int.h).
 *
 * In step t every aggregator a serves its t-th window [wlo, whi) (domains.c).
 * Which stream bytes of rank r fall into it follows from r's cached view
 * alone (monotone views: one stream range, found by navigation in O(depth)),
 * so sender and aggregator compute the same ranges and only data travels:
 * one message per pair that has data, nothing else. Writes: ranks pack
 * their ranges (or send from contiguous memory), the aggregator unpacks
 * them into its window and writes it; reads: the aggregator reads the span
 * its ranks need and packs each rank's range.
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

#include "coll/twophase_int.h"
#include "error/error.h"
#include "progress/progress.h"

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
    return x->shm && r != x->file->rank && ferry__coll_shm_slot(x->shm, r, 0) != NULL;
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
    int me = x->file->rank;
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
    for (int r = 0; x->me_agg >= 0 && r < x->file->nprocs; r++) {
        share_t sh = {.peer = r, .shm = through_slab(x, r)};
        ferry__view_t view = ferry__coll_view(x->s, r);
        FERRY_TRY(ferry__coll_share(&view, &x->call->ranks[r], st->wlo, st->whi, &sh.s0, &sh.s1));
        sh.want = sh.s1 - sh.s0;
        MPI_Offset *room = sh.shm ? local : in;
        sh.at = *room;
        if (r != x->file->rank) *room += sh.want;
        keep_share(&sh, st->in, &st->nin, st->cap_in, r == x->file->rank, &st->mine_in);
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
                                x->file->filename);
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
        need->slot = ferry__coll_shm_slot_want(x->file, x->d->window);
        need->grow = need->slot > have;
        need->fits = most.local <= (need->grow ? need->slot : have);
    }
    for (int i = 0; i < 2; i++) {
        step_t *st = &x->steps[i];
        FERRY_TRY(setup_step(x, st, &most));
        if (x->me_agg >= 0) FERRY_TRY(take(st->incoming_slot, most.in, &st->incoming, x->file->filename));
        FERRY_TRY(take(st->staging_slot, most.out, &st->staging, x->file->filename));
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
    int slabs = ferry__coll_shm_wanted(x->file, x->ctx->comm);
    step_counts_t c = step_counts((size_t)most->shares_out, (size_t)most->shares_in, slabs);
    st->cap_out = most->shares_out, st->cap_in = most->shares_in;
    st->out = ferry__calloc(c.out, sizeof *st->out);
    st->in = ferry__calloc(c.in, sizeof *st->in);
    st->reqs = ferry__calloc(c.messages, sizeof *st->reqs);
    st->statuses = ferry__calloc(c.messages, sizeof *st->statuses);
    st->go = ferry__calloc(c.go, sizeof *st->go);
    st->later = ferry__calloc(c.later, sizeof *st->later);
    if (!st->out || !st->in || !st->reqs || !st->statuses || !st->go || !st->later)
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory", x->file->filename);
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
    x->file = call->req->target;
    x->ctx = call->req->ctx;
    x->write = call->req->call->write;
    x->s = x->file->coll;
    x->d = call->domains;
    x->eof = -1;
    x->me_agg = -1;
    x->steps[1].slot = 1;
    for (int a = 0; a < x->d->naggs; a++)
        if (x->d->aggs[a] == x->file->rank) x->me_agg = a;
    x->steps[0].staging_slot = x->ctx->staging, x->steps[0].incoming_slot = &x->s->incoming[0];
    x->steps[1].staging_slot = &x->s->staging2, x->steps[1].incoming_slot = &x->s->incoming[1];
    if (!(x->cursors = ferry__calloc((size_t)x->d->naggs, sizeof *x->cursors)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory", x->file->filename);
    ferry__typeinfo_t info;
    const ferry__request_t *req = call->req;
    FERRY_TRY(ferry__datatype_info(req->type, &info));
    if (ferry__datatype_stream_contiguous(&info, req->count)) x->direct = ferry__datatype_at(req->buf, info.true_lb);
    if (x->me_agg >= 0 && !(x->window = ferry__scratch_take(&x->s->window, (size_t)x->d->window)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory for a %lld-byte window",
                                x->file->filename, (long long)x->d->window);
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
    keep_first(x, ferry__coll_settle(x, st)); /* reads: every rank took its bytes of this slot's last step */
    keep_first(x, plan_step(x, st, &out, &in, &local)); /* the dry run already succeeded */
    if (!x->write && x->me_agg >= 0) keep_first(x, x->failed ? 0 : ferry__coll_read_window(x, st));
    keep_first(x, ferry__coll_post_step(x, st));
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
        keep_first(x, ferry__coll_wait_step(x, cur));
        for (int k = 0; k < cur->nout; k++) x->done += cur->out[k].want;
        x->win = (window_t){0};
        if (!x->failed && x->me_agg >= 0) x->failed = ferry__coll_prepare_window(x, cur);
        keep_first(x, ferry__coll_finish_window(x, cur));
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
        int rc = ferry__coll_wait_step(x, cur);
        if (!x->failed) x->failed = rc ? rc : ferry__coll_take_delivery(x, cur);
        keep_first(x, ferry__coll_release_slots(x, cur));
    }
    keep_first(x, ferry__coll_settle(x, &x->steps[0]));
    keep_first(x, ferry__coll_settle(x, &x->steps[1]));
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
        x->failed = ferry__error_host(rc, "collective", x->file->filename, "MPI_Allreduce");
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
    int slabs = ferry__coll_shm_wanted(x.file, x.ctx->comm);
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
    ferry__coll_shm_t *held = ferry__coll_shm_attach(x.file, x.ctx->comm, x.d->window);
    x.shm = held;
    /* Wanted but not held: no slabs on any rank. */
    slab_need_t need = {.fits = held || !ferry__coll_shm_wanted(x.file, x.ctx->comm)};
    if (!x.failed) x.failed = size_buffers(&x, &need);
    if (!anyone_failed(&x, &need) && x.d->steps > 0) {
        if (x.write) write_steps(&x);
        else read_steps(&x);
    }
    call->req->done += x.done;
    teardown(&x);
    ferry__coll_shm_detach(held);
    return x.failed;
}

/*
 * Two-phase collective access: moving one step's bytes between ranks and
 * aggregators.
 *
 * A share moves by one message (TAG), or, between ranks of one node when
 * the call ships through node-shared slabs (shipping.c), through the
 * aggregator's slab with two handshakes: "go" (aggregator to rank: the slot
 * is free, writes, or filled, reads; it carries the ticket: where in the
 * slot and, reads, how many bytes) and "done" (rank to aggregator: bytes
 * put, or taken). Receives are posted before sends, so a rank's messages to
 * itself match. A rank whose pack failed still sends (stale bytes): its
 * peers are waiting for the message.
 */
#include <string.h>

#include "coll/twophase_int.h"
#include "error/error.h"
#include "progress/progress.h"

/* Data; through a node-shared slab: "go" and "done" (above). */
enum { TAG = 0x7e1, TAG_GO = 0x7e2, TAG_DONE = 0x7e3 };

/* My bytes for an aggregator (sh in st->out): in place in contiguous memory, or staged. */
static char *my_bytes(const exchange_t *x, const step_t *st, const share_t *sh)
{
    return x->direct ? x->direct + (sh->s0 - x->call->ranks[x->file->rank].skip) : st->staging + sh->at;
}

/* My bytes for an aggregator in its slab (shm shares, after its "go"). */
static char *slab_bytes(const exchange_t *x, const step_t *st, const share_t *sh)
{
    return ferry__coll_shm_slot(x->shm, x->d->aggs[sh->peer], st->slot) + sh->ticket[0];
}

/* Where a rank's bytes of my window are (sh in st->in): my own never travel. */
char *ferry__coll_share_bytes(const exchange_t *x, const step_t *st, const share_t *sh)
{
    if (sh->peer == x->file->rank) return my_bytes(x, st, &st->out[st->mine_out]);
    return sh->shm ? ferry__coll_shm_slot(x->shm, x->file->rank, st->slot) + sh->at : st->incoming + sh->at;
}


static int message_failed(const exchange_t *x, int peer)
{
    return ferry__error_set(MPI_ERR_OTHER, "ferry: collective '%s': message to rank %d failed", x->file->filename,
                            peer);
}

static int exchange_failed(const exchange_t *x)
{
    return ferry__error_set(MPI_ERR_OTHER, "ferry: collective '%s': data exchange failed", x->file->filename);
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
int ferry__coll_post_step(exchange_t *x, step_t *st)
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

int ferry__coll_wait_step(exchange_t *x, step_t *st)
{
    int rc = wait_requests(x, st->ngo, st->go, st->statuses), put = 0;
    if (st->ngo > 0) put = put_shares(x, st, rc == 0);
    int waited = wait_requests(x, st->nreqs, st->reqs, st->statuses);
    if (x->shm) ferry__coll_shm_fence(x->shm); /* what the others put in my slot, or in theirs for me */
    return rc ? rc : waited ? waited : put;
}

/* Reads, after taking a step's bytes (or failing to): "done" to every
 * aggregator whose slot held some of mine, so it may fill the slot again. */
int ferry__coll_release_slots(exchange_t *x, step_t *st)
{
    if (!x->shm) return 0;
    ferry__coll_shm_fence(x->shm);
    return post_done(x, st, st->later, &st->nlater);
}

/* Before a step's slot is used again, and at the end of the call: the
 * "done" messages of its previous use (reads). */
int ferry__coll_settle(exchange_t *x, step_t *st)
{
    int rc = wait_requests(x, st->nlater, st->later, st->statuses);
    st->nlater = 0;
    return rc;
}

/* Reads: count what arrived (the prefix below end of file) and unpack staged bytes. */
int ferry__coll_take_delivery(exchange_t *x, const step_t *st)
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

/*
 * Collective transfers: the call's inputs, the strategy, the agreement.
 *
 * Every rank's error class, stream start and length, file range and
 * whether its view cache is usable make the call's inputs (ranks[]).
 * Regular calls (issue 20), where every rank accesses the same window of
 * its view's stream (same start and length: the checkpoint pattern, any
 * views) and every rank holds every view, learn that from one allreduce of
 * six words (O(log P) messages, no per-rank array travels) and compute
 * every rank's file range from the cached views. Other calls then
 * allgather the six words per rank, as before. Besides these, a call
 * exchanges only the final agreement and, for two-phase calls, one
 * allreduce before the first message. A class set on any rank ends the
 * call there with the agreed error. Otherwise the strategy
 * (choose.c) sends the call either through each rank's independent
 * transfer or through two-phase aggregation, and the call ends in one
 * agreement.
 *
 * Early ranks: a rank whose access is one contiguous file range of at least
 * cb_buffer_size bytes gains nothing from shipping (it would fill whole
 * aggregator windows with bytes it can write itself), so it transfers
 * before the allgather and brings its outcome instead of its range. When
 * every rank with data went early, the allgather has already told everyone
 * every outcome and the call ends there: one collective instead of two.
 * Hints that ask for two-phase (ferry_cb_strategy other than auto,
 * romio_cb_write/read=enable) turn early transfers off.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll_int.h"
#include "error/error.h"
#include "indep/indep.h"
#include "progress/progress.h"

enum { AGREEMENT_BYTES = 16 }; /* ferry__error_agree's two words */

int ferry__coll_file_range(const ferry__view_t *view, ferry__coll_rank_t *rank)
{
    rank->lo = rank->hi = 0;
    if (rank->bytes == 0) return 0;
    FERRY_TRY(ferry__view_file_offset(view, rank->skip, &rank->lo));
    FERRY_TRY(ferry__view_file_offset(view, rank->skip + rank->bytes - 1, &rank->hi));
    rank->hi++;
    return 0;
}

static int describe_me(const ferry__request_t *req, ferry__coll_rank_t *me)
{
    const ferry__target_t *file = req->target;
    memset(me, 0, sizeof *me);
    me->cls = req->local_cls;
    me->cached = file->coll->cache_ok;
    if (req->local_cls) return 0;
    MPI_Count size = 0;
    FERRY_TRY(ferry__datarep_size(file->view.rep, req->type, &size));
    me->skip = req->skip;
    me->bytes = req->count * size;
    return ferry__coll_file_range(&file->view, me);
}

/* Collective: every rank's inputs into file->coll->in_call.ranks; 0 or the first failing rank's class
 * (a failed exchange is this rank's own failure, in me->cls). */
static int gather_inputs(const ferry__request_t *req, ferry__coll_rank_t *me)
{
    const ferry__target_t *file = req->target;
    req->ctx->stats->coll_meta_bytes += (long long)sizeof(ferry__coll_rank_t);
    req->ctx->stats->coll_meta_recv_bytes += (long long)sizeof(ferry__coll_rank_t) * file->nprocs;
    ferry__coll_rank_t *ranks = file->coll->in_call.ranks;
    int rc = ferry__progress_allgather(me, FERRY_COLL_RANK_WORDS, MPI_OFFSET, ranks, FERRY_COLL_RANK_WORDS, MPI_OFFSET,
                                       req->ctx->comm);
    if (rc != MPI_SUCCESS) return me->cls = ferry__error_host(rc, "collective", file->filename, "MPI_Allgather");
    for (int r = 0; r < file->nprocs; r++)
        if (ranks[r].cls) return (int)ranks[r].cls;
    return 0;
}

/* What one allreduce (MAX) tells every rank about a call: minima travel negated. */
_Static_assert(sizeof(MPI_Offset) == sizeof(int64_t), "the summary reduces MPI_Offset words as MPI_INT64_T");
enum { ANY_FAILED, SKIP_MAX, SKIP_MIN_NEG, BYTES_MAX, BYTES_MIN_NEG, ANY_UNCACHED };
_Static_assert(ANY_UNCACHED + 1 == FERRY_COLL_SUMMARY_WORDS, "coll_int.h counts the summary's words");

void ferry__coll_summary_of(const ferry__coll_rank_t *me, MPI_Offset words[FERRY_COLL_SUMMARY_WORDS])
{
    /* Only ranks with bytes to move need the same start: the others' ranges are empty anyway. */
    words[ANY_FAILED] = me->cls != 0;
    words[SKIP_MAX] = me->bytes > 0 ? me->skip : INT64_MIN;
    words[SKIP_MIN_NEG] = me->bytes > 0 ? -me->skip : INT64_MIN;
    words[BYTES_MAX] = me->bytes;
    words[BYTES_MIN_NEG] = -me->bytes;
    words[ANY_UNCACHED] = !me->cached;
}

int ferry__coll_summary_regular(const MPI_Offset all[FERRY_COLL_SUMMARY_WORDS])
{
    int same_skip = all[SKIP_MAX] == INT64_MIN || all[SKIP_MAX] == -all[SKIP_MIN_NEG]; /* INT64_MIN: nobody moves */
    return !all[ANY_FAILED] && same_skip && all[BYTES_MAX] == -all[BYTES_MIN_NEG] && !all[ANY_UNCACHED];
}

/* Collective: *regular when every rank moves the same stream window and
 * holds every view, *left when some rank has bytes left to move; 0, or
 * nonzero when some rank failed (me->cls holds this rank's own class; a
 * failed allreduce is this rank's failure). */
static int summarize(const ferry__request_t *req, ferry__coll_rank_t *me, int *regular, int *left)
{
    const ferry__target_t *file = req->target;
    MPI_Offset mine[FERRY_COLL_SUMMARY_WORDS], all[FERRY_COLL_SUMMARY_WORDS];
    ferry__coll_summary_of(me, mine);
    req->ctx->stats->coll_meta_bytes += (long long)sizeof mine;
    req->ctx->stats->coll_meta_recv_bytes += (long long)sizeof all;
    /* MPI_INT64_T, not MPI_OFFSET: Open MPI 4.1.4's MPI_MAX on MPI_OFFSET compares as unsigned
     * (max(0, -5) is -5 there; MPICH gives 0), and these words are negative by design. */
    int rc = ferry__progress_allreduce(mine, all, FERRY_COLL_SUMMARY_WORDS, MPI_INT64_T, MPI_MAX, req->ctx->comm);
    if (rc != MPI_SUCCESS) return me->cls = ferry__error_host(rc, "collective", file->filename, "MPI_Allreduce");
    *regular = ferry__coll_summary_regular(all);
    *left = all[BYTES_MAX] > 0;
    return all[ANY_FAILED] ? MPI_ERR_OTHER : 0;
}

void ferry__coll_fill_regular(const ferry__target_t *file, ferry__coll_rank_t *me)
{
    const ferry__coll_state_t *s = file->coll;
    for (int r = 0; r < file->nprocs; r++) {
        ferry__coll_rank_t *rank = &s->in_call.ranks[r];
        *rank = (ferry__coll_rank_t){.skip = me->bytes > 0 ? me->skip : 0, .bytes = me->bytes, .cached = 1};
        ferry__view_t view = ferry__coll_view(s, r);
        int rc = ferry__coll_file_range(&view, rank);
        if (rc != 0) {
            me->cls = rc;
            return;
        }
    }
}

/* A contiguous range goes early when shipping cannot pay, so the call
 * needs one collective, which both decides and agrees, instead of two:
 * - its bytes take as long as the file system's fixed cost of a call
 *   (shipping could at most halve its cost: about 30 KB locally, 80 KB
 *   through a network client, fs.h), or it fills cb_buffer_size;
 * - or every call that aggregating could save on the most crowded node
 *   (its ranks' calls queue on the file and share its cores) costs less
 *   than one step of messages: a few ranks per node on a local file
 *   system, never through a network client's round trips. */
int ferry__coll_goes_early(const ferry__target_t *file, int write, const ferry__coll_rank_t *me)
{
    const ferry__coll_hints_t *h = &file->coll->hints;
    if (h->strategy != FERRY_CB_AUTO || (write ? h->cb_write : h->cb_read) == FERRY_HINT_ENABLE) return 0;
    if (me->cls != 0 || me->bytes == 0 || me->bytes != me->hi - me->lo) return 0;
    const ferry__fs_layout_t *layout = &file->layout;
    double call = ferry__coll_call_cost(layout), crossover = call / ferry__coll_byte_cost(layout);
    MPI_Offset enough = crossover < (double)h->buffer_size ? (MPI_Offset)crossover : h->buffer_size;
    int few = file->coll->most_per_node > 0 && file->coll->most_per_node * call < FERRY_COLL_STEP;
    return me->bytes >= enough || few;
}

/* This rank's own part, through indep/, then (writes) its write-behind. */
static int own_part(ferry__request_t *req, const ferry__coll_rank_t *me)
{
    int rc = ferry__indep_transfer(req);
    if (req->call->write && rc == 0) ferry__coll_write_behind(req, me->lo, me->hi - me->lo, me->bytes);
    return rc;
}

/* Transfers this rank's part before the inputs are gathered; *me then
 * carries the outcome (a class, or no bytes left to move). */
static void transfer_early(ferry__request_t *req, ferry__coll_rank_t *me)
{
    int rc = own_part(req, me);
    if (rc) {
        me->cls = rc;
        return;
    }
    req->ctx->stats->coll_early_bytes += me->bytes;
    me->bytes = 0;
    me->lo = me->hi = 0;
}

static void say(const ferry__request_t *req, const char *strategy)
{
    snprintf(req->ctx->stats->strategy, sizeof req->ctx->stats->strategy, "%s", strategy);
}

/* The first call after a new view or new hints (or a failed update), where
 * the state update is due: its several collectives wait until a summary has
 * shown that some rank has bytes left, so a call whose ranks all went early
 * (each writing one contiguous range of its own, the usual first call of a
 * checkpoint or a log) costs one collective; others one summary more
 * (after which a rank may still go early, now knowing the node map).
 * Early decisions meanwhile follow this rank's own hints when the agreed
 * ones are not known. 0 when the state is current; -1 when nothing is left. */
static int update_when_needed(ferry__request_t *req, ferry__coll_rank_t *me)
{
    const ferry__target_t *file = req->target;
    int regular, left;
    if (summarize(req, me, &regular, &left) != 0) return MPI_ERR_OTHER;
    if (!left) return -1;
    int rc = ferry__coll_state_update(file, req->ctx->comm, file->coll->hints_pending);
    if (rc && !me->cls) me->cls = rc;
    me->cached = file->coll->cache_ok;
    /* The node map may have just arrived: a few ranks per node go early below any size. */
    if (ferry__coll_goes_early(file, req->call->write, me)) transfer_early(req, me);
    return 0;
}

/* The call's inputs on every rank: 0, or the agreed class when a rank
 * failed; *nothing_left when every rank's part went early. */
static int inputs(ferry__request_t *req, ferry__coll_rank_t *me, int *nothing_left)
{
    const ferry__target_t *file = req->target;
    int stale = file->coll->epoch != file->config_epoch; /* here, not at set_view */
    *nothing_left = 0;
    req->ctx->stats->coll_calls++;
    int rc = describe_me(req, me);
    if (rc) me->cls = rc;
    if (stale && (!file->coll->hints_known || file->coll->hints_pending)) ferry__coll_own_hints(file);
    if (ferry__coll_goes_early(file, req->call->write, me)) transfer_early(req, me);
    /* The update holds the state's room (coll_int.h) until it returns; only then do the call's inputs fill it. */
    rc = stale ? update_when_needed(req, me) : 0;
    int regular = 0, left = 1;
    if (rc == 0 && summarize(req, me, &regular, &left) != 0) rc = MPI_ERR_OTHER; /* the agreement names the rank */
    if (rc < 0 || (rc == 0 && !left)) { /* every part went early: the summary told every rank every outcome */
        *nothing_left = 1;
        return 0;
    }
    if (rc) return rc;
    if (!regular) return gather_inputs(req, me);
    req->ctx->stats->coll_regular_calls++;
    ferry__coll_fill_regular(file, me);
    return me->cls;
}

static int transfer_agreed(ferry__request_t *req)
{
    const ferry__target_t *file = req->target;
    ferry__coll_rank_t me;
    int nothing_left = 0, rc = inputs(req, &me, &nothing_left);
    if (rc == 0 && nothing_left) {
        /* The same words on every rank: none knows which others went early. */
        say(req, FERRY_COLL_NOTHING_LEFT);
        return 0;
    }
    req->ctx->stats->coll_meta_bytes += AGREEMENT_BYTES;
    req->ctx->stats->coll_meta_recv_bytes += AGREEMENT_BYTES;
    if (rc != 0) return ferry__error_agree(req->ctx->comm, (int)me.cls, req->call->name); /* me.cls: local_cls too */
    ferry__domains_t domains;
    const ferry__coll_rank_t *ranks = file->coll->in_call.ranks;
    if (ferry__coll_choose(req, ranks, &domains)) {
        ferry__coll_count_targets(file, &domains, req->ctx->stats);
        rc = ferry__coll_two_phase(&(ferry__coll_call_t){req, ranks, &domains});
    } else if (me.bytes > 0) rc = own_part(req, &me); /* an early rank has no bytes left here */
    return ferry__error_agree(req->ctx->comm, rc, req->call->name);
}

int ferry__coll_transfer(ferry__request_t *req)
{
    const ferry__target_t *file = req->target;
    if (file->nprocs == 1) { /* nobody to ship to or agree with */
        say(req, "independent (one rank)");
        return req->local_cls ? req->local_cls : ferry__indep_transfer(req);
    }
    /* Other ranks may read-modify-write what this rank's other threads write meanwhile: no lease
     * here from before the first exchange to after the agreement (fs.h). */
    if (req->call->write) ferry__fs_leases_pause(file->fs);
    int rc = transfer_agreed(req);
    if (req->call->write) ferry__fs_leases_resume(file->fs);
    return rc;
}

/*
 * Collective transfers: the call's inputs, the strategy, the agreement.
 *
 * Every rank brings its error class, stream start and length, file range
 * and whether its view cache is usable to one allgather (6 words per rank:
 * the only metadata a call exchanges besides the final agreement and, for
 * two-phase calls, one allreduce before the first message). A class set on any
 * rank ends the call there with the agreed error. Otherwise the strategy
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
#include <stdio.h>
#include <string.h>

#include "coll/coll_int.h"
#include "error/error.h"
#include "indep/indep.h"
#include "progress/progress.h"

enum { AGREEMENT_BYTES = 16 }; /* ferry__error_agree's two words */

static int describe_me(ferry_File fh, int local_cls, MPI_Offset skip, MPI_Count count, MPI_Datatype type,
                       ferry__coll_rank_t *me)
{
    memset(me, 0, sizeof *me);
    me->cls = local_cls;
    me->cached = fh->coll->cache_ok;
    if (local_cls) return 0;
    MPI_Count size = 0;
    FERRY_TRY(ferry__datarep_size(fh->view.rep, type, &size));
    me->skip = skip;
    me->bytes = count * size;
    if (me->bytes == 0) return 0;
    FERRY_TRY(ferry__view_file_offset(&fh->view, skip, &me->lo));
    FERRY_TRY(ferry__view_file_offset(&fh->view, skip + me->bytes - 1, &me->hi));
    me->hi++;
    return 0;
}

/* Collective: every rank's inputs into fh->coll->ranks; 0 or the first failing rank's class
 * (a failed exchange is this rank's own failure, in me->cls). */
static int gather_inputs(ferry_File fh, ferry__coll_rank_t *me)
{
    int rc = ferry__progress_allgather(me, FERRY_COLL_RANK_WORDS, MPI_OFFSET, fh->coll->ranks, FERRY_COLL_RANK_WORDS,
                                       MPI_OFFSET, fh->comm);
    if (rc != MPI_SUCCESS) return me->cls = ferry__error_host(rc, "collective", fh->filename, "MPI_Allgather");
    for (int r = 0; r < fh->nprocs; r++)
        if (fh->coll->ranks[r].cls) return (int)fh->coll->ranks[r].cls;
    return 0;
}

static int goes_early(ferry_File fh, int write, const ferry__coll_rank_t *me)
{
    const ferry__coll_hints_t *h = &fh->coll->hints;
    if (h->strategy != FERRY_CB_AUTO || (write ? h->cb_write : h->cb_read) == FERRY_HINT_ENABLE) return 0;
    return me->cls == 0 && me->bytes > 0 && me->bytes == me->hi - me->lo && me->bytes >= h->buffer_size;
}

static int anyone_has_bytes(const ferry_File fh)
{
    for (int r = 0; r < fh->nprocs; r++)
        if (fh->coll->ranks[r].bytes > 0) return 1;
    return 0;
}

void ferry__coll_write_behind(ferry_File fh, MPI_Offset offset, MPI_Offset len, MPI_Offset call_bytes)
{
    MPI_Offset threshold = fh->hints.write_behind;
    if (threshold == 0 || call_bytes < threshold || len <= 0 || fh->layout.memory_backed) return;
    ferry__fs_advise(fh->fs, offset, len, FERRY_FS_WRITEBACK);
    fh->stats.writeback_bytes += len;
}

/* This rank's own part, through indep/. */
static int own_transfer(ferry_File fh, int write, MPI_Offset skip, void *buf, MPI_Count count, MPI_Datatype type,
                        MPI_Count *done)
{
    return write ? ferry__indep_write(fh, skip, buf, count, type, done)
                 : ferry__indep_read(fh, skip, buf, count, type, done);
}

/* This rank's own part, then (writes) its write-behind. */
static int own_part(ferry_File fh, int write, const ferry__coll_rank_t *me, void *buf, MPI_Count count,
                    MPI_Datatype type, MPI_Count *done)
{
    int rc = own_transfer(fh, write, me->skip, buf, count, type, done);
    if (write && rc == 0) ferry__coll_write_behind(fh, me->lo, me->hi - me->lo, me->bytes);
    return rc;
}

/* Transfers this rank's part before the inputs are gathered; *me then
 * carries the outcome (a class, or no bytes left to move). */
static void transfer_early(ferry_File fh, int write, ferry__coll_rank_t *me, void *buf, MPI_Count count,
                           MPI_Datatype type, MPI_Count *done)
{
    int rc = own_part(fh, write, me, buf, count, type, done);
    if (rc) {
        me->cls = rc;
        return;
    }
    fh->stats.coll_early_bytes += me->bytes;
    me->bytes = 0;
    me->lo = me->hi = 0;
}

static int collective(ferry_File fh, int write, int local_cls, MPI_Offset skip, void *buf, MPI_Count count,
                      MPI_Datatype type, MPI_Count *done, const char *what)
{
    *done = 0;
    if (fh->nprocs == 1) { /* nobody to ship to or agree with */
        snprintf(fh->stats.strategy, sizeof fh->stats.strategy, "independent (one rank)");
        return local_cls ? local_cls : own_transfer(fh, write, skip, buf, count, type, done);
    }
    if (fh->coll->epoch != fh->config_epoch) { /* the default view's first call, or a failed update */
        int rc = ferry__coll_state_update(fh, 0);
        if (local_cls == 0) local_cls = rc;
    }
    fh->stats.coll_calls++;
    fh->stats.coll_meta_bytes += (long long)sizeof(ferry__coll_rank_t);
    ferry__coll_rank_t me;
    int rc = describe_me(fh, local_cls, skip, count, type, &me);
    if (rc) me.cls = rc;
    if (goes_early(fh, write, &me)) transfer_early(fh, write, &me, buf, count, type, done);
    rc = gather_inputs(fh, &me);
    if (rc == 0 && !anyone_has_bytes(fh)) {
        /* The same words on every rank: none knows which others went early. */
        snprintf(fh->stats.strategy, sizeof fh->stats.strategy,
                 "independent (nothing to ship: contiguous ranges moved early, or no data)");
        return 0;
    }
    fh->stats.coll_meta_bytes += AGREEMENT_BYTES;
    if (rc != 0) return ferry__error_agree(fh->comm, (int)me.cls, what); /* me.cls includes local_cls */
    ferry__domains_t domains;
    ferry__coll_call_t call = {fh, write, buf, count, type, fh->coll->ranks, &domains};
    MPI_Count moved = 0; /* an early rank has no bytes left here: moved stays 0 */
    if (ferry__coll_choose(fh, write, fh->coll->ranks, &domains)) {
        ferry__coll_count_targets(fh, &domains);
        rc = ferry__coll_two_phase(&call, &moved);
    }
    else if (me.bytes > 0) rc = own_part(fh, write, &me, buf, count, type, &moved);
    *done += moved;
    return ferry__error_agree(fh->comm, rc, what);
}

int ferry__coll_write(ferry_File fh, int local_cls, MPI_Offset skip, const void *buf, MPI_Count count,
                      MPI_Datatype type, MPI_Count *done, const char *what)
{
    return collective(fh, 1, local_cls, skip, (void *)buf, count, type, done, what);
}

int ferry__coll_read(ferry_File fh, int local_cls, MPI_Offset skip, void *buf, MPI_Count count,
                     MPI_Datatype type, MPI_Count *done, const char *what)
{
    return collective(fh, 0, local_cls, skip, buf, count, type, done, what);
}

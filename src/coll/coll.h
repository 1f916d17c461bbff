/*
 * coll: collective data transfers (the *_all family).
 *
 * Every rank of the file's communicator calls these together. A call is
 * served either by two-phase aggregation (aggregators own disjoint file
 * domains and do all file access; the other ranks ship their data to them
 * or receive from them, guided by a cache of every rank's view) or by each
 * rank's own independent transfer, whichever the strategy rules in
 * choose.c pick from inputs all ranks share (docs/coll.md); a rank with one
 * large contiguous range moves it before those inputs (coll.c). Either way
 * every rank succeeds or every rank returns an error, agreed in one
 * collective at the end (or in the inputs' allgather when nothing was left
 * to ship), and no error on any rank leaves another waiting.
 */
#ifndef FERRY_COLL_H
#define FERRY_COLL_H

#include "core/request.h"

/* Collective. req->local_cls carries this rank's argument-check result: a
 * rank whose arguments failed transfers nothing but still joins the
 * agreement. Messages and collectives go over req->ctx->comm, counters into
 * req->ctx->stats. Returns the agreed class; adds this rank's file-stream
 * bytes to req->done. */
int ferry__coll_transfer(ferry__request_t *req);

/* Creates the file's collective state at open (not collective; 0 or
 * MPI_ERR_NO_MEM), and frees it (view cache, buffers) at close. */
int ferry__coll_open(ferry_File fh);
void ferry__coll_release(ferry_File fh);

/* Collective, after set_view or set_info succeeded on every rank: caches
 * every rank's new view and agrees on the collective hints (rank 0's win).
 * hints_changed: this rank was given hints. A view that cannot be cached
 * makes collective calls independent; the only failure is a failed host
 * collective (MPI_ERR_INTERN, not agreed: the host's state is undefined
 * after it, MPI-3.1 8.3). */
int ferry__coll_config_changed(ferry_File fh, int hints_changed);

/* Not collective, any time: the estimated bytes of the views this rank
 * holds cached (statistics: ferry_stats_coll_view_cache_bytes). */
long long ferry__coll_cache_bytes(ferry_File fh);

#endif

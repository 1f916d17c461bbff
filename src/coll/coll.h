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

#include "request/request.h"

/* Collective. req->local_cls carries this rank's argument-check result: a
 * rank whose arguments failed transfers nothing but still joins the
 * agreement. Messages and collectives go over req->ctx->comm, counters into
 * req->ctx->stats. Returns the agreed class; adds this rank's file-stream
 * bytes to req->done. */
int ferry__coll_transfer(ferry__request_t *req);

/* Creates the file's collective state at open into *state, the slot
 * mpiio/ points the target's coll at (not collective; 0 or MPI_ERR_NO_MEM),
 * and frees it (view cache, buffers; *state NULL) at close. The target
 * itself stays read only here too. */
int ferry__coll_open(const ferry__target_t *file, struct ferry__coll_state **state);
void ferry__coll_release(struct ferry__coll_state **state);

/* Not collective, after set_view or set_info succeeded on every rank (and
 * moved the target's config_epoch): the next collective transfer caches every rank's
 * new view and agrees on the collective hints (rank 0's win) before its
 * inputs, so a view only ever accessed independently costs no exchange.
 * hints_changed: this rank was given hints (remembered until then). */
void ferry__coll_config_changed(const ferry__target_t *file, int hints_changed);

/* Not collective, any time: the estimated bytes of the views this rank
 * holds cached (statistics: ferry_stats_coll_view_cache_bytes). */
long long ferry__coll_cache_bytes(const ferry__target_t *file);
/* What this rank received at the file's last update of the views and hints
 * (statistics: ferry_stats_coll_view_recv_bytes). */
long long ferry__coll_update_recv_bytes(const ferry__target_t *file);

/* The scaling model (model.c, issue 20 item 8): the planning of one
 * collective call run for nprocs virtual ranks in this process (no
 * messages). rank_of describes virtual rank r: a view it builds with
 * ferry__view_build (the model releases it) and the call's stream window. */
typedef struct ferry__coll_model_rank {
    ferry__view_t view;
    MPI_Offset skip, bytes;
} ferry__coll_model_rank_t;

typedef struct ferry__coll_model {
    int nprocs, per_node, cores, as_rank, write; /* as_rank: whose plan is reported */
    ferry__hints_t hints;
    ferry__fs_layout_t layout;
    int (*rank_of)(void *arg, int r, ferry__coll_model_rank_t *rank);
    void *arg;
    struct ferry__coll_model_out {
        int shapes, too_large, regular, naggs;
        MPI_Offset cache_bytes, cache_peak; /* the view cache, per rank (state.c's estimate) */
        MPI_Offset state_bytes;             /* all of a file's collective state, per rank */
        MPI_Offset update_recv_bytes;       /* a state update: what a rank receives (what ranks say, the blobs) */
        MPI_Offset meta_sent, meta_recv;    /* one call, besides data, per rank */
        MPI_Offset steps;
        struct ferry__coll_buffers {
            MPI_Offset staging, incoming, window, per_call;
        } buffers;                           /* as_rank's buffers in a two-phase call */
        double update_seconds, call_seconds; /* planning CPU time of one rank: the cache, the call */
        char strategy[96];
    } out;
} ferry__coll_model_t;

/* 0, or an error class (out of memory, a view the model cannot serialize). */
int ferry__coll_model_run(ferry__coll_model_t *m);

#endif

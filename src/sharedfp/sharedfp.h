/*
 * sharedfp: the shared file pointer (MPI-3.1 13.4.4).
 *
 * The pointer is one MPI_Offset, counted in etypes of the current view,
 * held in MPI one-sided memory on rank 0. Creating a window is a
 * collective that costs tens of milliseconds on some hosts (Open MPI's
 * osc/rdma, MPICH oversubscribed), far more than opening a file, so the
 * pointers of the files opened on one communicator share a pool (pool.c):
 * one window on a private duplicate of that communicator, holding
 * SHAREDFP_POOL_SLOTS pointers on rank 0, made at the first open on the
 * communicator and cached on it as an attribute (on MPI_COMM_WORLD for every
 * communicator with the same ranks in the same order). Each later open claims a
 * free slot; the slot every rank proposes rides in open's first agreement,
 * and only a unanimous proposal is used: a full pool or ranks that disagree
 * give the file a window of its own, as before pools. Close gives the slot
 * back. The pool is freed when the user frees the communicator (or at the
 * last close after that), or at MPI_Finalize. Every rank holds a
 * passive-target lock_all epoch on a window for its whole life, so an
 * independent access costs one MPI_Fetch_and_op and a flush, and no lock
 * file or byte-range lock is needed.
 *
 * Invariants: only ferry__sharedfp_claim (atomic fetch-and-add) changes the
 * pointer while ranks may be accessing it; ferry__sharedfp_store is for
 * collective calls (seek_shared, set_view), which call it on one rank
 * between two synchronizations of all ranks, when no access can be in
 * flight. Ordered access computes every rank's place with one prefix sum
 * and moves the pointer once, by the total.
 */
#ifndef FERRY_SHAREDFP_H
#define FERRY_SHAREDFP_H

#include <stdint.h>

#include "core/core.h"

/* Opaque: one open file's pointer (a pool slot or a window of its own). */
typedef struct ferry__sharedfp ferry__sharedfp_t;

/* How an open makes its pointer. ferry__sharedfp_propose fills it on each
 * rank; the caller's first agreement of the open maximizes `range` (two
 * int64, in the same reduction as its own values: ferry__error_agree_max),
 * so every rank learns the largest and smallest proposal; then every rank
 * calls ferry__sharedfp_create, or ferry__sharedfp_withdraw when the open
 * stops before that. */
typedef struct ferry__sharedfp_plan {
    int64_t range[2];                  /* in: {proposal, ~proposal}; out of the agreement: {largest, ~smallest} */
    int64_t proposal;                  /* this rank's: a slot, or how to do without one (pool.c) */
    MPI_Comm user_comm;                /* borrowed: the communicator passed to open */
    MPI_Comm home;                     /* borrowed: the one whose attribute holds the pool (pool.c) */
    struct ferry__sharedfp_pool *pool; /* the communicator's pool, or the one to make; NULL: none */
    ferry__sharedfp_t *made;           /* allocated here, handed out by create */
} ferry__sharedfp_plan_t;

/* Not collective: this rank's proposal for a file opened on user_comm
 * (borrowed): a free slot of the communicator's pool, reserved on this
 * rank until create or withdraw. Returns 0 or MPI_ERR_NO_MEM with a
 * message naming `filename` (then there is nothing to withdraw). */
int ferry__sharedfp_propose(MPI_Comm user_comm, const char *filename, ferry__sharedfp_plan_t *plan);

/* Not collective: undoes a proposal (the open failed before create). */
void ferry__sharedfp_withdraw(ferry__sharedfp_plan_t *plan);

/* Collective over comm (the file's private duplicate of plan->user_comm)
 * after the agreement: uses the agreed slot (making the pool first when none
 * existed), or makes the file a window of its own when the proposals
 * differ or the pool is full; rank 0 sets the pointer to `initial`,
 * visible to every rank once the caller has synchronized the ranks (open's
 * last agreement). Where the host cannot make a window (assumed to be so
 * on every rank alike) the file gets none, the call still succeeds, and
 * the functions below fail with MPI_ERR_UNSUPPORTED_OPERATION saying why.
 * *sfp receives the pointer, owned: free it with ferry__sharedfp_free.
 * Returns 0 or an error class. */
int ferry__sharedfp_create(ferry__sharedfp_plan_t *plan, MPI_Comm comm, MPI_Offset initial, ferry__sharedfp_t **sfp);

/* Collective over comm (the file's): gives the slot back (freeing the pool
 * when its communicator is gone and this was its last file) or frees the
 * file's own window; sets *sfp to NULL. NULL is a no-op. */
void ferry__sharedfp_free(MPI_Comm comm, ferry__sharedfp_t **sfp);

/* Not collective: 1 when the file has a window for its pointer (the host
 * could make one), else 0. */
int ferry__sharedfp_has_window(ferry_File fh);

/* Not collective, thread-safe at MPI_THREAD_MULTIPLE: advances the pointer
 * by `etypes` atomically and returns its old value in *start; a claim that
 * would pass FERRY_OFFSET_MAX is given back: MPI_ERR_ARG naming the call
 * `what`. */
int ferry__sharedfp_claim(ferry_File fh, MPI_Offset etypes, MPI_Offset *start, const char *what);

/* Not collective: the pointer's current value. */
int ferry__sharedfp_get(ferry_File fh, MPI_Offset *position);

/* Not collective, but only for collective callers (see above): sets it. */
int ferry__sharedfp_store(ferry_File fh, MPI_Offset position);

/* Collective: ferry__error_agree(fh->target.comm, local_cls, what) that also, when
 * every rank succeeded, resets the pointer to 0 (set_view). The reset costs
 * one more agreement, and only when some rank moved the pointer since the
 * last reset. */
int ferry__sharedfp_agree_reset(ferry_File fh, int local_cls, const char *what);

/* Collective: rank order access. Each rank passes its own etypes and
 * local_cls (its argument-check result); *start receives where its data
 * begins: the pointer plus the etypes of all lower ranks. The pointer
 * advances by the total. A rank with local_cls != 0 makes every rank fail
 * (agreed, naming it) and leaves the pointer alone. */
int ferry__sharedfp_claim_ordered(ferry_File fh, int local_cls, MPI_Offset etypes, MPI_Offset *start,
                                  const char *what);

#endif

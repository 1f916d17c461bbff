/*
 * sharedfp: the shared file pointer (MPI-3.1 13.4.4).
 *
 * The pointer is one MPI_Offset, counted in etypes of the current view,
 * held in MPI one-sided memory on rank 0 of the file's communicator. Its
 * window is created at open (collective: the only moment every rank is
 * sure to be present before an independent read_shared may come; the cost
 * is one MPI_Win_allocate, a fraction of a millisecond when ranks have
 * their own cores) and freed at close. Every rank holds a passive-target
 * lock_all epoch on the window for its whole life, so an independent access
 * costs one MPI_Fetch_and_op and a flush, and no lock file or byte-range
 * lock is needed.
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

#include "core/core.h"

/* Collective over comm: creates the pointer's window with the pointer set
 * to `initial` (rank 0's value counts), visible to every rank once the
 * caller has synchronized the ranks (open's agreement). Where the host
 * cannot make a window (assumed to be so on every rank alike), *win is
 * MPI_WIN_NULL, the call still succeeds, and the functions below fail with
 * MPI_ERR_UNSUPPORTED_OPERATION saying why. Returns 0 or an error class. */
int ferry__sharedfp_create(MPI_Comm comm, MPI_Offset initial, MPI_Win *win);

/* Collective: frees a window made by ferry__sharedfp_create (no-op for
 * MPI_WIN_NULL) and sets *win to MPI_WIN_NULL. */
void ferry__sharedfp_free(MPI_Comm comm, MPI_Win *win);

/* Not collective, thread-safe at MPI_THREAD_MULTIPLE: advances the pointer
 * by `etypes` atomically and returns its old value in *start; a claim that
 * would pass FERRY_OFFSET_MAX is given back: MPI_ERR_ARG naming the call
 * `what`. */
int ferry__sharedfp_claim(ferry_File fh, MPI_Offset etypes, MPI_Offset *start, const char *what);

/* Not collective: the pointer's current value. */
int ferry__sharedfp_get(ferry_File fh, MPI_Offset *position);

/* Not collective, but only for collective callers (see above): sets it. */
int ferry__sharedfp_store(ferry_File fh, MPI_Offset position);

/* Collective: ferry__error_agree(fh->comm, local_cls, what) that also, when
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

/*
 * The shared file pointer in one-sided memory (see sharedfp.h).
 */
#include "base/checked.h"
#include "error/error.h"
#include "progress/progress.h"
#include "sharedfp/sharedfp_int.h"

static int rma_failed(ferry_File fh, const char *what)
{
    return ferry__error_set(MPI_ERR_INTERN, "ferry: %s '%s': one-sided access to the shared file pointer failed", what,
                            fh->target.filename);
}

/* MPI_Win_allocate with errors returned, not raised on comm's handler. */
static int allocate(MPI_Comm comm, MPI_Aint size, MPI_Offset **base, MPI_Win *win)
{
    MPI_Errhandler saved;
    MPI_Comm_get_errhandler(comm, &saved);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    ferry__progress_line_up(comm);
    int rc = MPI_Win_allocate(size, (int)sizeof(MPI_Offset), MPI_INFO_NULL, comm, base, win);
    MPI_Comm_set_errhandler(comm, saved);
    MPI_Errhandler_free(&saved);
    return rc;
}

int ferry__sharedfp_window_create(MPI_Comm comm, int slots, MPI_Win *win)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Offset *base = NULL;
    MPI_Aint size = rank == POINTER_RANK ? (MPI_Aint)slots * (MPI_Aint)sizeof(MPI_Offset) : 0;
    *win = MPI_WIN_NULL;
    if (allocate(comm, size, &base, win) != MPI_SUCCESS) {
        /* No one-sided support here (Open MPI 4.1's osc/pt2pt refuses
         * MPI_THREAD_MULTIPLE, as between nodes without RDMA): the file
         * opens, its shared-pointer calls fail (fetch_and_op). */
        *win = MPI_WIN_NULL;
        return 0;
    }
    MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
    /* The epoch lasts as long as the window: accesses need only a flush. */
    if (MPI_Win_lock_all(MPI_MODE_NOCHECK, *win) == MPI_SUCCESS) return 0;
    MPI_Win_free(win);
    *win = MPI_WIN_NULL;
    return ferry__error_set(MPI_ERR_INTERN, "ferry: open: cannot initialize the shared file pointer");
}

void ferry__sharedfp_window_free(MPI_Comm comm, MPI_Win *win)
{
    if (*win == MPI_WIN_NULL) return;
    MPI_Win_unlock_all(*win);
    ferry__progress_line_up(comm);
    MPI_Win_free(win);
    *win = MPI_WIN_NULL;
}

int ferry__sharedfp_has_window(ferry_File fh)
{
    return fh->sharedfp && fh->sharedfp->win != MPI_WIN_NULL;
}

/* One atomic read-modify-write of the pointer, completed before returning. */
static int fetch_and_op(ferry_File fh, MPI_Offset operand, MPI_Offset *old, MPI_Op op, const char *what)
{
    const ferry__sharedfp_t *f = fh->sharedfp;
    if (!f || f->win == MPI_WIN_NULL)
        return ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                                "ferry: %s '%s': the host MPI could not create a one-sided window for this file's "
                                "communicator (MPI_Win_allocate failed at open), which shared file pointers need",
                                what, fh->target.filename);
    if (MPI_Fetch_and_op(&operand, old, MPI_OFFSET, POINTER_RANK, f->slot, op, f->win) != MPI_SUCCESS ||
        MPI_Win_flush(POINTER_RANK, f->win) != MPI_SUCCESS)
        return rma_failed(fh, what);
    return 0;
}

int ferry__sharedfp_claim(ferry_File fh, MPI_Offset etypes, MPI_Offset *start, const char *what)
{
    if (etypes != 0 && ferry__sharedfp_has_window(fh)) fh->sharedfp_used = 1;
    FERRY_TRY(fetch_and_op(fh, etypes, start, MPI_SUM, what));
    MPI_Offset end, undone;
    if (!ferry__offset_add(*start, etypes, &end)) return 0;
    /* Give the claim back: the pointer never moves past what a byte offset can hold. */
    FERRY_TRY(fetch_and_op(fh, -etypes, &undone, MPI_SUM, what));
    return ferry__error_set(MPI_ERR_ARG,
                            "ferry: %s '%s': the shared file pointer (etype %lld) plus %lld etypes passes the "
                            "largest offset ferry addresses (%lld)",
                            what, fh->target.filename, (long long)*start, (long long)etypes,
                            (long long)FERRY_OFFSET_MAX);
}

int ferry__sharedfp_get(ferry_File fh, MPI_Offset *position)
{
    return fetch_and_op(fh, 0, position, MPI_NO_OP, "shared file pointer");
}

int ferry__sharedfp_store(ferry_File fh, MPI_Offset position)
{
    MPI_Offset old;
    if (ferry__sharedfp_has_window(fh)) fh->sharedfp_used = 1;
    return fetch_and_op(fh, position, &old, MPI_REPLACE, "shared file pointer");
}

int ferry__sharedfp_agree_reset(ferry_File fh, int local_cls, const char *what)
{
    int used = fh->sharedfp_used;
    int cls = ferry__error_agree_flag(fh->target.comm, local_cls, what, &used);
    if (cls != 0 || !used) return cls;
    /* Every rank is here, so no access is in flight; none may start before the reset is done. */
    int stored = fh->target.rank == POINTER_RANK ? ferry__sharedfp_store(fh, 0) : 0;
    fh->sharedfp_used = 0;
    return ferry__error_agree(fh->target.comm, stored, what);
}

int ferry__sharedfp_claim_ordered(ferry_File fh, int local_cls, MPI_Offset etypes, MPI_Offset *start,
                                  const char *what)
{
    /* One inclusive prefix sum of (etypes, failures): the last rank learns
     * the total and whether anyone failed, moves the pointer once and tells
     * every rank the old value (or that the call failed). */
    MPI_Offset mine[2] = {local_cls ? 0 : etypes, local_cls != 0}, upto[2] = {0, 0};
    int last = fh->target.nprocs - 1;
    int cls = 0;
    if (ferry__progress_scan(mine, upto, 2, MPI_OFFSET, MPI_SUM, fh->target.comm) != MPI_SUCCESS)
        cls = ferry__error_set(MPI_ERR_INTERN, "ferry: %s '%s': prefix sum failed", what, fh->target.filename);
    MPI_Offset outcome[2] = {0, upto[1]}; /* old pointer, failures */
    if (fh->target.rank == last && cls == 0 && upto[1] == 0) {
        cls = ferry__sharedfp_claim(fh, upto[0], &outcome[0], what);
        outcome[1] = cls != 0;
    }
    if (ferry__progress_bcast(outcome, 2, MPI_OFFSET, last, fh->target.comm) != MPI_SUCCESS && cls == 0)
        cls = ferry__error_set(MPI_ERR_INTERN, "ferry: %s '%s': broadcast failed", what, fh->target.filename);
    if (cls == 0 && outcome[1] == 0) {
        *start = outcome[0] + upto[0] - mine[0];
        return 0;
    }
    return ferry__error_agree(fh->target.comm, local_cls ? local_cls : cls, what);
}

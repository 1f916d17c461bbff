/*
 * sharedfp/'s own pieces: a file's pointer (a slot of a pool, or a window
 * of its own) and the windows both kinds live in. pool.c owns the pools
 * and their registry; sharedfp.c the accesses.
 */
#ifndef FERRY_SHAREDFP_INT_H
#define FERRY_SHAREDFP_INT_H

#include "sharedfp/sharedfp.h"

/* POINTER_RANK: the rank whose window memory holds the pointers.
 * SHAREDFP_POOL_SLOTS: pointers per pool, that is files open at once on one
 * communicator without a window of their own (64 slots are 512 bytes). */
enum { POINTER_RANK = 0, SHAREDFP_POOL_SLOTS = 64 };

struct ferry__sharedfp {
    MPI_Win win;                       /* the pool's, the file's own, or MPI_WIN_NULL (no one-sided support) */
    MPI_Aint slot;                     /* the pointer's displacement, in MPI_Offsets, on POINTER_RANK */
    struct ferry__sharedfp_pool *pool; /* the pool holding the slot (or its windowless pool); NULL: own window */
};

/* Collective over comm: a window of `slots` MPI_Offsets on POINTER_RANK
 * (none elsewhere) under a lock_all epoch for its whole life. *win is
 * MPI_WIN_NULL when the host cannot make one (not an error). Returns 0 or
 * MPI_ERR_INTERN when the epoch cannot start (*win freed again). */
int ferry__sharedfp_window_create(MPI_Comm comm, int slots, MPI_Win *win);

/* Collective over comm: ends the epoch and frees *win (MPI_WIN_NULL: no-op). */
void ferry__sharedfp_window_free(MPI_Comm comm, MPI_Win *win);

#endif

/*
 * progress: how ferry waits for the host MPI.
 *
 * Every collective and every message wait of ferry goes through these
 * wrappers. Where the host spins in its blocking calls (MPICH) they start
 * the nonblocking form on every rank and poll it, giving the CPU away
 * (sched_yield) between polls: a busy-polling wait otherwise spins for the
 * rest of its time slice while the rank it waits for, or the node's
 * file-system client that carries its I/O, is not running, and every wait
 * costs scheduler quanta (milliseconds) instead of microseconds. Where the
 * host yields by itself (Open MPI, when mpirun knows it oversubscribes a
 * node) they take its blocking calls.
 *
 * Configured once per process:
 *   FERRY_WAIT=auto   (default) MPICH: nonblocking forms polled with yields;
 *                     Open MPI: its blocking calls
 *   FERRY_WAIT=block  always the host's blocking calls
 *   FERRY_WAIT=yield  always the nonblocking forms, polled with yields
 * (FERRY_WAIT must be the same on every rank.)
 * Return values are the host's.
 */
#ifndef FERRY_PROGRESS_H
#define FERRY_PROGRESS_H

#include <mpi.h>

/* 1 when this rank's waits poll and yield (reads the environment once): exactly when
 * collectives take their nonblocking form, below. */
int ferry__progress_yields(void);
/* 1 when collectives take their nonblocking form: the same on every rank
 * of a job (it depends on the host MPI and FERRY_WAIT only), since blocking
 * and nonblocking collectives do not match. */
int ferry__progress_nonblocking(void);

int ferry__progress_waitall(int count, MPI_Request *requests, MPI_Status *statuses);
int ferry__progress_barrier(MPI_Comm comm);
int ferry__progress_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int ferry__progress_allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm);
int ferry__progress_allgather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                              MPI_Datatype rtype, MPI_Comm comm);
int ferry__progress_allgatherv(const void *send, int scount, MPI_Datatype stype, void *recv, const int *rcounts,
                               const int *displs, MPI_Datatype rtype, MPI_Comm comm);
int ferry__progress_gather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                           MPI_Datatype rtype, int root, MPI_Comm comm);
int ferry__progress_gatherv(const void *send, int scount, MPI_Datatype stype, void *recv, const int *rcounts,
                            const int *displs, MPI_Datatype rtype, int root, MPI_Comm comm);
int ferry__progress_scatter(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                            MPI_Datatype rtype, int root, MPI_Comm comm);
int ferry__progress_scatterv(const void *send, const int *scounts, const int *displs, MPI_Datatype stype, void *recv,
                             int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
/* MPI_Comm_dup (through MPI_Comm_idup when yielding). */
int ferry__progress_comm_dup(MPI_Comm comm, MPI_Comm *dup);

/* Before a host collective that has no nonblocking form (MPI_Win_allocate,
 * MPI_Win_free): with nonblocking forms, a polite barrier, so that the
 * host's blocking call finds every rank already there; nothing otherwise. */
void ferry__progress_line_up(MPI_Comm comm);

int ferry__progress_scan(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

#endif

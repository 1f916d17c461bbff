/*
 * progress: how ferry waits for the host MPI.
 *
 * Every collective and every message wait of ferry goes through these
 * wrappers. By default they are the host's blocking calls. When the node
 * runs more MPI processes than this process has CPUs, they start the
 * nonblocking form and poll it, giving the CPU away (sched_yield) between
 * polls: a busy-polling wait (MPICH's) otherwise spins for the rest of its
 * time slice while the rank it waits for is not running, and every wait
 * costs scheduler quanta (milliseconds) instead of microseconds.
 *
 * Configured once per process:
 *   FERRY_WAIT=auto   (default) yield when oversubscribed, unless the host
 *                     MPI yields by itself (Open MPI does when mpirun
 *                     oversubscribes; MPICH spins): the node's rank count
 *                     (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS or
 *                     SLURM_STEP_TASKS_PER_NODE's first entry) exceeds the
 *                     CPUs in this process's affinity mask
 *   FERRY_WAIT=block  always the host's blocking calls
 *   FERRY_WAIT=yield  always poll and yield
 * Return values are the host's.
 */
#ifndef FERRY_PROGRESS_H
#define FERRY_PROGRESS_H

#include <mpi.h>

/* 1 when waits poll and yield (reads the environment once). */
int ferry__progress_yields(void);

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
 * MPI_Win_free): when yielding, a polite barrier, so that the host's
 * blocking call finds every rank already there; nothing otherwise. */
void ferry__progress_line_up(MPI_Comm comm);

int ferry__progress_scan(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);

#endif

/*
 * Polite waiting (progress.h): the nonblocking form of each call where
 * the host spins, polled with a yield in between where the node is
 * oversubscribed.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "progress/progress.h"

/* Open MPI's blocking calls already yield when mpirun oversubscribes the
 * node (mpi_yield_when_idle), and its nonblocking collectives (libnbc) are
 * slower than its blocking ones (configure() below). MPICH spins in its
 * blocking calls. */
#ifdef OMPI_MAJOR_VERSION
static const int host_yields_itself = 1;
#else
static const int host_yields_itself = 0;
#endif

static pthread_once_t configure_once = PTHREAD_ONCE_INIT;
/* Set once by configure(), read-only afterwards. Whether collectives take
 * their nonblocking form must be the same on every rank (MPI-3.1 5.12:
 * blocking and nonblocking collectives do not match; MPICH hung in
 * MPI_Comm_dup against MPI_Comm_idup when one node of a job was
 * oversubscribed and another not), so it depends only on the host and
 * FERRY_WAIT. */
static int nonblocking; /* and then polled with yields: ferry never polls without yielding */

/* auto: where ferry polls (the host spins: MPICH) it yields on every node,
 * not only where the launcher counts more ranks than CPUs: a waiting rank
 * that keeps its core starves whatever else needs it, and the node's
 * file-system client may be a process (a FUSE client carries every rank's
 * I/O of its node) that no rank count shows. With nothing else runnable
 * sched_yield returns at once: on one node, 1-2 ranks on 2 CPUs, the
 * report's collective rows were the same or faster yielding (0.91-1.80 of
 * spinning); on tools/cluster's 4 nodes of one rank (each node a core with
 * its FUSE client) BTIO class A went from 0.97-1.44 of MPICH's ROMIO to
 * 2.52-4.10 writing (docs/cluster.md). Where the host yields by itself (Open MPI, when mpirun knows it oversubscribes) its
 * blocking calls stay: polling Open MPI's nonblocking collectives made the
 * report's single-node rows 0.25-0.9 as fast (2026-11-27). */
static void configure(void)
{
    const char *mode = getenv("FERRY_WAIT");
    if (mode && strcmp(mode, "yield") == 0) {
        nonblocking = 1;
    } else if (mode && strcmp(mode, "block") == 0) {
        nonblocking = 0;
    } else {
        nonblocking = !host_yields_itself;
    }
}

int ferry__progress_yields(void)
{
    return ferry__progress_nonblocking();
}

int ferry__progress_nonblocking(void)
{
    pthread_once(&configure_once, configure);
    return nonblocking;
}

int ferry__progress_waitall(int count, MPI_Request *requests, MPI_Status *statuses)
{
    if (!ferry__progress_yields()) return MPI_Waitall(count, requests, statuses);
    for (;;) {
        int done = 0, rc = MPI_Testall(count, requests, &done, statuses);
        if (rc != MPI_SUCCESS || done) return rc;
        sched_yield();
    }
}

/* The result of starting a nonblocking collective, waited for politely. */
static int finish(int started, MPI_Request *request)
{
    MPI_Status status; /* not MPI_STATUSES_IGNORE: MPICH's constant trips gcc's bounds checks once inlined */
    return started != MPI_SUCCESS ? started : ferry__progress_waitall(1, request, &status);
}

int ferry__progress_barrier(MPI_Comm comm)
{
    if (!ferry__progress_nonblocking()) return MPI_Barrier(comm);
    MPI_Request r;
    return finish(MPI_Ibarrier(comm, &r), &r);
}

int ferry__progress_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    if (!ferry__progress_nonblocking()) return MPI_Bcast(buf, count, type, root, comm);
    MPI_Request r;
    return finish(MPI_Ibcast(buf, count, type, root, comm, &r), &r);
}

int ferry__progress_allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm)
{
    if (!ferry__progress_nonblocking()) return MPI_Allreduce(send, recv, count, type, op, comm);
    MPI_Request r;
    return finish(MPI_Iallreduce(send, recv, count, type, op, comm, &r), &r);
}

int ferry__progress_allgather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                              MPI_Datatype rtype, MPI_Comm comm)
{
    if (!ferry__progress_nonblocking()) return MPI_Allgather(send, scount, stype, recv, rcount, rtype, comm);
    MPI_Request r;
    return finish(MPI_Iallgather(send, scount, stype, recv, rcount, rtype, comm, &r), &r);
}

int ferry__progress_allgatherv(const void *send, int scount, MPI_Datatype stype, void *recv, const int *rcounts,
                               const int *displs, MPI_Datatype rtype, MPI_Comm comm)
{
    if (!ferry__progress_nonblocking())
        return MPI_Allgatherv(send, scount, stype, recv, rcounts, displs, rtype, comm);
    MPI_Request r;
    return finish(MPI_Iallgatherv(send, scount, stype, recv, rcounts, displs, rtype, comm, &r), &r);
}

int ferry__progress_scan(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    if (!ferry__progress_nonblocking()) return MPI_Scan(send, recv, count, type, op, comm);
    MPI_Request r;
    return finish(MPI_Iscan(send, recv, count, type, op, comm, &r), &r);
}

int ferry__progress_gather(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                           MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (!ferry__progress_nonblocking()) return MPI_Gather(send, scount, stype, recv, rcount, rtype, root, comm);
    MPI_Request r;
    return finish(MPI_Igather(send, scount, stype, recv, rcount, rtype, root, comm, &r), &r);
}

int ferry__progress_gatherv(const void *send, int scount, MPI_Datatype stype, void *recv, const int *rcounts,
                            const int *displs, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (!ferry__progress_nonblocking())
        return MPI_Gatherv(send, scount, stype, recv, rcounts, displs, rtype, root, comm);
    MPI_Request r;
    return finish(MPI_Igatherv(send, scount, stype, recv, rcounts, displs, rtype, root, comm, &r), &r);
}

int ferry__progress_scatter(const void *send, int scount, MPI_Datatype stype, void *recv, int rcount,
                            MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (!ferry__progress_nonblocking()) return MPI_Scatter(send, scount, stype, recv, rcount, rtype, root, comm);
    MPI_Request r;
    return finish(MPI_Iscatter(send, scount, stype, recv, rcount, rtype, root, comm, &r), &r);
}

int ferry__progress_scatterv(const void *send, const int *scounts, const int *displs, MPI_Datatype stype, void *recv,
                             int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    if (!ferry__progress_nonblocking())
        return MPI_Scatterv(send, scounts, displs, stype, recv, rcount, rtype, root, comm);
    MPI_Request r;
    return finish(MPI_Iscatterv(send, scounts, displs, stype, recv, rcount, rtype, root, comm, &r), &r);
}

int ferry__progress_comm_dup(MPI_Comm comm, MPI_Comm *dup)
{
    if (!ferry__progress_nonblocking()) return MPI_Comm_dup(comm, dup);
    MPI_Request r;
    return finish(MPI_Comm_idup(comm, dup, &r), &r);
}

void ferry__progress_line_up(MPI_Comm comm)
{
    if (ferry__progress_nonblocking()) ferry__progress_barrier(comm);
}

/*
 * async: background execution of nonblocking I/O requests.
 *
 * An operation (a closure built by mpiio/) runs either on a background
 * thread or at once, and the caller gets an MPI generalized request
 * (MPI_Grequest_start) that the ordinary MPI_Wait/MPI_Test family completes.
 *
 * Background execution needs MPI_THREAD_MULTIPLE (MPI_Query_thread), since
 * workers call MPI (collectives, MPI_Grequest_complete, MPI_Type_free).
 * Below that level every operation runs at initiation and its request is
 * returned already complete (the standard allows it; nonblocking
 * collectives then block like their blocking forms, so a program that needs
 * another rank to act before that rank initiates the same collective
 * deadlocks, as it would with a blocking collective).
 *
 * Threads. Independent operations never wait for other ranks, so they share
 * one small process-wide pool (FERRY_ASYNC_POOL threads, started at the first
 * background request, joined in MPI_Finalize; ferry's MPI_Finalize first
 * waits until no job is queued or running, core/init.c): a few threads keep the disk
 * busy without one thread per request or per file. Collective operations may
 * wait for other ranks, so each file gets its own collective lane: one thread
 * that runs the file's collectives one at a time in initiation order (every
 * rank initiates them in the same order, as MPI requires), started at the
 * first nonblocking collective and joined at close. A collective waiting for
 * a slow rank thus never holds up independent requests or other files'
 * collectives (which other ranks may legally initiate in another order).
 * Background collectives communicate on a second duplicate of the file's
 * communicator (ferry__async_comm), so they never interleave with blocking
 * collectives issued by the application thread on fh->target.comm.
 *
 * Requests. query_fn fills the status (bytes moved, through the operation's
 * fill function); an operation that failed in the background makes MPI_Wait
 * and MPI_Test return an error code of its class carrying ferry's message
 * (read it with ferry_Error_string), and sets status.MPI_ERROR to it.
 * Which error handlers see it (decided for issue 13; tests/async/async_errors):
 *   1. the file's own, first and once per request, from query_fn, i.e. in
 *      the MPI_Wait/MPI_Test (or MPI_Request_get_status) that completes it,
 *      exactly as for a blocking call (MPI-3.1 13.7: I/O errors go to the
 *      file's handler): MPI_ERRORS_RETURN does nothing, a user function is
 *      called with the file and the code, MPI_ERRORS_ARE_FATAL aborts with
 *      ferry's message; a file already closed uses FERRY_FILE_NULL's;
 *   2. then MPI_COMM_WORLD's: the code query_fn returns is the request's
 *      error, and both hosts raise the errors of generalized requests on
 *      MPI_COMM_WORLD (measured on Open MPI 4.1 and MPICH 4.0; MPI-3.1 12.2
 *      gives a generalized request no communicator of its own). ferry
 *      cannot change that without replacing the application's handler on
 *      MPI_COMM_WORLD, so a program that keeps MPI_ERRORS_ARE_FATAL there
 *      aborts on a failed background request; ferry first prints its
 *      message and says so. With MPI_ERRORS_RETURN on MPI_COMM_WORLD,
 *      MPI_Wait returns the code. Below MPI_THREAD_MULTIPLE (requests run at
 *      initiation) and for argument errors, the initiating call returns the
 *      error through the file's handler alone.
 * cancel_fn does nothing: a started request cannot be cancelled
 * (MPI_Test_cancelled answers false), which the standard allows. free_fn
 * and the worker share the request's state by reference count, so
 * MPI_Request_free on a pending request is safe. On MPICH the request is an
 * extended one (host.c: MPICH 4.0.2's MPI_Waitall needs a wait function).
 *
 * Concurrency within a process. Two pool threads may run two independent
 * requests of the same file at once, beside the application's own calls.
 * Their data never overlap in a correct program, and data sieving windows
 * and locks cover exactly the bytes between a transfer's first and last
 * piece, so they do not meet either. Byte-range locks exclude the threads
 * of one process too (fs/ranges.c), so a collective lane's aggregator,
 * which patches windows with other ranks' holes, never undoes this rank's
 * own pending or application-thread writes, and atomic mode orders a
 * request against the same process's other requests as well.
 *
 * Files. A file's pending background operations are counted; the
 * application-thread calls that change or end what they read (close,
 * set_view, set_size, preallocate, sync, set_info, set_atomicity, blocking
 * collectives) first wait for them with ferry__async_drain. Statistics that
 * background operations gather are folded into fh->stats on the application
 * thread (at the next initiation, drain or get_info), never written from a
 * worker.
 */
#ifndef FERRY_ASYNC_H
#define FERRY_ASYNC_H

#include "core/core.h"

enum { FERRY_ASYNC_POOL = 2 };

typedef enum { FERRY_ASYNC_INDEPENDENT, FERRY_ASYNC_COLLECTIVE } ferry__async_lane_t;

/* An operation. run does the work and returns 0 or an error class (message
 * set); *bytes is what fill reports in the status. release frees arg; both
 * run on the thread that runs the operation. */
typedef struct ferry__async_op {
    int (*run)(void *arg, MPI_Count *bytes);
    void (*release)(void *arg);
    void (*fill)(MPI_Status *status, MPI_Count bytes);
    void *arg;
} ferry__async_op_t;

/* True when operations run in the background (the process has MPI_THREAD_MULTIPLE). */
int ferry__async_background(void);

/* Runs op for fh, in the background when ferry__async_background(), else at
 * once. Takes op->arg in every case (released even on failure). request
 * NULL: no request is made (a collective a rank takes part in only so the
 * others do not wait). Returns 0 or an error class: the operation's own when
 * it ran at once. An operation that cannot be queued (no memory, no thread)
 * runs at once, after fh's pending operations. */
int ferry__async_start(ferry_File fh, ferry__async_lane_t lane, const ferry__async_op_t *op, MPI_Request *request);

/* The communicator of fh's background collectives. Collective over fh->target.comm
 * the first time (call it at the initiation of a nonblocking collective,
 * which every rank makes in the same order); then local. */
int ferry__async_comm(ferry_File fh, MPI_Comm *comm);

/* Adds a finished operation's counters for fh: from a worker, folded into
 * fh->stats later on the application thread; at initiation (fh has no
 * background state), into fh->stats at once. */
void ferry__async_add_stats(ferry_File fh, const ferry__stats_t *stats);

/* Application thread: folds counters gathered in the background into fh->stats. */
void ferry__async_fold_stats(ferry_File fh);

/* Application thread: waits until fh has no pending background operation,
 * then folds their counters. Not collective, but a pending collective may
 * wait for other ranks to initiate it. */
void ferry__async_drain(ferry_File fh);

/* At close: drains, then frees fh's background state (its lane thread and
 * communicator). */
void ferry__async_release(ferry_File fh);

#endif

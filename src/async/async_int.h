/*
 * async/'s own pieces: a job (one operation and its request's state) and a
 * queue of jobs served by worker threads.
 */
#ifndef FERRY_ASYNC_INT_H
#define FERRY_ASYNC_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "async/async.h"

typedef struct ferry__async_job ferry__async_job_t;

/* One operation. Shared by its worker and its request (free_fn) by
 * reference count; the worker touches nothing else of it once it has
 * completed the request. */
struct ferry__async_job {
    ferry__async_job_t *next; /* in its queue */
    ferry__async_op_t op;
    struct ferry__async_file *owner; /* the file's background state: pending count */
    ferry_File file;                 /* the caller's handle: its error handler applies at completion */
    atomic_int reported;             /* the error went to the handlers (query_fn may run more than once) */
    MPI_Request request;             /* MPI_REQUEST_NULL when the caller wanted none */
    atomic_int refs;
    int cls;         /* the operation's outcome */
    MPI_Count bytes; /* for the status */
    char *message;   /* ferry's message when cls != 0; owned */
};

/* A FIFO of jobs and the threads that serve it. */
typedef struct ferry__async_queue {
    pthread_mutex_t lock;
    pthread_cond_t ready;
    ferry__async_job_t *head, *tail;
    int stopping;
    int nthreads;
    pthread_t threads[FERRY_ASYNC_POOL];
} ferry__async_queue_t;

/* Creates *q, served by nthreads (<= FERRY_ASYNC_POOL) threads. Returns 0,
 * MPI_ERR_NO_MEM or MPI_ERR_OTHER (no thread), *q NULL on failure. */
int ferry__async_queue_create(int nthreads, ferry__async_queue_t **q);
/* Appends job; one thread takes it. */
void ferry__async_queue_push(ferry__async_queue_t *q, ferry__async_job_t *job);
/* Lets the threads finish the jobs queued, joins them and frees q. */
void ferry__async_queue_destroy(ferry__async_queue_t *q);

/* MPI_Grequest_start, or what the host needs instead (host.c). */
int ferry__async_grequest_start(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free_fn,
                                MPI_Grequest_cancel_function *cancel, void *state, MPI_Request *request);

/* Runs a job on the calling worker and completes its request (async.c). */
void ferry__async_job_run(ferry__async_job_t *job);

#endif

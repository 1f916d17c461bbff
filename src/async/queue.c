/*
 * Job queues and their worker threads. A queue with one thread runs its
 * jobs one at a time in push order (a file's collective lane); with more
 * threads, jobs start in push order and run side by side (the pool).
 */
#include <string.h>

#include "async/async_int.h"
#include "error/error.h"

static void *serve(void *arg)
{
    ferry__async_queue_t *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->head && !q->stopping) pthread_cond_wait(&q->ready, &q->lock);
        ferry__async_job_t *job = q->head;
        if (!job) break; /* stopping, and nothing left */
        q->head = job->next;
        if (!q->head) q->tail = NULL;
        pthread_mutex_unlock(&q->lock);
        ferry__async_job_run(job);
        pthread_mutex_lock(&q->lock);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

int ferry__async_queue_create(int nthreads, ferry__async_queue_t **out)
{
    ferry__async_queue_t *q = ferry__calloc(1, sizeof *q);
    *out = NULL;
    if (!q) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory for a background request queue");
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->ready, NULL);
    for (; q->nthreads < nthreads; q->nthreads++) {
        int rc = pthread_create(&q->threads[q->nthreads], NULL, serve, q);
        if (rc != 0) {
            ferry__async_queue_destroy(q);
            return ferry__error_set(MPI_ERR_OTHER, "ferry: cannot start a background I/O thread: %s", strerror(rc));
        }
    }
    *out = q;
    return 0;
}

void ferry__async_queue_push(ferry__async_queue_t *q, ferry__async_job_t *job)
{
    job->next = NULL;
    pthread_mutex_lock(&q->lock);
    if (q->tail) q->tail->next = job;
    else q->head = job;
    q->tail = job;
    pthread_cond_signal(&q->ready);
    pthread_mutex_unlock(&q->lock);
}

void ferry__async_queue_destroy(ferry__async_queue_t *q)
{
    if (!q) return;
    pthread_mutex_lock(&q->lock);
    q->stopping = 1;
    pthread_cond_broadcast(&q->ready);
    pthread_mutex_unlock(&q->lock);
    for (int i = 0; i < q->nthreads; i++) pthread_join(q->threads[i], NULL);
    pthread_cond_destroy(&q->ready);
    pthread_mutex_destroy(&q->lock);
    ferry__free(q);
}

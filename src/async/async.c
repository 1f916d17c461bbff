/*
 * Background requests: generalized requests over jobs, the process-wide
 * pool, and each file's background state (pending count, collective lane,
 * communicator, counters gathered in the background).
 */
#include <stdio.h>
#include <string.h>

#include "async/async_int.h"
#include "error/error.h"

struct ferry__async_file {
    pthread_mutex_t lock;
    pthread_cond_t idle;         /* signalled when pending drops to 0 */
    int pending;                 /* operations queued or running */
    ferry__stats_t stats;        /* gathered by finished operations, not yet folded */
    MPI_Comm comm;               /* background collectives' communicator; MPI_COMM_NULL until the first */
    ferry__async_queue_t *coll;  /* the collective lane; NULL until the first */
};

/* Jobs queued or running in the process, counted down only after a job's
 * last MPI call. The program's MPI_Finalize waits for none
 * (quiesce): MPI forbids other threads' MPI calls while it
 * runs, and MPICH 4.0.2 stops locking there, then aborts destroying the
 * mutex a worker was holding ("pthread_mutex_destroy: Device or resource
 * busy"; a request the program freed and left pending at finalize). */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t none;
    long jobs;
    pthread_once_t registered;
} in_flight = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, PTHREAD_ONCE_INIT};

static void in_flight_add(long delta)
{
    pthread_mutex_lock(&in_flight.lock);
    in_flight.jobs += delta;
    if (in_flight.jobs == 0) pthread_cond_broadcast(&in_flight.none);
    pthread_mutex_unlock(&in_flight.lock);
}

static void quiesce(void)
{
    pthread_mutex_lock(&in_flight.lock);
    while (in_flight.jobs > 0) pthread_cond_wait(&in_flight.none, &in_flight.lock);
    pthread_mutex_unlock(&in_flight.lock);
}

static void register_quiesce(void)
{
    (void)ferry__process_at_quiesce(quiesce); /* full: only ferry's finalize hook is left */
}

/* Guards the lazy creation of the pool and of files' background state. */
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
static ferry__async_queue_t *pool;

int ferry__async_background(void)
{
    int level = MPI_THREAD_SINGLE;
    return MPI_Query_thread(&level) == MPI_SUCCESS && level == MPI_THREAD_MULTIPLE;
}

/* ---- requests ---------------------------------------------------------- */

static void job_drop(ferry__async_job_t *job)
{
    if (atomic_fetch_sub(&job->refs, 1) != 1) return;
    ferry__free(job->message);
    ferry__free(job);
}

/* When MPI_COMM_WORLD's handler is fatal, the host is about to abort on a
 * code whose string MPICH 4.0 loses: say what failed and why it aborts. */
static void explain_world_abort(const char *message)
{
    MPI_Errhandler world;
    if (MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world) != MPI_SUCCESS) return;
    if (world == MPI_ERRORS_ARE_FATAL)
        fprintf(stderr, "%s\nferry: the nonblocking request failed in the background; MPI_Wait/MPI_Test report "
                        "its error on MPI_COMM_WORLD's error handler (the host's rule for generalized requests), "
                        "which is MPI_ERRORS_ARE_FATAL: the job aborts (set MPI_ERRORS_RETURN on MPI_COMM_WORLD "
                        "to have the error returned)\n",
                message);
    if (world != MPI_ERRORS_ARE_FATAL && world != MPI_ERRORS_RETURN) MPI_Errhandler_free(&world);
}

/* A failed request's error at completion, once: the file's own handler
 * applies first, as it does for blocking calls (MPI_ERRORS_RETURN: nothing;
 * a user function is called with the file; MPI_ERRORS_ARE_FATAL aborts);
 * FERRY_FILE_NULL's when the file is no longer open. The code then leaves
 * query_fn, and the host raises it on MPI_COMM_WORLD's handler. */
static void report_error(ferry__async_job_t *job, int code)
{
    if (atomic_exchange(&job->reported, 1)) return;
    if (ferry__handle_live(job->file))
        ferry__errhandler_invoke(&job->file->errh, job->file, job->file->target.comm, code);
    else ferry__errhandler_invoke(NULL, FERRY_FILE_NULL, MPI_COMM_WORLD, code);
    explain_world_abort(job->message ? job->message : "");
}

static int query_job(void *state, MPI_Status *status)
{
    ferry__async_job_t *job = state;
    job->op.fill(status, job->bytes);
    if (job->cls == 0) return MPI_SUCCESS;
    ferry__error_set(job->cls, "%s", job->message ? job->message : "ferry: background request failed");
    int code = ferry__error_code(job->cls);
    status->MPI_ERROR = code;
    report_error(job, code);
    return code;
}

static int free_job(void *state)
{
    job_drop(state);
    return MPI_SUCCESS;
}

/* A started request runs to its end: cancelling has no effect (MPI-3.1 12.2
 * lets cancel_fn ignore the request). */
static int cancel_job(void *state, int complete)
{
    (void)state, (void)complete;
    return MPI_SUCCESS;
}

static ferry__async_job_t *job_create(const ferry__async_op_t *op, int refs)
{
    ferry__async_job_t *job = ferry__calloc(1, sizeof *job);
    if (!job) return NULL;
    job->op = *op;
    job->request = MPI_REQUEST_NULL;
    atomic_init(&job->refs, refs);
    atomic_init(&job->reported, 0);
    return job;
}

static int request_start(ferry__async_job_t *job, MPI_Request *request)
{
    if (ferry__async_grequest_start(query_job, free_job, cancel_job, job, request) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_INTERN, "ferry: cannot start a generalized request");
    job->request = *request;
    return 0;
}

void ferry__async_job_run(ferry__async_job_t *job)
{
    job->cls = job->op.run(job->op.arg, &job->bytes);
    if (job->cls) job->message = ferry__strdup(ferry__error_message());
    job->op.release(job->op.arg);
    struct ferry__async_file *owner = job->owner;
    MPI_Request request = job->request;
    pthread_mutex_lock(&owner->lock);
    if (--owner->pending == 0) pthread_cond_broadcast(&owner->idle);
    pthread_mutex_unlock(&owner->lock);
    if (request != MPI_REQUEST_NULL) MPI_Grequest_complete(request);
    job_drop(job);
    in_flight_add(-1);
}

/* Below MPI_THREAD_MULTIPLE: the operation now, an already complete request. */
static int run_now(const ferry__async_op_t *op, MPI_Request *request)
{
    MPI_Count bytes = 0;
    int cls = op->run(op->arg, &bytes);
    op->release(op->arg);
    if (cls != 0 || !request) return cls;
    ferry__async_job_t *job = job_create(op, 1);
    if (!job) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory for a request");
    job->bytes = bytes;
    cls = request_start(job, request);
    if (cls != 0) {
        job_drop(job);
        return cls;
    }
    MPI_Grequest_complete(*request);
    return 0;
}

/* ---- the pool and files' state ---------------------------------------- */

static void on_finalize(void)
{
    pthread_mutex_lock(&setup_lock);
    ferry__async_queue_destroy(pool);
    pool = NULL;
    pthread_mutex_unlock(&setup_lock);
}

/* The pool, started at the first background request and stopped at
 * MPI_Finalize (ferry's hook, after the files left open are closed). */
static int pool_get(ferry__async_queue_t **q)
{
    static int finalizer_registered;
    int cls = 0;
    pthread_mutex_lock(&setup_lock);
    if (!finalizer_registered && (cls = ferry__process_at_finalize(on_finalize)) == 0) finalizer_registered = 1;
    if (cls) cls = ferry__error_set(cls, "ferry: cannot register the request pool's MPI_Finalize function");
    if (!pool && cls == 0) cls = ferry__async_queue_create(FERRY_ASYNC_POOL, &pool);
    *q = pool;
    pthread_mutex_unlock(&setup_lock);
    return cls;
}

static int file_state(ferry_File fh, struct ferry__async_file **state)
{
    pthread_mutex_lock(&setup_lock);
    struct ferry__async_file *f = fh->async;
    if (!f && (f = ferry__calloc(1, sizeof *f))) {
        pthread_mutex_init(&f->lock, NULL);
        pthread_cond_init(&f->idle, NULL);
        f->comm = MPI_COMM_NULL;
        fh->async = f;
    }
    pthread_mutex_unlock(&setup_lock);
    *state = f;
    if (!f)
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: '%s': out of memory for background requests",
                                fh->target.filename);
    return 0;
}

static int lane_get(struct ferry__async_file *f, ferry__async_lane_t lane, ferry__async_queue_t **q)
{
    if (lane == FERRY_ASYNC_INDEPENDENT) return pool_get(q);
    int cls = 0;
    pthread_mutex_lock(&setup_lock);
    if (!f->coll) cls = ferry__async_queue_create(1, &f->coll);
    *q = f->coll;
    pthread_mutex_unlock(&setup_lock);
    return cls;
}

/* Queues a job for op on fh's lane; the job is the request's state. */
static int queue_job(ferry_File fh, ferry__async_lane_t lane, const ferry__async_op_t *op, MPI_Request *request)
{
    struct ferry__async_file *f;
    ferry__async_queue_t *q;
    FERRY_TRY(file_state(fh, &f));
    FERRY_TRY(lane_get(f, lane, &q));
    ferry__async_job_t *job = job_create(op, request ? 2 : 1);
    if (!job) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: '%s': out of memory for a request", fh->target.filename);
    int cls = request ? request_start(job, request) : 0;
    if (cls != 0) {
        ferry__free(job);
        return cls;
    }
    job->owner = f;
    job->file = fh;
    pthread_once(&in_flight.registered, register_quiesce);
    in_flight_add(1);
    pthread_mutex_lock(&f->lock);
    f->pending++;
    pthread_mutex_unlock(&f->lock);
    ferry__async_queue_push(q, job);
    return 0;
}

int ferry__async_start(ferry_File fh, ferry__async_lane_t lane, const ferry__async_op_t *op, MPI_Request *request)
{
    if (!ferry__async_background()) return run_now(op, request);
    ferry__async_fold_stats(fh);
    if (queue_job(fh, lane, op, request) == 0) return 0;
    /* No thread or memory for the background: run it now, after the file's
     * pending operations (a collective must keep its place in the order). */
    ferry__async_drain(fh);
    return run_now(op, request);
}

int ferry__async_comm(ferry_File fh, MPI_Comm *comm)
{
    struct ferry__async_file *f;
    FERRY_TRY(file_state(fh, &f));
    if (f->comm == MPI_COMM_NULL && MPI_Comm_dup(fh->target.comm, &f->comm) != MPI_SUCCESS) {
        f->comm = MPI_COMM_NULL;
        return ferry__error_set(MPI_ERR_INTERN,
                                "ferry: '%s': cannot duplicate the communicator for background "
                                "collectives",
                                fh->target.filename);
    }
    *comm = f->comm;
    return 0;
}

/* ---- counters ---------------------------------------------------------- */

void ferry__async_add_stats(ferry_File fh, const ferry__stats_t *stats)
{
    struct ferry__async_file *f = fh->async;
    if (!f) { /* run at initiation, on the application thread */
        ferry__stats_add(&fh->stats, stats);
        return;
    }
    pthread_mutex_lock(&f->lock);
    ferry__stats_add(&f->stats, stats);
    pthread_mutex_unlock(&f->lock);
}

/* Called with f->lock held. */
static void fold_locked(ferry_File fh, struct ferry__async_file *f)
{
    ferry__stats_add(&fh->stats, &f->stats);
    memset(&f->stats, 0, sizeof f->stats);
}

void ferry__async_fold_stats(ferry_File fh)
{
    struct ferry__async_file *f = fh->async;
    if (!f) return;
    pthread_mutex_lock(&f->lock);
    fold_locked(fh, f);
    pthread_mutex_unlock(&f->lock);
}

void ferry__async_drain(ferry_File fh)
{
    struct ferry__async_file *f = fh->async;
    if (!f) return;
    pthread_mutex_lock(&f->lock);
    while (f->pending > 0) pthread_cond_wait(&f->idle, &f->lock);
    fold_locked(fh, f);
    pthread_mutex_unlock(&f->lock);
}

void ferry__async_release(ferry_File fh)
{
    struct ferry__async_file *f = fh->async;
    if (!f) return;
    ferry__async_drain(fh);
    ferry__async_queue_destroy(f->coll);
    if (f->comm != MPI_COMM_NULL) MPI_Comm_free(&f->comm);
    pthread_cond_destroy(&f->idle);
    pthread_mutex_destroy(&f->lock);
    ferry__free(f);
    fh->async = NULL;
}

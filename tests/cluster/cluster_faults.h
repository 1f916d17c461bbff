/*
 * One case of the cluster fault suite (tools/cluster-faults, docs/cluster.md
 * "Faults"): a job that makes one kind of call while the driver breaks the
 * file system under it, then proves what the call left.
 *
 * The job and the driver take turns through marker files in a control
 * directory on local disk (every node's namespace sees it); rank 0 writes
 * them, every rank polls for the driver's:
 *   ready        set up; the duration of a fault-free rehearsal of the call
 *                (the driver faults at a random moment inside it) and the
 *                file the call writes; then waits for ready.go
 *   in-call      written right before the faulted call (call 1)
 *   call1.out    every rank's outcome; then waits for next.go (the driver
 *                repairs before the next call, or not, per case)
 *   call2.out    the next call on the same handle (or set)
 *   close.out    the handle's close; then waits for repaired.go (every fault
 *                repaired)
 *   call3.out    a fresh open and a call after the repair
 *   check.out    what the file holds against the model (key<TAB>value lines)
 * An outcome line: rank, host, class ("MPI_SUCCESS" or the class name), the
 * call's wall-clock start and end, two counts of the call kind, message;
 * separated by tabs.
 */
#ifndef CLUSTER_FAULTS_H
#define CLUSTER_FAULTS_H

#include "ferry_test.h"

enum { FX_MESSAGE = MPI_MAX_ERROR_STRING + 1 }; /* ft_message fits */

typedef struct fx_run {
    int host;            /* 1: the host MPI's MPI_File_* (or ferry_ckpt's host backend); 0: ferry */
    const char *call;    /* coll, indep, read, container, ckpt */
    const char *ctl;     /* the control directory */
    const char *data;    /* the file (container) or set base (ckpt) on the volume */
    int rehearse;        /* time a fault-free call before the faulted one */
    int sparse;          /* the faulted call's range starts as a hole (the full-brick cases) */
    long long megabytes; /* what each rank's faulted call moves, in MiB */
} fx_run_t;

/* One rank's result of one call. */
typedef struct fx_outcome {
    int cls;            /* 0: success */
    double t0, t1;      /* wall clock around the call */
    long long extra[2]; /* per call kind (the container: flushed and written bytes) */
    char message[FX_MESSAGE];
} fx_outcome_t;

double fx_now(void);
/* Records rc (an MPI code) and the time now into o; t0 is when the call began. Returns rc. */
int fx_record(fx_outcome_t *o, int rc, double t0);
/* Adds the outcome of a later step of the same call (the first error wins). */
void fx_merge(fx_outcome_t *o, const fx_outcome_t *later);
/* Collective: gathers every rank's outcome; rank 0 writes <ctl>/<phase>.out and, when all
 * is non-NULL, fills all[size] for the caller. */
void fx_report(const fx_run_t *run, const char *phase, const fx_outcome_t *mine, fx_outcome_t *all);
/* Collective: waits until the driver writes <ctl>/<phase>.go. */
void fx_wait(const fx_run_t *run, const char *phase);
/* Rank 0 writes <ctl>/<name> holding text (atomically). */
void fx_mark(const fx_run_t *run, const char *name, const char *text);
/* Collective: writes ready (duration of the rehearsal, the file the faulted call writes), waits for go. */
void fx_ready(const fx_run_t *run, double seconds, const char *target);
/* Collective: barrier, then in-call (the faulted call starts on every rank right after). */
void fx_begin_call(const fx_run_t *run);

/* The three kinds of case; each runs every phase and returns when check is written. */
void fx_mpiio_case(const fx_run_t *run);
void fx_container_case(const fx_run_t *run);
void fx_ckpt_case(const fx_run_t *run);

#endif

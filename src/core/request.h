/*
 * core: one data-access call, described once at its entry point (mpiio/)
 * and passed by pointer down coll/ and indep/.
 *
 * A request carries what the call is (its entry point's descriptor), the
 * memory (buf, count, type), where in the view's stream it starts, this
 * rank's error before any transfer, the outcome, and a context: where the
 * call's collectives run, where its counters go and which kept buffers it
 * may use. A call on the application thread uses its file's context
 * (ferry__context_of_file); a background request (mpiio/nonblocking.c)
 * owns one: the file's background communicator, counters of its own that
 * async/ folds into the file on the application thread, scratch slots of
 * its own freed with it. So coll/ and indep/ write statistics and scratch
 * only through req->ctx, never through the file object, and a background
 * request needs no copy of the file.
 *
 * Invariants: fields are set by mpiio/ before the data path runs, except
 * skip (the checks set it), count (0 through an empty view once checked)
 * and done (the data path adds what it moved). The file object and the view
 * are only read on the data path; coll/'s per-file state (fh->coll) is used
 * by one collective at a time (blocking collectives drain the background
 * ones first, and a file's background collectives run one at a time).
 */
#ifndef FERRY_CORE_REQUEST_H
#define FERRY_CORE_REQUEST_H

#include "core/core.h"

/* What an entry point does: one row of mpiio/'s descriptor table. */
typedef struct ferry__access {
    const char *name; /* for messages: "write_at_all" */
    int write;        /* 1: memory -> file */
    int individual;   /* 1: at the individual file pointer, which advances */
    int collective;   /* 1: every rank calls; ends in an agreement */
    int shared;       /* 1: at the shared file pointer (in rank order when collective) */
} ferry__access_t;

/* Where a call's side effects go. */
typedef struct ferry__context {
    MPI_Comm comm;                  /* collectives and their messages */
    ferry__stats_t *stats;          /* counters the call adds to */
    ferry__scratch_slot_t *staging; /* kept buffers: indep/'s staging (coll/'s first step borrows it) */
    ferry__scratch_slot_t *sieve;   /* and its data sieving window */
} ferry__context_t;

typedef struct ferry__request {
    ferry_File fh;
    const ferry__access_t *call;
    void *buf; /* the memory: count elements of type at buf */
    MPI_Count count;
    MPI_Datatype type;
    MPI_Offset offset; /* explicit offset in etypes (individual and shared calls: resolved into it) */
    MPI_Offset skip;   /* view stream byte where the data start, set by the checks */
    int local_cls;     /* this rank's error before the transfer: a collective rank still takes part */
    MPI_Count done;    /* outcome: file-stream bytes moved on this rank */
    const ferry__context_t *ctx;
} ferry__request_t;

/* The context of a call made on the application thread: the file's own. */
static inline ferry__context_t ferry__context_of_file(ferry_File fh)
{
    return (ferry__context_t){fh->comm, &fh->stats, &fh->staging, &fh->sieve};
}

#endif

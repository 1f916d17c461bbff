/*
 * request: what the data path (coll/, indep/) is given: one data-access
 * call (ferry__request_t) and the file as that call sees it
 * (ferry__target_t), read only.
 *
 * The target is the part of the open file the data path needs. It is
 * embedded in the file object (core/core.h, struct ferry_file), so there is
 * one copy of each of its fields and no copy to keep in step: mpiio/ fills
 * it at open and changes it only in the collective calls that change the
 * file (set_view, set_info, set_atomicity), which drain the file's
 * background requests first. A request holds it through a pointer to
 * const, so the compiler refuses a write to any of its fields below
 * mpiio/. What the data path does write is named: its counters and kept
 * buffers through the request's context, and, through the target's two
 * pointers to mutable state, the file's locks-refused flag and coll/'s
 * per-file state. This header includes no core/: coll/ and indep/ never see
 * the file object (tools/check_includes.py).
 *
 * A request carries what the call is (its entry point's descriptor), the
 * memory (buf, count, type), where in the view's stream it starts, this
 * rank's error before any transfer, the outcome, and a context: where the
 * call's collectives run, where its counters go and which kept buffers it
 * may use. A call on the application thread uses its file's context
 * (ferry__context_of_file, core/core.h); a background request
 * (mpiio/nonblocking.c) owns one: the file's background communicator,
 * counters of its own that async/ folds into the file on the application
 * thread, scratch slots of its own freed with it. So a background request
 * needs no copy of the file.
 *
 * Invariants: fields are set by mpiio/ before the data path runs, except
 * skip (the checks set it), count (0 through an empty view once checked)
 * and done (the data path adds what it moved). coll/'s per-file state
 * (target->coll) is used by one collective at a time (blocking collectives
 * drain the background ones first, and a file's background collectives run
 * one at a time).
 */
#ifndef FERRY_REQUEST_H
#define FERRY_REQUEST_H

#include <stdatomic.h>

#include "base/alloc.h"
#include "ferry.h"
#include "fs/fs.h"
#include "hints/hints.h"
#include "stats/stats.h"
#include "view/view.h"

/* The open file as the data path sees it. mpiio/ writes every field (open.c
 * at open; set_view, set_info and set_atomicity later); coll/ and indep/ read
 * it through a pointer to const and write only through the last two
 * pointers. */
typedef struct ferry__target {
    /* Fixed at open (mpiio/open.c). */
    MPI_Comm comm; /* private duplicate: ferry's traffic never mixes with the caller's */
    int rank;
    int nprocs;
    const char *filename; /* the file object owns it (freed at close) */
    int amode;
    ferry__fs_file_t *fs;      /* open file on this rank (fs/ keeps its own state behind it) */
    int readable;              /* the open file can be read back, even when opened MPI_MODE_WRONLY (data sieving) */
    ferry__fs_layout_t layout; /* of the file system under the file, read at open */
    /* Set by the collective calls that change them (mpiio/: set_info, set_view, set_atomicity). */
    ferry__hints_t hints;
    ferry__view_t view;
    unsigned config_epoch; /* bumped by set_view and set_info: coll/ re-agrees its inputs */
    int atomicity;
    /* What the data path writes, from any thread (mpiio/ points these at the file's storage at open). */
    atomic_int *locks_refused;      /* indep/ and coll/: the file system refused a byte-range lock, so no
                                     * sieving writes from now on */
    struct ferry__coll_state *coll; /* coll/'s per-file state: view cache, nodes, agreed inputs (coll/ creates
                                     * it at open, frees it at close) */
} ferry__target_t;

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
    ferry_File fh; /* the handle the call was made on, for mpiio/ and async/ above the data path: its struct is
                    * defined in core/, which coll/ and indep/ do not include, so they cannot look through it */
    const ferry__access_t *call;
    void *buf; /* the memory: count elements of type at buf */
    MPI_Count count;
    MPI_Datatype type;
    MPI_Offset offset; /* explicit offset in etypes (individual and shared calls: resolved into it) */
    MPI_Offset skip;   /* view stream byte where the data start, set by the checks */
    int local_cls;     /* this rank's error before the transfer: a collective rank still takes part */
    MPI_Count done;    /* outcome: file-stream bytes moved on this rank */
    /* Set where the call runs (both zero in an entry point's request, next to the other zeros: one store). */
    const ferry__target_t *target; /* the file, read only */
    const ferry__context_t *ctx;
} ferry__request_t;

#endif

/*
 * core: the file object, the handle registry, core's set-up and the API
 * exit of calls on a file.
 *
 * struct ferry_file is the object the layers that create a file or run
 * beside it work on (mpiio/, async/, sharedfp/: the only includers of this
 * header, tools/check_includes.py). mpiio/ creates and frees it; each field
 * names the one module that owns (writes) it (below).
 * A data-access call is a request (request/request.h): the data path,
 * which may run on a background thread, sees the file only as the
 * request's target, read only, and writes counters and scratch through the
 * request's context, never the fields below directly. Allocation
 * (base/alloc.h) and the finalize hook (base/process.h) are leaves below
 * this header; modules that need only those include them, not this.
 */
#ifndef FERRY_CORE_H
#define FERRY_CORE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "base/process.h"
#include "error/error.h"
#include "ferry.h"
#include "request/request.h" /* the target, and what it includes: fs, hints, stats, view */

/* The open file. Every field names the module that owns it: the one that
 * writes it (after open, which mpiio/open.c fills in whole); every other
 * module only reads it. State private to one module hangs behind that
 * module's opaque pointer. */
struct ferry_file {
    /* request/ defines it, mpiio/ writes it (open; set_view, set_info, set_atomicity): the file as the data
     * path (coll/, indep/) sees it, read only there: communicator, rank and size, name, amode, fs handle,
     * layout, hints, view, configuration epoch, atomicity, and pointers to what the data path writes
     * (locks_refused below, coll/'s state). */
    ferry__target_t target;
    /* mpiio/: the individual file pointer (the data-access calls that move it). */
    MPI_Offset position; /* in etypes relative to the view */
    /* mpiio/develop.c: develop mode, agreed over ranks at open and set_info. */
    int develop;
    struct {     /* mpiio/split.c: the split collective in progress */
        const char *kind;  /* the active split collective's begin call, NULL when none */
        const void *buf;   /* its buffer, which the end call must name again */
        MPI_Count bytes;   /* what it moved */
        const char *misused_begin, *misused_active; /* a begin refused while another was active, for the next
                                                      * collective to report on every rank (mpiio/split.c) */
    } split;
    /* sharedfp/: the shared file pointer, a pool slot or a window (sharedfp/ creates, frees). */
    struct ferry__sharedfp *sharedfp;
    /* sharedfp/: this rank moved the shared pointer since it was last reset to 0. */
    atomic_int sharedfp_used;
    /* error/: the handler set on the file (error/errhandler.c, under its lock). */
    ferry__errhandler_slot_t errh;
    /* core/: the handle registry (handles.c, live.c). */
    MPI_Fint fortran_handle; /* 0 until ferry_File_c2f asks for one */
    uint64_t open_sequence;  /* this rank's open order: finalize closes files in it (live.c) */
    /* The application thread's context for data access (ferry__context_of_file): written through a
     * request's context on the application thread only, by mpiio/ (the calls), indep/ and coll/ (what
     * served them); async/ folds background requests' counters in here. */
    ferry__stats_t stats;                 /* counters (stats/stats.h) */
    ferry__scratch_slot_t staging, sieve; /* buffers kept between calls: indep/'s staging and sieving
                                           * window; coll/ borrows staging for its first step */
    /* indep/ and coll/, from any thread, through target.locks_refused: the file system refused a
     * byte-range lock, so no sieving writes from now on. */
    atomic_int locks_refused;
    /* async/: background requests, created at first use and freed at close. */
    struct ferry__async_file *async;
};

/* The context of a call made on the application thread: the file's own. */
static inline ferry__context_t ferry__context_of_file(ferry_File fh)
{
    return (ferry__context_t){fh->target.comm, &fh->stats, &fh->staging, &fh->sieve};
}

/* Lazily initializes ferry's process state (the finalize hook, core's
 * tear-down); safe to call from any thread once MPI is initialized.
 * Returns 0 or an error class with a message. */
int ferry__core_init(void);

/* API exit (errors.c): for cls != 0, registers an error code carrying the
 * recorded message, calls fh's error handler (FERRY_FILE_NULL's default
 * one for FERRY_FILE_NULL) and returns the code; MPI_SUCCESS for 0. Here
 * rather than in error/ because it reads the file object. */
int ferry__error_return(ferry_File fh, int cls);

/* Fortran handle registry. c2f assigns an index on first use. */
MPI_Fint ferry__handle_to_fortran(ferry_File fh);
ferry_File ferry__handle_from_fortran(MPI_Fint index);
void ferry__handle_forget(ferry_File fh);
void ferry__handle_finalize(void);

/* File handles (live.c): the structs live in slots ferry keeps until
 * MPI_Finalize, so entry points refuse closed, stale and garbage handles
 * without reading through them. create: a zeroed struct (NULL when out of
 * memory); destroy: gives it back (its slot is reused only after many
 * other opens). register: at open (marks it open and numbers it in this
 * rank's open order); unregister: at close. live: 1 when fh is an open
 * file (a few comparisons and an atomic load). All thread-safe. */
ferry_File ferry__handle_create(void);
void ferry__handle_destroy(ferry_File fh);
void ferry__handle_register(ferry_File fh);
void ferry__handle_unregister(ferry_File fh);
int ferry__handle_live(ferry_File fh);
/* 0 when fh is an open file, else MPI_ERR_FILE with a message naming op. */
int ferry__handle_check_live(ferry_File fh, const char *op);

/* Finalize: mpiio/ sets the function that closes a file (collective over the
 * file's ranks, no error handler); ferry__handle_close_all calls it for
 * every file still open, in this rank's open order (see live.c);
 * ferry__handle_live_finalize frees the slots. */
typedef void ferry__handle_closer_t(ferry_File fh);
void ferry__handle_set_closer(ferry__handle_closer_t *close_fn);
void ferry__handle_close_all(void);
void ferry__handle_live_finalize(void);

#endif

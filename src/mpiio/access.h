/*
 * The data-access calls of mpiio/: the one table of entry-point
 * descriptors, and the stages every read and write goes through.
 *
 * An entry point builds one request (request/request.h) with
 * FERRY__REQUEST and hands it to ferry__access (blocking forms) or to the
 * nonblocking initiation; from there the request is passed by pointer:
 * checks (which set req->skip), the shared pointer's claim, then the move
 * through coll/ or indep/, which adds to req->done.
 */
#ifndef FERRY_MPIIO_ACCESS_H
#define FERRY_MPIIO_ACCESS_H

#include "request/request.h"

/* Every data-access entry point, by name: an index into ferry__calls. */
typedef enum {
    FERRY_CALL_READ_AT,
    FERRY_CALL_READ_AT_ALL,
    FERRY_CALL_WRITE_AT,
    FERRY_CALL_WRITE_AT_ALL,
    FERRY_CALL_READ,
    FERRY_CALL_READ_ALL,
    FERRY_CALL_WRITE,
    FERRY_CALL_WRITE_ALL,
    FERRY_CALL_READ_SHARED,
    FERRY_CALL_WRITE_SHARED,
    FERRY_CALL_READ_ORDERED,
    FERRY_CALL_WRITE_ORDERED,
    FERRY_CALL_READ_AT_ALL_BEGIN,
    FERRY_CALL_WRITE_AT_ALL_BEGIN,
    FERRY_CALL_READ_ALL_BEGIN,
    FERRY_CALL_WRITE_ALL_BEGIN,
    FERRY_CALL_READ_ORDERED_BEGIN,
    FERRY_CALL_WRITE_ORDERED_BEGIN,
    FERRY_CALL_IREAD_AT,
    FERRY_CALL_IWRITE_AT,
    FERRY_CALL_IREAD,
    FERRY_CALL_IWRITE,
    FERRY_CALL_IREAD_AT_ALL,
    FERRY_CALL_IWRITE_AT_ALL,
    FERRY_CALL_IREAD_ALL,
    FERRY_CALL_IWRITE_ALL,
    FERRY_CALL_IREAD_SHARED,
    FERRY_CALL_IWRITE_SHARED,
    FERRY_CALLS
} ferry__call_id_t;

/* calls.c: one descriptor per entry point, designated by ferry__call_id_t. */
extern const ferry__access_t ferry__calls[FERRY_CALLS];

/* A request for entry point `id` on fh (its target and context are set
 * where the call runs, once fh is known to be a live file). */
#define FERRY__REQUEST(id, fh_, offset_, buf_, count_, type_)                                                          \
    (&(ferry__request_t){.fh = (fh_),                                                                                  \
                         .call = &ferry__calls[(id)],                                                                  \
                         .offset = (offset_),                                                                          \
                         .buf = (void *)(buf_),                                                                        \
                         .count = (count_),                                                                            \
                         .type = (type_)})

/* shared.c: for req->call->shared, checks the buffer and claims the
 * request's place at the shared file pointer, which advances: req->offset
 * (etypes) receives it. Not collective for independent calls; collective
 * (one prefix sum, agreed) for ordered ones, where ranks come in rank
 * order. Returns req->local_cls when nonzero (the pointer untouched) or the
 * outcome. */
int ferry__access_shared_offset(ferry__request_t *req);

/* The argument checks of a transfer (not collective): 0 or an error class;
 * sets req->skip, the view stream byte where the data start (at
 * req->offset, or at the individual file pointer for individual calls). */
int ferry__access_check(ferry__request_t *req);

/* The move of a checked request, through coll/ (collective calls: every
 * rank takes part, one with req->local_cls moves nothing) or indep/; counts
 * the call into req->ctx->stats. Returns an error class (agreed when
 * collective). Runs on the application thread or, for a background
 * request, on a worker. */
int ferry__access_move(ferry__request_t *req);

/* overlap.c: the move of a read through a self-overlapping view (view.h),
 * which only a file opened MPI_MODE_RDONLY can have. This rank's part is
 * read here; a collective call then takes part in coll/ with nothing to
 * move, which agrees the outcome. */
int ferry__access_read_overlapping(ferry__request_t *req);

/* Checks, claims and moves (collective for collective calls), then moves
 * the individual pointer; returns an error class. */
int ferry__access_transfer(ferry__request_t *req);

/* A blocking call on the application thread, with the file's context:
 * transfer; *bytes: the memory bytes it moved (for the status). */
int ferry__access_blocking(ferry__request_t *req, MPI_Count *bytes);

/* Blocking entry point body: ferry__access_blocking on a live file, fill
 * status, leave through the error handler. */
int ferry__access(ferry__request_t *req, MPI_Status *status);

#endif

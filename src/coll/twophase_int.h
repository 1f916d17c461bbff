/*
 * Shared by the three files of a two-phase call only (coll/twophase*.c):
 * the call's exchange, its two steps in flight and the shares they move.
 *
 *   twophase.c            the call: set-up and tear-down, the dry run that
 *                         sizes every buffer, the agreement that every rank
 *                         is set up, planning each step's windows and
 *                         shares, the pipelined loop of steps;
 *   twophase_file.c       an aggregator's window against the file: the span
 *                         of its shares, its holes and how it is written
 *                         (one pwrite, its pieces one call each, or read,
 *                         patched and written back under the window's lock),
 *                         reading a window, write-behind;
 *   twophase_transport.c  a step's bytes between ranks and aggregators:
 *                         messages, and the "go"/"done" handshakes of
 *                         node-shared slabs (shipping.c holds the slabs).
 *
 * Every rank computes every step's shares from the cached views alone
 * (twophase.c), so the transport moves only data and the file side only
 * reads and writes windows.
 */
#ifndef FERRY_COLL_TWOPHASE_INT_H
#define FERRY_COLL_TWOPHASE_INT_H

#include "coll/coll_int.h"

typedef struct share {
    MPI_Offset s0, s1; /* view stream bytes */
    MPI_Offset want;   /* s1 - s0 as planned (reads may shrink s1 at end of file) */
    MPI_Offset at;     /* offset of its bytes in the step's staging (in the aggregator's slot: shm) */
    MPI_Offset ticket[2]; /* shm: where in the slot and (reads) how many bytes, sent with "go" */
    int shm;              /* travels through the aggregator's slab, not a message */
    int peer;             /* the aggregator's index (out), or the rank (in) */
} share_t;

/* One step's plan and messages. Shares are kept only where bytes move, in
 * peer order, so a step's bookkeeping grows with the pairs that exchange
 * data (a tile's few neighbours), not with the ranks. */
typedef struct step {
    share_t *out;            /* my bytes in an aggregator's window, per such aggregator */
    share_t *in;             /* a rank's bytes in my window (aggregators), per such rank */
    int nout, nin;           /* planned; a dry run (no lists) only counts */
    int cap_out, cap_in;     /* the lists' room: the most any step plans */
    int mine_out, mine_in;   /* my share of my own window in each list, or -1 */
    MPI_Offset wlo, whi;     /* my window, when I aggregate */
    char *staging, *incoming; /* my outgoing bytes (noncontiguous memory), my window's incoming ones */
    ferry__scratch_slot_t *staging_slot, *incoming_slot;
    MPI_Request *reqs;
    MPI_Status *statuses;
    int nreqs, first_mine;   /* requests posted; where my receives from aggregators start (reads) */
    int slot;                /* 0 or 1: this step's slot of every slab */
    MPI_Request *go, *later; /* shm: writes' "go" to wait for before packing; reads' "done", waited for
                              * before the slot is used again (or at the end of the call) */
    int ngo, nlater;
} step_t;

/* How an aggregator writes a window its shares leave holes in (a window
 * without holes is one pwrite): its pieces one call each, or read, patched
 * and written back under the window's lock. */
typedef enum { WRITE_SPAN, WRITE_PIECES, WRITE_PATCHED } write_way_t;

/* The window an aggregator is writing. */
typedef struct window {
    MPI_Offset first, last; /* file bytes spanned by its shares */
    MPI_Offset total;       /* bytes of the shares */
    int contributors;       /* ranks with a share */
    write_way_t way;
    int locked;             /* [first, last) is locked */
} window_t;

typedef struct exchange {
    const ferry__coll_call_t *call;
    const ferry__target_t *file; /* call->req->target: the file, read only */
    const ferry__context_t *ctx; /* call->req->ctx: communicator, counters, staging */
    int write;                   /* call->req->call->write */
    ferry__coll_state_t *s;
    const ferry__domains_t *d;
    int me_agg;              /* my aggregator index, -1 if none */
    char *direct;            /* memory as one run of stream bytes, or NULL */
    ferry__window_cursor_t *cursors;
    step_t steps[2];
    char *window, *mask;
    window_t win;            /* the window being written (aggregators) */
    MPI_Offset eof;          /* file size at the first window with holes (writing aggregators), -1 before */
    MPI_Count done;
    int failed;              /* sticky error class of this rank */
    ferry__coll_shm_t *shm;  /* node-shared slabs this call ships through, or NULL: messages only */
} exchange_t;

/* twophase_transport.c: where a rank's bytes of my window are (sh in
 * st->in): my own in place or staged, a slab's in my slot, else in the
 * step's incoming buffer. */
char *ferry__coll_share_bytes(const exchange_t *x, const step_t *st, const share_t *sh);
/* twophase_transport.c, the phases of one step's traffic (not collective,
 * but every rank takes every step): post its messages and handshakes; wait
 * for them (writes through slabs: put my bytes after the "go"); reads:
 * tell the aggregators their slots are free again; wait for the previous
 * use of a step's slot; count and unpack what arrived. 0 or an error class
 * with a message; a failed rank still posts, so nobody waits for ever. */
int ferry__coll_post_step(exchange_t *x, step_t *st);
int ferry__coll_wait_step(exchange_t *x, step_t *st);
int ferry__coll_release_slots(exchange_t *x, step_t *st);
int ferry__coll_settle(exchange_t *x, step_t *st);
int ferry__coll_take_delivery(exchange_t *x, const step_t *st);

/* twophase_file.c, an aggregator's window of step st (not collective):
 * writes: plan and build it (x->win), then write it under its lock and
 * unlock; reads: read it and pack each rank's bytes below end of file.
 * 0 or an error class with a message. */
int ferry__coll_prepare_window(exchange_t *x, const step_t *st);
int ferry__coll_finish_window(exchange_t *x, const step_t *st);
int ferry__coll_read_window(exchange_t *x, step_t *st);

#endif

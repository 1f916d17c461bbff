/*
 * Shared by the indep module's files only: one transfer's state, the cost
 * model, the two ways of serving a batch of segments, and prefetching.
 */
#ifndef FERRY_INDEP_INT_H
#define FERRY_INDEP_INT_H

#include "datarep/datarep.h"
#include "datatype/datatype.h"
#include "indep/indep.h"

enum { FERRY_INDEP_SEGMENTS = 256 }; /* segments fetched from the view per round */

typedef struct ferry__transfer {
    const ferry__request_t *req; /* the call: memory, stream start (req->skip), context */
    const ferry__target_t *file; /* req->target: the file, read only */
    int write;                   /* req->call->write */
    ferry__stats_t *stats;       /* req->ctx->stats: where this transfer counts */
    char *direct;                /* first stream byte when memory is one native run in order, else NULL */
    MPI_Count total;  /* file-stream bytes to move */
    char *staging;    /* batch of stream bytes when !direct (owned) */
    MPI_Count batch;  /* stream bytes per batch */
    MPI_Offset file_end; /* one past the last file byte the transfer touches */
    int shared;       /* another process may write the file meanwhile: another rank, or (unless
                       * MPI_MODE_UNIQUE_OPEN) another open, as PnetCDF's per-rank MPI_COMM_SELF
                       * handle for independent mode beside its collective one */
    int lock_writes;  /* writes are guarded against other processes' read-modify-writes: plain ones by a
                       * lease or a shared lock, sieved windows by an exclusive lock (fs.h) */
    int sieve_refused; /* another open file writes lock-free in a window: no sieving writes (pieces only) */
    int atomic;       /* atomic mode: the whole range the transfer touches is locked; no inner locks */
    int prefetch;     /* reads: upcoming file ranges are announced to the kernel (prefetch.c) */
    ferry__datarep_stream_t *convert; /* windows of a non-native representation (owned); NULL: native */
    int typed_copy;   /* reads into noncontiguous memory of long pieces: sieving copies from the
                       * window straight into memory (one copy, not pack + unpack); vectored rounds
                       * unpack their own bytes at once */
    struct {          /* the data sieving buffer */
        char *buf;    /* borrowed from the file's scratch slot */
        MPI_Count size;
    } window;
} ferry__transfer_t;

/* A round of segments: `data` holds their stream bytes back to back. */
typedef struct ferry__round {
    ferry__datatype_segment_t *segs;
    int n;
    char *data;
    MPI_Count bytes; /* sum of segment lengths */
} ferry__round_t;

typedef enum { FERRY_SERVE_VECTORED, FERRY_SERVE_SIEVE } ferry__serve_t;

/* cost.c: how to serve a round (respects romio_ds_read / romio_ds_write). */
ferry__serve_t ferry__indep_choose(const ferry__transfer_t *t, const ferry__round_t *round);

/* vectored.c: serve a round, one call per segment. Reads set *got to the
 * round's bytes that lie before end of file (all unless the file ends inside). */
int ferry__indep_vectored(ferry__transfer_t *t, const ferry__round_t *round, MPI_Count *got);

/* sieve.c: serve view stream bytes [pos, pos + len) (absolute stream
 * positions; data holds them back to back) by data sieving. *moved falls
 * short of len at end of file (reads), or when a write needed a lock the
 * file system refused (*refused: serve the rest another way). */
int ferry__indep_sieve(ferry__transfer_t *t, MPI_Offset pos, MPI_Count len, char *data, MPI_Count *moved,
                       int *refused);

/* When t->lock_writes: guard_write guards a plain write of [offset, offset +
 * len) (undo with ferry__fs_unguard_write); lock_rmw locks it for a
 * read-modify-write, *locked = 0 and t->sieve_refused set when another
 * open file holds a lease there (nothing held then). On a file system that
 * refuses locks both turn guarding (and sieving writes) off for the file
 * and succeed. unlock_rmw undoes a lock_rmw that locked. */
int ferry__indep_guard(ferry__transfer_t *t, MPI_Offset offset, MPI_Offset len, ferry__fs_guard_t *guard);
int ferry__indep_lock_rmw(ferry__transfer_t *t, MPI_Offset offset, MPI_Offset len, int *locked);
int ferry__indep_unlock_rmw(ferry__transfer_t *t, MPI_Offset offset, MPI_Offset len, int locked);

/* prefetch.c: decide once per read whether to prefetch (t->prefetch);
 * announce the file ranges of view stream bytes [from, from + len) (at most
 * ferry_prefetch_size of them), and drop ranges already read. */
void ferry__indep_prefetch_decide(ferry__transfer_t *t);
void ferry__indep_prefetch(ferry__transfer_t *t, MPI_Offset from, MPI_Offset len);
void ferry__indep_release(ferry__transfer_t *t, MPI_Offset from, MPI_Offset len);

#endif

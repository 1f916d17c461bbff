/*
 * The cost model that picks, per round of segments, between one
 * file-system call per segment ("vectored") and data sieving.
 *
 *   vectored       = pieces * CALL + bytes * BYTE
 *   sieving read   = windows * CALL + span * BYTE + pieces * COPY
 *   sieving write  = windows * (CALL + 3 LOCK) + span * BYTE + pieces * COPY
 *                    + (windows * CALL + span * BYTE)           when the round has holes (the read)
 *
 * pieces, bytes and span (first byte to last byte) describe the round;
 * windows = ceil(span / window size). The constants are costs per call,
 * per byte moved by the kernel, per piece copied and per lock, fitted to
 * ferry-bench noncontig on tmpfs with 4 ranks on 2 cores (a pwrite of 1 KiB
 * cost 3-5 us there; a sieving window moves 6 GB/s of span): sieving wins
 * when the holes between pieces are below about CALL / BYTE = 30 KB for
 * reads, half that for writes, which move the span twice. romio_ds_read / romio_ds_write = enable
 * or disable override the model; sieving writes are never chosen where
 * other ranks write and the file system refuses locks, where the file
 * could only be opened write-only, nor for the rest of a transfer that
 * found another open file's lease in a window (fs/lease.c). Plain writes
 * cost no lock calls: under a lease, the usual case, they take none.
 */
#include "indep/indep_int.h"

static const double CALL = 3.0e-6;  /* seconds per file-system call */
static const double BYTE = 0.1e-9;  /* seconds per byte the kernel copies */
static const double COPY = 0.02e-6; /* seconds per piece copied in user space */
static const double LOCK = 1.0e-6;  /* seconds per lock, unlock or probe */

static int sieving_allowed(const ferry__transfer_t *t)
{
    if (!t->write) return 1;
    /* A write-only descriptor cannot read a window's holes back; a lease elsewhere forbids rewriting them. */
    if (!t->file->readable || t->sieve_refused) return 0;
    return !t->shared || t->lock_writes;
}

ferry__serve_t ferry__indep_choose(const ferry__transfer_t *t, const ferry__round_t *round)
{
    int setting = t->write ? t->file->hints.ds_write : t->file->hints.ds_read;
    if (round->n <= 1 || setting == FERRY_HINT_DISABLE || !sieving_allowed(t)) return FERRY_SERVE_VECTORED;
    if (setting == FERRY_HINT_ENABLE) return FERRY_SERVE_SIEVE;
    const ferry__datatype_segment_t *last = &round->segs[round->n - 1];
    double span = (double)(last->offset + last->length - round->segs[0].offset);
    double pieces = round->n, bytes = (double)round->bytes;
    MPI_Count window = t->write ? t->file->hints.ind_wr_buffer_size : t->file->hints.ind_rd_buffer_size;
    double windows = (double)((MPI_Count)span + window - 1) / (double)window;
    double vectored = pieces * CALL + bytes * BYTE; /* plain writes: under a lease, no lock call */
    double sieve = windows * CALL + span * BYTE + pieces * COPY;
    if (t->write) {
        sieve += windows * 3 * LOCK; /* lock, probe for leases, unlock */
        if (span > bytes) sieve += windows * CALL + span * BYTE;
    }
    return sieve < vectored ? FERRY_SERVE_SIEVE : FERRY_SERVE_VECTORED;
}

/*
 * Data sieving: pieces served through a window of the file that stays open
 * across rounds. A read window is filled once and the pieces are picked out
 * of it; a write window is read (holes must keep their bytes), patched and
 * written back when the pieces move past it, under an exclusive byte-range
 * lock on exactly that window while other ranks may write: without it a
 * neighbour's update in one of the window's holes could be lost. Windows
 * start at the first piece they serve and never reach past the transfer's
 * last byte.
 */
#include <string.h>

#include "error/error.h"
#include "indep/indep_int.h"

static int ensure_buffer(ferry__transfer_t *t)
{
    if (t->window.buf) return 0;
    MPI_Count size = t->write ? t->fh->hints.ind_wr_buffer_size : t->fh->hints.ind_rd_buffer_size;
    if (!(t->window.buf = ferry__scratch_take(&t->fh->sieve, (size_t)size)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: data sieving '%s': out of memory for a %lld-byte window",
                                t->fh->filename, (long long)size);
    t->window.size = size;
    return 0;
}

static void count_extra(ferry__transfer_t *t, MPI_Count extra)
{
    if (extra > 0) t->fh->stats.sieve_extra_bytes += extra;
}

int ferry__indep_sieve_close(ferry__transfer_t *t, int discard)
{
    if (!t->window.open) return 0;
    int rc = 0;
    if (t->write && !discard && t->window.dirty_hi > t->window.lo) {
        size_t len = (size_t)(t->window.dirty_hi - t->window.lo);
        rc = ferry__fs_pwrite(t->fh->fs, t->window.buf, len, t->window.lo);
        count_extra(t, (MPI_Count)len - t->window.pieces);
    }
    if (!t->write) count_extra(t, t->window.read - t->window.pieces);
    else count_extra(t, t->window.read);
    int unlock_rc = ferry__indep_unlock_range(t, t->window.lo, t->window.hi - t->window.lo, t->window.locked);
    t->window.open = 0;
    return rc ? rc : unlock_rc;
}

/* Opens the window at file offset `at`. For writes that need a lock the
 * file system refuses, sets *refused and opens nothing. */
static int open_window(ferry__transfer_t *t, MPI_Offset at, int *refused)
{
    FERRY_TRY(ensure_buffer(t));
    MPI_Offset hi = at + t->window.size < t->file_end ? at + t->window.size : t->file_end;
    size_t len = (size_t)(hi - at);
    int locked = 0;
    if (t->write) {
        FERRY_TRY(ferry__indep_lock_range(t, at, hi - at, &locked));
        if (!locked && t->fh->nprocs > 1) {
            *refused = 1;
            return 0;
        }
    }
    size_t n = 0;
    int rc = ferry__fs_pread(t->fh->fs, t->window.buf, len, at, &n);
    if (rc != 0) {
        ferry__indep_unlock_range(t, at, hi - at, locked);
        return rc;
    }
    if (t->write) memset(t->window.buf + n, 0, len - n); /* past end of file the holes read as zeros */
    t->window.open = 1;
    t->window.locked = locked;
    t->window.lo = at;
    t->window.hi = hi;
    t->window.valid = at + (MPI_Offset)n;
    t->window.dirty_hi = at;
    t->window.pieces = 0;
    t->window.read = (MPI_Count)n;
    return 0;
}

/* The rest of a round, from segment `seg` (of which `inside` bytes are
 * done), one call per segment. */
static int finish_vectored(ferry__transfer_t *t, const ferry__round_t *r, int seg, MPI_Count inside, char *data,
                           MPI_Count *got)
{
    ferry__datatype_segment_t rest[FERRY_INDEP_SEGMENTS];
    int n = 0;
    for (int i = seg; i < r->n; i++) rest[n++] = r->segs[i];
    rest[0].offset += inside;
    rest[0].length -= inside;
    ferry__round_t tail = {rest, n, data, r->bytes - *got};
    MPI_Count more = 0;
    int rc = ferry__indep_vectored(t, &tail, &more);
    *got += more;
    return rc;
}

int ferry__indep_sieve(ferry__transfer_t *t, const ferry__round_t *round, MPI_Count *got)
{
    *got = 0;
    char *data = round->data;
    for (int i = 0; i < round->n; i++) {
        MPI_Offset at = round->segs[i].offset, end = at + round->segs[i].length;
        while (at < end) {
            if (!t->window.open || at < t->window.lo || at >= t->window.hi) {
                FERRY_TRY(ferry__indep_sieve_close(t, 0));
                int refused = 0;
                FERRY_TRY(open_window(t, at, &refused));
                if (refused) return finish_vectored(t, round, i, at - round->segs[i].offset, data, got);
            }
            MPI_Offset stop = end < t->window.hi ? end : t->window.hi;
            if (!t->write && stop > t->window.valid) stop = t->window.valid > at ? t->window.valid : at;
            size_t n = (size_t)(stop - at);
            char *in_window = t->window.buf + (at - t->window.lo);
            if (t->write) memcpy(in_window, data, n);
            else memcpy(data, in_window, n);
            data += n;
            *got += (MPI_Count)n;
            t->window.pieces += (MPI_Count)n;
            if (t->write && stop > t->window.dirty_hi) t->window.dirty_hi = stop;
            if (!t->write && stop < end && stop >= t->window.valid && t->window.valid < t->window.hi)
                return 0; /* end of file */
            at = stop;
        }
    }
    return 0;
}

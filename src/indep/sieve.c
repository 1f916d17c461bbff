/*
 * Data sieving: a round's segments served through bounded windows of the
 * file. Reads read each window once and pick the pieces out. Writes read
 * the window (unless the round covers it completely), patch the pieces in
 * and write it back, holding an exclusive byte-range lock on exactly that
 * window while other ranks may write; without locks another rank's update
 * in a hole of the window could be lost.
 */
#include <string.h>

#include "error/error.h"
#include "indep/indep_int.h"

/* Where the walk over a round's segments stands. */
typedef struct piece_walk {
    const ferry__round_t *round;
    int seg;          /* current segment */
    MPI_Count inside; /* bytes of it already served */
    char *data;       /* its next stream byte */
} piece_walk_t;

static MPI_Offset walk_offset(const piece_walk_t *w)
{
    return w->round->segs[w->seg].offset + w->inside;
}

/* The window starting at the walk's position: [start, end) and the bytes
 * of the round's pieces inside it. */
static void window_bounds(const piece_walk_t *w, MPI_Count size, MPI_Offset *start, MPI_Offset *end,
                          MPI_Count *bytes)
{
    const ferry__round_t *r = w->round;
    *start = walk_offset(w);
    MPI_Offset limit = *start + size;
    *end = *start;
    *bytes = 0;
    for (int i = w->seg; i < r->n && r->segs[i].offset < limit; i++) {
        MPI_Offset lo = i == w->seg ? *start : r->segs[i].offset;
        MPI_Offset hi = r->segs[i].offset + r->segs[i].length;
        if (hi > limit) hi = limit;
        *bytes += hi - lo;
        *end = hi;
    }
}

/* Copies the walk's pieces inside [start, start + avail) between the window
 * buffer and the round's data, advancing the walk; returns the bytes copied. */
static MPI_Count copy_pieces(piece_walk_t *w, char *window, MPI_Offset start, MPI_Offset avail, int into_window)
{
    const ferry__round_t *r = w->round;
    MPI_Count copied = 0;
    while (w->seg < r->n) {
        MPI_Offset at = walk_offset(w);
        MPI_Offset seg_end = r->segs[w->seg].offset + r->segs[w->seg].length;
        MPI_Offset stop = seg_end < start + avail ? seg_end : start + avail;
        if (at >= stop) break;
        size_t n = (size_t)(stop - at);
        if (into_window) memcpy(window + (at - start), w->data, n);
        else memcpy(w->data, window + (at - start), n);
        w->data += n;
        copied += (MPI_Count)n;
        w->inside += (MPI_Count)n;
        if (at + (MPI_Offset)n < seg_end) break;
        w->seg++;
        w->inside = 0;
    }
    return copied;
}

static int ensure_window(ferry__transfer_t *t)
{
    MPI_Count size = t->write ? t->fh->hints.ind_wr_buffer_size : t->fh->hints.ind_rd_buffer_size;
    if (t->window) return 0;
    if (!(t->window = ferry__malloc((size_t)size)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: data sieving '%s': out of memory for a %lld-byte window",
                                t->fh->filename, (long long)size);
    t->window_size = size;
    return 0;
}

static int read_window(ferry__transfer_t *t, piece_walk_t *w, MPI_Count *got, int *at_end)
{
    MPI_Offset start, end;
    MPI_Count bytes;
    window_bounds(w, t->window_size, &start, &end, &bytes);
    size_t n = 0;
    FERRY_TRY(ferry__fs_pread(t->fh->fs, t->window, (size_t)(end - start), start, &n));
    MPI_Count copied = copy_pieces(w, t->window, start, (MPI_Offset)n, 0);
    *got += copied;
    t->fh->stats.sieve_extra_bytes += (MPI_Count)n - copied;
    *at_end = (MPI_Offset)n < end - start && copied < bytes;
    return 0;
}

/* One read-modify-write window. *unlocked_fallback is set when locks turned
 * out to be refused before anything was written. */
static int write_window(ferry__transfer_t *t, piece_walk_t *w, MPI_Count *got, int *unlocked_fallback)
{
    MPI_Offset start, end;
    MPI_Count bytes;
    window_bounds(w, t->window_size, &start, &end, &bytes);
    size_t len = (size_t)(end - start);
    int covered = bytes == (MPI_Count)len, locked = 0;
    FERRY_TRY(ferry__indep_lock_range(t, start, (MPI_Offset)len, &locked));
    if (!covered && !locked && t->fh->nprocs > 1) {
        *unlocked_fallback = 1;
        return 0;
    }
    size_t n = 0;
    int rc = covered ? 0 : ferry__fs_pread(t->fh->fs, t->window, len, start, &n);
    if (rc == 0 && !covered) {
        memset(t->window + n, 0, len - n); /* past end of file: the holes read as zeros */
        t->fh->stats.sieve_extra_bytes += (MPI_Count)n + (MPI_Count)len - bytes;
    }
    piece_walk_t before = *w;
    if (rc == 0) copy_pieces(w, t->window, start, (MPI_Offset)len, 1);
    if (rc == 0) rc = ferry__fs_pwrite(t->fh->fs, t->window, len, start);
    if (rc == 0) *got += bytes;
    else *w = before;
    int unlock_rc = ferry__indep_unlock_range(t, start, (MPI_Offset)len, locked);
    return rc ? rc : unlock_rc;
}

/* The rest of a round, from the walk's position, one call per segment. */
static int finish_vectored(ferry__transfer_t *t, const piece_walk_t *w, MPI_Count *got)
{
    const ferry__round_t *r = w->round;
    ferry__datatype_segment_t rest[FERRY_INDEP_SEGMENTS];
    int n = 0;
    for (int i = w->seg; i < r->n; i++) rest[n++] = r->segs[i];
    rest[0].offset += w->inside;
    rest[0].length -= w->inside;
    ferry__round_t tail = {rest, n, w->data, r->bytes - *got};
    MPI_Count more = 0;
    int rc = ferry__indep_vectored(t, &tail, &more);
    *got += more;
    return rc;
}

int ferry__indep_sieve(ferry__transfer_t *t, const ferry__round_t *round, MPI_Count *got)
{
    *got = 0;
    FERRY_TRY(ensure_window(t));
    piece_walk_t w = {round, 0, 0, round->data};
    while (w.seg < round->n) {
        if (t->write) {
            int fallback = 0;
            FERRY_TRY(write_window(t, &w, got, &fallback));
            if (fallback) return finish_vectored(t, &w, got);
        } else {
            int at_end = 0;
            FERRY_TRY(read_window(t, &w, got, &at_end));
            if (at_end) break;
        }
    }
    return 0;
}

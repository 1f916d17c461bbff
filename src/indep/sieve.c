/*
 * Data sieving without segment lists: the stream bytes that fall into a
 * window of the file are copied between the window and the data by the
 * datatype engine, with the view's layout type as the "memory" type over
 * the window (seed 001's listless I/O). A window starts at the file offset
 * of the next stream byte, spans at most ind_rd/wr_buffer_size bytes and
 * never reaches past the transfer's last byte; navigation finds the stream
 * bytes below its end in O(depth), and the copy costs O(bytes) with the
 * engine's block kernels. Reads read each window once. Writes read the
 * window (holes keep their bytes), patch it and write it back, holding an
 * exclusive byte-range lock on exactly that window while other ranks may
 * write: without it a neighbour's update in a hole could be lost.
 */
#include <string.h>

#include "error/error.h"
#include "indep/indep_int.h"

static int ensure_buffer(ferry__transfer_t *t)
{
    MPI_Count size = t->write ? t->file->hints.ind_wr_buffer_size : t->file->hints.ind_rd_buffer_size;
    if (t->window.buf && t->window.size >= size) return 0;
    if (t->window.buf) ferry__scratch_give(t->req->ctx->sieve, t->window.buf);
    if (!(t->window.buf = ferry__scratch_take(t->req->ctx->sieve, (size_t)size)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: data sieving '%s': out of memory for a %lld-byte window",
                                t->file->filename, (long long)size);
    t->window.size = size;
    return 0;
}

/* One window from stream byte `pos` on, at most `len` stream bytes:
 * [lo, hi) in the file holds stream bytes [pos, pos + *n). */
static int window_at(ferry__transfer_t *t, MPI_Offset pos, MPI_Count len, MPI_Offset *lo, MPI_Offset *hi,
                     MPI_Count *n)
{
    const ferry__view_t *view = &t->file->view;
    FERRY_TRY(ferry__view_file_offset(view, pos, lo));
    MPI_Offset limit = *lo + t->window.size < t->file_end ? *lo + t->window.size : t->file_end;
    MPI_Offset below;
    FERRY_TRY(ferry__view_stream_below(view, limit, &below));
    *n = below - pos < len ? below - pos : len;
    MPI_Offset last;
    FERRY_TRY(ferry__view_file_offset(view, pos + *n - 1, &last));
    *hi = last + 1;
    return 0;
}

static int read_window(ferry__transfer_t *t, MPI_Offset pos, MPI_Count len, char *data, MPI_Count *got, int *eof)
{
    const ferry__view_t *view = &t->file->view;
    MPI_Offset lo, hi;
    MPI_Count n;
    FERRY_TRY(window_at(t, pos, len, &lo, &hi, &n));
    size_t have = 0;
    FERRY_TRY(ferry__fs_pread(t->file->fs, t->stats, t->window.buf, (size_t)(hi - lo), lo, &have));
    *eof = (MPI_Offset)have < hi - lo;
    if (*eof) { /* only the stream bytes below the end of the file */
        MPI_Offset below;
        FERRY_TRY(ferry__view_stream_below(view, lo + (MPI_Offset)have, &below));
        n = below > pos ? below - pos : 0;
    }
    if (n > 0 && t->typed_copy) /* straight into the caller's memory */
        FERRY_TRY(ferry__datatype_copy(ferry__view_buffer_origin(view, t->window.buf, lo), view->layout, pos,
                                       t->req->buf, t->req->type, pos - t->req->skip, n));
    else if (n > 0)
        FERRY_TRY(ferry__view_buffer_copy(view, t->window.buf, lo, pos, n, data, 0));
    t->stats->sieve_extra_bytes += (MPI_Count)have - n;
    *got = n;
    return 0;
}

static int write_window(ferry__transfer_t *t, MPI_Offset pos, MPI_Count len, const char *data, MPI_Count *put,
                        int *refused)
{
    const ferry__view_t *view = &t->file->view;
    MPI_Offset lo, hi;
    MPI_Count n;
    FERRY_TRY(window_at(t, pos, len, &lo, &hi, &n));
    size_t span = (size_t)(hi - lo);
    int locked = 0;
    FERRY_TRY(ferry__indep_lock_rmw(t, lo, hi - lo, &locked));
    if (!locked && t->shared && !t->atomic) {
        *refused = 1;
        return 0;
    }
    size_t have = 0;
    int rc = (MPI_Count)span == n ? 0 : ferry__fs_pread(t->file->fs, t->stats, t->window.buf, span, lo, &have);
    if (rc == 0 && (MPI_Count)span != n) {
        memset(t->window.buf + have, 0, span - have); /* past end of file the holes read as zeros */
        t->stats->sieve_extra_bytes += (MPI_Count)have + (MPI_Count)span - n;
    }
    if (rc == 0)
        rc = ferry__view_buffer_copy(view, t->window.buf, lo, pos, n, (char *)data, 1);
    if (rc == 0) rc = ferry__fs_pwrite(t->file->fs, t->stats, t->window.buf, span, lo);
    if (rc == 0) *put = n;
    int unlock_rc = ferry__indep_unlock_rmw(t, lo, hi - lo, locked);
    return rc ? rc : unlock_rc;
}

int ferry__indep_sieve(ferry__transfer_t *t, MPI_Offset pos, MPI_Count len, char *data, MPI_Count *moved,
                       int *refused)
{
    *moved = 0;
    *refused = 0;
    FERRY_TRY(ensure_buffer(t));
    int eof = 0;
    while (*moved < len && !eof && !*refused) {
        MPI_Count n = 0;
        if (t->write) FERRY_TRY(write_window(t, pos + *moved, len - *moved, data + *moved, &n, refused));
        else FERRY_TRY(read_window(t, pos + *moved, len - *moved, data + *moved, &n, &eof));
        *moved += n;
    }
    return 0;
}

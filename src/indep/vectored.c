/*
 * Serving a round with one file-system call per segment.
 */
#include "error/error.h"
#include "indep/indep_int.h"

static int write_segments(ferry__transfer_t *t, const ferry__round_t *round, MPI_Count *got)
{
    const ferry__datatype_segment_t *first = &round->segs[0], *last = &round->segs[round->n - 1];
    MPI_Offset span = last->offset + last->length - first->offset;
    int locked = 0;
    FERRY_TRY(ferry__indep_lock_range(t, first->offset, span, &locked));
    int rc = 0;
    const char *p = round->data;
    for (int i = 0; i < round->n && rc == 0; i++) {
        rc = ferry__fs_pwrite(t->fh->fs, t->stats, p, (size_t)round->segs[i].length, round->segs[i].offset);
        if (rc == 0) {
            p += round->segs[i].length;
            *got += round->segs[i].length;
        }
    }
    int unlock_rc = ferry__indep_unlock_range(t, first->offset, span, locked);
    return rc ? rc : unlock_rc;
}

static int read_segments(ferry__transfer_t *t, const ferry__round_t *round, MPI_Count *got)
{
    char *p = round->data;
    for (int i = 0; i < round->n; i++) {
        size_t n = 0;
        FERRY_TRY(ferry__fs_pread(t->fh->fs, t->stats, p, (size_t)round->segs[i].length, round->segs[i].offset, &n));
        *got += (MPI_Count)n;
        p += n;
        if ((MPI_Count)n < round->segs[i].length) break; /* end of file */
    }
    return 0;
}

int ferry__indep_vectored(ferry__transfer_t *t, const ferry__round_t *round, MPI_Count *got)
{
    *got = 0;
    return t->write ? write_segments(t, round, got) : read_segments(t, round, got);
}

int ferry__indep_lock_range(ferry__transfer_t *t, MPI_Offset offset, MPI_Offset len, int *locked)
{
    *locked = 0;
    if (!t->lock_writes || len <= 0) return 0;
    int rc = ferry__fs_lock(t->fh->fs, offset, len, FERRY_FS_LOCK_WRITE);
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION) {
        /* No locks here: nobody may read-modify-write, so plain writes are safe. */
        atomic_store(&t->fh->locks_refused, 1);
        t->lock_writes = 0;
        return 0;
    }
    *locked = rc == 0;
    return rc;
}

int ferry__indep_unlock_range(ferry__transfer_t *t, MPI_Offset offset, MPI_Offset len, int locked)
{
    return locked ? ferry__fs_unlock(t->fh->fs, offset, len) : 0;
}

/*
 * Serving a round with one file-system call per segment.
 */
#include "error/error.h"
#include "indep/indep_int.h"

static int write_segments(ferry__transfer_t *t, const ferry__round_t *round, MPI_Count *got)
{
    const ferry__datatype_segment_t *first = &round->segs[0], *last = &round->segs[round->n - 1];
    MPI_Offset span = last->offset + last->length - first->offset;
    ferry__fs_guard_t guard;
    FERRY_TRY(ferry__indep_guard(t, first->offset, span, &guard));
    int rc = 0;
    const char *p = round->data;
    for (int i = 0; i < round->n && rc == 0; i++) {
        rc = ferry__fs_pwrite(t->file->fs, t->stats, p, (size_t)round->segs[i].length, round->segs[i].offset);
        if (rc == 0) {
            p += round->segs[i].length;
            *got += round->segs[i].length;
        }
    }
    int unguard_rc = ferry__fs_unguard_write(t->file->fs, &guard);
    return rc ? rc : unguard_rc;
}

static int read_segments(ferry__transfer_t *t, const ferry__round_t *round, MPI_Count *got)
{
    char *p = round->data;
    for (int i = 0; i < round->n; i++) {
        size_t n = 0;
        FERRY_TRY(ferry__fs_pread(t->file->fs, t->stats, p, (size_t)round->segs[i].length, round->segs[i].offset, &n));
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

/* The file system refuses locks: nobody can read-modify-write, so plain writes are safe. */
static void locks_refused(ferry__transfer_t *t)
{
    atomic_store(t->file->locks_refused, 1);
    t->lock_writes = 0;
}

int ferry__indep_guard(ferry__transfer_t *t, MPI_Offset offset, MPI_Offset len, ferry__fs_guard_t *guard)
{
    *guard = (ferry__fs_guard_t){FERRY_FS_GUARD_NONE, offset, len};
    if (!t->lock_writes || len <= 0) return 0;
    int rc = ferry__fs_guard_write(t->file->fs, offset, len, guard);
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION) {
        locks_refused(t);
        return 0;
    }
    return rc;
}

int ferry__indep_lock_rmw(ferry__transfer_t *t, MPI_Offset offset, MPI_Offset len, int *locked)
{
    *locked = 0;
    if (!t->lock_writes || len <= 0) return 0;
    int leased = 0;
    int rc = ferry__fs_lock_rmw(t->file->fs, offset, len, &leased);
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION) {
        locks_refused(t);
        return 0;
    }
    if (rc != 0) return rc;
    if (!leased) {
        *locked = 1;
        return 0;
    }
    t->sieve_refused = 1; /* another open file writes lock-free here: pieces only, for the rest of the transfer */
    return ferry__fs_unlock(t->file->fs, offset, len);
}

int ferry__indep_unlock_rmw(ferry__transfer_t *t, MPI_Offset offset, MPI_Offset len, int locked)
{
    return locked ? ferry__fs_unlock(t->file->fs, offset, len) : 0;
}

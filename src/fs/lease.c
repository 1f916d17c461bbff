/*
 * Leases: plain writes without a lock where nobody can be rewriting holes.
 *
 * A read-modify-write (data sieving, a two-phase window with holes) reads a
 * range, patches its own pieces in and writes the whole range back; a write
 * into one of its holes between the read and the write-back is lost. So a
 * read-modify-write holds an exclusive byte-range lock on its range, and
 * every plain write used to hold a lock on what it wrote: two system calls
 * per write, and on a network file system two round trips to the server.
 *
 * A lease lets an open file write without locking for as long as it holds
 * it. It is a shared lock on the mirror of the data range, FERRY_FS_LEASE_BASE
 * + offset, where no data lie; nothing else locks mirrors, so granting one
 * never waits. The protocol (a Dekker pair on the lock manager, which
 * orders every lock and probe of every process):
 *
 *   read-modify-write: lock the data range exclusively, then probe the
 *       mirror for a lease of another open file; if there is one, write
 *       only its own pieces (never a hole) under the lock.
 *   lease: mark the mirror of a range (whole granules), then probe the data
 *       for an exclusive lock of another open file; if there is one, unmark
 *       and lock this write instead (and try again a few writes later).
 *
 * Whichever of two racing comes second sees the first. A plain write that
 * has no lease takes a shared lock on its range, which read-modify-writes
 * wait for and other plain writes share. In this process, the threads of one
 * open file share its leases (the kernel cannot tell them apart): a lease
 * is taken only while no thread holds a byte-range lock of the file, and a
 * thread about to take an exclusive one first ends the leases, waiting for
 * the lock-free writes in flight. Leases last until then, or until the file
 * is synced (MPI's point of consistency between opens), paused by a
 * collective write (whose aggregators may read-modify-write) or closed.
 *
 * The price: while another open file holds a lease on a range, a
 * read-modify-write there writes pieces instead (docs/indep.md).
 */
#include "error/error.h"
#include "fs/fs_int.h"

enum { GRANULE = 1 << 20, MAX_BACKOFF = 64 };

static MPI_Offset round_down(MPI_Offset x) { return x / GRANULE * GRANULE; }

static MPI_Offset round_up(MPI_Offset x)
{
    return x > FERRY_FS_LEASE_BASE - GRANULE ? FERRY_FS_LEASE_BASE : round_down(x + GRANULE - 1);
}

static int leased(const ferry__fs_ranges_t *r, MPI_Offset lo, MPI_Offset hi)
{
    for (int i = 0; i < r->nleases; i++)
        if (r->leases[i].lo <= lo && hi <= r->leases[i].hi) return 1;
    return 0;
}

/* Adds [lo, hi) to the sorted, disjoint leases, merging what touches it. */
static void add_lease(ferry__fs_ranges_t *r, MPI_Offset lo, MPI_Offset hi)
{
    ferry__fs_span_t kept[FERRY_FS_MAX_LEASES];
    int n = 0, placed = 0;
    for (int i = 0; i < r->nleases; i++) {
        ferry__fs_span_t s = r->leases[i];
        if (s.hi < lo || hi < s.lo) {
            if (!placed && hi < s.lo) kept[n++] = (ferry__fs_span_t){lo, hi}, placed = 1;
            kept[n++] = s;
        } else {
            lo = s.lo < lo ? s.lo : lo;
            hi = s.hi > hi ? s.hi : hi;
        }
    }
    if (!placed) kept[n++] = (ferry__fs_span_t){lo, hi};
    for (int i = 0; i < n; i++) r->leases[i] = kept[i];
    r->nleases = n;
}

/* Unmarks the parts of [lo, hi) that no lease covers (the rest stays marked). */
static void unmark_unleased(ferry__fs_file_t *f, MPI_Offset lo, MPI_Offset hi)
{
    const ferry__fs_ranges_t *r = f->ranges;
    MPI_Offset at = lo;
    for (int i = 0; i < r->nleases && at < hi; i++) {
        if (r->leases[i].hi <= at) continue;
        if (r->leases[i].lo >= hi) break;
        if (r->leases[i].lo > at) (void)f->ops->unlock(f, FERRY_FS_LEASE_BASE + at, r->leases[i].lo - at);
        at = r->leases[i].hi;
    }
    if (at < hi) (void)f->ops->unlock(f, FERRY_FS_LEASE_BASE + at, hi - at);
}

/* Under the mutex: leases [lo, hi) rounded out to granules (all of the file
 * below the base once the table is full). 1 when granted. */
static int take_lease(ferry__fs_file_t *f, MPI_Offset lo, MPI_Offset hi)
{
    ferry__fs_ranges_t *r = f->ranges;
    MPI_Offset a = round_down(lo), b = round_up(hi);
    if (r->nleases == FERRY_FS_MAX_LEASES) a = 0, b = FERRY_FS_LEASE_BASE;
    if (f->ops->lock(f, FERRY_FS_LEASE_BASE + a, b - a, FERRY_FS_LOCK_MARK) != 0) {
        r->unavailable = 1; /* and the write locks, or learns that the file system refuses locks */
        return 0;
    }
    r->marked = 1;
    int busy = 1;
    if (f->ops->probe(f, a, b - a, FERRY_FS_LOCK_READ, &busy) != 0) r->unavailable = 1;
    if (busy) {
        unmark_unleased(f, a, b);
        r->skip = r->backoff;
        r->backoff = r->backoff < MAX_BACKOFF ? 2 * r->backoff + 1 : MAX_BACKOFF;
        return 0;
    }
    if (r->nleases == FERRY_FS_MAX_LEASES) r->nleases = 0;
    add_lease(r, a, b);
    r->backoff = 0;
    return 1;
}

/* 1 when the write [lo, hi) goes lock-free: counted in flight until unguarded. */
static int write_under_lease(ferry__fs_file_t *f, MPI_Offset lo, MPI_Offset hi)
{
    ferry__fs_ranges_t *r = f->ranges;
    if (hi > FERRY_FS_LEASE_BASE) return 0;
    pthread_mutex_lock(&r->mutex);
    int go = leased(r, lo, hi);
    if (!go && f->readable && !r->unavailable && r->barred == 0 && r->count == 0) {
        if (r->skip > 0) r->skip--;
        else go = take_lease(f, lo, hi);
    }
    if (go) r->lock_free_writes++;
    pthread_mutex_unlock(&r->mutex);
    return go;
}

int ferry__fs_guard_write(ferry__fs_file_t *f, MPI_Offset off, MPI_Offset len, ferry__fs_guard_t *guard)
{
    *guard = (ferry__fs_guard_t){FERRY_FS_GUARD_NONE, off, len};
    if (len <= 0) return 0;
    if (write_under_lease(f, off, off + len)) {
        guard->how = FERRY_FS_GUARD_LEASE;
        return 0;
    }
    FERRY_TRY(ferry__fs_lock(f, off, len, f->readable ? FERRY_FS_LOCK_READ : FERRY_FS_LOCK_WRITE));
    guard->how = FERRY_FS_GUARD_LOCK;
    return 0;
}

int ferry__fs_unguard_write(ferry__fs_file_t *f, ferry__fs_guard_t *guard)
{
    int how = guard->how;
    guard->how = FERRY_FS_GUARD_NONE;
    if (how == FERRY_FS_GUARD_LOCK) return ferry__fs_unlock(f, guard->offset, guard->len);
    if (how != FERRY_FS_GUARD_LEASE) return 0;
    ferry__fs_ranges_t *r = f->ranges;
    pthread_mutex_lock(&r->mutex);
    if (--r->lock_free_writes == 0) pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->mutex);
    return 0;
}

int ferry__fs_lock_rmw(ferry__fs_file_t *f, MPI_Offset off, MPI_Offset len, int *leased_elsewhere)
{
    *leased_elsewhere = 0;
    FERRY_TRY(ferry__fs_lock(f, off, len, FERRY_FS_LOCK_WRITE));
    if (off >= FERRY_FS_LEASE_BASE || len <= 0) return 0;
    MPI_Offset end = len > FERRY_FS_LEASE_BASE - off ? FERRY_FS_LEASE_BASE : off + len;
    int held = 1;
    /* A probe that fails counts as a lease: writing pieces is always safe. */
    if (f->ops->probe(f, FERRY_FS_LEASE_BASE + off, end - off, FERRY_FS_LOCK_WRITE, &held) != 0) held = 1;
    *leased_elsewhere = held;
    return 0;
}

void ferry__fs_leases_drop_locked(ferry__fs_file_t *f)
{
    ferry__fs_ranges_t *r = f->ranges;
    r->nleases = 0;
    r->barred++;
    while (r->lock_free_writes > 0) pthread_cond_wait(&r->changed, &r->mutex);
    /* A mark that cannot be removed only makes other opens write pieces until close. */
    if (r->marked) (void)f->ops->unlock(f, FERRY_FS_LEASE_BASE, 0);
    r->marked = 0;
    r->barred--;
}

void ferry__fs_leases_pause(ferry__fs_file_t *f)
{
    ferry__fs_ranges_t *r = f->ranges;
    pthread_mutex_lock(&r->mutex);
    r->barred++;
    ferry__fs_leases_drop_locked(f);
    pthread_mutex_unlock(&r->mutex);
}

void ferry__fs_leases_resume(ferry__fs_file_t *f)
{
    ferry__fs_ranges_t *r = f->ranges;
    pthread_mutex_lock(&r->mutex);
    r->barred--;
    pthread_mutex_unlock(&r->mutex);
}

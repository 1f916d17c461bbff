/*
 * fs: file systems behind one table of primitives.
 *
 * A driver implements ferry__fs_ops_t; nothing above this module asks which
 * file system it is on. Every primitive returns 0 or an MPI error class with
 * the message recorded (operation, path, OS error): errno becomes a class
 * here and nowhere else. Transfers loop over partial results and EINTR, so
 * callers see a transfer either complete, stopped at end of file (reads), or
 * failed.
 */
#ifndef FERRY_FS_H
#define FERRY_FS_H

#include <stddef.h>

#include "ferry.h"
#include "stats/stats.h"

enum {
    FERRY_FS_READ = 1 << 0,
    FERRY_FS_WRITE = 1 << 1,
    FERRY_FS_CREATE = 1 << 2,
    FERRY_FS_EXCL = 1 << 3,
};

typedef struct ferry__fs_layout {
    MPI_Offset block_size;  /* preferred transfer unit (st_blksize) */
    MPI_Offset stripe_size; /* bytes per storage target, block_size when unstriped */
    int stripe_count;       /* storage targets, 1 when unstriped */
    int memory_backed;      /* pages live in memory only (tmpfs): reading ahead gains nothing */
    int client_caches;      /* a network client's page cache: dropped at sync and locks, bypassed in locks */
    /* What a transfer costs here, for the cost models (coll/choose.c): seconds per file-system
     * call, per byte moved, per byte-range lock and unlock; 0 where unknown (the callers' defaults). */
    double call_seconds, byte_seconds, lock_seconds;
    char kind[64];          /* what the file system is, for get_info's ferry_fs_layout */
} ferry__fs_layout_t;

typedef struct ferry__fs_ops ferry__fs_ops_t;

/* Which layout code serves a file: what its name's prefix chose (names.c). */
enum {
    FERRY_FS_KIND_AUTO = 0,   /* no prefix: asked of the file system (statfs) */
    FERRY_FS_KIND_UNIX = 1,   /* "ufs:", "nfs:", ...: block size, one storage target */
    FERRY_FS_KIND_LUSTRE = 2, /* "lustre:": the Lustre layout, whatever statfs says */
};

/* A file name as ROMIO's users write it, resolved. */
typedef struct ferry__fs_name {
    const char *path; /* borrowed from the name: after its prefix, if any */
    int kind;         /* FERRY_FS_KIND_* */
} ferry__fs_name_t;

/* Splits a known file-system prefix off name ("lustre:/scratch/f") and
 * says which layout code it chose (names.c has the rules and the list).
 * Returns 0; MPI_ERR_NO_SUCH_FILE for "word:/..." where word is no prefix
 * ferry knows and no directory "word:" exists; MPI_ERR_IO for a prefix of
 * a file system ferry cannot reach through POSIX paths (daos:, ime:,
 * quobyte:); MPI_ERR_BAD_FILE for a prefix alone. `op` names the call in
 * the message. Not collective. */
int ferry__fs_resolve(const char *name, const char *op, ferry__fs_name_t *out);

/* Drivers embed this as their first member. */
typedef struct ferry__fs_file {
    const ferry__fs_ops_t *ops;
    char *path;                      /* owned, for messages */
    struct ferry__fs_ranges *ranges; /* ranges locked by this process's threads (ranges.c) and leases (lease.c),
                                      * set by ferry__fs_open */
    int readable;                    /* opened for reading (shared locks need it), set by ferry__fs_open */
    int kind;                        /* FERRY_FS_KIND_*, set by ferry__fs_open from the name's prefix */
} ferry__fs_file_t;

struct ferry__fs_ops {
    const char *name;
    int (*open)(const char *path, int flags, ferry__fs_file_t **file);
    int (*close)(ferry__fs_file_t *file);
    int (*remove)(const char *path);
    /* Reads up to len bytes; *done < len only at end of file. */
    int (*pread)(ferry__fs_file_t *file, void *buf, size_t len, MPI_Offset offset, size_t *done);
    int (*pwrite)(ferry__fs_file_t *file, const void *buf, size_t len, MPI_Offset offset);
    int (*sync)(ferry__fs_file_t *file);
    int (*resize)(ferry__fs_file_t *file, MPI_Offset size);
    /* Makes sure blocks exist up to size; never shrinks. */
    int (*allocate)(ferry__fs_file_t *file, MPI_Offset size);
    int (*size)(ferry__fs_file_t *file, MPI_Offset *size);
    int (*layout)(ferry__fs_file_t *file, ferry__fs_layout_t *layout);
    /* Byte-range lock of [offset, offset + len), exclusive (FERRY_FS_LOCK_WRITE)
     * or shared with other readers (FERRY_FS_LOCK_READ, needs a readable
     * file), waiting for it. MPI_ERR_UNSUPPORTED_OPERATION when the file
     * system refuses locks. Locks of one open file merge: unlocking a range
     * releases it whatever lock covered it. */
    int (*lock)(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset len, int mode);
    int (*unlock)(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset len);
    /* *held = 1 when another open file holds a lock on part of [offset,
     * offset + len) that a lock of `mode` would wait for (this open file's
     * own locks never count). MPI_ERR_UNSUPPORTED_OPERATION when the file
     * system cannot tell. */
    int (*probe)(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset len, int mode, int *held);
    /* Tells the kernel what [offset, offset + len) is about to see (WILLNEED:
     * read soon; DONTNEED: done with it; WRITEBACK: start writing its dirty
     * pages to storage now, without waiting); advisory, never fails. */
    void (*advise)(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset len, int advice);
    /* The first stretch of data at or after `offset`, [*start, *end): the
     * bytes between are file-system holes, which read as zeros (*start is
     * INT64_MAX when no data follows; [offset, INT64_MAX) when the file
     * system cannot tell). Lets a locked read-modify-write skip reading
     * holes. Never fails. */
    void (*data_region)(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset *start, MPI_Offset *end);
};

enum { FERRY_FS_WILLNEED = 1, FERRY_FS_DONTNEED = 2, FERRY_FS_WRITEBACK = 3 };
/* MARK: shared, on bytes that hold no data (lease.c's marks): nothing to read fresh under it. */
enum { FERRY_FS_LOCK_WRITE = 0, FERRY_FS_LOCK_READ = 1, FERRY_FS_LOCK_MARK = 2 };

/* get_info's keys for a file's layout: ferry_fs_layout (what the file
 * system is), ferry_fs_block_size, ferry_fs_stripe_size,
 * ferry_fs_stripe_count, ferry_fs_client_cache. 0 or MPI_ERR_INFO. */
int ferry__fs_layout_report(const ferry__fs_layout_t *layout, MPI_Info info);

/* The driver for a path (POSIX for now). Borrowed, static. */
const ferry__fs_ops_t *ferry__fs_driver_for(const char *path);

/* Opens the file `name` (a path, or a prefix and a path: ferry__fs_resolve)
 * with the driver for it; *file is owned, freed by ferry__fs_close. */
int ferry__fs_open(const char *name, int flags, ferry__fs_file_t **file);
int ferry__fs_close(ferry__fs_file_t *file);
/* Removes the file `name` (prefixes as in ferry__fs_open). */
int ferry__fs_remove(const char *name);

/* Transfers through the driver, counted into stats (NULL: not counted): the
 * caller names the counters, so a background request counts into its own. */
static inline int ferry__fs_pread(ferry__fs_file_t *f, ferry__stats_t *stats, void *buf, size_t len, MPI_Offset off,
                                  size_t *done)
{
    double start = ferry__stats_clock();
    int rc = f->ops->pread(f, buf, len, off, done);
    ferry__stats_fs_transfer(stats, 0, rc == 0 ? (long long)*done : 0, start);
    return rc;
}
static inline int ferry__fs_pwrite(ferry__fs_file_t *f, ferry__stats_t *stats, const void *buf, size_t len,
                                   MPI_Offset off)
{
    double start = ferry__stats_clock();
    int rc = f->ops->pwrite(f, buf, len, off);
    ferry__stats_fs_transfer(stats, 1, rc == 0 ? (long long)len : 0, start);
    return rc;
}
/* Ends this open file's leases (below), then syncs: after MPI's point of
 * consistency between opens, other opens read-modify-write freely again. */
int ferry__fs_sync(ferry__fs_file_t *f);
static inline int ferry__fs_resize(ferry__fs_file_t *f, MPI_Offset size) { return f->ops->resize(f, size); }
static inline int ferry__fs_allocate(ferry__fs_file_t *f, MPI_Offset size) { return f->ops->allocate(f, size); }
static inline int ferry__fs_size(ferry__fs_file_t *f, MPI_Offset *size) { return f->ops->size(f, size); }
static inline int ferry__fs_layout(ferry__fs_file_t *f, ferry__fs_layout_t *l) { return f->ops->layout(f, l); }
/* The driver's lock, which also excludes the other threads of this process
 * (ranges.c: kernel locks belong to the open file, not the thread): waits
 * while another thread holds an overlapping range. A thread holds at most
 * one range of a file at a time. */
int ferry__fs_lock(ferry__fs_file_t *f, MPI_Offset off, MPI_Offset len, int mode);
int ferry__fs_unlock(ferry__fs_file_t *f, MPI_Offset off, MPI_Offset len);

/* Read-modify-writes and the writes around them (lease.c; docs/indep.md).
 *
 * A read-modify-write (data sieving, a two-phase window with holes) must
 * not rewrite a hole that another writer fills meanwhile. It takes
 * ferry__fs_lock_rmw: the exclusive lock of ferry__fs_lock, and *leased = 1
 * when another open file holds a lease on part of the range (the lock is
 * held either way): then it must not rewrite holes, only write its pieces.
 *
 * A plain write (one that writes only its own bytes) is guarded by
 * ferry__fs_guard_write: under a lease of this open file, which takes no
 * system call once granted, or else a shared lock on its range, which a
 * read-modify-write's exclusive lock waits for. A lease is a shared lock on
 * a mirror of the data range past FERRY_FS_LEASE_BASE, where no data lie:
 * read-modify-writes look for leases there, leases look for
 * read-modify-writes' locks in the data, each after taking its own, so at
 * least one of two racing sees the other and yields. Leases last until
 * this open file's next exclusive lock, ferry__fs_leases_pause, sync or
 * close. 0, or an error class; a file system that refuses locks gives
 * MPI_ERR_UNSUPPORTED_OPERATION and nothing is held (how = NONE). */
#define FERRY_FS_LEASE_BASE ((MPI_Offset)1 << 62) /* data past 4 EiB are not guarded */
typedef struct ferry__fs_guard {
    enum { FERRY_FS_GUARD_NONE, FERRY_FS_GUARD_LEASE, FERRY_FS_GUARD_LOCK } how;
    MPI_Offset offset, len;
} ferry__fs_guard_t;
int ferry__fs_guard_write(ferry__fs_file_t *f, MPI_Offset off, MPI_Offset len, ferry__fs_guard_t *guard);
int ferry__fs_unguard_write(ferry__fs_file_t *f, ferry__fs_guard_t *guard);
int ferry__fs_lock_rmw(ferry__fs_file_t *f, MPI_Offset off, MPI_Offset len, int *leased);
/* While paused (nested), this open file holds no lease and takes none: a
 * collective write, in which other ranks may read-modify-write what this
 * rank's other threads write, pauses from before its first exchange to
 * after its agreement. pause waits for lock-free writes in flight. */
void ferry__fs_leases_pause(ferry__fs_file_t *f);
void ferry__fs_leases_resume(ferry__fs_file_t *f);
static inline void ferry__fs_advise(ferry__fs_file_t *f, MPI_Offset off, MPI_Offset len, int advice)
{
    f->ops->advise(f, off, len, advice);
}
static inline void ferry__fs_data_region(ferry__fs_file_t *f, MPI_Offset off, MPI_Offset *start, MPI_Offset *end)
{
    f->ops->data_region(f, off, start, end);
}

/* The one errno -> MPI error class mapping. */
int ferry__fs_errno_class(int err);

extern const ferry__fs_ops_t ferry__fs_posix;

/* Test hooks (fault.c): arm the fault injector with a spec (syntax in
 * fault.c, same as the FERRY_FAULT environment variable) or disarm it.
 * Not thread-safe against I/O in flight; call between operations. */
int ferry__fs_fault_arm(const char *spec);
void ferry__fs_fault_disarm(void);
/* Test hook (coherence.c): files opened from now on are treated as on a
 * client that caches what other nodes change (1), or as statfs says (0). */
void ferry__fs_assume_caching_client(int on);

#endif

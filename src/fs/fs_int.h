/*
 * Shared by the fs module's own files only.
 *
 * The POSIX driver makes every system call through a table of function
 * pointers with up to two layers under it, always in this order:
 *
 *     posix.c -> tracing (trace_layer.c) -> fault injection (fault.c) -> the kernel
 *
 * so injected errors, short transfers and interruptions go through the
 * very loop that handles real ones, and the trace sees them as the driver
 * does. ferry__fs_layers_rebuild() recomputes the tables from the layers
 * that are on.
 */
#ifndef FERRY_FS_INT_H
#define FERRY_FS_INT_H

#include <fcntl.h>
#include <pthread.h>
#include <sys/types.h>

#include "fs/fs.h"

/* The syscall table's advise takes posix_fadvise's advice values and this
 * one, outside their range: start writeback of the range (sync_file_range). */
enum { FERRY_POSIX_WRITEBACK = 0x100 };

typedef struct ferry__posix_syscalls {
    int (*open)(const char *path, int flags, mode_t mode);
    ssize_t (*pread)(int fd, void *buf, size_t len, off_t offset);
    ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t offset);
    int (*fsync)(int fd);
    int (*ftruncate)(int fd, off_t size);
    int (*fallocate)(int fd, off_t offset, off_t len); /* returns an errno, like posix_fallocate */
    int (*unlink)(const char *path);
    int (*lock)(int fd, int cmd, struct flock *lock); /* fcntl with a struct flock */
    int (*advise)(int fd, off_t offset, off_t len, int advice); /* returns an errno, like posix_fadvise */
    off_t (*seek)(int fd, off_t offset, int whence);            /* lseek (SEEK_DATA, SEEK_HOLE) */
} ferry__posix_syscalls_t;

/* What posix.c calls: the top layer. */
extern ferry__posix_syscalls_t ferry__posix_syscalls;
/* What the tracing layer calls: fault injection or the real calls. */
extern ferry__posix_syscalls_t ferry__posix_below_trace;
/* The real system calls. */
extern const ferry__posix_syscalls_t ferry__posix_real_syscalls;
/* The layers' own tables. */
extern const ferry__posix_syscalls_t ferry__posix_fault_syscalls;
extern const ferry__posix_syscalls_t ferry__posix_trace_syscalls;

/* What this process's threads hold on one open file, under one mutex:
 * byte-range locks (ranges.c) and leases (lease.c). */
enum { FERRY_FS_MAX_LEASES = 64 };
typedef struct ferry__fs_span {
    MPI_Offset lo, hi;
} ferry__fs_span_t;
typedef struct ferry__fs_ranges {
    pthread_mutex_t mutex;
    pthread_cond_t changed; /* a range was given back, or the last lock-free write ended */
    ferry__fs_span_t *held; /* ranges locked by this process's threads */
    int count, room;
    ferry__fs_span_t leases[FERRY_FS_MAX_LEASES]; /* data ranges written without locks: sorted, disjoint */
    int nleases;
    int marked;           /* the kernel holds marks of this open file (some may outlive a dropped lease) */
    int lock_free_writes; /* in flight under the leases */
    int barred;           /* reasons no lease may be taken now: an exclusive lock being taken, collective
                           * writes in flight (ferry__fs_leases_pause), leases being dropped */
    int unavailable;      /* this open file takes no leases: write-only, no open-file-description locks, or a
                           * mark or probe failed */
    int backoff, skip;    /* after a lease was declined: guarded writes that lock before the next try */
} ferry__fs_ranges_t;

/* ranges.c: take waits while another thread holds an overlapping range (0
 * or MPI_ERR_NO_MEM); for an exclusive lock (drop_leases) it first ends
 * this open file's leases (lease.c), whose lock-free writes could land in
 * the holes of this thread's read-modify-write. give releases a range
 * taken with the same offset and length. */
ferry__fs_ranges_t *ferry__fs_ranges_create(void);
void ferry__fs_ranges_free(ferry__fs_ranges_t *ranges);
int ferry__fs_ranges_take(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset len, int drop_leases);
void ferry__fs_ranges_give(ferry__fs_ranges_t *ranges, MPI_Offset offset, MPI_Offset len);

/* lease.c: under ranges->mutex, ends file's leases: none is taken meanwhile,
 * the lock-free writes in flight finish, then the marks go. */
void ferry__fs_leases_drop_locked(ferry__fs_file_t *file);

/* coherence.c: whether fd's file is on a client that caches pages which
 * other nodes' writes do not invalidate (FUSE, NFS, SMB, 9P); dropping this
 * client's cached pages of a range (len 0: to the end of the file), so the
 * next read asks the server. */
int ferry__fs_client_caches(int fd);
void ferry__fs_drop_cached(int fd, MPI_Offset offset, MPI_Offset len);
/* coherence.c: the file's size as its server has it (the client's own may
 * lag another node's writes); -1 when the call fails. */
MPI_Offset ferry__fs_server_size(int fd);

/* layouts.c: refines a layout from what Lustre (its ioctl: on Lustre, or
 * always for FERRY_FS_KIND_LUSTRE, a "lustre:" name) or a GlusterFS client
 * (its .meta graph) says about the file; unchanged otherwise. */
void ferry__fs_network_layout(int fd, const char *path, int kind, ferry__fs_layout_t *layout);

/* Recomputes ferry__posix_syscalls and ferry__posix_below_trace. */
void ferry__fs_layers_rebuild(int fault_armed);

/* Reads FERRY_FAULT and FERRY_TRACE once (first open) and turns layers on. */
void ferry__fs_layers_from_environment(void);

#endif

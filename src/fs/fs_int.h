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

/* ranges.c: the ranges this process's threads hold on one open file. take
 * waits while another thread holds an overlapping range (0 or
 * MPI_ERR_NO_MEM); give releases a range taken with the same arguments. */
typedef struct ferry__fs_ranges ferry__fs_ranges_t;
ferry__fs_ranges_t *ferry__fs_ranges_create(void);
void ferry__fs_ranges_free(ferry__fs_ranges_t *ranges);
int ferry__fs_ranges_take(ferry__fs_ranges_t *ranges, MPI_Offset offset, MPI_Offset len);
void ferry__fs_ranges_give(ferry__fs_ranges_t *ranges, MPI_Offset offset, MPI_Offset len);

/* coherence.c: whether fd's file is on a client that caches pages which
 * other nodes' writes do not invalidate (FUSE, NFS, SMB, 9P); dropping this
 * client's cached pages of a range (len 0: to the end of the file), so the
 * next read asks the server. */
int ferry__fs_client_caches(int fd);
void ferry__fs_drop_cached(int fd, MPI_Offset offset, MPI_Offset len);

/* layouts.c: refines a layout from what Lustre (its ioctl: on Lustre, or
 * always for FERRY_FS_KIND_LUSTRE, a "lustre:" name) or a GlusterFS client
 * (its .meta graph) says about the file; unchanged otherwise. */
void ferry__fs_network_layout(int fd, const char *path, int kind, ferry__fs_layout_t *layout);

/* Recomputes ferry__posix_syscalls and ferry__posix_below_trace. */
void ferry__fs_layers_rebuild(int fault_armed);

/* Reads FERRY_FAULT and FERRY_TRACE once (first open) and turns layers on. */
void ferry__fs_layers_from_environment(void);

#endif

/*
 * Shared by the fs module's own files only.
 *
 * The POSIX driver makes every system call through posix_syscalls, a table
 * the fault injector (fault.c) may redirect, so injected errors, short
 * transfers and interruptions go through the very loop that handles the
 * real ones.
 */
#ifndef FERRY_FS_INT_H
#define FERRY_FS_INT_H

#include <sys/types.h>

#include "fs/fs.h"

typedef struct ferry__posix_syscalls {
    int (*open)(const char *path, int flags, mode_t mode);
    ssize_t (*pread)(int fd, void *buf, size_t len, off_t offset);
    ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t offset);
    int (*fsync)(int fd);
    int (*ftruncate)(int fd, off_t size);
    int (*fallocate)(int fd, off_t offset, off_t len); /* returns an errno, like posix_fallocate */
    int (*unlink)(const char *path);
} ferry__posix_syscalls_t;

/* The table in use; the fault injector swaps entries. */
extern ferry__posix_syscalls_t ferry__posix_syscalls;
/* The real system calls. */
extern const ferry__posix_syscalls_t ferry__posix_real_syscalls;

/* Reads FERRY_FAULT once (first open) and arms the injector from it. */
void ferry__fs_fault_from_environment(void);

#endif

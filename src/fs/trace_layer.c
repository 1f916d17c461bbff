/*
 * The tracing layer: records every system call of the POSIX driver with its
 * arguments, result, errno and duration (FERRY_TRACE=all), and the layer
 * bookkeeping shared with fault.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "error/error.h"
#include "fs/fs_int.h"
#include "trace/trace.h"

static int tracing;

void ferry__fs_layers_rebuild(int fault_armed)
{
    ferry__posix_below_trace = fault_armed ? ferry__posix_fault_syscalls : ferry__posix_real_syscalls;
    ferry__posix_syscalls = tracing ? ferry__posix_trace_syscalls : ferry__posix_below_trace;
}

static void layers_from_environment(void)
{
    tracing = ferry__trace_level() >= FERRY_TRACE_ALL;
    const char *spec = getenv("FERRY_FAULT");
    if (spec && *spec) {
        if (ferry__fs_fault_arm(spec) != 0) fprintf(stderr, "%s\n", ferry__error_message());
    } else {
        ferry__fs_layers_rebuild(0);
    }
}

void ferry__fs_layers_from_environment(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, layers_from_environment);
}

/* Records a finished call that started at `start`; keeps the call's errno
 * for the caller and returns its result. */
static long long record(const char *op, int fd, const char *path, off_t offset, size_t len, long long result,
                        double start)
{
    int err = result < 0 ? errno : 0;
    ferry__trace_call(op, fd, path, offset, len, result, err, ferry__trace_now() - start);
    errno = err;
    return result;
}

static int trace_open(const char *path, int flags, mode_t mode)
{
    double start = ferry__trace_now();
    return (int)record("open", -1, path, 0, 0, ferry__posix_below_trace.open(path, flags, mode), start);
}

static ssize_t trace_pread(int fd, void *buf, size_t len, off_t offset)
{
    if (!ferry__trace_wants_range(offset, len)) return ferry__posix_below_trace.pread(fd, buf, len, offset);
    double start = ferry__trace_now();
    return (ssize_t)record("pread", fd, NULL, offset, len, ferry__posix_below_trace.pread(fd, buf, len, offset), start);
}

static ssize_t trace_pwrite(int fd, const void *buf, size_t len, off_t offset)
{
    if (!ferry__trace_wants_range(offset, len)) return ferry__posix_below_trace.pwrite(fd, buf, len, offset);
    double start = ferry__trace_now();
    return (ssize_t)record("pwrite", fd, NULL, offset, len, ferry__posix_below_trace.pwrite(fd, buf, len, offset),
                           start);
}

static int trace_fsync(int fd)
{
    double start = ferry__trace_now();
    return (int)record("fsync", fd, NULL, 0, 0, ferry__posix_below_trace.fsync(fd), start);
}

static int trace_ftruncate(int fd, off_t size)
{
    double start = ferry__trace_now();
    return (int)record("ftruncate", fd, NULL, size, 0, ferry__posix_below_trace.ftruncate(fd, size), start);
}

static int trace_fallocate(int fd, off_t offset, off_t len)
{
    /* posix_fallocate returns its errno instead of setting it. */
    double start = ferry__trace_now();
    int err = ferry__posix_below_trace.fallocate(fd, offset, len);
    ferry__trace_call("fallocate", fd, NULL, offset, (size_t)len, err ? -1 : 0, err, ferry__trace_now() - start);
    return err;
}

static int trace_unlink(const char *path)
{
    double start = ferry__trace_now();
    return (int)record("unlink", -1, path, 0, 0, ferry__posix_below_trace.unlink(path), start);
}

static int trace_lock(int fd, int cmd, struct flock *lock)
{
    double start = ferry__trace_now();
#ifdef F_OFD_GETLK
    int probe = cmd == F_OFD_GETLK;
#else
    int probe = cmd == F_GETLK;
#endif
    const char *op = probe ? "probe_lock" : lock->l_type == F_UNLCK ? "unlock" : "lock";
    return (int)record(op, fd, NULL, lock->l_start, (size_t)lock->l_len, ferry__posix_below_trace.lock(fd, cmd, lock),
                       start);
}

static int trace_advise(int fd, off_t offset, off_t len, int advice)
{
    double start = ferry__trace_now();
    int err = ferry__posix_below_trace.advise(fd, offset, len, advice);
    const char *op = advice == POSIX_FADV_WILLNEED    ? "willneed"
                     : advice == FERRY_POSIX_WRITEBACK ? "writeback"
                                                       : "dontneed";
    ferry__trace_call(op, fd, NULL, offset, (size_t)len, err ? -1 : 0, err, ferry__trace_now() - start);
    return err;
}

static off_t trace_seek(int fd, off_t offset, int whence)
{
    double start = ferry__trace_now();
    const char *op = whence == SEEK_HOLE ? "seek_hole" : "seek_data";
    return (off_t)record(op, fd, NULL, offset, 0, ferry__posix_below_trace.seek(fd, offset, whence), start);
}

const ferry__posix_syscalls_t ferry__posix_trace_syscalls = {
    trace_open,      trace_pread,  trace_pwrite, trace_fsync,  trace_ftruncate,
    trace_fallocate, trace_unlink, trace_lock,   trace_advise, trace_seek,
};

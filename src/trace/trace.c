/*
 * The trace file writer. Lines are formatted in a local buffer and written
 * with one write(2), so concurrent threads never interleave within a line.
 */
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/process.h"
#include "error/error.h"

static pthread_once_t configure_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;
static ferry__trace_level_t level;
static MPI_Offset trace_from;
static int trace_fd = -1;
static int open_failed;

static void configure(void)
{
    const char *what = getenv("FERRY_TRACE");
    if (what && !strcmp(what, "all")) level = FERRY_TRACE_ALL;
    else if (what && !strcmp(what, "errors")) level = FERRY_TRACE_ERRORS;
    const char *from = getenv("FERRY_TRACE_FROM");
    if (from) trace_from = strtoll(from, NULL, 10);
}

ferry__trace_level_t ferry__trace_level(void)
{
    pthread_once(&configure_once, configure);
    return level;
}

double ferry__trace_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int my_rank(void)
{
    int initialized = 0, finalized = 0, rank = -1;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* Opens the trace file on first use; called with file_lock held. */
static int ensure_open(void)
{
    if (trace_fd >= 0 || open_failed) return trace_fd >= 0;
    const char *dir = getenv("FERRY_TRACE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ferry-trace.%d.%ld.txt", dir && *dir ? dir : ".", my_rank(), (long)getpid());
    trace_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (trace_fd < 0) {
        open_failed = 1;
        fprintf(stderr, "ferry: cannot open trace file %s: %s\n", path, strerror(errno));
    } else {
        (void)ferry__process_at_finalize(ferry__trace_finalize); /* without MPI the exit closes it */
    }
    return trace_fd >= 0;
}

static void emit(const char *fmt, ...) FERRY_PRINTF(1, 2);
static void emit(const char *fmt, ...)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "t=%.6f\trank=%d\t", ferry__trace_now(), my_rank());
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    pthread_mutex_lock(&file_lock);
    if (ensure_open() && write(trace_fd, line, (size_t)n) < 0) open_failed = 1;
    pthread_mutex_unlock(&file_lock);
}

/* Messages go last on the line and lose tabs and newlines. */
static void flatten(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src && src[i] && i + 1 < cap; i++) dst[i] = (src[i] == '\t' || src[i] == '\n') ? ' ' : src[i];
    dst[i] = '\0';
}

void ferry__trace_error(int cls, int code, const char *message)
{
    if (ferry__trace_level() < FERRY_TRACE_ERRORS) return;
    char flat[1100];
    flatten(flat, sizeof flat, message);
    emit("kind=error\tclass=%s\tcode=%d\tmessage=%s", ferry__error_class_name(cls), code, flat);
}

int ferry__trace_wants_range(MPI_Offset offset, size_t len)
{
    return offset + (MPI_Offset)len > trace_from;
}

void ferry__trace_call(const char *op, int fd, const char *path, MPI_Offset offset, size_t len, long long result,
                       int err, double seconds)
{
    if (ferry__trace_level() < FERRY_TRACE_ALL) return;
    char flat[1100];
    flatten(flat, sizeof flat, path ? path : "");
    emit("kind=call\top=%s\tfd=%d\toffset=%lld\tlen=%zu\tresult=%lld\terrno=%d\tus=%.1f\tpath=%s", op, fd,
         (long long)offset, len, result, err, seconds * 1e6, flat);
}

void ferry__trace_finalize(void)
{
    pthread_mutex_lock(&file_lock);
    if (trace_fd >= 0) close(trace_fd);
    trace_fd = -1;
    pthread_mutex_unlock(&file_lock);
}

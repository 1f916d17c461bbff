/*
 * Byte-range locks between the threads of one process.
 *
 * The kernel's byte-range locks (fcntl open-file-description locks) belong
 * to an open file, not to a thread: two threads that lock overlapping
 * ranges through one descriptor both succeed at once, and the first unlock
 * releases the other's range too. Yet one rank's file is written by several
 * threads: the file's collective lane (whose aggregator read-modify-writes
 * windows with holes) beside the application thread and the pool's
 * independent requests. So ferry__fs_lock takes its range here first,
 * waiting while another thread of this process holds an overlapping range,
 * and only then in the kernel; ferry__fs_unlock releases the kernel lock,
 * then the range here. Ranges held here are exclusive whatever the kernel
 * mode (shared kernel locks of one process would merge anyway). A thread
 * holds at most one range of a file at a time and never waits for another
 * rank while holding it, so waiting here cannot deadlock.
 */
#include <pthread.h>

#include "base/alloc.h"
#include "error/error.h"
#include "fs/fs_int.h"

ferry__fs_ranges_t *ferry__fs_ranges_create(void)
{
    ferry__fs_ranges_t *r = ferry__calloc(1, sizeof *r);
    if (!r) return NULL;
    pthread_mutex_init(&r->mutex, NULL);
    pthread_cond_init(&r->changed, NULL);
    return r;
}

void ferry__fs_ranges_free(ferry__fs_ranges_t *r)
{
    if (!r) return;
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->mutex);
    ferry__free(r->held);
    ferry__free(r);
}

static int overlaps_held(const ferry__fs_ranges_t *r, MPI_Offset lo, MPI_Offset hi)
{
    for (int i = 0; i < r->count; i++)
        if (r->held[i].lo < hi && lo < r->held[i].hi) return 1;
    return 0;
}

static int make_room(ferry__fs_ranges_t *r)
{
    if (r->count < r->room) return 0;
    int room = r->room ? 2 * r->room : 8;
    ferry__fs_span_t *grown = ferry__realloc(r->held, (size_t)room * sizeof *grown);
    if (!grown) return MPI_ERR_NO_MEM;
    r->held = grown;
    r->room = room;
    return 0;
}

int ferry__fs_ranges_take(ferry__fs_file_t *file, MPI_Offset lo, MPI_Offset len, int drop_leases)
{
    ferry__fs_ranges_t *r = file->ranges;
    MPI_Offset hi = len > INT64_MAX - lo ? INT64_MAX : lo + len;
    pthread_mutex_lock(&r->mutex);
    r->barred++; /* until the range is held, which bars leases by itself */
    if (drop_leases) ferry__fs_leases_drop_locked(file);
    while (overlaps_held(r, lo, hi)) pthread_cond_wait(&r->changed, &r->mutex);
    int rc = make_room(r);
    if (rc == 0) r->held[r->count++] = (ferry__fs_span_t){lo, hi};
    r->barred--;
    pthread_mutex_unlock(&r->mutex);
    return rc ? ferry__error_set(rc, "ferry: lock: out of memory for a byte-range lock") : 0;
}

void ferry__fs_ranges_give(ferry__fs_ranges_t *r, MPI_Offset lo, MPI_Offset len)
{
    MPI_Offset hi = len > INT64_MAX - lo ? INT64_MAX : lo + len;
    pthread_mutex_lock(&r->mutex);
    for (int i = 0; i < r->count; i++) {
        if (r->held[i].lo != lo || r->held[i].hi != hi) continue;
        r->held[i] = r->held[--r->count];
        break;
    }
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->mutex);
}

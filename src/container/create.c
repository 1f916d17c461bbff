/*
 * Serial creation of a one-file container (what `ferry-container defrag`
 * writes), and closing a serial set. Every stream is written unbuffered
 * through its own cursor, so the set holds O(streams + chunks) memory
 * whatever their number; closing flushes each stream's trailers, then
 * writes the end table and the completion record.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"

uint64_t ferry__container_new_id(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t z = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 40;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) | 1; /* never 0, which an all-zero record would carry */
}

uint64_t ferry__container_pick_block(MPI_Offset asked, const ferry__fs_layout_t *layout)
{
    uint64_t b = asked > 0 ? (uint64_t)asked : (uint64_t)layout->stripe_size;
    uint64_t p = FERRY__CONTAINER_MIN_BLOCK;
    while (p < b && p < (uint64_t)FERRY__CONTAINER_MAX_BLOCK) p <<= 1;
    return p;
}

int ferry__container_check_block(MPI_Offset block, const char *path)
{
    if (block == 0 || (block >= FERRY__CONTAINER_MIN_BLOCK && block <= FERRY__CONTAINER_MAX_BLOCK &&
                       (block & (block - 1)) == 0))
        return 0;
    return ferry__error_set(MPI_ERR_ARG, "ferry container '%s': block size %lld is not a power of two from 512 to "
                            "2^30", path, (long long)block);
}

static int check_layout(const char *path, const ferry_container_layout_t *layout)
{
    if (!layout || layout->streams < 1 || !layout->chunk_sizes)
        return ferry__error_set(MPI_ERR_ARG, "ferry_container_serial_create '%s': no streams", path);
    for (int t = 0; t < layout->streams; t++)
        if (layout->chunk_sizes[t] < 0)
            return ferry__error_set(MPI_ERR_ARG, "ferry_container_serial_create '%s': negative chunk size", path);
    return ferry__container_check_block(layout->block_size, path);
}

/* The one file's metadata, planned and written. */
static int write_new_file(ferry_container_set_t set, const ferry_container_layout_t *layout)
{
    ferry__container_file_t *f = &set->files[0];
    ferry__fs_layout_t fs_layout;
    FERRY_TRY(ferry__fs_open(set->path, FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, &f->fs));
    FERRY_TRY(ferry__fs_resize(f->fs, 0));
    FERRY_TRY(ferry__fs_layout(f->fs, &fs_layout));
    ferry__container_super_t *s = &f->super;
    s->id = ferry__container_new_id();
    s->file_count = 1;
    s->streams = s->local_streams = (uint32_t)layout->streams;
    s->block_size = ferry__container_pick_block(layout->block_size, &fs_layout);
    s->flags = layout->data_checksums ? FERRY__CONTAINER_FLAG_CHECKSUMS : 0;
    for (uint32_t t = 0; t < s->local_streams; t++)
        f->entries[t] = (ferry__container_entry_t){t, 0, 0, (uint64_t)layout->chunk_sizes[t]};
    FERRY_TRY(ferry__container_plan(s, f->entries, set->path));
    return ferry__container_write_header(f->fs, s, f->entries);
}

static int start_writers(ferry_container_set_t set)
{
    ferry__container_file_t *f = &set->files[0];
    for (uint32_t t = 0; t < set->streams; t++) {
        set->file_of[t] = 0;
        set->local_of[t] = t;
        ferry__container_stream_init_t init = {
            .fs = f->fs, .id = f->super.id, .stream = t, .geo = ferry__container_file_geometry(f, t),
            .writing = 1, .checksums = (f->super.flags & FERRY__CONTAINER_FLAG_CHECKSUMS) != 0, .unbuffered = 1};
        FERRY_TRY(ferry__container_stream_init(&set->writers[t], &init));
    }
    return 0;
}

static int create_set(ferry_container_set_t set, const ferry_container_layout_t *layout)
{
    uint32_t n = (uint32_t)layout->streams;
    set->nfiles = 1;
    set->streams = n;
    set->creating = 1;
    set->reader_of = -1;
    set->files = ferry__calloc(1, sizeof *set->files);
    set->file_of = ferry__calloc(n, sizeof *set->file_of);
    set->local_of = ferry__calloc(n, sizeof *set->local_of);
    set->writers = ferry__calloc(n, sizeof *set->writers);
    if (!set->files || !set->file_of || !set->local_of || !set->writers)
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory for %u streams", set->path, n);
    set->files[0].entries = ferry__calloc(n, sizeof *set->files[0].entries);
    set->files[0].ends = ferry__calloc(n, sizeof *set->files[0].ends);
    if (!set->files[0].entries || !set->files[0].ends)
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory for %u streams", set->path, n);
    FERRY_TRY(write_new_file(set, layout));
    return start_writers(set);
}

int ferry_container_serial_create(const char *path, const ferry_container_layout_t *layout,
                                  ferry_container_set_t *out)
{
    if (!path || !out) return ferry__error_set(MPI_ERR_ARG, "ferry_container_serial_create: NULL argument");
    *out = NULL;
    FERRY_TRY(check_layout(path, layout));
    ferry_container_set_t set = ferry__calloc(1, sizeof *set);
    if (set) set->path = ferry__strdup(path);
    int cls = set && set->path ? create_set(set, layout)
                               : ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory", path);
    if (cls) {
        cls = ferry__container_fail(cls, path, -1, "ferry_container_serial_create");
        ferry__container_set_free(set);
        return cls;
    }
    *out = set;
    return 0;
}

int ferry_container_serial_write(ferry_container_set_t set, int stream, const void *buf, size_t len)
{
    if (!set || !set->creating || stream < 0 || (uint32_t)stream >= set->streams || (!buf && len))
        return ferry__error_set(MPI_ERR_ARG, "ferry_container_serial_write: not a set being created, no such "
                                "stream, or NULL buffer");
    size_t done = 0;
    int cls = ferry__container_stream_write(&set->writers[stream], buf, len, &done);
    return cls ? ferry__container_fail(cls, set->path, -1, "ferry_container_serial_write") : 0;
}

/* Every stream's trailers, then the end table and completion record, synced. */
static int finish_created(ferry_container_set_t set)
{
    ferry__container_file_t *f = &set->files[0];
    for (uint32_t t = 0; t < set->streams; t++) {
        FERRY_TRY(ferry__container_stream_flush(&set->writers[t], FERRY__CONTAINER_SYNC_LATER));
        f->ends[t].length = set->writers[t].length;
    }
    ferry__container_finish_t fin = {f->fs, &f->super, f->entries, f->ends, FERRY__CONTAINER_HOW_CLOSED, 1};
    FERRY_TRY(ferry__fs_sync(f->fs));
    return ferry__container_write_end(&fin);
}

int ferry_container_serial_close(ferry_container_set_t *set)
{
    if (!set || !*set) /* as ferry_container_close: a NULL set is a caller's mistake, not a no-op */
        return ferry__error_set(MPI_ERR_ARG, "ferry_container_serial_close: %s", set ? "no container" : "NULL argument");
    int cls = (*set)->creating ? finish_created(*set) : 0;
    if (cls) cls = ferry__container_fail(cls, (*set)->path, -1, "ferry_container_serial_close");
    ferry__container_set_free(*set);
    *set = NULL;
    return cls;
}

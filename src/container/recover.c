/*
 * Incomplete files: what their chunk trailers recorded, and rebuilding them
 * as complete ones (docs/format/container.md, Recovering). A writer's flush
 * puts its data in the file before the trailers that record its length, so
 * the trailer with the highest flush sequence names bytes that are there.
 */
#include <string.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"

/* The valid trailer of chunk b of local stream t, or 0 when there is none. */
static int trailer_of(ferry__container_file_t *f, uint32_t t, uint64_t b, ferry__container_trailer_t *tr)
{
    ferry__container_geometry_t g = ferry__container_file_geometry(f, t);
    if (ferry__container_trailer_at(&g, b) + FERRY__CONTAINER_TRAILER_SIZE > (uint64_t)f->size) return 0;
    return ferry__container_read_trailer(f->fs, &g, f->super.id, f->entries[t].stream, b, tr);
}

/* Rows whose chunk of stream t ends inside the file. */
static uint64_t rows_present(const ferry__container_file_t *f, uint32_t t)
{
    ferry__container_geometry_t g = ferry__container_file_geometry(f, t);
    uint64_t end = g.data_start + g.row_offset + g.chunk_size;
    return (uint64_t)f->size < end ? 0 : ((uint64_t)f->size - end) / g.row_size + 1;
}

/* Shortens length so that every byte of it lies inside the file. */
static uint64_t clamp_to_file(const ferry__container_file_t *f, uint32_t t, uint64_t length)
{
    ferry__container_geometry_t g = ferry__container_file_geometry(f, t);
    uint64_t cap = ferry__container_capacity(&g);
    while (length > 0) {
        uint64_t last = (length - 1) / cap, start = ferry__container_chunk_at(&g, last);
        if (start + (length - last * cap) <= (uint64_t)f->size) break;
        length = start < (uint64_t)f->size ? last * cap + ((uint64_t)f->size - start) : last * cap;
    }
    return length;
}

/* The length recorded by stream t's newest trailer. */
static uint64_t recorded_length(ferry__container_file_t *f, uint32_t t)
{
    ferry__container_trailer_t tr, best = {0};
    uint64_t rows = rows_present(f, t);
    for (uint64_t b = 0; b < rows; b++)
        if (trailer_of(f, t, b, &tr) && tr.seq > best.seq) best = tr;
    return clamp_to_file(f, t, best.length);
}

void ferry__container_scan(ferry__container_file_t *f)
{
    f->rows = 0;
    for (uint32_t t = 0; t < f->super.local_streams; t++) {
        ferry__container_geometry_t g = ferry__container_file_geometry(f, t);
        f->ends[t].length = recorded_length(f, t);
        f->ends[t].flags = 0;
        uint64_t chunks = ferry__container_chunks_for(&g, f->ends[t].length);
        if (chunks > f->rows) f->rows = chunks;
    }
}

/* Gives chunk b of stream t a trailer that records its used bytes, unless
 * it has one (flush sequence 1: the writers' sequence no longer matters once
 * the end table holds the lengths). */
static int fix_trailer(ferry__container_file_t *f, uint32_t t, uint64_t b, ferry__container_scratch_t *scratch)
{
    ferry__container_geometry_t g = ferry__container_file_geometry(f, t);
    uint64_t used = ferry__container_used_in(&g, f->ends[t].length, b);
    ferry__container_trailer_t tr;
    if (trailer_of(f, t, b, &tr) && tr.used == used) return 0;
    ferry__container_trailer_t fresh = {f->entries[t].stream, f->super.id, b, used, f->ends[t].length, 1, 0};
    if (f->super.flags & FERRY__CONTAINER_FLAG_CHECKSUMS)
        FERRY_TRY(ferry__container_chunk_crc(f->fs, &g, b, used, scratch, &fresh.data_crc));
    unsigned char raw[FERRY__CONTAINER_TRAILER_SIZE];
    ferry__container_encode_trailer(&fresh, raw);
    return ferry__fs_pwrite(f->fs, NULL, raw, sizeof raw, (MPI_Offset)ferry__container_trailer_at(&g, b));
}

/* Rewrites an incomplete, scanned, writable file as a complete one. */
static int complete_file(ferry__container_file_t *f, ferry__container_scratch_t *scratch)
{
    for (uint32_t t = 0; t < f->super.local_streams; t++) {
        ferry__container_geometry_t g = ferry__container_file_geometry(f, t);
        uint64_t chunks = ferry__container_chunks_for(&g, f->ends[t].length);
        for (uint64_t b = 0; b < chunks; b++) FERRY_TRY(fix_trailer(f, t, b, scratch));
    }
    ferry__container_finish_t fin = {f->fs, &f->super, f->entries, f->ends, FERRY__CONTAINER_HOW_RECOVERED, 1};
    FERRY_TRY(ferry__fs_sync(f->fs));
    return ferry__container_write_end(&fin);
}

static int recover_set(ferry_container_set_t set, MPI_Offset *bytes, int *was_complete)
{
    ferry__container_scratch_t scratch = {ferry__malloc((size_t)1 << 20), (size_t)1 << 20};
    if (!scratch.buf) return ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory", set->path);
    int cls = 0;
    *was_complete = set->complete;
    for (uint32_t k = 0; k < set->nfiles && !cls; k++) {
        ferry__container_file_t *f = &set->files[k];
        if (!f->complete) cls = complete_file(f, &scratch);
        for (uint32_t t = 0; t < f->super.local_streams; t++) *bytes += (MPI_Offset)f->ends[t].length;
    }
    ferry__free(scratch.buf);
    return cls;
}

int ferry_container_recover(const char *path, MPI_Offset *recovered_bytes, int *was_complete)
{
    ferry_container_set_t set = NULL;
    if (!path || !recovered_bytes || !was_complete)
        return ferry__error_set(MPI_ERR_ARG, "ferry_container_recover: NULL argument");
    *recovered_bytes = 0;
    FERRY_TRY(ferry__container_set_load(path, 1, 1, &set));
    int cls = recover_set(set, recovered_bytes, was_complete);
    if (cls) cls = ferry__container_fail(cls, path, -1, "recover");
    ferry__container_set_free(set);
    return cls;
}

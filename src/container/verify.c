/*
 * verify: everything docs/format/container.md lists under Verifying. The
 * set's metadata is checked by loading it; then every chunk trailer of
 * every stream and, when the trailers carry them, the data checksums, with
 * progress reported by stream bytes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"

typedef struct verify_run {
    ferry_container_check_t *check;
    ferry__container_file_t *file;
    ferry__container_scratch_t scratch;
    MPI_Offset total;
} verify_run_t;

static void problem(verify_run_t *run, const char *fmt, ...) FERRY_PRINTF(2, 3);
static void problem(verify_run_t *run, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    run->check->problems++;
    if (run->check->report) run->check->report(run->check->arg, text);
}

/* The trailer of chunk b of local stream t against what the stream's length says. */
static void check_trailer(verify_run_t *run, uint32_t t, uint64_t b, ferry__container_trailer_t *tr)
{
    ferry__container_file_t *f = run->file;
    ferry__container_geometry_t g = ferry__container_file_geometry(f, t);
    unsigned char raw[FERRY__CONTAINER_TRAILER_SIZE];
    size_t done = 0;
    unsigned id = f->entries[t].stream;
    uint64_t used = ferry__container_used_in(&g, f->ends[t].length, b);
    memset(tr, 0, sizeof *tr);
    MPI_Offset at = (MPI_Offset)ferry__container_trailer_at(&g, b);
    if (ferry__fs_pread(f->fs, NULL, raw, sizeof raw, at, &done) || done < sizeof raw)
        problem(run, "stream %u chunk %llu: trailer unreadable (file truncated?)", id, (unsigned long long)b);
    else if (!ferry__container_decode_trailer(raw, tr))
        problem(run, "stream %u chunk %llu: trailer damaged (magic or checksum)", id, (unsigned long long)b);
    else if (tr->id != f->super.id || tr->stream != id || tr->chunk != b)
        problem(run, "stream %u chunk %llu: trailer belongs elsewhere (stream %u chunk %llu)", id,
                (unsigned long long)b, (unsigned)tr->stream, (unsigned long long)tr->chunk);
    else if (tr->used != used || tr->seq == 0 || tr->length < b * ferry__container_capacity(&g) + tr->used)
        problem(run, "stream %u chunk %llu: trailer records %llu bytes, the stream's length gives %llu", id,
                (unsigned long long)b, (unsigned long long)tr->used, (unsigned long long)used);
    else
        return;
    tr->used = UINT64_MAX; /* no data checksum to compare */
}

static void check_data(verify_run_t *run, uint32_t t, uint64_t b, const ferry__container_trailer_t *tr)
{
    ferry__container_file_t *f = run->file;
    ferry__container_geometry_t g = ferry__container_file_geometry(f, t);
    uint32_t crc = 0;
    if (!(f->super.flags & FERRY__CONTAINER_FLAG_CHECKSUMS) || tr->used == UINT64_MAX) return;
    if (ferry__container_chunk_crc(f->fs, &g, b, tr->used, &run->scratch, &crc) != 0)
        problem(run, "stream %u chunk %llu: data unreadable: %s", (unsigned)tr->stream, (unsigned long long)b,
                ferry__error_message());
    else if (crc != tr->data_crc)
        problem(run, "stream %u chunk %llu: data checksum mismatch (trailer 0x%08x, data 0x%08x)",
                (unsigned)tr->stream, (unsigned long long)b, (unsigned)tr->data_crc, (unsigned)crc);
}

static void verify_stream(verify_run_t *run, uint32_t t)
{
    ferry__container_geometry_t g = ferry__container_file_geometry(run->file, t);
    uint64_t length = run->file->ends[t].length, chunks = ferry__container_chunks_for(&g, length);
    for (uint64_t b = 0; b < chunks; b++) {
        ferry__container_trailer_t tr;
        check_trailer(run, t, b, &tr);
        check_data(run, t, b, &tr);
        run->check->chunks++;
        run->check->bytes += (MPI_Offset)ferry__container_used_in(&g, length, b);
        if (run->check->progress) run->check->progress(run->check->arg, run->check->bytes, run->total);
    }
}

static MPI_Offset total_bytes(ferry_container_set_t set)
{
    MPI_Offset total = 0;
    for (uint32_t k = 0; k < set->nfiles; k++)
        for (uint32_t t = 0; t < set->files[k].super.local_streams; t++)
            total += (MPI_Offset)set->files[k].ends[t].length;
    return total;
}

/* A primary file the buddy copy stood in for is a problem (its streams are safe, the file is not). */
static void report_notes(verify_run_t *run, const char *notes)
{
    for (const char *line = notes; line && *line;) {
        const char *end = strchr(line, '\n');
        int len = end ? (int)(end - line) : (int)strlen(line);
        problem(run, "%.*s", len, line);
        line = end ? end + 1 : line + len;
    }
}

int ferry_container_verify(const char *path, ferry_container_check_t *check)
{
    if (!path || !check) return ferry__error_set(MPI_ERR_ARG, "ferry_container_verify: NULL argument");
    check->problems = check->chunks = check->bytes = 0;
    check->incomplete = 0;
    ferry_container_set_t set;
    FERRY_TRY(ferry__container_set_load(path, 1, 0, &set));
    verify_run_t run = {check, NULL, {ferry__malloc((size_t)1 << 20), (size_t)1 << 20}, total_bytes(set)};
    check->incomplete = !set->complete;
    int cls = run.scratch.buf ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory", path);
    report_notes(&run, set->notes);
    for (uint32_t k = 0; k < set->nfiles && !cls; k++) {
        run.file = &set->files[k];
        if (run.file->damage != FERRY__CONTAINER_UNDAMAGED) /* never closed is no damage, only incomplete */
            problem(&run, "file %u of %u %s: 'ferry-container recover' rebuilds it from the chunk trailers",
                    (unsigned)k, (unsigned)set->nfiles, ferry__container_damage_text(run.file));
        for (uint32_t t = 0; t < run.file->super.local_streams; t++) verify_stream(&run, t);
    }
    ferry__free(run.scratch.buf);
    ferry__container_set_free(set);
    if (!cls && check->problems)
        cls = ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': %lld problems found", path, check->problems);
    return cls;
}

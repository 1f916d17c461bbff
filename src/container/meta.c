/*
 * A physical file's metadata: the superblock and stream table written when
 * the file is created, the end table and completion record written when it
 * is closed; reading checks everything docs/format/container.md lists
 * under Reading, so later code can trust the numbers (no offset overflows,
 * no allocation larger than the file).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"

char *ferry__container_file_path(const char *path, uint32_t k)
{
    if (k == 0) return ferry__strdup(path);
    size_t len = strlen(path) + 16;
    char *name = ferry__malloc(len);
    if (name) snprintf(name, len, "%s.%06u", path, (unsigned)k);
    return name;
}

char *ferry__container_buddy_file_path(const char *path, uint32_t k)
{
    size_t len = strlen(path) + 24;
    char *name = ferry__malloc(len);
    if (name && k == 0) snprintf(name, len, "%s.buddy", path);
    else if (name) snprintf(name, len, "%s.buddy.%06u", path, (unsigned)k);
    return name;
}

const char *ferry__container_damage_text(const ferry__container_file_t *f)
{
    switch (f->damage) {
    case FERRY__CONTAINER_RECORD_DAMAGED: return "has a damaged completion record";
    case FERRY__CONTAINER_END_DAMAGED: return "was closed, but its end table fails its checks (damaged or cut short)";
    default: return "was never closed: its writers were killed, or still run";
    }
}

static int truncated(const char *path, const char *what, uint64_t needed, MPI_Offset size)
{
    return ferry__error_set(MPI_ERR_BAD_FILE,
                            "ferry container '%s': truncated: the %s needs %llu bytes, the file has %lld", path, what,
                            (unsigned long long)needed, (long long)size);
}

/* Reads exactly len bytes at offset or fails naming what was being read. */
static int read_exact(ferry__container_file_t *f, void *buf, size_t len, uint64_t offset, const char *path,
                      const char *what)
{
    size_t done = 0;
    if (offset + len > (uint64_t)f->size) return truncated(path, what, offset + len, f->size);
    FERRY_TRY(ferry__fs_pread(f->fs, NULL, buf, len, (MPI_Offset)offset, &done));
    return done == len ? 0 : truncated(path, what, offset + len, (MPI_Offset)(offset + done));
}

static int read_super(ferry__container_file_t *f, const char *path)
{
    unsigned char raw[FERRY__CONTAINER_SUPER_SIZE];
    if (f->size < 8) return truncated(path, "superblock", FERRY__CONTAINER_SUPER_SIZE, f->size);
    size_t head = (uint64_t)f->size < sizeof raw ? (size_t)f->size : sizeof raw;
    memset(raw, 0, sizeof raw);
    FERRY_TRY(read_exact(f, raw, head, 0, path, "superblock"));
    /* The magic and version speak first: a short file of another kind is "not a container". */
    int cls = ferry__container_decode_super(raw, path, &f->super);
    if (cls == 0 && head < sizeof raw) return truncated(path, "superblock", sizeof raw, f->size);
    return cls;
}

static int check_entries(const ferry__container_file_t *f, const char *path)
{
    const ferry__container_super_t *s = &f->super;
    uint64_t offset = 0;
    for (uint32_t t = 0; t < s->local_streams; t++) {
        const ferry__container_entry_t *e = &f->entries[t];
        int ok = e->stream < s->streams && (t == 0 || e->stream > f->entries[t - 1].stream) &&
                 e->chunk_size >= s->block_size && e->chunk_size % s->block_size == 0 && e->row_offset == offset &&
                 e->chunk_size <= s->row_size - offset;
        if (!ok)
            return ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': stream table entry %u inconsistent",
                                    path, (unsigned)t);
        offset += e->chunk_size;
    }
    if (offset != s->row_size) return ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': row size differs "
                                                       "from the sum of the chunk sizes", path);
    return 0;
}

static int read_table(ferry__container_file_t *f, const char *path)
{
    uint32_t n = f->super.local_streams;
    uint64_t size = ferry__container_table_end(n) - FERRY__CONTAINER_TABLE_OFFSET;
    if (ferry__container_table_end(n) > (uint64_t)f->size)
        return truncated(path, "stream table", ferry__container_table_end(n), f->size);
    unsigned char *raw = ferry__malloc(size);
    f->entries = ferry__calloc(n, sizeof *f->entries);
    f->ends = ferry__calloc(n, sizeof *f->ends);
    int cls = raw && f->entries && f->ends ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of "
                                                                   "memory for %u streams", path, (unsigned)n);
    if (!cls) cls = read_exact(f, raw, size, FERRY__CONTAINER_TABLE_OFFSET, path, "stream table");
    if (!cls) cls = ferry__container_decode_table(raw, n, path, f->entries);
    if (!cls) cls = check_entries(f, path);
    ferry__free(raw);
    return cls;
}

static int check_lengths(ferry__container_file_t *f, const char *path)
{
    for (uint32_t t = 0; t < f->super.local_streams; t++) {
        ferry__container_geometry_t g = ferry__container_file_geometry(f, t);
        if (ferry__container_chunks_for(&g, f->ends[t].length) > f->rows)
            return ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': stream %u's length %llu exceeds the "
                                    "file's %llu rows", path, (unsigned)f->entries[t].stream,
                                    (unsigned long long)f->ends[t].length, (unsigned long long)f->rows);
    }
    return 0;
}

static int read_end(ferry__container_file_t *f, const ferry__container_completion_t *c, const char *path)
{
    const ferry__container_super_t *s = &f->super;
    uint64_t size = ferry__container_end_size(s->local_streams);
    if (c->id != s->id || c->end_size != size || c->end_offset < s->data_start ||
        (c->end_offset - s->data_start) % s->row_size)
        return ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': completion record inconsistent", path);
    unsigned char *raw = ferry__malloc(size);
    if (!raw) return ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory", path);
    int cls = read_exact(f, raw, size, c->end_offset, path, "end table");
    if (!cls && ferry__container_crc(0, raw, size - 4) != c->end_crc)
        cls = ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': end table differs from the one the "
                               "completion record names", path);
    if (!cls) cls = ferry__container_decode_end(raw, s->local_streams, s->id, path, &f->rows, f->ends);
    if (!cls && f->rows != (c->end_offset - s->data_start) / s->row_size)
        cls = ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': end table not after its last row", path);
    ferry__free(raw);
    return cls ? cls : check_lengths(f, path);
}

static int read_completion(ferry__container_file_t *f, const char *path)
{
    unsigned char raw[FERRY__CONTAINER_COMPLETION_SIZE];
    ferry__container_completion_t c;
    FERRY_TRY(read_exact(f, raw, sizeof raw, FERRY__CONTAINER_COMPLETION_OFFSET, path, "completion record"));
    int state = ferry__container_decode_completion(raw, &c);
    f->damage = state < 0 ? FERRY__CONTAINER_RECORD_DAMAGED : FERRY__CONTAINER_UNDAMAGED;
    if (state <= 0) return 0;
    int cls = read_end(f, &c, path);
    if (cls == MPI_ERR_BAD_FILE) {
        /* Closed, but the end table fails its checks (damaged, cut short):
         * the file is read as an incomplete one, whose chunk trailers say
         * every stream's length, and recover rebuilds the table from them. */
        f->damage = FERRY__CONTAINER_END_DAMAGED;
        return 0;
    }
    if (cls) return cls;
    f->complete = 1;
    f->how = c.how;
    return 0;
}

int ferry__container_file_load(const char *path, int writable, ferry__container_file_t *f)
{
    memset(f, 0, sizeof *f);
    int cls = ferry__fs_open(path, writable ? FERRY_FS_READ | FERRY_FS_WRITE : FERRY_FS_READ, &f->fs);
    if (cls) return cls;
    cls = ferry__fs_size(f->fs, &f->size);
    if (!cls) cls = read_super(f, path);
    if (!cls) cls = read_table(f, path);
    if (!cls) cls = read_completion(f, path);
    if (cls) ferry__container_file_release(f);
    return cls;
}

void ferry__container_file_release(ferry__container_file_t *f)
{
    if (f->fs) ferry__fs_close(f->fs);
    ferry__free(f->entries);
    ferry__free(f->ends);
    memset(f, 0, sizeof *f);
}

ferry__container_geometry_t ferry__container_file_geometry(const ferry__container_file_t *f, uint32_t t)
{
    ferry__container_geometry_t g = {f->super.data_start, f->super.row_size, f->entries[t].row_offset,
                                     f->entries[t].chunk_size};
    return g;
}

int ferry__container_write_header(ferry__fs_file_t *fs, const ferry__container_super_t *s,
                                  const ferry__container_entry_t *e)
{
    uint64_t size = ferry__container_table_end(s->local_streams);
    unsigned char *raw = ferry__calloc(1, size);
    if (!raw) return ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory", fs->path);
    ferry__container_encode_super(s, raw);
    ferry__container_encode_table(e, s->local_streams, raw + FERRY__CONTAINER_TABLE_OFFSET);
    int cls = ferry__fs_pwrite(fs, NULL, raw, size, 0);
    ferry__free(raw);
    return cls;
}

static uint64_t rows_of(const ferry__container_finish_t *fin)
{
    uint64_t rows = 0;
    for (uint32_t t = 0; t < fin->super->local_streams; t++) {
        ferry__container_geometry_t g = {fin->super->data_start, fin->super->row_size, fin->entries[t].row_offset,
                                         fin->entries[t].chunk_size};
        uint64_t chunks = ferry__container_chunks_for(&g, fin->ends[t].length);
        if (chunks > rows) rows = chunks;
    }
    return rows;
}

int ferry__container_write_end(const ferry__container_finish_t *fin)
{
    const ferry__container_super_t *s = fin->super;
    uint64_t size = ferry__container_end_size(s->local_streams), rows = rows_of(fin);
    unsigned char *raw = ferry__malloc(size);
    if (!raw) return ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory", fin->fs->path);
    ferry__container_completion_t c = {s->id, s->data_start + rows * s->row_size, size, 0, fin->how};
    c.end_crc = ferry__container_encode_end(s->id, rows, fin->ends, s->local_streams, raw);
    int cls = ferry__fs_pwrite(fin->fs, NULL, raw, size, (MPI_Offset)c.end_offset);
    ferry__free(raw);
    /* The completion record must never reach the disk before what it names. */
    if (!cls && fin->durable) cls = ferry__fs_sync(fin->fs);
    unsigned char record[FERRY__CONTAINER_COMPLETION_SIZE];
    ferry__container_encode_completion(&c, record);
    if (!cls) cls = ferry__fs_pwrite(fin->fs, NULL, record, sizeof record, FERRY__CONTAINER_COMPLETION_OFFSET);
    if (!cls && fin->durable) cls = ferry__fs_sync(fin->fs);
    return cls;
}

int ferry__container_plan(ferry__container_super_t *s, ferry__container_entry_t *e, const char *path)
{
    const uint64_t limit = (uint64_t)1 << 62, b = s->block_size;
    uint64_t offset = 0;
    for (uint32_t t = 0; t < s->local_streams; t++) {
        uint64_t asked = e[t].asked ? e[t].asked : (uint64_t)FERRY__CONTAINER_DEFAULT_CHUNK;
        if (asked > limit || offset > limit)
            return ferry__error_set(MPI_ERR_ARG, "ferry container '%s': chunk sizes add up beyond 2^62 bytes", path);
        e[t].chunk_size = asked < b ? b : (asked + b - 1) / b * b;
        e[t].row_offset = offset;
        offset += e[t].chunk_size;
    }
    s->major = FERRY__CONTAINER_MAJOR;
    s->minor = FERRY__CONTAINER_MINOR;
    s->row_size = offset;
    s->data_start = ferry__container_data_start(s->local_streams, b);
    s->created = (uint64_t)time(NULL);
    return 0;
}

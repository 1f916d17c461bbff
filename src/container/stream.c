/*
 * One stream, written or read through a buffer.
 *
 * Writes gather in the buffer and go to the file a chunk piece at a time
 * (a write at least as large as the buffer goes straight through); each
 * chunk keeps a running CRC of its bytes while they arrive in order, and is
 * marked stale (its CRC recomputed from the file at the next flush) when
 * they do not. A flush writes the buffer, then the trailer of every chunk
 * that changed, each recording the stream's length: so the data of a flush
 * are in the file before any trailer that promises them.
 */
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"

static size_t min_size(uint64_t a, uint64_t b)
{
    return (size_t)(a < b ? a : b);
}

int ferry__container_pread(ferry__fs_file_t *fs, const ferry__container_geometry_t *g, uint64_t length, uint64_t pos,
                           void *buf, size_t len, size_t *done)
{
    *done = 0;
    if (pos < length && len > length - pos) len = (size_t)(length - pos);
    while (pos < length && *done < len) {
        uint64_t room, at = ferry__container_file_offset(g, pos, &room);
        size_t want = min_size(len - *done, room), got = 0;
        FERRY_TRY(ferry__fs_pread(fs, NULL, (char *)buf + *done, want, (MPI_Offset)at, &got));
        if (got < want)
            return ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': truncated: stream byte %llu lies beyond "
                                    "the end of the file", fs->path, (unsigned long long)(pos + got));
        *done += got;
        pos += got;
    }
    return 0;
}

int ferry__container_chunk_crc(ferry__fs_file_t *fs, const ferry__container_geometry_t *g, uint64_t b, uint64_t used,
                               ferry__container_scratch_t *scratch, uint32_t *crc)
{
    uint64_t cap = ferry__container_capacity(g), first = b * cap;
    *crc = 0;
    for (uint64_t pos = first; pos < first + used;) {
        size_t got = 0;
        FERRY_TRY(ferry__container_pread(fs, g, first + used, pos, scratch->buf, scratch->len, &got));
        *crc = ferry__container_crc(*crc, scratch->buf, got);
        pos += got;
    }
    return 0;
}

int ferry__container_stream_init(ferry__container_stream_t *s, const ferry__container_stream_init_t *init)
{
    memset(s, 0, sizeof *s);
    s->fs = init->fs;
    s->id = init->id;
    s->stream = init->stream;
    s->geo = init->geo;
    s->writing = init->writing;
    s->checksums = init->checksums;
    s->durable = init->durable;
    s->length = init->writing ? 0 : init->length;
    s->file_index = init->file_index;
    if (init->unbuffered) return 0;
    s->buf_cap = init->buffer_size ? init->buffer_size : FERRY__CONTAINER_DEFAULT_BUFFER;
    /* A checked reader caches whole chunks up to a size (check.c). */
    uint64_t cap = ferry__container_capacity(&s->geo);
    if (!s->writing && s->checksums && cap > s->buf_cap && cap <= FERRY__CONTAINER_CHECKED_CACHE)
        s->buf_cap = (size_t)cap;
    s->buf = ferry__malloc(s->buf_cap);
    if (!s->buf) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory for a %zu-byte buffer", s->buf_cap);
    return 0;
}

void ferry__container_stream_release(ferry__container_stream_t *s)
{
    ferry__free(s->buf);
    ferry__free(s->chunks);
    ferry__free(s->checked);
    ferry__container_outbox_free(s->outbox);
    s->outbox = NULL;
    s->buf = NULL;
    s->chunks = NULL;
    s->checked = NULL;
}

/* The state of chunk b, growing the array as the stream grows. */
static ferry__container_chunk_state_t *chunk_state(ferry__container_stream_t *s, uint64_t b)
{
    if (b < s->nchunks) return &s->chunks[b];
    uint64_t n = s->nchunks * 2 > b + 1 ? s->nchunks * 2 : b + 1;
    if (n > SIZE_MAX / sizeof(ferry__container_chunk_state_t)) return NULL;
    ferry__container_chunk_state_t *grown = ferry__realloc(s->chunks, n * sizeof *grown);
    if (!grown) return NULL;
    for (uint64_t i = s->nchunks; i < n; i++)
        grown[i] = (ferry__container_chunk_state_t){0, UINT64_MAX, 0, 0, 0};
    s->chunks = grown;
    s->nchunks = n;
    return &s->chunks[b];
}

/* Stream bytes [pos, pos + len) now hold data: extend the chunks' CRCs. */
static int note_written(ferry__container_stream_t *s, uint64_t pos, const unsigned char *data, size_t len)
{
    uint64_t cap = ferry__container_capacity(&s->geo);
    while (len > 0) {
        uint64_t offset = pos % cap;
        size_t piece = min_size(len, cap - offset);
        ferry__container_chunk_state_t *st = chunk_state(s, pos / cap);
        if (!st) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory for the state of chunk %llu",
                                         (unsigned long long)(pos / cap));
        st->dirty = 1;
        if (s->checksums && !st->stale && offset == st->crc_bytes) {
            st->crc = ferry__container_crc(st->crc, data, piece);
            st->crc_bytes += piece;
        } else {
            st->stale = 1;
        }
        pos += piece;
        data += piece;
        len -= piece;
    }
    return 0;
}

static int fail_at(ferry__container_stream_t *s, int cls, uint64_t at)
{
    s->failed = cls;
    if (s->length > at) s->length = at;
    s->position = s->length;
    s->buf_len = 0;
    return cls;
}

/* Writes stream bytes [pos, pos + len) to their chunks. */
static int write_pieces(ferry__container_stream_t *s, uint64_t pos, const unsigned char *data, size_t len)
{
    while (len > 0) {
        uint64_t room, at = ferry__container_file_offset(&s->geo, pos, &room);
        size_t piece = min_size(len, room);
        int cls = s->outbox ? ferry__container_outbox_data(s->outbox, at, data, piece)
                            : ferry__fs_pwrite(s->fs, NULL, data, piece, (MPI_Offset)at);
        if (cls) return fail_at(s, cls, pos);
        pos += piece;
        data += piece;
        len -= piece;
    }
    return 0;
}

static int drain(ferry__container_stream_t *s)
{
    size_t len = s->buf_len;
    s->buf_len = 0;
    return len ? write_pieces(s, s->buf_start, s->buf, len) : 0;
}

static void advance(ferry__container_stream_t *s, size_t len)
{
    s->position += len;
    if (s->position > s->length) s->length = s->position;
}

/* Moves some of data into the stream: through the buffer, or past it when
 * the buffer is empty and the data would fill it anyway. */
static int write_step(ferry__container_stream_t *s, const unsigned char *data, size_t len, size_t *done)
{
    if (s->buf_len && s->position != s->buf_start + s->buf_len) return drain(s);
    int through = s->buf_len == 0 && len >= s->buf_cap;
    size_t piece = through ? len : min_size(len, s->buf_cap - s->buf_len);
    FERRY_TRY(note_written(s, s->position, data, piece));
    if (through) {
        FERRY_TRY(write_pieces(s, s->position, data, piece));
    } else {
        if (s->buf_len == 0) s->buf_start = s->position;
        memcpy(s->buf + s->buf_len, data, piece);
        s->buf_len += piece;
    }
    advance(s, piece);
    *done += piece;
    return s->buf_len == s->buf_cap ? drain(s) : 0;
}

/* 1 when every byte of [0, end) has a file offset below 2^63. */
static int addressable(const ferry__container_geometry_t *g, uint64_t end)
{
    uint64_t last_chunk = end ? (end - 1) / ferry__container_capacity(g) : 0;
    uint64_t room = (uint64_t)INT64_MAX - g->data_start - g->row_offset - g->chunk_size;
    return last_chunk <= room / g->row_size;
}

int ferry__container_stream_write(ferry__container_stream_t *s, const void *buf, size_t len, size_t *done)
{
    uint64_t start = s->position;
    int cls = s->failed ? ferry__error_set(s->failed, "an earlier write of this stream failed; it ends at byte %llu",
                                           (unsigned long long)s->length)
              : start + len < start || !addressable(&s->geo, start + len)
                  ? ferry__error_set(MPI_ERR_ARG, "stream bytes up to %llu + %zu lie beyond 2^63 in the file",
                                     (unsigned long long)start, len)
                  : 0;
    *done = 0;
    while (!cls && *done < len) cls = write_step(s, (const unsigned char *)buf + *done, len - *done, done);
    if (cls) *done = s->length > start ? min_size(len, s->length - start) : 0;
    return cls;
}

/* Recomputes chunk b's CRC from the file when its running one does not
 * cover exactly its used bytes. The buffer is empty, so it serves. */
static int settle_crc(ferry__container_stream_t *s, uint64_t b, uint64_t used, ferry__container_chunk_state_t *st)
{
    if (!s->checksums || (!st->stale && st->crc_bytes == used)) return 0;
    /* An unbuffered writer borrows memory for the read-back. */
    enum { MIN_SCRATCH = 64 << 10 };
    ferry__container_scratch_t scratch = {s->buf, s->buf_cap};
    if (scratch.len < MIN_SCRATCH) scratch = (ferry__container_scratch_t){ferry__malloc(MIN_SCRATCH), MIN_SCRATCH};
    int cls = scratch.buf ? ferry__container_chunk_crc(s->fs, &s->geo, b, used, &scratch, &st->crc)
                          : ferry__error_set(MPI_ERR_NO_MEM, "out of memory to checksum chunk %llu",
                                             (unsigned long long)b);
    if (scratch.buf != s->buf) ferry__free(scratch.buf);
    if (cls) return cls;
    st->crc_bytes = used;
    st->stale = 0;
    return 0;
}

static int write_trailer(ferry__container_stream_t *s, uint64_t b, uint64_t used)
{
    ferry__container_chunk_state_t *st = chunk_state(s, b);
    if (!st) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory for the state of chunk %llu",
                                     (unsigned long long)b);
    /* Collective mode: the collector checksums a stale chunk from the file, which only it writes. */
    int crc_known = !s->checksums || (!st->stale && st->crc_bytes == used);
    if (!s->outbox) FERRY_TRY(settle_crc(s, b, used, st));
    ferry__container_trailer_t tr = {s->stream, s->id, b, used, s->length, s->seq, s->checksums ? st->crc : 0};
    unsigned char raw[FERRY__CONTAINER_TRAILER_SIZE];
    ferry__container_encode_trailer(&tr, raw);
    if (s->outbox) /* recorded when the collector wrote it (ferry__container_stream_settle) */
        return ferry__container_outbox_trailer(s->outbox, ferry__container_trailer_at(&s->geo, b),
                                               ferry__container_chunk_at(&s->geo, b), !crc_known, raw);
    FERRY_TRY(ferry__fs_pwrite(s->fs, NULL, raw, sizeof raw, (MPI_Offset)ferry__container_trailer_at(&s->geo, b)));
    st->recorded_used = used;
    st->dirty = 0;
    return 0;
}

static int needs_trailer(ferry__container_stream_t *s, uint64_t b, uint64_t chunks, uint64_t used)
{
    if (b >= s->nchunks) return 1;
    const ferry__container_chunk_state_t *st = &s->chunks[b];
    return st->dirty || st->recorded_used != used || (b + 1 == chunks && s->length != s->flushed_length);
}

static int changed_since_flush(const ferry__container_stream_t *s)
{
    if (s->length != s->flushed_length) return 1;
    for (uint64_t b = 0; b < s->nchunks; b++)
        if (s->chunks[b].dirty) return 1;
    return 0;
}

static int write_trailers(ferry__container_stream_t *s)
{
    if (!changed_since_flush(s)) return 0;
    uint64_t chunks = ferry__container_chunks_for(&s->geo, s->length);
    s->seq++;
    for (uint64_t b = 0; b < chunks; b++) {
        uint64_t used = ferry__container_used_in(&s->geo, s->length, b);
        if (needs_trailer(s, b, chunks, used)) FERRY_TRY(write_trailer(s, b, used));
    }
    if (!s->outbox) s->flushed_length = s->length;
    return 0;
}

static int sync_counted(ferry__container_stream_t *s)
{
    if (s->meta_calls) ++*s->meta_calls;
    return ferry__fs_sync(s->fs);
}

int ferry__container_stream_flush(ferry__container_stream_t *s, int sync_after)
{
    if (!s->writing) return 0;
    /* A failed drain shortened the stream to what is safely there: still record that. */
    int cls = drain(s);
    int more = s->durable ? sync_counted(s) : 0;
    if (!more) more = write_trailers(s);
    if (!more && s->durable && sync_after) more = sync_counted(s);
    return cls ? cls : more;
}

int ferry__container_stream_prepare(ferry__container_stream_t *s)
{
    int cls = drain(s); /* into the outbox: fails only out of memory, having shortened the stream */
    int more = write_trailers(s);
    return cls ? cls : more;
}

/* The collector wrote every trailer the outbox held: they are on disk. */
static void record_trailers(ferry__container_stream_t *s)
{
    const unsigned char *raw;
    for (size_t cursor = 0; (raw = ferry__container_outbox_next_trailer(s->outbox, &cursor)) != NULL;) {
        ferry__container_trailer_t tr;
        if (!ferry__container_decode_trailer(raw, &tr) || tr.chunk >= s->nchunks) continue; /* never: queued here */
        s->chunks[tr.chunk].recorded_used = tr.used;
        s->chunks[tr.chunk].dirty = 0;
    }
}

void ferry__container_stream_settle(ferry__container_stream_t *s, int cls, int phase)
{
    if (phase == FERRY__COLLECT_NOTHING) { /* the data stay queued; the trailers are queued afresh */
        ferry__container_outbox_drop_trailers(s->outbox);
        return;
    }
    if (phase == FERRY__COLLECT_DONE) {
        record_trailers(s);
        s->flushed_length = s->length;
    } else if (phase == FERRY__COLLECT_DATA) {
        /* Part of the data may be in the file: the stream keeps what its last flush recorded, whose trailers
         * are on disk unchanged, and takes no more writes. */
        fail_at(s, cls, s->flushed_length);
        for (uint64_t b = 0; b < s->nchunks; b++) s->chunks[b].dirty = 0;
    } /* COLLECT_TRAILERS: the data are in the file; the chunks stay dirty and their trailers are retried */
    ferry__container_outbox_clear(s->outbox);
}

/* Chunks past the length (a failed write's, cut off) hold no stream bytes and need no trailer. */
int ferry__container_stream_recorded(const ferry__container_stream_t *s)
{
    if (!s->writing) return 1;
    if (s->length != s->flushed_length) return 0;
    uint64_t chunks = ferry__container_chunks_for(&s->geo, s->length);
    for (uint64_t b = 0; b < s->nchunks && b < chunks; b++)
        if (s->chunks[b].dirty) return 0;
    return 1;
}

/* Serves read bytes from the cache, filling it first when needed. */
static int read_cached(ferry__container_stream_t *s, unsigned char *out, size_t len, size_t *got)
{
    int hit = s->buf_len && s->position >= s->buf_start && s->position < s->buf_start + s->buf_len;
    if (!hit) {
        s->buf_len = 0;
        FERRY_TRY(ferry__container_pread(s->fs, &s->geo, s->length, s->position, s->buf, s->buf_cap, &s->buf_len));
        s->buf_start = s->position;
    }
    *got = min_size(len, s->buf_start + s->buf_len - s->position);
    memcpy(out, s->buf + (s->position - s->buf_start), *got);
    return 0;
}

int ferry__container_read_plain(ferry__container_stream_t *s, unsigned char *out, size_t want, size_t *got)
{
    if (want >= s->buf_cap) return ferry__container_pread(s->fs, &s->geo, s->length, s->position, out, want, got);
    return read_cached(s, out, want, got);
}

int ferry__container_stream_read(ferry__container_stream_t *s, void *buf, size_t len, size_t *done)
{
    *done = 0;
    while (*done < len && s->position < s->length) {
        size_t got = 0, want = len - *done;
        unsigned char *out = (unsigned char *)buf + *done;
        if (s->checksums) FERRY_TRY(ferry__container_read_checked(s, out, want, &got));
        else FERRY_TRY(ferry__container_read_plain(s, out, want, &got));
        *done += got;
        s->position += got;
    }
    return 0;
}

int ferry__container_stream_seek(ferry__container_stream_t *s, uint64_t position)
{
    int cls = s->writing && s->buf_len && position != s->buf_start + s->buf_len ? drain(s) : 0;
    s->position = s->failed ? s->length : position;
    return cls;
}

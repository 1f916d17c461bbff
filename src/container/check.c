/*
 * Reading a stream whose chunks carry data checksums: every byte a read
 * returns belongs to a chunk whose trailer and data CRC were checked.
 *
 * A chunk is checked as a whole (its trailer holds the CRC of its used
 * bytes), so a read of part of it reads all of it. Chunks that fit the
 * stream's cache (chunk capacity up to FERRY__CONTAINER_CHECKED_CACHE) are
 * read once into it, checked, and served from it: the bytes returned are
 * the bytes checked, and sequential reads of any size read each chunk
 * once. A read that wants the rest of a chunk gets it straight into its
 * buffer, checked there (the chunk's head, which an earlier read returned,
 * passes through the cache again). A larger chunk is checked once per reader, through the
 * cache as scratch, the first time any of it is read, and read afterwards
 * like an unchecked one (it costs one extra pass over the chunk, and trusts
 * the file not to change under the open reader).
 *
 * A chunk that fails (no valid trailer of its own, a trailer recording
 * other than the bytes the stream's length gives it, or a data CRC that
 * differs) fails the read with MPI_ERR_IO naming the stream, the chunk and
 * the file; nothing of it is counted as read.
 */
#include <string.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"

int ferry__container_read_trailer(ferry__fs_file_t *fs, const ferry__container_geometry_t *g, uint64_t id,
                                  uint32_t stream, uint64_t b, ferry__container_trailer_t *tr)
{
    unsigned char raw[FERRY__CONTAINER_TRAILER_SIZE];
    size_t done = 0;
    uint64_t at = ferry__container_trailer_at(g, b);
    if (ferry__fs_pread(fs, NULL, raw, sizeof raw, (MPI_Offset)at, &done) != 0 || done != sizeof raw) return 0;
    return ferry__container_decode_trailer(raw, tr) && tr->id == id && tr->stream == stream && tr->chunk == b &&
           tr->used <= ferry__container_capacity(g);
}

static int chunk_fails(const ferry__container_stream_t *s, uint64_t b, const char *why)
{
    return ferry__error_set(MPI_ERR_IO, "stream %u chunk %llu in '%s' %s", (unsigned)s->stream,
                            (unsigned long long)b, s->fs->path, why);
}

/* Reads [from, to) of chunk b's data into out, extending *crc over it. */
static int read_span(const ferry__container_stream_t *s, uint64_t b, uint64_t from, uint64_t to, unsigned char *out,
                     uint32_t *crc)
{
    uint64_t start = b * ferry__container_capacity(&s->geo);
    size_t got = 0;
    if (from == to) return 0;
    FERRY_TRY(ferry__container_pread(s->fs, &s->geo, start + to, start + from, out, (size_t)(to - from), &got));
    *crc = ferry__container_crc(*crc, out, got);
    return 0;
}

/* Reads chunk b's used bytes and checks them and its trailer: the first
 * `head` bytes land in the cache (scratch here), the rest in dest; with
 * dest NULL all of them pass through the cache in pieces (a chunk larger
 * than it). The cache holds nothing valid afterwards. */
static int check_chunk(ferry__container_stream_t *s, uint64_t b, uint64_t head, unsigned char *dest)
{
    ferry__container_trailer_t tr;
    uint64_t used = ferry__container_used_in(&s->geo, s->length, b);
    uint32_t crc = 0;
    s->buf_len = 0;
    if (!ferry__container_read_trailer(s->fs, &s->geo, s->id, s->stream, b, &tr))
        return chunk_fails(s, b, "has no valid trailer: its data cannot be checked");
    if (tr.used != used) {
        char why[128];
        snprintf(why, sizeof why, "has a trailer recording %llu bytes, the stream's length gives %llu",
                 (unsigned long long)tr.used, (unsigned long long)used);
        return chunk_fails(s, b, why);
    }
    if (dest) {
        FERRY_TRY(read_span(s, b, 0, head, s->buf, &crc));
        FERRY_TRY(read_span(s, b, head, used, dest, &crc));
    } else {
        ferry__container_scratch_t scratch = {s->buf, s->buf_cap};
        FERRY_TRY(ferry__container_chunk_crc(s->fs, &s->geo, b, used, &scratch, &crc));
    }
    if (crc == tr.data_crc) return 0;
    char why[96];
    snprintf(why, sizeof why, "fails its data checksum (trailer 0x%08x, data 0x%08x)", (unsigned)tr.data_crc,
             (unsigned)crc);
    return chunk_fails(s, b, why);
}

/* Large chunks: whether chunk b was checked by this reader. */
static int checked_before(ferry__container_stream_t *s, uint64_t b, int *was)
{
    if (!s->checked) {
        uint64_t chunks = ferry__container_chunks_for(&s->geo, s->length);
        s->checked = ferry__calloc((size_t)(chunks / 8 + 1), 1);
        if (!s->checked) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory for %llu chunks' checks",
                                                 (unsigned long long)chunks);
    }
    *was = (s->checked[b / 8] >> (b % 8)) & 1;
    return 0;
}

int ferry__container_read_checked(ferry__container_stream_t *s, unsigned char *out, size_t want, size_t *got)
{
    uint64_t cap = ferry__container_capacity(&s->geo), b = s->position / cap, offset = s->position % cap;
    uint64_t used = ferry__container_used_in(&s->geo, s->length, b);
    size_t piece = (size_t)(want < used - offset ? want : used - offset);
    int hit = s->buf_len && s->position >= s->buf_start && s->position < s->buf_start + s->buf_len, was = 1;
    *got = 0;
    if (!hit && used > s->buf_cap) { /* a large chunk: checked once, then read plainly */
        FERRY_TRY(checked_before(s, b, &was));
        if (!was) FERRY_TRY(check_chunk(s, b, 0, NULL));
        s->checked[b / 8] |= (unsigned char)(1u << (b % 8));
        return ferry__container_read_plain(s, out, piece, got);
    }
    if (!hit && offset + piece == used) { /* the rest of the chunk: straight into out, the head through the cache */
        FERRY_TRY(check_chunk(s, b, offset, out));
        *got = piece;
        return 0;
    }
    if (!hit) {
        FERRY_TRY(check_chunk(s, b, used, s->buf));
        s->buf_start = b * cap;
        s->buf_len = (size_t)used;
    }
    *got = (size_t)(s->buf_start + s->buf_len - s->position);
    if (*got > want) *got = want;
    memcpy(out, s->buf + (s->position - s->buf_start), *got);
    return 0;
}

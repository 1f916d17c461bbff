/*
 * The records of docs/format/container.md, encoded and decoded: fixed
 * little-endian fields at fixed offsets, each record ending in its CRC.
 * No I/O here; decoders check what a record can check about itself.
 */
#include <string.h>

#include "container/container_int.h"
#include "error/error.h"

static const char super_magic[8] = {'F', 'E', 'R', 'R', 'Y', 'C', 'T', 'R'};
static const char end_magic[8] = {'F', 'E', 'R', 'R', 'Y', 'T', 'B', 'L'};
static const char completion_magic[8] = {'F', 'E', 'R', 'R', 'Y', 'E', 'N', 'D'};
static const char trailer_magic[4] = {'F', 'C', 'H', 'K'};

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static unsigned get16(const unsigned char *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* Stores the CRC of the crc_at bytes before it. */
static uint32_t seal(unsigned char *record, size_t crc_at)
{
    uint32_t crc = ferry__container_crc(0, record, crc_at);
    put32(record + crc_at, crc);
    return crc;
}

static int sealed(const unsigned char *record, size_t crc_at)
{
    return ferry__container_crc(0, record, crc_at) == get32(record + crc_at);
}

static int all_zero(const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i]) return 0;
    return 1;
}

uint64_t ferry__container_table_end(uint64_t n)
{
    return FERRY__CONTAINER_TABLE_OFFSET + n * FERRY__CONTAINER_ENTRY_SIZE + 4;
}

uint64_t ferry__container_data_start(uint64_t n, uint64_t block)
{
    uint64_t end = ferry__container_table_end(n);
    return (end + block - 1) / block * block;
}

uint64_t ferry__container_end_size(uint64_t n)
{
    return FERRY__CONTAINER_END_HEADER + n * FERRY__CONTAINER_END_ENTRY + 4;
}

void ferry__container_encode_super(const ferry__container_super_t *s, unsigned char *out)
{
    memset(out, 0, FERRY__CONTAINER_SUPER_SIZE);
    memcpy(out, super_magic, 8);
    put16(out + 8, s->major);
    put16(out + 10, s->minor);
    put32(out + 12, FERRY__CONTAINER_SUPER_SIZE);
    put64(out + 16, s->id);
    put32(out + 24, s->file_index);
    put32(out + 28, s->file_count);
    put32(out + 32, s->streams);
    put32(out + 36, s->local_streams);
    put64(out + 40, s->block_size);
    put64(out + 48, FERRY__CONTAINER_TABLE_OFFSET);
    put64(out + 56, s->data_start);
    put64(out + 64, s->row_size);
    put32(out + 72, FERRY__CONTAINER_TRAILER_SIZE);
    put32(out + 76, s->flags);
    put64(out + 80, s->created);
    put32(out + 88, s->mapping);
    seal(out, FERRY__CONTAINER_SUPER_SIZE - 4);
}

static int bad(const char *path, const char *what)
{
    return ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': %s", path, what);
}

/* The superblock's own numbers, once its CRC and version passed. */
static int check_super(const ferry__container_super_t *s, const unsigned char *in, const char *path)
{
    uint64_t b = s->block_size;
    if (get32(in + 12) != FERRY__CONTAINER_SUPER_SIZE || get64(in + 48) != FERRY__CONTAINER_TABLE_OFFSET ||
        get32(in + 72) != FERRY__CONTAINER_TRAILER_SIZE)
        return bad(path, "superblock: record sizes differ from format 1");
    if (b < FERRY__CONTAINER_MIN_BLOCK || b > FERRY__CONTAINER_MAX_BLOCK || (b & (b - 1)))
        return bad(path, "superblock: block size is not a power of two from 512 to 2^30");
    if (s->file_count == 0 || s->file_index >= s->file_count || s->streams == 0 || s->local_streams == 0 ||
        s->local_streams > s->streams)
        return bad(path, "superblock: file or stream counts out of range");
    if (s->data_start != ferry__container_data_start(s->local_streams, b) || s->row_size % b ||
        s->row_size < b * s->local_streams)
        return bad(path, "superblock: data start or row size inconsistent with the block size");
    return 0;
}

int ferry__container_decode_super(const unsigned char *in, const char *path, ferry__container_super_t *s)
{
    if (memcmp(in, super_magic, 8) != 0) return bad(path, "not a ferry container (no FERRYCTR magic)");
    memset(s, 0, sizeof *s);
    s->major = get16(in + 8);
    s->minor = get16(in + 10);
    int intact = sealed(in, FERRY__CONTAINER_SUPER_SIZE - 4);
    /* A newer major version may lay its superblock out differently, so its
     * checksum need not be where format 1 keeps it. */
    if (s->major > FERRY__CONTAINER_MAJOR)
        return ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                                "ferry container '%s': format %u.%u is newer than this reader (%d.x)%s", path,
                                s->major, s->minor, FERRY__CONTAINER_MAJOR,
                                intact ? ": upgrade ferry" : " or its superblock is damaged");
    if (!intact) return bad(path, "superblock checksum mismatch");
    if (s->major != FERRY__CONTAINER_MAJOR) return bad(path, "superblock: format major version 0 does not exist");
    s->id = get64(in + 16);
    s->file_index = get32(in + 24);
    s->file_count = get32(in + 28);
    s->streams = get32(in + 32);
    s->local_streams = get32(in + 36);
    s->block_size = get64(in + 40);
    s->data_start = get64(in + 56);
    s->row_size = get64(in + 64);
    s->flags = get32(in + 76);
    s->created = get64(in + 80);
    s->mapping = get32(in + 88);
    return check_super(s, in, path);
}

void ferry__container_encode_table(const ferry__container_entry_t *e, uint32_t n, unsigned char *out)
{
    memset(out, 0, (size_t)n * FERRY__CONTAINER_ENTRY_SIZE);
    for (uint32_t t = 0; t < n; t++) {
        unsigned char *p = out + (size_t)t * FERRY__CONTAINER_ENTRY_SIZE;
        put32(p, e[t].stream);
        put64(p + 8, e[t].chunk_size);
        put64(p + 16, e[t].row_offset);
        put64(p + 24, e[t].asked);
    }
    seal(out, (size_t)n * FERRY__CONTAINER_ENTRY_SIZE);
}

int ferry__container_decode_table(const unsigned char *in, uint32_t n, const char *path, ferry__container_entry_t *e)
{
    if (!sealed(in, (size_t)n * FERRY__CONTAINER_ENTRY_SIZE)) return bad(path, "stream table checksum mismatch");
    for (uint32_t t = 0; t < n; t++) {
        const unsigned char *p = in + (size_t)t * FERRY__CONTAINER_ENTRY_SIZE;
        e[t].stream = get32(p);
        e[t].chunk_size = get64(p + 8);
        e[t].row_offset = get64(p + 16);
        e[t].asked = get64(p + 24);
    }
    return 0;
}

void ferry__container_encode_trailer(const ferry__container_trailer_t *t, unsigned char *out)
{
    memset(out, 0, FERRY__CONTAINER_TRAILER_SIZE);
    memcpy(out, trailer_magic, 4);
    put32(out + 4, t->stream);
    put64(out + 8, t->id);
    put64(out + 16, t->chunk);
    put64(out + 24, t->used);
    put64(out + 32, t->length);
    put64(out + 40, t->seq);
    put32(out + 48, t->data_crc);
    seal(out, FERRY__CONTAINER_TRAILER_SIZE - 4);
}

int ferry__container_decode_trailer(const unsigned char *in, ferry__container_trailer_t *t)
{
    if (memcmp(in, trailer_magic, 4) != 0 || !sealed(in, FERRY__CONTAINER_TRAILER_SIZE - 4)) return 0;
    t->stream = get32(in + 4);
    t->id = get64(in + 8);
    t->chunk = get64(in + 16);
    t->used = get64(in + 24);
    t->length = get64(in + 32);
    t->seq = get64(in + 40);
    t->data_crc = get32(in + 48);
    return 1;
}

void ferry__container_encode_completion(const ferry__container_completion_t *c, unsigned char *out)
{
    memset(out, 0, FERRY__CONTAINER_COMPLETION_SIZE);
    memcpy(out, completion_magic, 8);
    put64(out + 8, c->id);
    put64(out + 16, c->end_offset);
    put64(out + 24, c->end_size);
    put32(out + 32, c->end_crc);
    put32(out + 36, c->how);
    seal(out, FERRY__CONTAINER_COMPLETION_SIZE - 4);
}

int ferry__container_decode_completion(const unsigned char *in, ferry__container_completion_t *c)
{
    if (all_zero(in, FERRY__CONTAINER_COMPLETION_SIZE)) return 0;
    if (memcmp(in, completion_magic, 8) != 0 || !sealed(in, FERRY__CONTAINER_COMPLETION_SIZE - 4)) return -1;
    c->id = get64(in + 8);
    c->end_offset = get64(in + 16);
    c->end_size = get64(in + 24);
    c->end_crc = get32(in + 32);
    c->how = get32(in + 36);
    return 1;
}

uint32_t ferry__container_encode_end(uint64_t id, uint64_t rows, const ferry__container_end_t *e, uint32_t n,
                                     unsigned char *out)
{
    memset(out, 0, ferry__container_end_size(n));
    memcpy(out, end_magic, 8);
    put64(out + 8, id);
    put32(out + 16, n);
    put64(out + 24, rows);
    for (uint32_t t = 0; t < n; t++) {
        unsigned char *p = out + FERRY__CONTAINER_END_HEADER + (size_t)t * FERRY__CONTAINER_END_ENTRY;
        put64(p, e[t].length);
        put32(p + 8, e[t].flags);
    }
    return seal(out, ferry__container_end_size(n) - 4);
}

int ferry__container_decode_end(const unsigned char *in, uint32_t n, uint64_t id, const char *path, uint64_t *rows,
                                ferry__container_end_t *e)
{
    if (memcmp(in, end_magic, 8) != 0) return bad(path, "end table: no FERRYTBL magic");
    if (!sealed(in, ferry__container_end_size(n) - 4)) return bad(path, "end table checksum mismatch");
    if (get64(in + 8) != id || get32(in + 16) != n) return bad(path, "end table belongs to another container");
    *rows = get64(in + 24);
    for (uint32_t t = 0; t < n; t++) {
        const unsigned char *p = in + FERRY__CONTAINER_END_HEADER + (size_t)t * FERRY__CONTAINER_END_ENTRY;
        e[t].length = get64(p);
        e[t].flags = get32(p + 8);
    }
    return 0;
}

/*
 * Shared by the container module's files only.
 *
 * The container gives each rank of a job a private byte stream (its own
 * "task-local file") inside one shared file, or a few (docs/container.md;
 * the format is docs/format/container.md). It sits on the file-system layer
 * (fs/fs.h) and the host's MPI communicators only.
 *
 * Invariants:
 *   - Chunk b of a stream lies at a place the stream's own geometry gives
 *     (data_start + b * row_size + row_offset): writing, growing, flushing
 *     and reading a stream never communicate.
 *   - Chunks are multiples of the file's block size and start on block
 *     boundaries, so no two streams share a file-system block.
 *   - Chunks fill completely before the next one starts: a stream's whole
 *     shape is its geometry and its length.
 *   - A flush writes the stream's data before the trailers that record it;
 *     the completion record is written last, after the end table.
 *   - Collective calls use a fixed number of collectives whatever the
 *     number of chunks; a rank holds O(its own chunks) memory, a file's
 *     root O(its streams).
 *
 * Files:
 *   crc32c.c    the checksum
 *   format.c    encode/decode of every on-disk record (pure, no I/O)
 *   meta.c      a physical file's metadata: read and check, write
 *   stream.c    a stream cursor: buffered writes, trailers, reads
 *   check.c     reads that check every chunk's data checksum
 *   recover.c   lengths from chunk trailers; rebuilding an incomplete file
 *   set.c       the serial API: a set of files, any stream, any position
 *   create.c    serial creation (tools: defrag)
 *   verify.c    every check of the format, data checksums included
 *   open.c      collective open for writing, close
 *   mapped.c    collective open for reading (same rank count or mapped)
 *   api.c       the independent calls of the parallel API
 *   cookie.c    a stdio FILE over a stream (fopencookie)
 *   collect.c   collective mode: collectors write their group's data and trailers
 *   buddy.c     buddy copies: a second set of files, each stream in its partner file
 *   plan.c      rank 0's plan of a container being created
 *   handle.c    the parallel handle's life; comm.c its communicator
 */
#ifndef FERRY_CONTAINER_INT_H
#define FERRY_CONTAINER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ferry_container.h"
#include "fs/fs.h"

enum {
    FERRY__CONTAINER_MAJOR = 1,
    FERRY__CONTAINER_MINOR = 0,
    FERRY__CONTAINER_SUPER_SIZE = 256,
    FERRY__CONTAINER_COMPLETION_OFFSET = 512,
    FERRY__CONTAINER_COMPLETION_SIZE = 64,
    FERRY__CONTAINER_TABLE_OFFSET = 1024,
    FERRY__CONTAINER_ENTRY_SIZE = 32,
    FERRY__CONTAINER_TRAILER_SIZE = 64,
    FERRY__CONTAINER_END_HEADER = 32,
    FERRY__CONTAINER_END_ENTRY = 16,
    FERRY__CONTAINER_FLAG_CHECKSUMS = 1,   /* superblock flags */
    FERRY__CONTAINER_STREAM_FAILED = 1,    /* end table stream flags */
    FERRY__CONTAINER_HOW_CLOSED = 1,       /* completion record: who completed the file */
    FERRY__CONTAINER_HOW_RECOVERED = 2,
};
#define FERRY__CONTAINER_MIN_BLOCK 512LL
#define FERRY__CONTAINER_MAX_BLOCK (1LL << 30)
#define FERRY__CONTAINER_DEFAULT_CHUNK (1LL << 20)
#define FERRY__CONTAINER_DEFAULT_BUFFER ((size_t)64 << 10)
/* Buddy copies (buddy.c): the buddy set's container id is the primary's XOR this (bit 0 clear,
 * so it is never 0 either); file index BUDDY_FILE + k of a handle is file k of the buddy set. */
#define FERRY__CONTAINER_BUDDY_ID_MASK 0x5bd1e9955bd1e994ull
#define FERRY__CONTAINER_BUDDY_FILE 0x80000000u
/* A reader of checksummed chunks caches whole chunks up to this capacity (check.c). */
#define FERRY__CONTAINER_CHECKED_CACHE ((uint64_t)16 << 20)

/* crc32c.c: CRC-32C of len bytes, continuing from crc (0 to start). */
uint32_t ferry__container_crc(uint32_t crc, const void *buf, size_t len);

/* ---- format.c: the records of docs/format/container.md, decoded ---- */

typedef struct ferry__container_super {
    unsigned major, minor;
    uint64_t id;
    uint32_t file_index, file_count, streams, local_streams;
    uint64_t block_size, data_start, row_size;
    uint32_t flags, mapping;
    uint64_t created;
} ferry__container_super_t;

typedef struct ferry__container_entry {
    uint32_t stream;
    uint64_t chunk_size, row_offset, asked;
} ferry__container_entry_t;

typedef struct ferry__container_trailer {
    uint32_t stream;
    uint64_t id, chunk, used, length, seq;
    uint32_t data_crc;
} ferry__container_trailer_t;

typedef struct ferry__container_completion {
    uint64_t id, end_offset, end_size;
    uint32_t end_crc, how;
} ferry__container_completion_t;

typedef struct ferry__container_end {
    uint64_t length;
    uint32_t flags;
} ferry__container_end_t;

/* Where a file's stream table ends and its data start, for n streams. */
uint64_t ferry__container_table_end(uint64_t n);
uint64_t ferry__container_data_start(uint64_t n, uint64_t block);
uint64_t ferry__container_end_size(uint64_t n);

/* Encoders fill exactly the record's size in out. Decoders return 0 or
 * MPI_ERR_BAD_FILE with a message naming path and the check that failed
 * (an all-zero completion record is reported as incomplete, not bad). */
void ferry__container_encode_super(const ferry__container_super_t *s, unsigned char *out);
int ferry__container_decode_super(const unsigned char *in, const char *path, ferry__container_super_t *s);
void ferry__container_encode_table(const ferry__container_entry_t *e, uint32_t n, unsigned char *out);
int ferry__container_decode_table(const unsigned char *in, uint32_t n, const char *path, ferry__container_entry_t *e);
void ferry__container_encode_trailer(const ferry__container_trailer_t *t, unsigned char *out);
/* 1 when in holds a trailer with a good magic and CRC, 0 otherwise. */
int ferry__container_decode_trailer(const unsigned char *in, ferry__container_trailer_t *t);
void ferry__container_encode_completion(const ferry__container_completion_t *c, unsigned char *out);
/* 1 valid, 0 all zero (never completed), -1 damaged. */
int ferry__container_decode_completion(const unsigned char *in, ferry__container_completion_t *c);
/* Returns the CRC stored at the end of the table. */
uint32_t ferry__container_encode_end(uint64_t id, uint64_t rows, const ferry__container_end_t *e, uint32_t n,
                                     unsigned char *out);
int ferry__container_decode_end(const unsigned char *in, uint32_t n, uint64_t id, const char *path, uint64_t *rows,
                                ferry__container_end_t *e);

/* ---- a stream's place in its file ---- */

typedef struct ferry__container_geometry {
    uint64_t data_start, row_size, row_offset, chunk_size;
} ferry__container_geometry_t;

static inline uint64_t ferry__container_capacity(const ferry__container_geometry_t *g)
{
    return g->chunk_size - FERRY__CONTAINER_TRAILER_SIZE;
}
static inline uint64_t ferry__container_chunk_at(const ferry__container_geometry_t *g, uint64_t b)
{
    return g->data_start + b * g->row_size + g->row_offset;
}
static inline uint64_t ferry__container_chunks_for(const ferry__container_geometry_t *g, uint64_t length)
{
    uint64_t cap = ferry__container_capacity(g);
    return (length + cap - 1) / cap;
}
/* Stream bytes chunk b holds when the stream is length bytes long. */
static inline uint64_t ferry__container_used_in(const ferry__container_geometry_t *g, uint64_t length, uint64_t b)
{
    uint64_t cap = ferry__container_capacity(g), start = b * cap;
    return length <= start ? 0 : length - start < cap ? length - start : cap;
}
/* The file offset of stream byte pos, and how many bytes from there stay in its chunk. */
static inline uint64_t ferry__container_file_offset(const ferry__container_geometry_t *g, uint64_t pos,
                                                    uint64_t *in_chunk)
{
    uint64_t cap = ferry__container_capacity(g);
    *in_chunk = cap - pos % cap;
    return ferry__container_chunk_at(g, pos / cap) + pos % cap;
}
static inline uint64_t ferry__container_trailer_at(const ferry__container_geometry_t *g, uint64_t b)
{
    return ferry__container_chunk_at(g, b) + ferry__container_capacity(g);
}

/* Reads [pos, pos + len) of a stream of the given length through fs: stops
 * at the stream's end (*done < len); a file shorter than the stream needs
 * is MPI_ERR_BAD_FILE (truncated). Not collective. */
int ferry__container_pread(ferry__fs_file_t *fs, const ferry__container_geometry_t *g, uint64_t length, uint64_t pos,
                           void *buf, size_t len, size_t *done);

/* ---- meta.c: one physical file ---- */

typedef struct ferry__container_file {
    ferry__fs_file_t *fs; /* owned */
    ferry__container_super_t super;
    ferry__container_entry_t *entries; /* local_streams, owned */
    ferry__container_end_t *ends;      /* local_streams, owned: lengths (recovered ones when incomplete) */
    uint64_t rows;
    int complete;          /* the completion record and end table are valid */
    uint32_t how;          /* the completion record's: closed or recovered */
    int damage;            /* why an incomplete file is: FERRY__CONTAINER_{UNDAMAGED (never closed),RECORD_DAMAGED,END_DAMAGED} */
    MPI_Offset size;       /* of the file when loaded */
} ferry__container_file_t;

enum { FERRY__CONTAINER_UNDAMAGED, FERRY__CONTAINER_RECORD_DAMAGED, FERRY__CONTAINER_END_DAMAGED };
/* What an incomplete file's damage says in messages: "was never closed", ... */
const char *ferry__container_damage_text(const ferry__container_file_t *f);

/* "<path>" for file 0, "<path>.<k, six digits>" for the others. Owned (ferry__free); NULL when out of memory. */
char *ferry__container_file_path(const char *path, uint32_t k);
/* File k of the buddy set of the container at path ("<path>.buddy", "<path>.buddy.<k>"). Owned; NULL: no memory. */
char *ferry__container_buddy_file_path(const char *path, uint32_t k);

/* Opens path and reads its superblock and stream table and, when complete,
 * its end table; checks all (docs/format/container.md, Reading). An
 * incomplete file loads with complete = 0 and no lengths, also one whose
 * completion record or end table fails its checks (f->damage says which). writable: open
 * read-write (recover). On failure f is cleared and nothing stays open. */
int ferry__container_file_load(const char *path, int writable, ferry__container_file_t *f);
void ferry__container_file_release(ferry__container_file_t *f);

/* The geometry of local stream t of a loaded file. */
ferry__container_geometry_t ferry__container_file_geometry(const ferry__container_file_t *f, uint32_t t);

/* Writes the superblock and stream table of a new file (zeros up to
 * data_start's first block are left as holes). */
int ferry__container_write_header(ferry__fs_file_t *fs, const ferry__container_super_t *s,
                                  const ferry__container_entry_t *e);

/* Writes the end table after the last row, then the completion record
 * (how: closed or recovered); syncs before and after the completion record
 * when durable. */
typedef struct ferry__container_finish {
    ferry__fs_file_t *fs;
    const ferry__container_super_t *super;
    const ferry__container_entry_t *entries;
    const ferry__container_end_t *ends;
    uint32_t how;
    int durable;
} ferry__container_finish_t;
int ferry__container_write_end(const ferry__container_finish_t *fin);

/* Fills super, entries and data_start of a new file from the chunk sizes
 * asked (entries[t].asked, stream ids set by the caller), rounding each up to
 * whole blocks. Checks the sums do not overflow. */
int ferry__container_plan(ferry__container_super_t *s, ferry__container_entry_t *e, const char *path);

/* ---- create.c ---- */

/* A fresh random container id (never 0). */
uint64_t ferry__container_new_id(void);
/* The block size to align to: asked when > 0, else the file system's
 * (stripe size: Lustre's, or st_blksize), as a power of two in range. */
uint64_t ferry__container_pick_block(MPI_Offset asked, const ferry__fs_layout_t *layout);
/* 0, or MPI_ERR_ARG when a block size asked for is not 0 or a power of two in range. */
int ferry__container_check_block(MPI_Offset block, const char *path);

/* ---- recover.c ---- */

/* Fills f->ends and f->rows with what the chunk trailers of an incomplete
 * file recorded (docs/format/container.md, Recovering). */
void ferry__container_scan(ferry__container_file_t *f);

/* ---- stream.c: one stream, written or read through a buffer ---- */

typedef struct ferry__container_chunk_state {
    uint64_t crc_bytes;     /* the CRC covers the chunk's first crc_bytes bytes */
    uint64_t recorded_used; /* 'used' of the trailer on disk, UINT64_MAX when none */
    uint32_t crc;
    unsigned char stale;    /* written other than by appending: CRC must be recomputed from the file */
    unsigned char dirty;    /* changed since its trailer was written */
} ferry__container_chunk_state_t;

typedef struct ferry__container_stream {
    ferry__fs_file_t *fs; /* borrowed; its path names it in messages */
    uint64_t id;
    uint32_t stream;
    uint32_t file_index;   /* of the physical file holding it */
    ferry__container_geometry_t geo;
    int writing, checksums, durable;
    int failed;            /* a write failed; the error class */
    int write_failed;      /* reading: the end table says a write of this stream failed */
    uint64_t position, length;
    uint64_t flushed_length; /* recorded by the last flush's trailers */
    uint64_t seq;            /* flushes so far */
    unsigned char *buf;      /* owned; buf_cap bytes */
    size_t buf_cap, buf_len;
    uint64_t buf_start;      /* stream position of buf[0] */
    ferry__container_chunk_state_t *chunks; /* owned, nchunks entries (writing) */
    uint64_t nchunks;
    unsigned char *checked; /* owned (reading): bitmap of chunks larger than the cache already checked */
    long long *meta_calls; /* borrowed, may be NULL: counts syncs */
    struct ferry__container_outbox *outbox; /* owned; collective mode: what the collector writes (collect.c) */
} ferry__container_stream_t;

typedef struct ferry__container_stream_init {
    ferry__fs_file_t *fs;
    uint64_t id;
    uint32_t stream, file_index;
    ferry__container_geometry_t geo;
    int writing, checksums, durable;
    uint64_t length; /* reading: the stream's length */
    size_t buffer_size; /* 0: the default */
    int unbuffered;     /* every write goes straight to the file (serial writers of many streams) */
} ferry__container_stream_init_t;

int ferry__container_stream_init(ferry__container_stream_t *s, const ferry__container_stream_init_t *init);
void ferry__container_stream_release(ferry__container_stream_t *s);
int ferry__container_stream_write(ferry__container_stream_t *s, const void *buf, size_t len, size_t *done);
/* Reads from the position, up to len bytes or the stream's end; checks
 * every chunk it returns bytes of when the stream has data checksums
 * (check.c). Does not move the position on failure of a step. */
int ferry__container_stream_read(ferry__container_stream_t *s, void *buf, size_t len, size_t *done);
/* One step of a read from the position without checks: through the cache,
 * or straight into out when want fills it; *got > 0 unless at the end. */
int ferry__container_read_plain(ferry__container_stream_t *s, unsigned char *out, size_t want, size_t *got);
int ferry__container_stream_seek(ferry__container_stream_t *s, uint64_t position);
/* Writes buffered data, then the trailers of every chunk changed since the
 * last flush (recomputing checksums of chunks not written by appending).
 * Durable streams sync before the trailers and, unless a later sync of the
 * file by the same process covers them (the serial writer's, before the
 * completion record), after. */
enum { FERRY__CONTAINER_SYNC_AFTER = 1, FERRY__CONTAINER_SYNC_LATER = 0 };
int ferry__container_stream_flush(ferry__container_stream_t *s, int sync_after);
/* 1 when the chunk trailers on disk record the stream's whole length (its
 * last flush wrote them all); 0 when a failed flush left them behind it. */
int ferry__container_stream_recorded(const ferry__container_stream_t *s);

/* Collective mode (collect.c): the stream's writes and trailers go to its
 * outbox instead of the file. ferry__container_stream_prepare moves the
 * buffer there and queues the trailers of the chunks that changed (a flush
 * without the file); the collector writes them; then
 * ferry__container_stream_settle records the outcome: 0 written, else what
 * failed (COLLECT_NOTHING: nothing was written, the outbox's data stay for
 * the next flush; COLLECT_DATA: the data may be partly written, the stream
 * fails and ends at its last flushed length; COLLECT_TRAILERS: the data
 * are in the file, the trailers are retried at the next flush). */
typedef struct ferry__container_outbox ferry__container_outbox_t;
/* A new, empty outbox (NULL when out of memory); freeing NULL is fine. */
ferry__container_outbox_t *ferry__container_outbox_new(void);
void ferry__container_outbox_free(ferry__container_outbox_t *o);
/* Queues len bytes for file offset at (joined to the last piece when they follow it). */
int ferry__container_outbox_data(ferry__container_outbox_t *o, uint64_t at, const void *data, size_t len);
/* Queues an encoded trailer for file offset at, of the chunk starting at chunk_start;
 * collector_crc: its data CRC is not known (the chunk was not written by appending), the
 * collector computes it from the file. */
int ferry__container_outbox_trailer(ferry__container_outbox_t *o, uint64_t at, uint64_t chunk_start,
                                    int collector_crc, const unsigned char *raw);
/* The next queued trailer's encoded bytes from *cursor (0 to start), or NULL at the end. */
const unsigned char *ferry__container_outbox_next_trailer(const ferry__container_outbox_t *o, size_t *cursor);
void ferry__container_outbox_drop_trailers(ferry__container_outbox_t *o);
void ferry__container_outbox_clear(ferry__container_outbox_t *o);

enum { FERRY__COLLECT_DONE, FERRY__COLLECT_NOTHING, FERRY__COLLECT_DATA, FERRY__COLLECT_TRAILERS };
int ferry__container_stream_prepare(ferry__container_stream_t *s);
void ferry__container_stream_settle(ferry__container_stream_t *s, int cls, int phase);

/* The data CRC of the first used bytes of chunk b, read back from the file
 * (scratch: len bytes of memory to read through). */
typedef struct ferry__container_scratch {
    unsigned char *buf;
    size_t len;
} ferry__container_scratch_t;
int ferry__container_chunk_crc(ferry__fs_file_t *fs, const ferry__container_geometry_t *g, uint64_t b, uint64_t used,
                               ferry__container_scratch_t *scratch, uint32_t *crc);

/* ---- check.c: reading chunks that carry data checksums ---- */

/* 1 when chunk b of the stream (id, stream) at g has a valid trailer of its
 * own (magic, CRC, container id, stream id, chunk index, used <= capacity). */
int ferry__container_read_trailer(ferry__fs_file_t *fs, const ferry__container_geometry_t *g, uint64_t id,
                                  uint32_t stream, uint64_t b, ferry__container_trailer_t *tr);
/* One step of a read from the position that returns only bytes of chunks
 * whose trailer and data CRC it checked (see check.c): MPI_ERR_IO naming
 * the stream, the chunk and the file when one fails. */
int ferry__container_read_checked(ferry__container_stream_t *s, unsigned char *out, size_t want, size_t *got);

/* ---- set.c ---- */

struct ferry_container_set {
    char *path; /* owned */
    uint32_t nfiles, streams;
    ferry__container_file_t *files; /* nfiles, owned */
    uint32_t *file_of, *local_of;   /* per stream, owned */
    int complete;
    int creating; /* create.c's set, written by ferry_container_serial_write */
    struct ferry__container_stream *writers; /* creating: one per stream */
    /* Reading checksummed streams: a checked reader of the last stream read (reader_of, -1 none). */
    struct ferry__container_stream reader;
    int reader_of;
    uint64_t id;              /* the container's (file 0's, or its buddy copy's XOR the mask) */
    unsigned char *from_buddy; /* per file slot: 1 when it holds the buddy copy of the primary file's streams */
    char *notes;              /* owned, "" or lines: which primary files the buddy copies stand in for, and why */
};

/* Loads the whole set at path (every file's metadata, the stream map);
 * incomplete files are refused unless allow_incomplete, in which case their
 * lengths come from the chunk trailers. */
int ferry__container_set_load(const char *path, int allow_incomplete, int writable, ferry_container_set_t *out);
void ferry__container_set_free(ferry_container_set_t set);

/* ---- the parallel handle (handle.c, open.c, mapped.c, api.c) ---- */

typedef struct ferry__container_open_file {
    uint32_t index;
    ferry__fs_file_t *fs; /* owned */
} ferry__container_open_file_t;

struct ferry_container {
    MPI_Comm comm;      /* the private duplicate of the caller's (comm.c; borrowed) */
    MPI_Comm file_comm; /* writing: the ranks sharing this rank's file (its root is rank 0); else MPI_COMM_NULL */
    int rank, nprocs;
    char *path; /* owned, as opened */
    int64_t path_hash; /* ferry__container_hash of path: ranks must name the same one */
    int writing, durable;
    ferry__container_stream_t *streams; /* nstreams, owned; writing: exactly one */
    ferry__container_stream_t *buddy;   /* owned; writing with buddy copies: the stream's copy (buddy.c) */
    int nstreams, current;
    ferry__container_open_file_t *files; /* the physical files this rank has open, owned */
    int nfiles;
    uint32_t file_count, stream_count;
    uint64_t block_size;
    /* Writing, on each file's root: that file's superblock and stream table. */
    ferry__container_super_t super;
    ferry__container_entry_t *entries;
    long long meta_calls; /* file-system opens, closes, stats, syncs, size changes */
    /* Collective mode (collect.c): this rank's collector group (its collector is rank 0 there; borrowed:
     * cached on comm), else MPI_COMM_NULL; the 64-byte unit its messages travel in. */
    MPI_Comm collect_comm;
    MPI_Datatype collect_unit;
    struct ferry__container_cookie *cookies; /* the FILEs open on this handle (cookie.c); they own themselves */
};

/* What each rank brings to a collective creation (plan.c). */
enum {
    FERRY__ASK_CLS, FERRY__ASK_CHUNK, FERRY__ASK_FILES, FERRY__ASK_NODE, FERRY__ASK_BLOCK, FERRY__ASK_FLAGS,
    FERRY__ASK_PATH, FERRY__ASK_COLLECT, FERRY__ASK_BUDDY, FERRY__ASK_WORDS
};
typedef struct ferry__container_ask {
    int64_t w[FERRY__ASK_WORDS]; /* FLAGS: 1 data checksums, 2 durable; PATH: ferry__container_hash of the path */
} ferry__container_ask_t;

/* Collective: plans the container on rank 0 from every rank's ask, creates
 * its files and starts this rank's stream; returns the agreed outcome. */
int ferry__container_create_collectively(ferry_container_t c, const ferry__container_ask_t *ask, size_t buffer_size);

/* comm.c, collective over comm the first time: the container's private
 * duplicate of comm (borrowed: cached on comm, freed with it, or by
 * MPI_Finalize); path names the container in messages. */
int ferry__container_private_comm(MPI_Comm comm, const char *path, MPI_Comm *out);

/* comm.c: collective mode's collector groups cached on the private communicator comm, by the files
 * and collector_size asked (MPI_COMM_NULL: none yet; borrowed). A new group is kept after every
 * rank agreed it was made, in a node allocated before (NULL: out of memory). */
struct ferry__container_group;
MPI_Comm ferry__container_group_find(MPI_Comm comm, int files, int collector_size);
struct ferry__container_group *ferry__container_group_node(void);
void ferry__container_group_keep(MPI_Comm comm, struct ferry__container_group *node, int files, int collector_size,
                                 MPI_Comm group);

/* Collective over comm: a new handle on the private duplicate of comm;
 * result is the caller's handle pointer (set to NULL here, may be NULL). A
 * NULL path or result only sets *local_cls (so the caller still joins the
 * collectives that follow, and every rank fails alike); a failure to
 * duplicate comm returns the class. */
int ferry__container_handle_create(MPI_Comm comm, const char *path, int writing, ferry_container_t *result,
                                   int *local_cls, ferry_container_t *out);
/* The end of a collective open: on success (cls 0) *result = c, else c is
 * freed; returns the API's error code. */
int ferry__container_handle_hand_over(ferry_container_t c, int cls, ferry_container_t *result);
/* Closes the handle's files, frees its communicators and memory. */
void ferry__container_handle_free(ferry_container_t c);
/* Opens physical file k of the container (already open: returns it). */
int ferry__container_handle_file(ferry_container_t c, uint32_t k, int flags, ferry__fs_file_t **fs);
/* FNV-1a of len bytes, as a nonnegative int64 (it travels in MPI_INT64_T
 * words): the path every rank names, the processor name of a node. */
int64_t ferry__container_hash(const void *bytes, size_t len);
/* The API exit of a parallel call: the error code of cls (0: MPI_SUCCESS). */
int ferry__container_return(int cls);

/* collect.c: collective mode. After a successful open for writing, forms the collector groups
 * (collector_size ranks of a file each, or one per node) and gives the stream its outbox;
 * collective over c->comm, agreed. */
int ferry__container_collect_start(ferry_container_t c, int files, int collector_size);
/* Flushes this rank's stream: alone, or in collective mode together with its collector group
 * (every member gets the collector's outcome); what names the API call in messages. */
int ferry__container_flush_stream(ferry_container_t c, const char *what);

/* buddy.c: after a successful open for writing with buddy copies, the roots create and head the
 * buddy files and every rank starts its stream's copy; collective over c->comm, agreed. */
int ferry__container_buddy_start(ferry_container_t c, size_t buffer_size);
/* Root of a file when closing with buddy copies: the superblock of its buddy copy file. */
ferry__container_super_t ferry__container_buddy_super(const ferry__container_super_t *primary);
/* Writes to stream s of c and, when s is the writer's stream and it has a buddy copy, to the copy
 * too (the first failure's class; *done is the primary's); moves both to position. */
int ferry__container_write_stream(ferry_container_t c, ferry__container_stream_t *s, const void *buf, size_t len,
                                  size_t *done);
int ferry__container_move(ferry_container_t c, ferry__container_stream_t *s, uint64_t position);
/* Readers: loads into f the buddy copy of primary file k of set (file (k + 1) mod n of the buddy
 * set), checked to be it and complete; learns the set's file count, stream count and id from the
 * buddy set's file 0 (file 0 itself could not be loaded); adds a line to the set's notes; the error
 * naming the streams no loaded file holds (a primary file and its copy both lost). */
int ferry__container_load_copy(ferry_container_set_t set, uint32_t k, ferry__container_file_t *f);
int ferry__container_learn_from_copy(ferry_container_set_t set);
void ferry__container_add_note(ferry_container_set_t set, const char *line);
int ferry__container_lost_streams(ferry_container_set_t set, int cls, const char *cause);
/* plan.c: empties a file being replaced (a new, empty one is left alone). */
int ferry__container_empty_file(ferry_container_t c, ferry__fs_file_t *fs);

/* api.c: moves stream s of c (its FILE's, or the selected one) as
 * ferry_container_seek does; what names the call in messages. */
int ferry__container_seek(ferry_container_t c, ferry__container_stream_t *s, MPI_Offset offset, int whence,
                          const char *what);

/* ---- cookie.c: stdio FILEs over a handle's streams ---- */

/* Pushes what the handle's FILEs buffer into their streams (fflush of
 * each); 0, or the class of the first failure. */
int ferry__container_cookies_flush(ferry_container_t c);
/* The handle is going away: its FILEs are left attached to nothing (their
 * transfers fail with EBADF, their fclose only frees them). */
void ferry__container_cookies_orphan(ferry_container_t c);

/* ---- messages ---- */

/* Records "ferry container '<path>'[ rank r]: <what>: <the recorded cause>" and returns cls. */
int ferry__container_fail(int cls, const char *path, int rank, const char *what);
/* 0 when a host MPI call of container call what returned rc == MPI_SUCCESS; else records "the host MPI's
 * <call> failed: <the host's message>" (ferry__error_host, naming c's path, which ferry__container_fail
 * keeps once) and returns MPI_ERR_INTERN. Who calls it decides how the ranks agree on the failure. */
int ferry__container_host(ferry_container_t c, int rc, const char *what, const char *call);
/* ferry__error_agree over c->comm for c's call what (collective). When the agreement's own
 * reduction failed, whose message names the call alone, the message names the container too. */
int ferry__container_agree(ferry_container_t c, int cls, const char *what);

#endif

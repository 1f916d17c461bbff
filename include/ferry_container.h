/*
 * ferry_container.h: task-local containers.
 *
 * Many programs write one file per rank (logs, particles, checkpoints,
 * trace buffers). A container keeps each rank's private byte stream in one
 * shared file (or a few), in chunks aligned to the file-system block so no
 * two ranks ever share a block: open and close are collective and cost a
 * fixed number of collectives, writes and reads in between are plain
 * fwrite/fread-like calls with no communication. Streams survive kill -9 of
 * the whole job up to their last flush; `ferry-container recover` completes
 * a container whose writers died. Any number of ranks can read it back
 * (ferry_container_open_mapped), and the serial API reads it without MPI.
 * docs/container.md describes the API, docs/format/container.md the format.
 *
 * Parallel calls return MPI_SUCCESS or an error code whose class
 * (MPI_Error_class) is a standard one and whose string (ferry_Error_string)
 * names the operation, the container, the rank and the cause; collective
 * ones fail on every rank when any rank fails. They do not call error
 * handlers. Serial calls (ferry_container_serial_*) need no MPI_Init and
 * return MPI_SUCCESS or a bare error class; ferry_container_error_message()
 * gives the message. Offsets and lengths are 64-bit.
 */
#ifndef FERRY_CONTAINER_H
#define FERRY_CONTAINER_H

#include <stddef.h>
#include <stdio.h>

#include "ferry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ferry_container *ferry_container_t;
typedef struct ferry_container_set *ferry_container_set_t;

/* ferry_container_params_t.files: one physical file per node. */
#define FERRY_CONTAINER_FILE_PER_NODE (-1)
/* ferry_container_params_t.data_checksums: no data checksums (they are on by default). */
#define FERRY_CONTAINER_CHECKSUMS_OFF (-1)
/* ferry_container_modes_t.collector_size: one collector per node (within each file). */
#define FERRY_CONTAINER_COLLECTOR_PER_NODE (-1)

/* Settings of a container opened for writing. Zero means the default.
 * Rank 0's block_size, data_checksums and durable apply to all, files must be
 * the same on every rank;
 * chunk_size and buffer_size are each rank's own. */
typedef struct ferry_container_params {
    MPI_Offset chunk_size;  /* this rank's chunk size on disk, rounded up to whole blocks; the last 64
                             * bytes of each chunk are its trailer. Default 1 MiB */
    MPI_Offset block_size;  /* alignment: a power of two from 512 to 2^30; default the file system's
                             * (Lustre stripe size, st_blksize otherwise) */
    int files;              /* 0 or 1: one file; n > 1: n files of contiguous rank groups;
                             * FERRY_CONTAINER_FILE_PER_NODE */
    int data_checksums;     /* 0 (default) or 1: each chunk trailer also holds a CRC-32C of the chunk's
                             * data, which every reader checks before returning a byte of it;
                             * FERRY_CONTAINER_CHECKSUMS_OFF: none (docs/container.md: the cost, about
                             * 13% more processor time per byte written through the page cache).
                             * Metadata always has checksums */
    int durable;            /* 1: flush and close also fsync (survive power loss, not only kill -9) */
    size_t buffer_size;     /* this rank's write buffer (or read cache); default 64 KiB; larger
                             * transfers bypass it */
} ferry_container_params_t;

/* The write modes of issue 29, for ferry_container_open_write_modes. Apart from
 * ferry_container_params_t, which stays as it was, so that programs built against
 * an earlier ferry keep working (the library would read past a params struct that
 * grew at its end). Zero means off; both must be the same on every rank.
 *   collector_size: collective mode (SIONlib's collectors): k > 0: groups of k
 *       consecutive ranks of a file, whose first rank (the collector) writes the
 *       whole group's data and trailers; FERRY_CONTAINER_COLLECTOR_PER_NODE: one
 *       group per node and file. ferry_container_flush becomes collective over the
 *       group, a member keeps what it wrote since its last flush in memory, and the
 *       file is the same byte for byte.
 *   buddy: 1: every stream is also written into a second set of files, PATH.buddy
 *       (and PATH.buddy.<k>), in which file k holds the streams of primary file
 *       k - 1 (mod the file count): losing one file (one node's storage, with
 *       FERRY_CONTAINER_FILE_PER_NODE) loses no stream; readers take a stream from
 *       the buddy copy when its primary file is missing or fails its checks. Not
 *       with collector_size (yet). */
typedef struct ferry_container_modes {
    int collector_size;
    int buddy;
} ferry_container_modes_t;

/* What a handle or a set knows of one stream. */
typedef struct ferry_container_info {
    int stream;                /* stream id: the rank that wrote it */
    int streams;               /* streams in the container */
    int files;                 /* physical files */
    int file_index;            /* the file holding this stream */
    MPI_Offset length;         /* bytes in the stream (writing: so far) */
    MPI_Offset chunk_size;     /* on disk */
    MPI_Offset chunk_capacity; /* stream bytes per chunk (chunk_size - 64) */
    MPI_Offset chunks;         /* chunks holding the stream */
    MPI_Offset block_size;
    int data_checksums;        /* chunk trailers carry data CRCs */
    int write_failed;          /* a write of this stream failed; it holds what came before */
    long long metadata_calls;  /* parallel handles: file opens, closes, stats, syncs and size
                                * changes this rank made for the container so far */
} ferry_container_info_t;

/* ---- Parallel API ---- */

/* Collective over comm: creates the container at path (replacing any file
 * there) with one stream per rank, stream id = rank in comm. params may be
 * NULL (defaults). */
FERRY_API int ferry_container_open_write(MPI_Comm comm, const char *path, const ferry_container_params_t *params,
                                         ferry_container_t *container);

/* ferry_container_open_write with write modes (modes may be NULL: none). */
FERRY_API int ferry_container_open_write_modes(MPI_Comm comm, const char *path, const ferry_container_params_t *params,
                                               const ferry_container_modes_t *modes, ferry_container_t *container);

/* Collective over comm: opens a complete container for reading, each rank
 * its own stream (stream id = rank). comm must have as many ranks as
 * the container has streams; otherwise MPI_ERR_ARG (use the mapped open). */
FERRY_API int ferry_container_open_read(MPI_Comm comm, const char *path, ferry_container_t *container);

/* Collective over comm: opens a complete container for reading with any
 * number of ranks; each rank names the count streams it reads (any ids,
 * count may be 0, ranks may name the same stream). The first one is
 * selected; ferry_container_select switches. */
FERRY_API int ferry_container_open_mapped(MPI_Comm comm, const char *path, const int *streams, int count,
                                          ferry_container_t *container);

/* Collective: writers flush, then each file's root writes the end table and,
 * last, the completion record. Frees the handle and sets it to NULL, also
 * on error. */
FERRY_API int ferry_container_close(ferry_container_t *container);

/* Not collective. Appends (or overwrites, after a seek back) len bytes at
 * the stream position, through as many chunks as it takes; *done is what
 * was written (len unless an error is returned). After a failed write the
 * stream ends where the failed part began and later writes fail. */
FERRY_API int ferry_container_write(ferry_container_t container, const void *buf, size_t len, size_t *done);

/* Not collective. Reads up to len bytes from the selected stream's
 * position; *done < len only at the end of the stream (not an error). */
FERRY_API int ferry_container_read(ferry_container_t container, void *buf, size_t len, size_t *done);

/* Not collective (collective over the collector group in collective mode,
 * modes.collector_size != 0). Writes what the buffer holds and records the stream's
 * length in its chunk trailers: from now on those bytes survive kill -9 of
 * the job (and power loss with params.durable). */
FERRY_API int ferry_container_flush(ferry_container_t container);

/* Not collective. Moves the selected stream's position: whence is
 * MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END; a negative result is
 * MPI_ERR_ARG. Writers may seek past the end (the gap reads as zeros). */
FERRY_API int ferry_container_seek(ferry_container_t container, MPI_Offset offset, int whence);
FERRY_API int ferry_container_tell(ferry_container_t container, MPI_Offset *position);

/* Not collective. Reading: bytes from the position to the end of the
 * stream. Writing: bytes left in the current chunk before the stream
 * moves to its next one. */
FERRY_API int ferry_container_bytes_avail(ferry_container_t container, MPI_Offset *bytes);

/* Not collective. *flag = 1 when the position is at (or past) the end of the stream. */
FERRY_API int ferry_container_eof(ferry_container_t container, int *flag);

/* Not collective. Mapped handles: makes the index-th stream named at open
 * the selected one (its position is kept). */
FERRY_API int ferry_container_select(ferry_container_t container, int index);

/* Not collective. Describes the selected stream. */
FERRY_API int ferry_container_info(ferry_container_t container, ferry_container_info_t *info);

/* Not collective. A stdio FILE over the selected stream, so code written
 * with fwrite/fprintf/fputs (mode "w", or "a" to start at the stream's end)
 * or fread/fgets/fscanf (mode "r", on a handle opened for reading) works
 * on a container unchanged; fseek and ftell move the stream's position.
 * The FILE keeps the stream it was opened on whatever is selected later.
 * stdio buffers in front of the stream: ferry_container_flush and
 * ferry_container_close first fflush the handle's FILEs. fclose the FILE
 * before or after closing the container (after, it only frees it; a
 * transfer on it then fails with EBADF). Errors set errno (ENOSPC, EDQUOT,
 * EBADF, EINVAL, otherwise EIO) and the FILE's error flag, and
 * ferry_container_error_message() gives the container's message. NULL on
 * failure (bad mode, a mode the handle cannot do, no stream on this rank). */
FERRY_API FILE *ferry_container_fopen(ferry_container_t container, const char *mode);

/* ---- Serial API (no MPI_Init needed) ---- */

/* ferry_container_serial_open flags: open an incomplete container (writers
 * never closed it), with each stream's length as its chunk trailers
 * recorded it at the last flush. */
#define FERRY_CONTAINER_INCOMPLETE_OK 1

/* Opens every file of the container at path. */
FERRY_API int ferry_container_serial_open(const char *path, int flags, ferry_container_set_t *set);
/* Closes the set (a created one is completed first: its end table and
 * completion record written) and sets *set to NULL. NULL or a NULL *set is
 * MPI_ERR_ARG, as for ferry_container_close. */
FERRY_API int ferry_container_serial_close(ferry_container_set_t *set);

/* The set: streams, files, complete (1) or incomplete (0). */
FERRY_API int ferry_container_serial_describe(ferry_container_set_t set, int *streams, int *files, int *complete);
FERRY_API int ferry_container_serial_stream(ferry_container_set_t set, int stream, ferry_container_info_t *info);

/* One physical file of a set. */
typedef struct ferry_container_file_info {
    int index;
    int major, minor;          /* format version */
    int streams;               /* streams stored in this file */
    int complete;              /* 1 closed by its writers, 2 rebuilt by recover, 0 never completed */
    MPI_Offset size;           /* bytes, as opened */
    MPI_Offset block_size, data_start, row_size, rows;
    unsigned long long id;     /* the container id */
} ferry_container_file_info_t;
FERRY_API int ferry_container_serial_file(ferry_container_set_t set, int index, ferry_container_file_info_t *info);

/* Reads up to len bytes of stream at position; *done < len only at its end. */
FERRY_API int ferry_container_serial_read(ferry_container_set_t set, int stream, MPI_Offset position, void *buf,
                                          size_t len, size_t *done);

/* Where chunk `chunk` of stream lies: *offset in physical file *file_index,
 * holding *used stream bytes. */
FERRY_API int ferry_container_serial_chunk(ferry_container_set_t set, int stream, MPI_Offset chunk, int *file_index,
                                           MPI_Offset *offset, MPI_Offset *used);

/* Creates a one-file container at path for `streams` streams with the given
 * chunk sizes on disk (rounded up to block_size, or the file system's block
 * when 0); write each stream with ferry_container_serial_write (appends) and
 * finish with ferry_container_serial_close. */
typedef struct ferry_container_layout {
    int streams;
    const MPI_Offset *chunk_sizes; /* streams entries */
    MPI_Offset block_size;
    int data_checksums;
} ferry_container_layout_t;
FERRY_API int ferry_container_serial_create(const char *path, const ferry_container_layout_t *layout,
                                            ferry_container_set_t *set);
FERRY_API int ferry_container_serial_write(ferry_container_set_t set, int stream, const void *buf, size_t len);

/* Progress of a long serial operation: done of total bytes. */
typedef void ferry_container_progress_fn(void *arg, MPI_Offset done, MPI_Offset total);

/* Checks every structure and checksum (docs/format/container.md, Verifying)
 * and reports each problem found through report (may be NULL); returns
 * MPI_SUCCESS when all hold, MPI_ERR_BAD_FILE when some do not (problems
 * counts them; damaged metadata fails the load itself), another class when
 * the container cannot be read at all. An incomplete container is checked
 * as recover would see it, with incomplete = 1. */
typedef struct ferry_container_check {
    ferry_container_progress_fn *progress; /* may be NULL */
    void *arg;
    void (*report)(void *arg, const char *problem); /* may be NULL */
    long long problems;
    MPI_Offset chunks, bytes; /* chunks and stream bytes checked */
    int incomplete;           /* the container was never closed: checked up to each stream's last flush */
} ferry_container_check_t;
FERRY_API int ferry_container_verify(const char *path, ferry_container_check_t *check);

/* Completes an incomplete container in place: every stream keeps the bytes
 * its last flush recorded. *recovered_bytes sums them; *was_complete = 1 when
 * nothing needed doing. */
FERRY_API int ferry_container_recover(const char *path, MPI_Offset *recovered_bytes, int *was_complete);

/* What the set's loading worked around ("" when nothing): one line per primary file that was
 * missing or failed its checks and whose streams are read from the buddy copy. */
FERRY_API const char *ferry_container_serial_notes(ferry_container_set_t set);

/* The message of the last error on this thread ("" if none). */
FERRY_API const char *ferry_container_error_message(void);

#ifdef __cplusplus
}
#endif

#endif

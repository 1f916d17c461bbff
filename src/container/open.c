/*
 * Collective open for writing, and collective close.
 *
 * Open, one file (the default): every rank opens the file, then one gather
 * brings rank 0 every rank's arguments and open outcome; rank 0 plans the
 * rows, empties the file and writes its superblock and stream table, and
 * one scatter gives every rank its geometry and the outcome: three
 * collectives with the duplication of the communicator, an agreement only
 * when something failed. Several files: rank 0 plans them all (ranks
 * grouped by contiguous ranges, or by node from their processor names) and
 * a scatterv also hands each file's root its stream table; the roots create
 * their files, a split gives each file its communicator, and one agreement
 * ends the open (after it every root has emptied its file, so no member
 * writes before). Close: each rank flushes, one gather brings its file's
 * root the lengths, the root writes the end table and then the completion
 * record, one agreement. The count never depends on the chunks.
 */
#include <string.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"
#include "progress/progress.h"

static int local_checks(ferry_container_t c, const ferry_container_params_t *p, const ferry_container_modes_t *m,
                        int local_cls)
{
    if (local_cls) return local_cls;
    if (p->chunk_size < 0) return ferry__error_set(MPI_ERR_ARG, "negative chunk size %lld", (long long)p->chunk_size);
    if (p->files < FERRY_CONTAINER_FILE_PER_NODE) return ferry__error_set(MPI_ERR_ARG, "files = %d", p->files);
    if (m->collector_size < FERRY_CONTAINER_COLLECTOR_PER_NODE)
        return ferry__error_set(MPI_ERR_ARG, "collector_size = %d", m->collector_size);
    if (m->buddy < 0 || m->buddy > 1) return ferry__error_set(MPI_ERR_ARG, "buddy = %d (0 or 1)", m->buddy);
    if (m->buddy && m->collector_size)
        return ferry__error_set(MPI_ERR_ARG, "buddy copies and collective mode (collector_size) together are not "
                                "supported");
    FERRY_TRY(ferry__container_check_block(p->block_size, c->path));
    /* One file: open it now, so the gather carries the outcome. */
    ferry__fs_file_t *fs;
    return p->files > 1 || p->files == FERRY_CONTAINER_FILE_PER_NODE
               ? 0
               : ferry__container_handle_file(c, 0, FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, &fs);
}

static int64_t node_hash(void)
{
    char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int len = 0;
    MPI_Get_processor_name(name, &len);
    return ferry__container_hash(name, (size_t)len);
}

static int open_write_steps(ferry_container_t c, const ferry_container_params_t *p, const ferry_container_modes_t *m,
                            int local_cls)
{
    ferry__container_ask_t ask = {{0}};
    ask.w[FERRY__ASK_CLS] = local_checks(c, p, m, local_cls);
    ask.w[FERRY__ASK_CHUNK] = p->chunk_size;
    ask.w[FERRY__ASK_FILES] = p->files;
    ask.w[FERRY__ASK_NODE] = p->files == FERRY_CONTAINER_FILE_PER_NODE ? node_hash() : 0;
    ask.w[FERRY__ASK_BLOCK] = p->block_size;
    ask.w[FERRY__ASK_FLAGS] = (p->data_checksums >= 0 ? 1 : 0) | (p->durable ? 2 : 0); /* checksums by default */
    ask.w[FERRY__ASK_PATH] = c->path_hash;
    ask.w[FERRY__ASK_COLLECT] = m->collector_size;
    ask.w[FERRY__ASK_BUDDY] = m->buddy;
    FERRY_TRY(ferry__container_create_collectively(c, &ask, p->buffer_size));
    if (m->buddy) FERRY_TRY(ferry__container_buddy_start(c, p->buffer_size));
    return ferry__container_collect_start(c, p->files, m->collector_size); /* every rank opened: all get here */
}

int ferry_container_open_write_modes(MPI_Comm comm, const char *path, const ferry_container_params_t *params,
                                     const ferry_container_modes_t *modes, ferry_container_t *container)
{
    ferry_container_t c;
    int local_cls, cls = ferry_core_init();
    if (!cls) cls = ferry__container_handle_create(comm, path, 1, container, &local_cls, &c);
    if (cls) return ferry__container_return(cls);
    ferry_container_params_t defaults = {0};
    ferry_container_modes_t off = {0};
    cls = open_write_steps(c, params ? params : &defaults, modes ? modes : &off, local_cls);
    return ferry__container_handle_hand_over(c, cls, container);
}

int ferry_container_open_write(MPI_Comm comm, const char *path, const ferry_container_params_t *params,
                               ferry_container_t *container)
{
    return ferry_container_open_write_modes(comm, path, params, NULL, container);
}

/* What each rank tells its file's root at close, per copy of its stream (the stream, its buddy copy). */
enum { G_LENGTH, G_FAILED, G_UNRECORDED, G_WORDS };

/* Root: the index of the first member whose trailers do not record its
 * stream's length (its close-time flush failed), or -1. */
static int first_unrecorded(const int64_t *gathered, uint32_t n, int stride)
{
    for (uint32_t t = 0; t < n; t++)
        if (gathered[(size_t)stride * t + G_UNRECORDED]) return (int)t;
    return -1;
}

/* Root: the end table from every member's length, then the completion record,
 * of its file (copy 0) or of its buddy copy file (copy 1; gathered words at stride).
 * Not when a member could not record its stream: an end table giving a length
 * its chunk trailers do not would make the stream's last chunks unreadable in
 * a container that looks complete; left incomplete, recover takes each
 * stream's length from its newest trailers (every flushed byte). */
static int root_finishes(ferry_container_t c, const int64_t *gathered, int stride, int copy)
{
    uint32_t n = c->super.local_streams;
    if (gathered) gathered += copy * G_WORDS;
    int unrecorded = gathered ? first_unrecorded(gathered, n, stride) : -1;
    if (unrecorded >= 0)
        return ferry__error_set((int)gathered[(size_t)stride * unrecorded + G_UNRECORDED],
                                "no end table: the writer of stream %u could not record its last bytes (its flush at "
                                "close failed); 'ferry-container recover' completes the container with every flushed "
                                "byte", c->entries[unrecorded].stream);
    ferry__container_end_t *ends = ferry__calloc(n, sizeof *ends);
    if (!ends || !gathered) {
        ferry__free(ends);
        return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    }
    for (uint32_t t = 0; t < n; t++)
        ends[t] = (ferry__container_end_t){(uint64_t)gathered[(size_t)stride * t + G_LENGTH],
                                           gathered[(size_t)stride * t + G_FAILED] ? 1u : 0u};
    ferry__container_super_t buddy = ferry__container_buddy_super(&c->super);
    ferry__container_finish_t fin = {copy ? c->buddy->fs : c->streams->fs, copy ? &buddy : &c->super, c->entries,
                                     ends, FERRY__CONTAINER_HOW_CLOSED, c->durable};
    if (c->durable) c->meta_calls += 2;
    int cls = ferry__container_write_end(&fin);
    ferry__free(ends);
    /* The end table needs room past the last row (usually a fresh block):
     * on a full file system it can fail after every stream is safe. */
    if (!cls) return 0;
    char cause[512];
    snprintf(cause, sizeof cause, "%s", ferry__error_message());
    return ferry__error_set(cls, "no end table%s: 'ferry-container recover' completes the container once there is "
                            "room (every stream's flushed bytes are in it): %s", copy ? " in the buddy copy" : "",
                            cause);
}

static void tell_root(const ferry__container_stream_t *s, int cls, int64_t *w)
{
    w[G_LENGTH] = (int64_t)s->length;
    w[G_FAILED] = s->failed || cls;
    w[G_UNRECORDED] = ferry__container_stream_recorded(s) ? 0 : cls ? cls : MPI_ERR_IO;
}

/* Collective over the file's ranks; the caller agrees over every rank. A failed gather leaves the file
 * without its end table (incomplete: 'ferry-container recover' completes it from the trailers). */
static int close_write(ferry_container_t c, const char *what)
{
    MPI_Comm file_comm = c->file_comm == MPI_COMM_NULL ? c->comm : c->file_comm; /* one file: every rank */
    /* Each rank syncs its own trailers: on a cluster file system the root's
     * fsync does not cover the dirty pages of other nodes. */
    int cls = ferry__container_flush_stream(c, what), file_rank, members, root_cls = 0;
    int words = c->buddy ? 2 * G_WORDS : G_WORDS;
    MPI_Comm_rank(file_comm, &file_rank);
    MPI_Comm_size(file_comm, &members);
    int64_t mine[2 * G_WORDS], *gathered = NULL;
    tell_root(c->streams, cls, mine);
    if (c->buddy) tell_root(c->buddy, cls, mine + G_WORDS);
    if (file_rank == 0) gathered = ferry__calloc((size_t)members * (size_t)words, sizeof *gathered);
    int rc = ferry__progress_gather(mine, words, MPI_INT64_T, gathered, words, MPI_INT64_T, 0, file_comm);
    int host_cls = ferry__container_host(c, rc, what, "MPI_Gather (every stream's length to its file's root)");
    if (file_rank == 0 && !host_cls) root_cls = root_finishes(c, gathered, words, 0);
    if (file_rank == 0 && !host_cls && c->buddy) {
        int copy_cls = root_finishes(c, gathered, words, 1); /* the copy completes even when the primary cannot */
        root_cls = root_cls ? root_cls : copy_cls;
    }
    ferry__free(gathered);
    return cls ? cls : host_cls ? host_cls : root_cls;
}

int ferry_container_close(ferry_container_t *container)
{
    if (!container || !*container)
        return ferry__container_return(ferry__error_set(MPI_ERR_ARG, "ferry_container_close: no container"));
    ferry_container_t c = *container;
    *container = NULL;
    const char *what = "ferry_container_close";
    int cls = ferry__container_cookies_flush(c); /* what FILEs still buffer belongs in the streams */
    if (c->writing) {
        int closed = close_write(c, what);
        cls = cls ? cls : closed;
    }
    if (cls) cls = ferry__container_fail(cls, c->path, c->rank, what);
    if (c->writing) cls = ferry__container_agree(c, cls, what);
    ferry__container_handle_free(c);
    return ferry__container_return(cls);
}

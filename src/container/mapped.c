/*
 * Collective open for reading: each rank names the streams it reads (its
 * own, by default). One gather of the counts and one gatherv of the names
 * bring the requests to rank 0, which loads the set's metadata (O(streams)
 * memory there) and answers every request in one scatterv; each rank then
 * opens the physical files its streams live in. One agreement ends it.
 */
#include <string.h>

#include "container/container_int.h"
#include "core/core.h"
#include "error/error.h"
#include "progress/progress.h"

/* One answered request: where a stream is and how long. */
enum {
    W_CLS, W_STREAM, W_FILE, W_DATA_START, W_ROW_SIZE, W_ROW_OFFSET, W_CHUNK_SIZE, W_LENGTH, W_FLAGS, W_ID,
    W_FILES, W_STREAMS, W_BLOCK, W_COUNT
};

typedef struct read_request {
    const int *streams; /* this rank's, count entries */
    int count;
    int same_count;     /* the plain open: as many ranks as streams */
} read_request_t;

static void answer(ferry_container_set_t set, int stream, int64_t *w)
{
    ferry__container_file_t *f = &set->files[set->file_of[stream]];
    uint32_t t = set->local_of[stream];
    w[W_STREAM] = stream;
    w[W_FILE] = set->file_of[stream];
    w[W_DATA_START] = (int64_t)f->super.data_start;
    w[W_ROW_SIZE] = (int64_t)f->super.row_size;
    w[W_ROW_OFFSET] = (int64_t)f->entries[t].row_offset;
    w[W_CHUNK_SIZE] = (int64_t)f->entries[t].chunk_size;
    w[W_LENGTH] = (int64_t)f->ends[t].length;
    w[W_FLAGS] = (f->super.flags & FERRY__CONTAINER_FLAG_CHECKSUMS) | (int64_t)(f->ends[t].flags & 1) << 1;
    w[W_ID] = (int64_t)f->super.id;
    w[W_FILES] = set->nfiles;
    w[W_STREAMS] = set->streams;
    w[W_BLOCK] = (int64_t)f->super.block_size;
}

/* Rank 0: loads the set and answers every request (answers[i] for names[i]). */
static int answer_all(ferry_container_t c, const read_request_t *req, const int *names, int total, int64_t *answers)
{
    ferry_container_set_t set;
    FERRY_TRY(ferry__container_set_load(c->path, 0, 0, &set));
    int cls = 0;
    if (req->same_count && set->streams != (uint32_t)c->nprocs)
        cls = ferry__error_set(MPI_ERR_ARG, "%u streams (written by %u ranks), opened by %d ranks: use "
                               "ferry_container_open_mapped", (unsigned)set->streams, (unsigned)set->streams,
                               c->nprocs);
    for (int i = 0; i < total && !cls; i++) {
        if (names[i] < 0 || (uint32_t)names[i] >= set->streams)
            cls = ferry__error_set(MPI_ERR_ARG, "no stream %d (streams are 0 to %u)", names[i],
                                   (unsigned)set->streams - 1);
        else
            answer(set, names[i], answers + (size_t)i * W_COUNT);
    }
    ferry__container_set_free(set);
    return cls;
}

/* The counts and displacements of every rank's requests (rank 0). */
static int *gather_counts(ferry_container_t c, int count, int **displs, int *total)
{
    int *counts = c->rank == 0 ? ferry__calloc((size_t)c->nprocs, sizeof *counts) : NULL;
    *displs = c->rank == 0 ? ferry__calloc((size_t)c->nprocs, sizeof **displs) : NULL;
    ferry__progress_gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, c->comm);
    *total = 0;
    for (int r = 0; counts && *displs && r < c->nprocs; r++) {
        (*displs)[r] = *total;
        *total += counts[r];
    }
    return counts;
}

/* Scales counts and displacements from names to answer words. */
static void to_words(int *counts, int *displs, int n)
{
    for (int r = 0; counts && displs && r < n; r++) {
        counts[r] *= W_COUNT;
        displs[r] *= W_COUNT;
    }
}

/* Rank 0's part between the gatherv and the scatterv. */
static int answer_on_root(ferry_container_t c, const read_request_t *req, const int *names, int total, int64_t *answers)
{
    if (c->rank != 0) return 0;
    if (!names || !answers) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory for %d requests", total);
    int cls = c->path ? answer_all(c, req, names, total, answers) : MPI_ERR_ARG;
    for (int i = 0; i < total; i++) answers[(size_t)i * W_COUNT + W_CLS] = cls;
    return cls;
}

/* Every request to rank 0 and back: mine holds count answers. */
static int exchange(ferry_container_t c, const read_request_t *req, int64_t *mine)
{
    int *displs, total;
    int *counts = gather_counts(c, req->count, &displs, &total);
    int *names = c->rank == 0 ? ferry__malloc(((size_t)total + 1) * sizeof *names) : NULL;
    int64_t *answers = c->rank == 0 ? ferry__calloc((size_t)total + 1, W_COUNT * sizeof *answers) : NULL;
    ferry__progress_gatherv(req->streams, req->count, MPI_INT, names, counts, displs, MPI_INT, 0, c->comm);
    int cls = answer_on_root(c, req, names, total, answers);
    to_words(counts, displs, c->nprocs);
    ferry__progress_scatterv(answers, counts, displs, MPI_INT64_T, mine, req->count * W_COUNT, MPI_INT64_T, 0,
                             c->comm);
    ferry__free(counts);
    ferry__free(displs);
    ferry__free(names);
    ferry__free(answers);
    return cls;
}

static int start_reader(ferry_container_t c, const int64_t *w, ferry__container_stream_t *s)
{
    ferry__fs_file_t *fs;
    FERRY_TRY(ferry__container_handle_file(c, (uint32_t)w[W_FILE], FERRY_FS_READ, &fs));
    ferry__container_stream_init_t init = {
        .fs = fs, .path = c->path, .id = (uint64_t)w[W_ID], .stream = (uint32_t)w[W_STREAM],
        .file_index = (uint32_t)w[W_FILE],
        .geo = {(uint64_t)w[W_DATA_START], (uint64_t)w[W_ROW_SIZE], (uint64_t)w[W_ROW_OFFSET],
                (uint64_t)w[W_CHUNK_SIZE]},
        .checksums = (w[W_FLAGS] & 1) != 0, .length = (uint64_t)w[W_LENGTH]};
    FERRY_TRY(ferry__container_stream_init(s, &init));
    s->write_failed = (w[W_FLAGS] & 2) != 0;
    return 0;
}

static int start_readers(ferry_container_t c, const int64_t *mine, int count)
{
    /* Rank 0 failed: the agreement brings its message. */
    if (count > 0 && mine[W_CLS]) return 0;
    c->streams = ferry__calloc((size_t)(count > 0 ? count : 1), sizeof *c->streams);
    if (!c->streams) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < count; i++) {
        FERRY_TRY(start_reader(c, mine + (size_t)i * W_COUNT, &c->streams[i]));
        c->nstreams++;
    }
    if (count > 0) {
        c->file_count = (uint32_t)mine[W_FILES];
        c->stream_count = (uint32_t)mine[W_STREAMS];
        c->block_size = (uint64_t)mine[W_BLOCK];
    }
    return 0;
}

static int open_read_steps(ferry_container_t c, read_request_t *req, int cls)
{
    if (!req->same_count && (req->count < 0 || (req->count > 0 && !req->streams)) && !cls)
        cls = ferry__error_set(MPI_ERR_ARG, "count %d with %s stream list", req->count,
                               req->streams ? "a" : "a NULL");
    if (cls) req->count = 0;
    int64_t *mine = ferry__calloc((size_t)(req->count > 0 ? req->count : 1), W_COUNT * sizeof *mine);
    if (!mine && !cls) cls = ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    if (!mine) req->count = 0;
    int root_cls = exchange(c, req, mine);
    if (!cls) cls = root_cls ? root_cls : start_readers(c, mine, req->count);
    ferry__free(mine);
    return cls;
}

static int open_for_reading(MPI_Comm comm, const char *path, read_request_t *req, ferry_container_t *container,
                            const char *what)
{
    if (!container) return ferry__container_return(ferry__error_set(MPI_ERR_ARG, "%s: NULL handle pointer", what));
    *container = NULL;
    ferry_container_t c;
    int local_cls, cls = ferry__core_init();
    if (!cls) cls = ferry__container_handle_create(comm, path, 0, &local_cls, &c);
    if (cls) return ferry__container_return(cls);
    int own = c->rank;
    if (req->same_count) req->streams = &own;
    cls = open_read_steps(c, req, local_cls);
    if (cls) cls = ferry__container_fail(cls, c->path ? c->path : "(null)", c->rank, what);
    cls = ferry__error_agree(c->comm, cls, what);
    if (cls) {
        ferry__container_handle_free(c);
        return ferry__container_return(cls);
    }
    *container = c;
    return MPI_SUCCESS;
}

int ferry_container_open_read(MPI_Comm comm, const char *path, ferry_container_t *container)
{
    read_request_t req = {NULL, 1, 1};
    return open_for_reading(comm, path, &req, container, "ferry_container_open_read");
}

int ferry_container_open_mapped(MPI_Comm comm, const char *path, const int *streams, int count,
                                ferry_container_t *container)
{
    read_request_t req = {streams, count, 0};
    return open_for_reading(comm, path, &req, container, "ferry_container_open_mapped");
}

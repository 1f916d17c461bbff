/*
 * Collective open for reading: each rank names the streams it reads (its
 * own, by default). Every rank first opens the set's first file; one
 * gather brings rank 0 each rank's count and outcome (and, for the mapped
 * open, one gatherv the names); rank 0 loads the set's metadata (O(streams)
 * memory there) and answers every rank in one scatterv, saying also
 * whether any rank failed and whether any must open another file. Reading
 * a one-file container thus costs three collectives with the duplication;
 * an agreement follows only when some rank opens another file or failed.
 */
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"
#include "progress/progress.h"

/* One answered request: where a stream is and how long. */
enum {
    W_STREAM, W_FILE, W_DATA_START, W_ROW_SIZE, W_ROW_OFFSET, W_CHUNK_SIZE, W_LENGTH, W_FLAGS, W_ID, W_FILES,
    W_STREAMS, W_BLOCK, W_COUNT
};
/* Before a rank's answers: whether any rank failed, whether an agreement
 * must follow, whether this rank reads from the first file. */
enum { H_FAILED, H_AGREE, H_FIRST, H_COUNT };
/* What each rank tells rank 0 (T_PATH: ferry__container_hash of its path). */
enum { T_COUNT, T_CLS, T_FIRST_FILE_CLS, T_PATH, T_WORDS };

typedef struct read_request {
    const int *streams; /* this rank's, count entries */
    int count;
    int same_count;     /* the plain open: as many ranks as streams */
    const char *what;   /* the API call, for messages */
} read_request_t;

typedef struct root_view {
    ferry_container_set_t set;
    int64_t *tells; /* T_WORDS per rank */
    int *names;  /* every rank's streams, in rank order */
    int *counts, *displs;
    int total;
} root_view_t;

static void answer(ferry_container_set_t set, int stream, int64_t *w)
{
    ferry__container_file_t *f = &set->files[set->file_of[stream]];
    uint32_t t = set->local_of[stream];
    w[W_STREAM] = stream;
    uint32_t k = set->file_of[stream]; /* a buddy copy standing in for file k: its own file of the buddy set */
    w[W_FILE] = set->from_buddy[k] ? FERRY__CONTAINER_BUDDY_FILE + (k + 1) % set->nfiles : k;
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

/* Rank 0: the set, checked against the requests. */
static int load_for(ferry_container_t c, const read_request_t *req, root_view_t *v)
{
    FERRY_TRY(ferry__container_set_load(c->path, 0, 0, &v->set));
    if (req->same_count && v->set->streams != (uint32_t)c->nprocs)
        return ferry__error_set(MPI_ERR_ARG, "%u streams, opened by %d ranks: use ferry_container_open_mapped",
                                (unsigned)v->set->streams, c->nprocs);
    for (int i = 0; i < v->total; i++)
        if (v->names[i] < 0 || (uint32_t)v->names[i] >= v->set->streams)
            return ferry__error_set(MPI_ERR_ARG, "no stream %d (streams are 0 to %u)", v->names[i],
                                    (unsigned)v->set->streams - 1);
    return 0;
}

/* Rank 0: rank r's header and answers at w; returns whether it reads another file than the first. */
static int answer_rank(const root_view_t *v, int r, int name, int64_t *w)
{
    int other = 0, count = (int)v->tells[r * T_WORDS + T_COUNT];
    for (int i = 0; v->set && i < count; i++) {
        int64_t *a = w + H_COUNT + (size_t)i * W_COUNT;
        answer(v->set, v->names[name + i], a);
        other |= a[W_FILE] != 0;
        w[H_FIRST] |= a[W_FILE] == 0;
    }
    return other;
}

/* Rank 0: every rank's header and answers, in scatterv layout (counts and
 * displacements in words); failed says whether any rank failed so far. */
static int64_t *answer_all(ferry_container_t c, root_view_t *v, int failed)
{
    int64_t *all = ferry__calloc((size_t)v->total * W_COUNT + (size_t)c->nprocs * H_COUNT, sizeof *all);
    int agree = 0;
    if (!all) return NULL;
    for (int r = 0, at = 0, name = 0; r < c->nprocs; r++) {
        v->displs[r] = at;
        v->counts[r] = H_COUNT + (int)v->tells[r * T_WORDS + T_COUNT] * W_COUNT;
        agree |= answer_rank(v, r, name, all + at);
        failed |= all[at + H_FIRST] && v->tells[r * T_WORDS + T_FIRST_FILE_CLS];
        name += (int)v->tells[r * T_WORDS + T_COUNT];
        at += v->counts[r];
    }
    for (int r = 0; r < c->nprocs; r++) {
        all[v->displs[r] + H_FAILED] = failed;
        all[v->displs[r] + H_AGREE] = agree;
    }
    return all;
}

static void root_view_free(root_view_t *v)
{
    ferry__container_set_free(v->set);
    ferry__free(v->tells);
    ferry__free(v->names);
    ferry__free(v->counts);
    ferry__free(v->displs);
}

/* Rank 0: the gathered counts as gatherv counts and displacements of names. */
static int count_names(ferry_container_t c, const read_request_t *req, root_view_t *v)
{
    v->counts = ferry__calloc((size_t)c->nprocs, sizeof *v->counts);
    v->displs = ferry__calloc((size_t)c->nprocs, sizeof *v->displs);
    if (!v->counts || !v->displs) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    for (int r = 0; r < c->nprocs; r++) {
        v->counts[r] = (int)v->tells[r * T_WORDS + T_COUNT];
        v->displs[r] = v->total;
        v->total += v->counts[r];
    }
    v->names = ferry__malloc(((size_t)v->total + 1) * sizeof *v->names);
    if (!v->names) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    /* The plain open names each rank's own stream, except where a rank
     * failed before the gather and asked for none. */
    for (int r = 0; req->same_count && r < c->nprocs; r++)
        if (v->counts[r] > 0) v->names[v->displs[r]] = r;
    return 0;
}

/* The gathers: rank 0 learns every rank's count, outcome and names.
 * Returns this rank's failure. *lost: the host's gather failed here, so
 * rank 0 (where it failed too, as when the host fails every rank alike)
 * has no requests to answer: such a rank skips the rest of the exchange
 * and goes to the agreement. A failed gatherv of the names only sent on
 * the other ranks: rank 0's answer says whether they arrived. */
static int gather_requests(ferry_container_t c, const read_request_t *req, const int64_t *tell, root_view_t *v,
                           int *lost)
{
    if (c->rank == 0) v->tells = ferry__malloc((size_t)c->nprocs * T_WORDS * sizeof *v->tells);
    int rc = ferry__progress_gather(tell, T_WORDS, MPI_INT64_T, v->tells, T_WORDS, MPI_INT64_T, 0, c->comm);
    int cls = ferry__container_host(c, rc, req->what, "MPI_Gather (every rank's request to rank 0)");
    if ((*lost = cls != 0)) return cls;
    if (c->rank == 0) cls = v->tells ? count_names(c, req, v) : ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    if (req->same_count) return cls;
    rc =
        ferry__progress_gatherv(req->streams, req->count, MPI_INT, v->names, v->counts, v->displs, MPI_INT, 0, c->comm);
    if (c->rank == 0 && !cls)
        cls = ferry__container_host(c, rc, req->what, "MPI_Gatherv (every rank's streams to rank 0)");
    return cls;
}

/* Rank 0, when no rank failed: every rank must name the container rank 0 names. */
static int same_path(ferry_container_t c, const root_view_t *v)
{
    for (int r = 1; r < c->nprocs; r++)
        if (v->tells[r * T_WORDS + T_PATH] != v->tells[T_PATH])
            return ferry__error_set(MPI_ERR_NOT_SAME, "rank %d names another path than rank 0", r);
    return 0;
}

/* Every request to rank 0 and back: mine receives this rank's header and
 * answers (H_FAILED set also where the host failed this rank's part). */
static int exchange(ferry_container_t c, const read_request_t *req, const int64_t *tell, int64_t *mine)
{
    root_view_t v = {0};
    int64_t *all = NULL;
    int lost = 0, failed = 0, cls = gather_requests(c, req, tell, &v, &lost);
    if (lost) {
        mine[H_FAILED] = 1;
        root_view_free(&v);
        return cls;
    }
    if (c->rank == 0) { /* even when something failed, every rank waits for its header */
        for (int r = 0; v.tells && r < c->nprocs; r++) failed |= v.tells[r * T_WORDS + T_CLS] != 0;
        if (!cls && !failed) cls = same_path(c, &v);
        if (!cls && !failed) cls = c->path ? load_for(c, req, &v) : 0;
        if (cls) ferry__container_set_free(v.set), v.set = NULL;
        all = v.counts ? answer_all(c, &v, failed || cls) : NULL;
        if (!cls && !all) cls = ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    }
    int rc = ferry__progress_scatterv(all, v.counts, v.displs, MPI_INT64_T, mine, H_COUNT + req->count * W_COUNT,
                                      MPI_INT64_T, 0, c->comm);
    int scattered = ferry__container_host(c, rc, req->what, "MPI_Scatterv (rank 0's answers to every rank)");
    if (scattered || (c->rank == 0 && cls)) mine[H_FAILED] = 1; /* a failed scatterv: mine is not rank 0's */
    if (!cls) cls = scattered;
    ferry__free(all);
    root_view_free(&v);
    return cls;
}

static int start_reader(ferry_container_t c, const int64_t *w, ferry__container_stream_t *s)
{
    ferry__fs_file_t *fs;
    FERRY_TRY(ferry__container_handle_file(c, (uint32_t)w[W_FILE], FERRY_FS_READ, &fs));
    ferry__container_stream_init_t init = {
        .fs = fs, .id = (uint64_t)w[W_ID], .stream = (uint32_t)w[W_STREAM],
        .file_index = (uint32_t)w[W_FILE],
        .geo = {(uint64_t)w[W_DATA_START], (uint64_t)w[W_ROW_SIZE], (uint64_t)w[W_ROW_OFFSET],
                (uint64_t)w[W_CHUNK_SIZE]},
        .checksums = (w[W_FLAGS] & 1) != 0, .length = (uint64_t)w[W_LENGTH]};
    FERRY_TRY(ferry__container_stream_init(s, &init));
    s->write_failed = (w[W_FLAGS] & 2) != 0;
    return 0;
}

static int start_readers(ferry_container_t c, const int64_t *answers, int count)
{
    c->streams = ferry__calloc((size_t)(count > 0 ? count : 1), sizeof *c->streams);
    if (!c->streams) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < count; i++) {
        FERRY_TRY(start_reader(c, answers + (size_t)i * W_COUNT, &c->streams[i]));
        c->nstreams++;
    }
    if (count > 0) {
        c->file_count = (uint32_t)answers[W_FILES];
        c->stream_count = (uint32_t)answers[W_STREAMS];
        c->block_size = (uint64_t)answers[W_BLOCK];
    }
    return 0;
}

static int check_request(const read_request_t *req, int cls)
{
    if (!req->same_count && (req->count < 0 || (req->count > 0 && !req->streams)) && !cls)
        cls = ferry__error_set(MPI_ERR_ARG, "count %d with %s stream list", req->count, req->streams ? "a" : "a NULL");
    return cls;
}

static int open_read_steps(ferry_container_t c, read_request_t *req, int cls)
{
    const char *what = req->what;
    ferry__fs_file_t *fs;
    char first_cause[512] = "";
    cls = check_request(req, cls);
    if (cls) req->count = 0;
    /* The first file, opened before the gather so that its outcome rides along. */
    int first_cls = cls ? 0 : ferry__container_handle_file(c, 0, FERRY_FS_READ, &fs);
    if (first_cls) snprintf(first_cause, sizeof first_cause, "%s", ferry__error_message());
    int64_t tell[T_WORDS] = {req->count, cls, first_cls, c->path_hash};
    int64_t *mine = ferry__calloc(H_COUNT + (size_t)req->count * W_COUNT, sizeof *mine);
    int exchanged = mine ? exchange(c, req, tell, mine) : MPI_ERR_NO_MEM; /* (no memory: a hang we cannot avoid) */
    if (!cls) cls = exchanged;
    if (!cls && mine[H_FIRST] && first_cls) cls = ferry__error_set(first_cls, "%s", first_cause);
    if (!cls && !mine[H_FAILED]) cls = start_readers(c, mine + H_COUNT, req->count);
    int agree = mine[H_FAILED] || mine[H_AGREE];
    ferry__free(mine);
    if (cls) cls = ferry__container_fail(cls, c->path ? c->path : "(null)", c->rank, what);
    return agree ? ferry__container_agree(c, cls, what) : cls;
}

static int open_for_reading(MPI_Comm comm, const char *path, read_request_t *req, ferry_container_t *container)
{
    ferry_container_t c;
    int local_cls, cls = ferry_core_init();
    if (!cls) cls = ferry__container_handle_create(comm, path, 0, container, &local_cls, &c);
    if (cls) return ferry__container_return(cls);
    int own = c->rank;
    if (req->same_count) req->streams = &own;
    cls = open_read_steps(c, req, local_cls);
    return ferry__container_handle_hand_over(c, cls, container);
}

int ferry_container_open_read(MPI_Comm comm, const char *path, ferry_container_t *container)
{
    read_request_t req = {NULL, 1, 1, "ferry_container_open_read"};
    return open_for_reading(comm, path, &req, container);
}

int ferry_container_open_mapped(MPI_Comm comm, const char *path, const int *streams, int count,
                                ferry_container_t *container)
{
    read_request_t req = {streams, count, 0, "ferry_container_open_mapped"};
    return open_for_reading(comm, path, &req, container);
}

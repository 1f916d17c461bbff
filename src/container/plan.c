/*
 * Rank 0's plan of a container being created: which file each rank
 * writes (one file; contiguous rank groups; one per node, nodes told apart
 * by their processor names), every file's stream table and rows, and each
 * rank's geometry, from one gather of every rank's arguments; one scatter
 * answers every rank. Memory O(ranks) on rank 0, O(1) elsewhere (a file's
 * root also holds its file's table).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/keyed.h"
#include "container/container_int.h"
#include "error/error.h"
#include "progress/progress.h"

enum {
    R_CLS, R_FILES, R_FILE, R_STREAMS, R_LOCAL_STREAMS, R_ID, R_BLOCK, R_DATA_START, R_ROW_SIZE, R_ROW_OFFSET,
    R_CHUNK, R_FLAGS, R_MAPPING, R_ROOT, R_WORDS
};
enum { ENTRY_WORDS = 4, TABLE_TAG = 16016 };
static const char open_write[] = "ferry_container_open_write"; /* names the call in messages */

typedef struct plan {
    int files, nprocs, mapping;
    uint32_t *file_of, *local_of; /* per rank */
    uint32_t *count, *first;      /* per file: streams, and the rank that is its root */
    uint32_t *start;              /* per file: its first entry in entries[] */
    ferry__container_entry_t *entries;
    ferry__container_super_t *supers; /* per file */
} plan_t;

static void plan_free(plan_t *p)
{
    ferry__free(p->file_of);
    ferry__free(p->local_of);
    ferry__free(p->count);
    ferry__free(p->first);
    ferry__free(p->start);
    ferry__free(p->entries);
    ferry__free(p->supers);
}

static int plan_alloc(plan_t *p)
{
    size_t n = (size_t)p->nprocs, f = (size_t)p->files;
    p->file_of = ferry__calloc(n, sizeof *p->file_of);
    p->local_of = ferry__calloc(n, sizeof *p->local_of);
    p->entries = ferry__calloc(n, sizeof *p->entries);
    p->count = ferry__calloc(f, sizeof *p->count);
    p->first = ferry__calloc(f, sizeof *p->first);
    p->start = ferry__calloc(f, sizeof *p->start);
    p->supers = ferry__calloc(f, sizeof *p->supers);
    if (p->file_of && p->local_of && p->entries && p->count && p->first && p->start && p->supers) return 0;
    return ferry__error_set(MPI_ERR_NO_MEM, "out of memory to plan %d streams", p->nprocs);
}

/* file_of[r] = the index of r's node, nodes numbered in the order of their
 * lowest rank; returns the node count. O(ranks log ranks). */
static int group_by_node(plan_t *p, const ferry__container_ask_t *asks)
{
    ferry__keyed_rank_t *sorted = ferry__malloc((size_t)p->nprocs * sizeof *sorted);
    if (!sorted) return -1;
    for (int r = 0; r < p->nprocs; r++) sorted[r] = (ferry__keyed_rank_t){asks[r].w[FERRY__ASK_NODE], r};
    qsort(sorted, (size_t)p->nprocs, sizeof *sorted, ferry__keyed_rank_order);
    for (int i = 0, leader = 0; i < p->nprocs; i++) { /* file_of holds each rank's node leader for now */
        if (i == 0 || sorted[i].key != sorted[i - 1].key) leader = (int)sorted[i].rank;
        p->file_of[sorted[i].rank] = (uint32_t)leader;
    }
    ferry__free(sorted);
    int nodes = 0;
    for (int r = 0; r < p->nprocs; r++)
        p->file_of[r] = p->file_of[r] == (uint32_t)r ? (uint32_t)nodes++ : p->file_of[p->file_of[r]];
    return nodes;
}

/* What every rank must name alike: the path (its hash) and the file count. */
static int check_same_files(const plan_t *p, const ferry__container_ask_t *asks)
{
    for (int r = 0; r < p->nprocs; r++) {
        if (asks[r].w[FERRY__ASK_PATH] != asks[0].w[FERRY__ASK_PATH])
            return ferry__error_set(MPI_ERR_NOT_SAME, "rank %d names another path than rank 0", r);
        if (asks[r].w[FERRY__ASK_FILES] != asks[0].w[FERRY__ASK_FILES])
            return ferry__error_set(MPI_ERR_NOT_SAME, "rank %d asked for files = %lld, rank 0 for %lld", r,
                                    (long long)asks[r].w[FERRY__ASK_FILES], (long long)asks[0].w[FERRY__ASK_FILES]);
        if (asks[r].w[FERRY__ASK_BUDDY] != asks[0].w[FERRY__ASK_BUDDY])
            return ferry__error_set(MPI_ERR_NOT_SAME, "rank %d asked for buddy = %lld, rank 0 for %lld", r,
                                    (long long)asks[r].w[FERRY__ASK_BUDDY], (long long)asks[0].w[FERRY__ASK_BUDDY]);
        if (asks[r].w[FERRY__ASK_COLLECT] != asks[0].w[FERRY__ASK_COLLECT])
            return ferry__error_set(MPI_ERR_NOT_SAME, "rank %d asked for collector_size = %lld, rank 0 for %lld", r,
                                    (long long)asks[r].w[FERRY__ASK_COLLECT],
                                    (long long)asks[0].w[FERRY__ASK_COLLECT]);
    }
    return 0;
}

/* Which file each rank writes: rank 0's choice (the others must agree). */
static int assign_files(plan_t *p, const ferry__container_ask_t *asks)
{
    FERRY_TRY(check_same_files(p, asks));
    int64_t files = asks[0].w[FERRY__ASK_FILES];
    p->mapping = files == FERRY_CONTAINER_FILE_PER_NODE ? 2 : files > 1 ? 1 : 0;
    p->files = p->mapping == 0 ? 1 : p->mapping == 1 && files < p->nprocs ? (int)files : p->nprocs;
    FERRY_TRY(plan_alloc(p)); /* sized for the most files possible when grouping by node */
    if (p->mapping == 2) p->files = group_by_node(p, asks);
    if (p->files < 0) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory to group ranks by node");
    for (int r = 0; r < p->nprocs; r++) {
        uint32_t k = p->mapping == 2 ? p->file_of[r] : (uint32_t)((int64_t)r * p->files / p->nprocs);
        p->file_of[r] = k;
        if (p->count[k]++ == 0) p->first[k] = (uint32_t)r;
    }
    return 0;
}

/* Every file's stream table and superblock. */
static int plan_files(plan_t *p, const ferry__container_ask_t *asks, uint64_t block, const char *path)
{
    const int64_t *root = asks[0].w;
    uint64_t id = ferry__container_new_id();
    for (int k = 1; k < p->files; k++) p->start[k] = p->start[k - 1] + p->count[k - 1];
    uint32_t *filled = ferry__calloc((size_t)p->files, sizeof *filled);
    if (!filled) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    for (int r = 0; r < p->nprocs; r++) {
        uint32_t k = p->file_of[r];
        p->local_of[r] = filled[k]++;
        p->entries[p->start[k] + p->local_of[r]] =
            (ferry__container_entry_t){(uint32_t)r, 0, 0, (uint64_t)asks[r].w[FERRY__ASK_CHUNK]};
    }
    ferry__free(filled);
    for (int k = 0; k < p->files; k++) {
        ferry__container_super_t *s = &p->supers[k];
        *s = (ferry__container_super_t){.id = id, .file_index = (uint32_t)k, .file_count = (uint32_t)p->files,
                                        .streams = (uint32_t)p->nprocs, .local_streams = p->count[k],
                                        .block_size = block, .flags = (root[FERRY__ASK_FLAGS] & 1) ? 1u : 0u,
                                        .mapping = (uint32_t)p->mapping};
        FERRY_TRY(ferry__container_plan(s, p->entries + p->start[k], path));
    }
    return 0;
}

/* Empties a file being replaced. A new one is left alone: truncating a
 * file to 0 makes ext4 (auto_da_alloc) start writing back all its dirty
 * pages in close(), which then took 50 to 500 ms per rank after a 256 MiB
 * write here; task-local files created with O_TRUNC are never truncated
 * either. */
int ferry__container_empty_file(ferry_container_t c, ferry__fs_file_t *fs)
{
    MPI_Offset size = 0;
    c->meta_calls++;
    FERRY_TRY(ferry__fs_size(fs, &size));
    if (size == 0) return 0;
    c->meta_calls++;
    return ferry__fs_resize(fs, 0);
}

/* Rank 0: empties file 0 (which it opened, or opens now) and learns the block size. */
static int empty_first_file(ferry_container_t c, int64_t asked_block, uint64_t *block)
{
    ferry__fs_file_t *fs;
    ferry__fs_layout_t layout;
    FERRY_TRY(ferry__container_handle_file(c, 0, FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, &fs));
    FERRY_TRY(ferry__container_empty_file(c, fs));
    c->meta_calls += 2; /* fstat and fstatfs for the layout */
    FERRY_TRY(ferry__fs_layout(fs, &layout));
    *block = ferry__container_pick_block(asked_block, &layout);
    return 0;
}

static void fill_reply(const plan_t *p, const ferry__container_ask_t *asks, int r, int64_t *w)
{
    uint32_t k = p->file_of[r];
    const ferry__container_super_t *s = &p->supers[k];
    const ferry__container_entry_t *e = &p->entries[p->start[k] + p->local_of[r]];
    w[R_FILES] = p->files;
    w[R_FILE] = k;
    w[R_STREAMS] = p->nprocs;
    w[R_LOCAL_STREAMS] = s->local_streams;
    w[R_ID] = (int64_t)s->id;
    w[R_BLOCK] = (int64_t)s->block_size;
    w[R_DATA_START] = (int64_t)s->data_start;
    w[R_ROW_SIZE] = (int64_t)s->row_size;
    w[R_ROW_OFFSET] = (int64_t)e->row_offset;
    w[R_CHUNK] = (int64_t)e->chunk_size;
    w[R_FLAGS] = asks[0].w[FERRY__ASK_FLAGS];
    w[R_MAPPING] = p->mapping;
    w[R_ROOT] = p->first[k] == (uint32_t)r;
}

/* Rank 0 keeps file 0's superblock and stream table for the close. */
static int keep_first_table(ferry_container_t c, const plan_t *p)
{
    c->super = p->supers[0];
    c->entries = ferry__malloc(p->count[0] * sizeof *c->entries);
    if (!c->entries) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    memcpy(c->entries, p->entries, p->count[0] * sizeof *c->entries);
    return 0;
}

/* Rank 0 between the gather and the scatter. */
static int root_plans(ferry_container_t c, const ferry__container_ask_t *asks, plan_t *p, int64_t *replies)
{
    uint64_t block = 0;
    FERRY_TRY(assign_files(p, asks));
    FERRY_TRY(empty_first_file(c, asks[0].w[FERRY__ASK_BLOCK], &block));
    FERRY_TRY(plan_files(p, asks, block, c->path));
    FERRY_TRY(keep_first_table(c, p));
    ferry__fs_file_t *fs;
    FERRY_TRY(ferry__container_handle_file(c, 0, FERRY_FS_READ | FERRY_FS_WRITE, &fs));
    FERRY_TRY(ferry__container_write_header(fs, &c->super, c->entries));
    for (int r = 0; r < p->nprocs; r++) fill_reply(p, asks, r, replies + (size_t)r * R_WORDS);
    return 0;
}

/* Rank 0: sends each other file's root its stream table (the roots receive in receive_table). */
static int send_tables(ferry_container_t c, const plan_t *p)
{
    int64_t *words = ferry__malloc((size_t)p->nprocs * ENTRY_WORDS * sizeof *words);
    MPI_Request *requests = ferry__malloc((size_t)p->files * sizeof *requests);
    if (!words || !requests) {
        ferry__free(words);
        ferry__free(requests);
        return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    }
    for (int i = 0; i < p->nprocs; i++) {
        const ferry__container_entry_t *e = &p->entries[i];
        int64_t *w = words + (size_t)i * ENTRY_WORDS;
        w[0] = e->stream, w[1] = (int64_t)e->chunk_size, w[2] = (int64_t)e->row_offset, w[3] = (int64_t)e->asked;
    }
    int sent = MPI_SUCCESS; /* the first failure to post; a send not posted is not waited for */
    for (int k = 1; k < p->files; k++) {
        int rc = MPI_Isend(words + (size_t)p->start[k] * ENTRY_WORDS, (int)p->count[k] * ENTRY_WORDS, MPI_INT64_T,
                           (int)p->first[k], TABLE_TAG, c->comm, &requests[k - 1]);
        if (rc != MPI_SUCCESS) requests[k - 1] = MPI_REQUEST_NULL;
        if (sent == MPI_SUCCESS) sent = rc;
    }
    int waited = ferry__progress_waitall(p->files - 1, requests, MPI_STATUSES_IGNORE);
    ferry__free(words);
    ferry__free(requests);
    FERRY_TRY(ferry__container_host(c, sent, open_write, "MPI_Isend (the stream tables to the files' roots)"));
    return ferry__container_host(c, waited, open_write, "MPI_Waitall (the stream tables to the files' roots)");
}

/* One gather of every rank's arguments, rank 0's plan, one scatter back.
 * reply[R_CLS] is nonzero when any rank failed, so that every rank joins
 * the agreement; returns this rank's own failure: rank 0's in planning or
 * in the host's gather (whose result it then does not read), any rank's in
 * the host's scatter (its reply is then not rank 0's: it fails and joins
 * the agreement). Another rank's failed gather is not its own: it only
 * sent, and rank 0's reply says whether rank 0 got every ask. */
static int exchange(ferry_container_t c, const ferry__container_ask_t *ask, int64_t *reply, plan_t *p)
{
    ferry__container_ask_t *asks = NULL;
    int64_t *replies = NULL, failed = 0;
    int mine = 0;
    if (c->rank == 0) {
        asks = ferry__malloc((size_t)c->nprocs * sizeof *asks);
        replies = ferry__calloc((size_t)c->nprocs, R_WORDS * sizeof *replies);
    }
    int rc =
        ferry__progress_gather(ask->w, FERRY__ASK_WORDS, MPI_INT64_T, asks, FERRY__ASK_WORDS, MPI_INT64_T, 0, c->comm);
    if (c->rank == 0) {
        mine = ferry__container_host(c, rc, open_write, "MPI_Gather (every rank's arguments to rank 0)");
        if (!mine && (!asks || !replies)) mine = ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
        for (int r = 0; !mine && r < c->nprocs && !failed; r++) failed = asks[r].w[FERRY__ASK_CLS];
        if (!mine && !failed) mine = root_plans(c, asks, p, replies);
        for (int r = 0; replies && r < c->nprocs; r++) replies[(size_t)r * R_WORDS + R_CLS] = failed ? failed : mine;
    }
    rc = ferry__progress_scatter(replies, R_WORDS, MPI_INT64_T, reply, R_WORDS, MPI_INT64_T, 0, c->comm);
    if (c->rank == 0 && !replies) reply[R_CLS] = mine;
    int scattered = ferry__container_host(c, rc, open_write, "MPI_Scatter (rank 0's plan to every rank)");
    if (scattered) reply[R_CLS] = mine = mine ? mine : scattered;
    ferry__free(asks);
    ferry__free(replies);
    return mine;
}

/* A file's root (not rank 0): its stream table from rank 0, then the file emptied and headed. */
static int head_own_file(ferry_container_t c, const int64_t *w, ferry__fs_file_t *fs)
{
    uint32_t n = (uint32_t)w[R_LOCAL_STREAMS];
    int64_t *words = ferry__malloc((size_t)n * ENTRY_WORDS * sizeof *words);
    c->entries = ferry__calloc(n, sizeof *c->entries);
    int memory = words && c->entries;
    int rc = words ? MPI_Recv(words, (int)n * ENTRY_WORDS, MPI_INT64_T, 0, TABLE_TAG, c->comm, MPI_STATUS_IGNORE)
                   : MPI_SUCCESS;
    for (uint32_t t = 0; rc == MPI_SUCCESS && memory && t < n; t++) {
        const int64_t *e = words + (size_t)t * ENTRY_WORDS;
        c->entries[t] = (ferry__container_entry_t){(uint32_t)e[0], (uint64_t)e[1], (uint64_t)e[2], (uint64_t)e[3]};
    }
    ferry__free(words);
    if (!memory) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory for the stream table");
    FERRY_TRY(ferry__container_host(c, rc, open_write, "MPI_Recv (this file's stream table from rank 0)"));
    c->super = (ferry__container_super_t){
        .major = FERRY__CONTAINER_MAJOR, .minor = FERRY__CONTAINER_MINOR, .id = (uint64_t)w[R_ID],
        .file_index = (uint32_t)w[R_FILE], .file_count = (uint32_t)w[R_FILES], .streams = (uint32_t)w[R_STREAMS],
        .local_streams = n, .block_size = (uint64_t)w[R_BLOCK], .data_start = (uint64_t)w[R_DATA_START],
        .row_size = (uint64_t)w[R_ROW_SIZE], .flags = (uint32_t)(w[R_FLAGS] & 1), .mapping = (uint32_t)w[R_MAPPING],
        .created = (uint64_t)time(NULL)};
    FERRY_TRY(ferry__container_empty_file(c, fs));
    return ferry__container_write_header(fs, &c->super, c->entries);
}

/* Several files: each root heads its file, every rank opens its own, and
 * the ranks of a file get their communicator; one agreement follows. */
static int start_files(ferry_container_t c, const int64_t *w, const plan_t *p)
{
    ferry__fs_file_t *fs;
    int cls = c->rank == 0 ? send_tables(c, p) : 0;
    uint32_t k = (uint32_t)w[R_FILE];
    if (!cls) cls = ferry__container_handle_file(c, k, FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, &fs);
    if (!cls && w[R_ROOT] && c->rank != 0) cls = head_own_file(c, w, fs);
    int rc = MPI_Comm_split(c->comm, (int)k, c->rank, &c->file_comm);
    if (rc != MPI_SUCCESS) c->file_comm = MPI_COMM_NULL; /* nothing for the handle to free */
    int split = ferry__container_host(c, rc, open_write, "MPI_Comm_split (a communicator per file)");
    return cls ? cls : split;
}

static int start_writer(ferry_container_t c, const int64_t *w, size_t buffer_size)
{
    ferry__fs_file_t *fs;
    uint32_t k = (uint32_t)w[R_FILE];
    FERRY_TRY(ferry__container_handle_file(c, k, FERRY_FS_READ | FERRY_FS_WRITE, &fs));
    c->streams = ferry__calloc(1, sizeof *c->streams);
    if (!c->streams) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    c->nstreams = 1;
    c->file_count = (uint32_t)w[R_FILES];
    c->stream_count = (uint32_t)w[R_STREAMS];
    c->block_size = (uint64_t)w[R_BLOCK];
    c->durable = (w[R_FLAGS] & 2) != 0;
    c->super.file_index = k;
    ferry__container_stream_init_t init = {
        .fs = fs, .id = (uint64_t)w[R_ID], .stream = (uint32_t)c->rank, .file_index = k,
        .geo = {(uint64_t)w[R_DATA_START], (uint64_t)w[R_ROW_SIZE], (uint64_t)w[R_ROW_OFFSET], (uint64_t)w[R_CHUNK]},
        .writing = 1, .checksums = (w[R_FLAGS] & 1) != 0, .durable = c->durable, .buffer_size = buffer_size};
    FERRY_TRY(ferry__container_stream_init(c->streams, &init));
    c->streams->meta_calls = &c->meta_calls;
    return 0;
}

int ferry__container_create_collectively(ferry_container_t c, const ferry__container_ask_t *ask, size_t buffer_size)
{
    int64_t reply[R_WORDS] = {0};
    plan_t p = {.nprocs = c->nprocs};
    int cls = (int)ask->w[FERRY__ASK_CLS];
    int root_cls = exchange(c, ask, reply, &p);
    if (!cls) cls = root_cls;
    if (!reply[R_CLS] && reply[R_FILES] > 1) cls = start_files(c, reply, &p);
    if (!reply[R_CLS] && !cls) cls = start_writer(c, reply, buffer_size);
    plan_free(&p);
    if (cls) cls = ferry__container_fail(cls, c->path ? c->path : "(null)", c->rank, open_write);
    /* One file and no failure: the scatter already said every rank is ready. */
    if (!reply[R_CLS] && reply[R_FILES] == 1 && !cls) return 0;
    return ferry__container_agree(c, cls, open_write);
}

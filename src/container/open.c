/*
 * Collective open for writing, and collective close.
 *
 * Open: rank 0's settings reach every rank in one broadcast; ranks split by
 * physical file; each file's root (its lowest rank) creates the file,
 * gathers every member's chunk size in one gather, plans the rows, writes
 * the superblock and stream table, and hands each member its geometry in
 * one scatter; then the members open the file and one agreement ends the
 * call. Close: each rank flushes, one gather brings the lengths to the
 * root, which writes the end table and then the completion record; one
 * agreement. The number of collectives never depends on the chunks.
 */
#include <string.h>

#include "container/container_int.h"
#include "core/core.h"
#include "error/error.h"
#include "progress/progress.h"

/* What rank 0 decides for everyone. */
typedef struct shared_settings {
    int64_t id, block_size, files, checksums, durable, cls;
} shared_settings_t;
enum { SETTINGS_WORDS = 6, GATHER_WORDS = 3, GEOMETRY_WORDS = 6 };

static int share_settings(ferry_container_t c, const ferry_container_params_t *p, shared_settings_t *set)
{
    memset(set, 0, sizeof *set);
    if (c->rank == 0) {
        set->id = (int64_t)ferry__container_new_id();
        set->block_size = p->block_size;
        set->files = p->files;
        set->checksums = !p->no_data_checksums;
        set->durable = p->durable;
        set->cls = ferry__container_check_block(p->block_size, c->path ? c->path : "?");
        if (!set->cls && p->files < FERRY_CONTAINER_FILE_PER_NODE)
            set->cls = ferry__error_set(MPI_ERR_ARG, "ferry container '%s': files = %d", c->path, p->files);
    }
    if (ferry__progress_bcast(set, SETTINGS_WORDS, MPI_INT64_T, 0, c->comm) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_INTERN, "broadcast of the settings failed");
    return c->rank == 0 ? (int)set->cls : 0;
}

/* One file per node: nodes numbered in the order of their lowest rank. */
static void file_per_node(ferry_container_t c, int *index, int *count)
{
    MPI_Comm node;
    int node_rank, leader, upto = 0;
    MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    leader = node_rank == 0;
    ferry__progress_scan(&leader, &upto, 1, MPI_INT, MPI_SUM, c->comm);
    *index = upto - 1;
    ferry__progress_bcast(index, 1, MPI_INT, 0, node);
    ferry__progress_allreduce(&leader, count, 1, MPI_INT, MPI_SUM, c->comm);
    MPI_Comm_free(&node);
}

/* The file this rank writes, and the file count: contiguous rank groups or one per node. */
static void assign_file(ferry_container_t c, const shared_settings_t *set, int *index, int *count)
{
    if (set->files == FERRY_CONTAINER_FILE_PER_NODE) return file_per_node(c, index, count);
    *count = set->files < 1 ? 1 : set->files > c->nprocs ? c->nprocs : (int)set->files;
    *index = (int)((int64_t)c->rank * *count / c->nprocs);
}

/* The root creates (or empties) its file and learns the block size. */
static int create_file(ferry_container_t c, const shared_settings_t *set, uint32_t k, ferry__fs_file_t **fs,
                       uint64_t *block)
{
    ferry__fs_layout_t layout;
    c->meta_calls += 3; /* ftruncate; fstat and fstatfs for the layout */
    FERRY_TRY(ferry__container_handle_file(c, k, FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, fs));
    FERRY_TRY(ferry__fs_resize(*fs, 0));
    FERRY_TRY(ferry__fs_layout(*fs, &layout));
    *block = ferry__container_pick_block(set->block_size, &layout);
    return 0;
}

/* Root: the superblock and stream table from the gathered chunk sizes. */
static int plan_file(ferry_container_t c, const shared_settings_t *set, const int64_t *gathered, int members)
{
    ferry__container_super_t *s = &c->super;
    for (int m = 0; m < members; m++) {
        if (gathered[m * GATHER_WORDS + 2])
            return ferry__error_set(MPI_ERR_ARG, "rank %lld's arguments are invalid",
                                    (long long)gathered[m * GATHER_WORDS]);
        c->entries[m] = (ferry__container_entry_t){(uint32_t)gathered[m * GATHER_WORDS], 0, 0,
                                                   (uint64_t)gathered[m * GATHER_WORDS + 1]};
    }
    s->id = (uint64_t)set->id;
    s->streams = (uint32_t)c->nprocs;
    s->local_streams = (uint32_t)members;
    s->flags = set->checksums ? FERRY__CONTAINER_FLAG_CHECKSUMS : 0;
    s->mapping = set->files == FERRY_CONTAINER_FILE_PER_NODE ? 2 : c->file_count > 1;
    return ferry__container_plan(s, c->entries, c->path);
}

/* Root: creates the file, plans it, writes its header; fills every member's geometry words. */
static int root_writes_header(ferry_container_t c, const shared_settings_t *set, const int64_t *gathered,
                              int64_t *geometry)
{
    int members;
    ferry__fs_file_t *fs;
    MPI_Comm_size(c->file_comm, &members);
    c->entries = ferry__calloc((size_t)members, sizeof *c->entries);
    if (!c->entries || !gathered) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    FERRY_TRY(create_file(c, set, c->super.file_index, &fs, &c->super.block_size));
    FERRY_TRY(plan_file(c, set, gathered, members));
    FERRY_TRY(ferry__container_write_header(fs, &c->super, c->entries));
    for (int m = 0; m < members; m++) {
        int64_t *g = geometry + m * GEOMETRY_WORDS;
        g[1] = (int64_t)c->super.data_start;
        g[2] = (int64_t)c->super.row_size;
        g[3] = (int64_t)c->entries[m].row_offset;
        g[4] = (int64_t)c->entries[m].chunk_size;
        g[5] = (int64_t)c->super.block_size;
    }
    return 0;
}

typedef struct member_request {
    int64_t words[GATHER_WORDS]; /* stream id, chunk size asked, bad argument */
} member_request_t;

/* The gather and scatter of one file: this rank's geometry words in mine.
 * A root whose own arguments failed (req) creates nothing. */
static int exchange_geometry(ferry_container_t c, const shared_settings_t *set, const member_request_t *req,
                             int64_t *mine)
{
    int file_rank, members, cls = 0;
    MPI_Comm_rank(c->file_comm, &file_rank);
    MPI_Comm_size(c->file_comm, &members);
    int64_t *gathered = NULL, *geometry = NULL;
    if (file_rank == 0) {
        gathered = ferry__calloc((size_t)members * GATHER_WORDS, sizeof *gathered);
        geometry = ferry__calloc((size_t)members * GEOMETRY_WORDS, sizeof *geometry);
    }
    ferry__progress_gather(req->words, GATHER_WORDS, MPI_INT64_T, gathered, GATHER_WORDS, MPI_INT64_T, 0,
                           c->file_comm);
    if (file_rank == 0 && req->words[2]) cls = MPI_ERR_ARG;
    else if (file_rank == 0 && geometry) cls = root_writes_header(c, set, gathered, geometry);
    else if (file_rank == 0) cls = ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    for (int m = 0; geometry && m < members; m++) geometry[m * GEOMETRY_WORDS] = cls;
    ferry__progress_scatter(geometry, GEOMETRY_WORDS, MPI_INT64_T, mine, GEOMETRY_WORDS, MPI_INT64_T, 0,
                            c->file_comm);
    ferry__free(gathered);
    ferry__free(geometry);
    return cls;
}

/* Every member: opens the file its root created and starts its stream. */
static int start_stream(ferry_container_t c, const shared_settings_t *set, const int64_t *g, size_t buffer_size)
{
    ferry__fs_file_t *fs;
    FERRY_TRY(ferry__container_handle_file(c, c->super.file_index, FERRY_FS_READ | FERRY_FS_WRITE, &fs));
    c->streams = ferry__calloc(1, sizeof *c->streams);
    if (!c->streams) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    c->nstreams = 1;
    c->block_size = (uint64_t)g[5];
    ferry__container_stream_init_t init = {
        .fs = fs, .path = c->path, .id = (uint64_t)set->id, .stream = (uint32_t)c->rank,
        .file_index = c->super.file_index,
        .geo = {(uint64_t)g[1], (uint64_t)g[2], (uint64_t)g[3], (uint64_t)g[4]},
        .writing = 1, .checksums = set->checksums != 0, .durable = set->durable != 0, .buffer_size = buffer_size};
    FERRY_TRY(ferry__container_stream_init(c->streams, &init));
    c->streams->meta_calls = &c->meta_calls;
    return 0;
}

static int open_write_steps(ferry_container_t c, const ferry_container_params_t *p, int cls)
{
    shared_settings_t set;
    int index, count, mine_cls;
    int64_t mine[GEOMETRY_WORDS] = {0};
    mine_cls = share_settings(c, p, &set);
    if (!cls) cls = mine_cls;
    assign_file(c, &set, &index, &count);
    c->file_count = (uint32_t)count;
    c->stream_count = (uint32_t)c->nprocs;
    c->super.file_index = (uint32_t)index;
    c->super.file_count = (uint32_t)count;
    c->durable = set.durable != 0;
    if (set.cls) return cls ? cls : ferry__error_set((int)set.cls, "rank 0's settings are invalid");
    if (MPI_Comm_split(c->comm, index, c->rank, &c->file_comm) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_INTERN, "splitting the communicator by file failed");
    if (!cls && p->chunk_size < 0) cls = ferry__error_set(MPI_ERR_ARG, "negative chunk size %lld",
                                                          (long long)p->chunk_size);
    member_request_t req = {{c->rank, p->chunk_size, cls != 0}};
    int root_cls = exchange_geometry(c, &set, &req, mine);
    if (cls || root_cls) return cls ? cls : root_cls;
    if (mine[0]) return 0; /* the file's root failed: the agreement brings its message */
    return start_stream(c, &set, mine, p->buffer_size);
}

int ferry_container_open_write(MPI_Comm comm, const char *path, const ferry_container_params_t *params,
                               ferry_container_t *container)
{
    if (!container) return ferry__container_return(ferry__error_set(MPI_ERR_ARG, "ferry_container_open_write: "
                                                                     "NULL handle pointer"));
    *container = NULL;
    ferry_container_t c;
    int local_cls, cls = ferry__core_init();
    if (!cls) cls = ferry__container_handle_create(comm, path, 1, &local_cls, &c);
    if (cls) return ferry__container_return(cls);
    ferry_container_params_t defaults = {0};
    cls = open_write_steps(c, params ? params : &defaults, local_cls);
    if (cls) cls = ferry__container_fail(cls, c->path ? c->path : "(null)", c->rank, "ferry_container_open_write");
    cls = ferry__error_agree(c->comm, cls, "ferry_container_open_write");
    if (cls) {
        ferry__container_handle_free(c);
        return ferry__container_return(cls);
    }
    *container = c;
    return MPI_SUCCESS;
}

/* Root: the end table from every member's length, then the completion record. */
static int root_finishes(ferry_container_t c, const int64_t *gathered)
{
    uint32_t n = c->super.local_streams;
    ferry__container_end_t *ends = ferry__calloc(n, sizeof *ends);
    if (!ends || !gathered) {
        ferry__free(ends);
        return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    }
    for (uint32_t t = 0; t < n; t++)
        ends[t] = (ferry__container_end_t){(uint64_t)gathered[2 * t], gathered[2 * t + 1] ? 1u : 0u};
    ferry__container_finish_t fin = {c->streams->fs, &c->super, c->entries, ends, FERRY__CONTAINER_HOW_CLOSED,
                                     c->durable};
    if (c->durable) c->meta_calls += 2;
    int cls = ferry__container_write_end(&fin);
    ferry__free(ends);
    return cls;
}

static int close_write(ferry_container_t c)
{
    ferry__container_stream_t *s = c->streams;
    int cls = ferry__container_stream_flush(s), file_rank, members, root_cls = 0;
    MPI_Comm_rank(c->file_comm, &file_rank);
    MPI_Comm_size(c->file_comm, &members);
    int64_t mine[2] = {(int64_t)s->length, s->failed || cls}, *gathered = NULL;
    if (file_rank == 0) gathered = ferry__calloc((size_t)members * 2, sizeof *gathered);
    ferry__progress_gather(mine, 2, MPI_INT64_T, gathered, 2, MPI_INT64_T, 0, c->file_comm);
    if (file_rank == 0) root_cls = root_finishes(c, gathered);
    ferry__free(gathered);
    return cls ? cls : root_cls;
}

int ferry_container_close(ferry_container_t *container)
{
    if (!container || !*container)
        return ferry__container_return(ferry__error_set(MPI_ERR_ARG, "ferry_container_close: no container"));
    ferry_container_t c = *container;
    *container = NULL;
    int cls = c->writing ? close_write(c) : 0;
    if (cls) cls = ferry__container_fail(cls, c->path, c->rank, "ferry_container_close");
    if (c->writing) cls = ferry__error_agree(c->comm, cls, "ferry_container_close");
    ferry__container_handle_free(c);
    return ferry__container_return(cls);
}

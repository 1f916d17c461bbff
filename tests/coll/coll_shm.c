/*
 * Issue 20 item 6: two-phase shipping through node-shared memory
 * (ferry_cb_shm). Every rank of a test run shares one node, so with the
 * hint enabled every sender-aggregator pair but a rank with itself goes
 * through the aggregator's slab.
 *   - Noncontiguous patterns (8-byte interleaved blocks from contiguous
 *     memory, 24-byte blocks with a hole block per round from strided
 *     memory, irregular 1-13-byte blocks with gaps from strided memory),
 *     written and read with the hint enabled and disabled: every file byte
 *     against a brute-force model of the file (so both ways agree byte for
 *     byte), every memory byte after the read, holes in memory untouched;
 *     ferry_stats_coll_shm_bytes nonzero on every rank when enabled, zero
 *     with disable and auto (which keeps messages for now).
 *   - Reads where every rank reads the same bytes (the slots would
 *     overflow): the call keeps messages on every rank alike, bytes right.
 *   - Faults with the slabs in use: an aggregator's failing write (first
 *     and later windows) and read end the call on every rank with the
 *     error, nobody hangs, and the handle works afterwards.
 *   - One window for every file on MPI_COMM_WORLD's ranks: made once over
 *     open/close cycles (on MPI_COMM_WORLD and a duplicate), every byte
 *     against the model; two files open at once with interleaved calls,
 *     the second's larger cb_buffer_size growing the window once; the
 *     user's communicator freed while a file on it is open, and after;
 *     files on halves of MPI_COMM_WORLD (windows of their own); two
 *     threads per rank in calls at once (MPI_THREAD_MULTIPLE).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/coll_int.h"
#include "ferry_test.h"
#include "fs/fs.h"

enum { GAP = 5, BUFFER = 8192 };

typedef enum { VECTOR8, VECTOR24_HOLE, IRREGULAR, PATTERNS } pattern_t;
static const char *const pattern_names[PATTERNS] = {"vector8", "vector24_hole", "irregular"};
static const int pattern_blocks[PATTERNS] = {1500, 600, 1200};

/* Rank r's k-th block: its length, and its file offset. */
static int block_len(pattern_t p, int r, int k)
{
    return p == VECTOR8 ? 8 : p == VECTOR24_HOLE ? 24 : 1 + (k * 7 + r * 3) % 13;
}

/* A round of blocks of `size` ranks. */
static long long round_bytes(pattern_t p, int size, int k)
{
    if (p == VECTOR24_HOLE) return 24LL * (size + 1); /* one hole block per round */
    long long sum = p == IRREGULAR ? GAP : 0;
    for (int q = 0; q < size; q++) sum += block_len(p, q, k);
    return sum;
}

static void blocks_of(pattern_t p, int size, int r, MPI_Aint *offs, int *lens)
{
    long long base = 0;
    for (int k = 0; k < pattern_blocks[p]; k++) {
        long long at = base;
        for (int q = 0; q < r; q++) at += block_len(p, q, k);
        offs[k] = (MPI_Aint)at;
        lens[k] = block_len(p, r, k);
        base += round_bytes(p, size, k);
    }
}

static unsigned char stream_byte(int r, long long k)
{
    return (unsigned char)(r * 37 + k * 11 + 1) | 1;
}

typedef struct layout {
    pattern_t p;
    MPI_Comm comm; /* the file's ranks (borrowed) */
    int rank, size;
    MPI_Datatype filetype, memtype;
    long long stream;     /* my stream bytes */
    int strided;          /* memory: my stream bytes at every other byte */
    unsigned char *mem;   /* 2 * stream bytes */
    unsigned char *model; /* the whole file */
    long long file_size;
} layout_t;

/* The file as the model says: every rank's blocks filled with its stream, holes zero. */
static void build_model(layout_t *l, MPI_Aint *offs, int *lens)
{
    int n = pattern_blocks[l->p];
    l->file_size = 0;
    for (int r = 0; r < l->size; r++) {
        blocks_of(l->p, l->size, r, offs, lens);
        if (offs[n - 1] + lens[n - 1] > l->file_size) l->file_size = offs[n - 1] + lens[n - 1];
    }
    l->model = calloc((size_t)l->file_size, 1);
    for (int r = 0; r < l->size; r++) {
        blocks_of(l->p, l->size, r, offs, lens);
        long long k = 0;
        for (int b = 0; b < n; b++)
            for (int i = 0; i < lens[b]; i++) l->model[offs[b] + i] = stream_byte(r, k++);
    }
}

/* Pattern p over the ranks of comm. */
static void layout_on(layout_t *l, pattern_t p, MPI_Comm comm)
{
    int n = pattern_blocks[p];
    MPI_Aint *offs = malloc((size_t)n * sizeof *offs);
    int *lens = malloc((size_t)n * sizeof *lens);
    memset(l, 0, sizeof *l);
    l->p = p;
    l->comm = comm;
    MPI_Comm_rank(comm, &l->rank);
    MPI_Comm_size(comm, &l->size);
    build_model(l, offs, lens);
    blocks_of(p, l->size, l->rank, offs, lens);
    for (int b = 0; b < n; b++) l->stream += lens[b];
    MPI_Type_create_hindexed(n, lens, offs, MPI_BYTE, &l->filetype);
    MPI_Type_commit(&l->filetype);
    l->strided = p != VECTOR8;
    l->memtype = MPI_BYTE;
    if (l->strided) {
        MPI_Type_vector((int)l->stream, 1, 2, MPI_BYTE, &l->memtype);
        MPI_Type_commit(&l->memtype);
    }
    l->mem = calloc((size_t)(2 * l->stream), 1);
    free(offs);
    free(lens);
}

static void layout_make(layout_t *l, pattern_t p)
{
    layout_on(l, p, MPI_COMM_WORLD);
}

static void layout_free(layout_t *l)
{
    MPI_Type_free(&l->filetype);
    if (l->strided) MPI_Type_free(&l->memtype);
    free(l->mem);
    free(l->model);
}

/* My stream into memory (where the memory type puts it), everything else zero. */
static void fill_memory(layout_t *l, int data)
{
    memset(l->mem, 0, (size_t)(2 * l->stream));
    for (long long k = 0; data && k < l->stream; k++) l->mem[l->strided ? 2 * k : k] = stream_byte(l->rank, k);
}

static void check_memory(const layout_t *l)
{
    for (long long i = 0; i < (l->strided ? 2 : 1) * l->stream; i++) {
        int in_stream = !l->strided || i % 2 == 0;
        unsigned char want = in_stream ? stream_byte(l->rank, l->strided ? i / 2 : i) : 0;
        if (l->mem[i] != want)
            ft_fail(__FILE__, __LINE__, "%s: memory byte %lld is %d, want %d", pattern_names[l->p], i, l->mem[i], want);
    }
}

/* The file's rank 0 reads it with plain POSIX and compares it with the model. */
static void check_file(const layout_t *l, const char *path)
{
    if (l->rank == 0) {
        unsigned char *got = calloc((size_t)l->file_size + 1, 1);
        int fd = open(path, O_RDONLY);
        FT_CHECK(fd >= 0);
        FT_EQ(pread(fd, got, (size_t)l->file_size + 1, 0), l->file_size);
        close(fd);
        FT_EQ_MEM(got, l->model, (size_t)l->file_size);
        free(got);
    }
    MPI_Barrier(l->comm);
}

static MPI_Info hints_sized(const char *shm, const char *buffer)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ferry_cb_strategy", "even");
    MPI_Info_set(info, "cb_buffer_size", buffer);
    MPI_Info_set(info, "ferry_cb_shm", shm);
    return info;
}

/* On l's communicator, with cb_buffer_size `buffer`. */
static ferry_File open_sized(const layout_t *l, const char *path, const char *buffer, int amode)
{
    MPI_Info info = hints_sized("enable", buffer);
    ferry_File fh;
    FT_OK(ferry_File_open(l->comm, path, amode, info, &fh));
    MPI_Info_free(&info);
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, l->filetype, "native", MPI_INFO_NULL));
    return fh;
}

static ferry_File open_view(const layout_t *l, const char *path, const char *shm, int amode)
{
    MPI_Info info = hints_sized(shm, "8192");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, amode, info, &fh));
    MPI_Info_free(&info);
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, l->filetype, "native", MPI_INFO_NULL));
    return fh;
}

static void fresh(const char *path)
{
    if (ft_rank == 0) unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Collective over l's ranks: unlinks on its rank 0. */
static void fresh_on(const layout_t *l, const char *path)
{
    if (l->rank == 0) unlink(path);
    MPI_Barrier(l->comm);
}

/* The fewest and most bytes a rank shipped through the slabs. */
static void shm_range(ferry_File fh, long long *least, long long *most)
{
    long long mine = ft_info_number(fh, "ferry_stats_coll_shm_bytes");
    MPI_Allreduce(&mine, least, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
}

/* Whether MPI_COMM_WORLD spans several nodes (tools/cluster): a rank whose
 * bytes all go to aggregators on other nodes then ships nothing through slabs. */
static int ranks_on_my_node(void)
{
    MPI_Comm node;
    int here = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &here);
    MPI_Comm_free(&node);
    return here;
}

/* How MPI_COMM_WORLD sits on nodes, learned once (collectively, at the start:
 * the checks below also run on sub-communicators): the fewest and most ranks
 * a node runs. */
static int node_ranks_fewest, node_ranks_most;

static void learn_nodes(void)
{
    int here = ranks_on_my_node();
    MPI_Allreduce(&here, &node_ranks_fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&here, &node_ranks_most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
}

/* Whether some node runs two ranks or more (one rank a node ships nothing through slabs). */
static int shared_nodes(void)
{
    return node_ranks_most > 1;
}

static int several_nodes(void)
{
    return node_ranks_fewest < ft_size;
}

static void expect_shm(ferry_File fh, const char *shm)
{
    long long least, most;
    shm_range(fh, &least, &most);
    if (strcmp(shm, "enable") != 0 || !shared_nodes()) FT_EQ(most, 0); /* auto keeps messages for now */
    else FT_CHECK((several_nodes() ? most : least) > 0);
}

static void write_then_read(pattern_t p, const char *shm)
{
    layout_t l;
    layout_make(&l, p);
    char name[64];
    snprintf(name, sizeof name, "shm_%s_%s", pattern_names[p], shm);
    const char *path = ft_path(name);
    fresh(path);
    ferry_File fh = open_view(&l, path, shm, MPI_MODE_CREATE | MPI_MODE_RDWR);
    fill_memory(&l, 1);
    FT_OK(ferry_File_write_all(fh, l.mem, l.strided ? 1 : (int)l.stream, l.memtype, MPI_STATUS_IGNORE));
    expect_shm(fh, shm);
    FT_OK(ferry_File_close(&fh));
    check_file(&l, path);
    fh = open_view(&l, path, shm, MPI_MODE_RDONLY);
    fill_memory(&l, 0);
    MPI_Status status;
    FT_OK(ferry_File_read_all(fh, l.mem, l.strided ? 1 : (int)l.stream, l.memtype, &status));
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    FT_EQ(count, (int)l.stream);
    check_memory(&l);
    expect_shm(fh, shm);
    FT_OK(ferry_File_close(&fh));
    layout_free(&l);
}

/* Every rank reads the same dense bytes: each aggregator's slot would hold
 * every other rank's copy of its window, more than the slot from 3 ranks
 * on, so the call keeps messages on every rank alike. */
static void overlapping_reads(void)
{
    layout_t l;
    layout_make(&l, VECTOR8);
    const char *path = ft_path("shm_overlap");
    fresh(path);
    ferry_File fh = open_view(&l, path, "enable", MPI_MODE_CREATE | MPI_MODE_RDWR);
    fill_memory(&l, 1);
    FT_OK(ferry_File_write_all(fh, l.mem, (int)l.stream, MPI_BYTE, MPI_STATUS_IGNORE));
    long long before = ft_info_number(fh, "ferry_stats_coll_shm_bytes");
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    size_t n = (size_t)l.stream; /* every rank: the file's first bytes */
    memset(l.mem, 0, n);
    FT_OK(ferry_File_read_at_all(fh, 0, l.mem, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(l.mem, l.model, n);
    long long least, most, mine = ft_info_number(fh, "ferry_stats_coll_shm_bytes") - before;
    MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &least, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (node_ranks_most >= 3 || !shared_nodes()) FT_EQ(most, 0);
    else FT_CHECK((several_nodes() ? most : least) > 0); /* at 2 ranks a node the other copy just fits */
    FT_OK(ferry_File_close(&fh));
    layout_free(&l);
}

/* A fault armed on `rank` during one call through the slabs: every rank
 * fails with cls and returns; the same call then succeeds. */
static void fault_in(const char *spec, int write, int cls)
{
    layout_t l;
    layout_make(&l, IRREGULAR);
    char name[64];
    snprintf(name, sizeof name, "shm_fault_%d", write);
    const char *path = ft_path(name);
    fresh(path);
    ferry_File fh = open_view(&l, path, "enable", MPI_MODE_CREATE | MPI_MODE_RDWR);
    fill_memory(&l, 1);
    if (!write) FT_OK(ferry_File_write_all(fh, l.mem, 1, l.memtype, MPI_STATUS_IGNORE));
    if (!write) fill_memory(&l, 0);
    FT_OK(ferry__fs_fault_arm(spec));
    int rc = write ? ft_capture(ferry_File_write_all(fh, l.mem, 1, l.memtype, MPI_STATUS_IGNORE))
                   : ft_capture(ferry_File_read_all(fh, l.mem, 1, l.memtype, MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    FT_CHECK(rc != MPI_SUCCESS);
    FT_EQ(ft_class(rc), cls);
    expect_shm(fh, "enable"); /* the failed call went through the slabs */
    /* The handle still works: the same call through the slabs succeeds everywhere. */
    FT_OK(ferry_File_seek(fh, 0, MPI_SEEK_SET));
    fill_memory(&l, write);
    if (write) FT_OK(ferry_File_write_all(fh, l.mem, 1, l.memtype, MPI_STATUS_IGNORE));
    else FT_OK(ferry_File_read_all(fh, l.mem, 1, l.memtype, MPI_STATUS_IGNORE));
    if (!write) check_memory(&l);
    FT_OK(ferry_File_close(&fh));
    if (write) check_file(&l, path);
    layout_free(&l);
}

/* --- the shared window: one for every file on MPI_COMM_WORLD's ranks ------ */

static long long made(void)
{
    return ferry__coll_shm_windows_made();
}

/* Collective over l's ranks: whether some rank shipped through the slabs. */
static int shipped(ferry_File fh, const layout_t *l)
{
    long long mine = ft_info_number(fh, "ferry_stats_coll_shm_bytes"), most = 0;
    MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, l->comm);
    return most > 0;
}

static int count_of(const layout_t *l)
{
    return l->strided ? 1 : (int)l->stream;
}

/* One open/close cycle on l's ranks: a fresh file written through the
 * slabs (when `slabs`: other threads may hold the window), checked against
 * the model, read back through them and checked. */
static void cycle(layout_t *l, const char *path, const char *buffer, int slabs)
{
    fresh_on(l, path);
    ferry_File fh = open_sized(l, path, buffer, MPI_MODE_CREATE | MPI_MODE_RDWR);
    fill_memory(l, 1);
    FT_OK(ferry_File_write_all(fh, l->mem, count_of(l), l->memtype, MPI_STATUS_IGNORE));
    if (slabs && shared_nodes()) FT_CHECK(shipped(fh, l));
    FT_OK(ferry_File_close(&fh));
    check_file(l, path);
    fh = open_sized(l, path, buffer, MPI_MODE_RDONLY);
    fill_memory(l, 0);
    FT_OK(ferry_File_read_all(fh, l->mem, count_of(l), l->memtype, MPI_STATUS_IGNORE));
    check_memory(l);
    if (slabs && shared_nodes()) FT_CHECK(shipped(fh, l));
    FT_OK(ferry_File_close(&fh));
}

/* Several open/close cycles on MPI_COMM_WORLD and on a duplicate of it
 * (the same ranks): the window is made once, at the first call, and kept. */
static void reuse_cycles(void)
{
    long long before = made();
    for (int p = 0; p < PATTERNS; p++) {
        layout_t l;
        layout_make(&l, (pattern_t)p);
        for (int i = 0; i < 3; i++) cycle(&l, ft_path("shm_reuse"), "8192", 1);
        layout_free(&l);
        FT_EQ(made() - before, 1);
    }
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    layout_t l;
    layout_on(&l, VECTOR8, dup);
    cycle(&l, ft_path("shm_reuse_dup"), "8192", 1);
    FT_EQ(made() - before, 1);
    layout_free(&l);
    MPI_Comm_free(&dup);
}

/* Half of my stream (first or second) through fh, from or into l's memory. */
static void half(ferry_File fh, layout_t *l, int second, int write)
{
    int n = (int)l->stream / 2, at = second ? n : 0, count = second ? (int)l->stream - n : n;
    if (write) FT_OK(ferry_File_write_all(fh, l->mem + at, count, MPI_BYTE, MPI_STATUS_IGNORE));
    else FT_OK(ferry_File_read_all(fh, l->mem + at, count, MPI_BYTE, MPI_STATUS_IGNORE));
}

/* Two files open at once on the same ranks (MPI_COMM_WORLD and a
 * duplicate), their calls interleaved, both through the one window; the
 * second's larger cb_buffer_size grows the window once (collectively),
 * and the first's later calls use the grown slots. */
static void two_files_at_once(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    layout_t a, b;
    layout_make(&a, VECTOR8);
    layout_on(&b, VECTOR8, dup);
    char pa[600], pb[600];
    snprintf(pa, sizeof pa, "%s", ft_path("shm_two_a"));
    snprintf(pb, sizeof pb, "%s", ft_path("shm_two_b"));
    fresh_on(&a, pa);
    fresh_on(&b, pb);
    long long before = made();
    ferry_File fa = open_sized(&a, pa, "8192", MPI_MODE_CREATE | MPI_MODE_RDWR),
               fb = open_sized(&b, pb, "3145728", MPI_MODE_CREATE | MPI_MODE_RDWR);
    for (int write = 1; write >= 0; write--) {
        fill_memory(&a, write);
        fill_memory(&b, write);
        if (!write) FT_OK(ferry_File_seek(fa, 0, MPI_SEEK_SET));
        if (!write) FT_OK(ferry_File_seek(fb, 0, MPI_SEEK_SET));
        for (int second = 0; second < 2; second++) {
            half(fa, &a, second, write);
            half(fb, &b, second, write);
        }
        check_memory(&a);
        check_memory(&b);
    }
    FT_EQ(made() - before, 1); /* b's first call grew it, nothing else made one */
    if (shared_nodes()) FT_CHECK(shipped(fa, &a));
    if (shared_nodes()) FT_CHECK(shipped(fb, &b));
    FT_OK(ferry_File_close(&fa));
    FT_OK(ferry_File_close(&fb));
    check_file(&a, pa);
    check_file(&b, pb);
    layout_free(&a);
    layout_free(&b);
    MPI_Comm_free(&dup);
}

/* The user frees the communicator a file is open on, then after: on a
 * duplicate of MPI_COMM_WORLD (the shared window stays, the next file uses
 * it), and on halves of MPI_COMM_WORLD (their files' own windows, freed at
 * close). */
static void communicator_freed(void)
{
    MPI_Comm dup, keep;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    layout_t l;
    layout_on(&l, VECTOR8, dup);
    const char *path = ft_path("shm_freed");
    fresh_on(&l, path);
    long long before = made();
    ferry_File fh = open_sized(&l, path, "8192", MPI_MODE_CREATE | MPI_MODE_RDWR);
    fill_memory(&l, 1);
    half(fh, &l, 0, 1);
    MPI_Comm_free(&dup); /* the file keeps its own duplicate */
    l.comm = MPI_COMM_WORLD;
    half(fh, &l, 1, 1);
    if (shared_nodes()) FT_CHECK(shipped(fh, &l));
    FT_OK(ferry_File_close(&fh));
    check_file(&l, path);
    FT_EQ(made() - before, 0);
    layout_free(&l);
    for (int while_open = 0; while_open < 2; while_open++) {
        MPI_Comm part;
        MPI_Comm_split(MPI_COMM_WORLD, ft_rank < ft_size / 2, ft_rank, &part);
        MPI_Comm_dup(part, &keep); /* for the checks once part is gone */
        layout_on(&l, IRREGULAR, part);
        char name[64];
        snprintf(name, sizeof name, "shm_part_%d", ft_rank < ft_size / 2);
        path = ft_path(name);
        fresh_on(&l, path);
        fh = open_sized(&l, path, "8192", MPI_MODE_CREATE | MPI_MODE_RDWR);
        fill_memory(&l, 1);
        if (while_open) MPI_Comm_free(&part);
        l.comm = keep;
        FT_OK(ferry_File_write_all(fh, l.mem, count_of(&l), l.memtype, MPI_STATUS_IGNORE));
        if (l.size > 1 && shared_nodes()) FT_CHECK(shipped(fh, &l));
        FT_OK(ferry_File_close(&fh));
        if (!while_open) MPI_Comm_free(&part);
        check_file(&l, path);
        layout_free(&l);
        MPI_Comm_free(&keep);
    }
    /* The halves' windows were their files' own: MPI_COMM_WORLD's files still share the old one. */
    before = made();
    layout_make(&l, VECTOR24_HOLE);
    cycle(&l, ft_path("shm_after_parts"), "8192", 1);
    FT_EQ(made() - before, 0);
    layout_free(&l);
}

/* Two threads per rank, each with its own files on its own duplicate of
 * MPI_COMM_WORLD, in calls at the same time: a call ships through the
 * window only while it holds it (else by messages, on every rank alike),
 * so neither thread's bytes are the other's. */
typedef struct worker {
    layout_t l;
    char path[600];
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    for (int i = 0; i < 6; i++) cycle(&w->l, w->path, "8192", 0);
    return NULL;
}

static void threads_at_once(int provided)
{
    if (provided != MPI_THREAD_MULTIPLE) {
        ft_skip("two threads at once: MPI_THREAD_MULTIPLE not provided (got level %d)", provided);
        return;
    }
    worker_t w[2];
    pthread_t t[2];
    MPI_Comm comms[2];
    for (int i = 0; i < 2; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
        layout_on(&w[i].l, i ? IRREGULAR : VECTOR24_HOLE, comms[i]);
        char name[64];
        snprintf(name, sizeof name, "shm_thread_%d", i);
        snprintf(w[i].path, sizeof w[i].path, "%s", ft_path(name));
    }
    for (int i = 0; i < 2; i++) FT_EQ(pthread_create(&t[i], NULL, work, &w[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++) {
        layout_free(&w[i].l);
        MPI_Comm_free(&comms[i]);
    }
}

int main(int argc, char **argv)
{
    int provided = ft_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    learn_nodes();
    reuse_cycles(); /* first: it counts the shared window's making */
    static const char *const settings[] = {"enable", "disable", "auto"};
    for (int p = 0; p < PATTERNS; p++)
        for (int s = 0; s < 3; s++) write_then_read((pattern_t)p, settings[s]);
    overlapping_reads(); /* before two_files_at_once grows the slots past what it overflows */
    /* One rank's fault on one node; across nodes (tools/cluster) the aggregators are
     * chosen per node, and any rank's first transfer fails. */
    char spec[64], on[16] = "";
    if (!several_nodes()) snprintf(on, sizeof on, "@%d", ft_size - 1);
    snprintf(spec, sizeof spec, "write:1:EIO%s", on);
    fault_in(spec, 1, MPI_ERR_IO);
    snprintf(spec, sizeof spec, several_nodes() ? "write:1:ENOSPC" : "write:3:ENOSPC@0");
    fault_in(spec, 1, MPI_ERR_NO_SPACE);
    snprintf(spec, sizeof spec, "read:2:EIO%s", on);
    fault_in(spec, 0, MPI_ERR_IO);
    two_files_at_once();
    communicator_freed();
    threads_at_once(provided);
    return ft_finish();
}

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
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static long long round_bytes(pattern_t p, int k)
{
    if (p == VECTOR24_HOLE) return 24LL * (ft_size + 1); /* one hole block per round */
    long long sum = p == IRREGULAR ? GAP : 0;
    for (int q = 0; q < ft_size; q++) sum += block_len(p, q, k);
    return sum;
}

static void blocks_of(pattern_t p, int r, MPI_Aint *offs, int *lens)
{
    long long base = 0;
    for (int k = 0; k < pattern_blocks[p]; k++) {
        long long at = base;
        for (int q = 0; q < r; q++) at += block_len(p, q, k);
        offs[k] = (MPI_Aint)at;
        lens[k] = block_len(p, r, k);
        base += round_bytes(p, k);
    }
}

static unsigned char stream_byte(int r, long long k)
{
    return (unsigned char)(r * 37 + k * 11 + 1) | 1;
}

typedef struct layout {
    pattern_t p;
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
    for (int r = 0; r < ft_size; r++) {
        blocks_of(l->p, r, offs, lens);
        if (offs[n - 1] + lens[n - 1] > l->file_size) l->file_size = offs[n - 1] + lens[n - 1];
    }
    l->model = calloc((size_t)l->file_size, 1);
    for (int r = 0; r < ft_size; r++) {
        blocks_of(l->p, r, offs, lens);
        long long k = 0;
        for (int b = 0; b < n; b++)
            for (int i = 0; i < lens[b]; i++) l->model[offs[b] + i] = stream_byte(r, k++);
    }
}

static void layout_make(layout_t *l, pattern_t p)
{
    int n = pattern_blocks[p];
    MPI_Aint *offs = malloc((size_t)n * sizeof *offs);
    int *lens = malloc((size_t)n * sizeof *lens);
    memset(l, 0, sizeof *l);
    l->p = p;
    build_model(l, offs, lens);
    blocks_of(p, ft_rank, offs, lens);
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
    for (long long k = 0; data && k < l->stream; k++) l->mem[l->strided ? 2 * k : k] = stream_byte(ft_rank, k);
}

static void check_memory(const layout_t *l)
{
    for (long long i = 0; i < (l->strided ? 2 : 1) * l->stream; i++) {
        int in_stream = !l->strided || i % 2 == 0;
        unsigned char want = in_stream ? stream_byte(ft_rank, l->strided ? i / 2 : i) : 0;
        if (l->mem[i] != want)
            ft_fail(__FILE__, __LINE__, "%s: memory byte %lld is %d, want %d", pattern_names[l->p], i, l->mem[i], want);
    }
}

/* Rank 0 reads the file with plain POSIX and compares it with the model. */
static void check_file(const layout_t *l, const char *path)
{
    if (ft_rank == 0) {
        unsigned char *got = calloc((size_t)l->file_size + 1, 1);
        int fd = open(path, O_RDONLY);
        FT_CHECK(fd >= 0);
        FT_EQ(pread(fd, got, (size_t)l->file_size + 1, 0), l->file_size);
        close(fd);
        FT_EQ_MEM(got, l->model, (size_t)l->file_size);
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static MPI_Info hints(const char *shm)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ferry_cb_strategy", "even");
    MPI_Info_set(info, "cb_buffer_size", "8192");
    MPI_Info_set(info, "ferry_cb_shm", shm);
    return info;
}

static ferry_File open_view(const layout_t *l, const char *path, const char *shm, int amode)
{
    MPI_Info info = hints(shm);
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

/* The fewest and most bytes a rank shipped through the slabs. */
static void shm_range(ferry_File fh, long long *least, long long *most)
{
    long long mine = ft_info_number(fh, "ferry_stats_coll_shm_bytes");
    MPI_Allreduce(&mine, least, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
}

static void expect_shm(ferry_File fh, const char *shm)
{
    long long least, most;
    shm_range(fh, &least, &most);
    if (strcmp(shm, "enable") != 0) FT_EQ(most, 0); /* auto keeps messages for now */
    else FT_CHECK(least > 0);
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
    if (ft_size >= 3) FT_EQ(most, 0);
    else FT_CHECK(least > 0); /* at 2 ranks the other copy just fits */
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

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    static const char *const settings[] = {"enable", "disable", "auto"};
    for (int p = 0; p < PATTERNS; p++)
        for (int s = 0; s < 3; s++) write_then_read((pattern_t)p, settings[s]);
    overlapping_reads();
    char spec[64];
    int last = ft_size - 1;
    snprintf(spec, sizeof spec, "write:1:EIO@%d", last);
    fault_in(spec, 1, MPI_ERR_IO);
    snprintf(spec, sizeof spec, "write:3:ENOSPC@0");
    fault_in(spec, 1, MPI_ERR_NO_SPACE);
    snprintf(spec, sizeof spec, "read:2:EIO@%d", last);
    fault_in(spec, 0, MPI_ERR_IO);
    return ft_finish();
}

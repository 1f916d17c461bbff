/*
 * Collective mode (ferry_container_modes_t.collector_size, issue 29): the same writes and
 * flushes into a container written independently and into one written
 * through collectors give the same file byte for byte (after the container
 * id, its CRCs and the creation time, which differ by design, are blanked),
 * at collector groups of 1, 2 and 3 ranks (the last group shorter when the
 * rank count is not a multiple) and one per node, one and two files, data
 * checksums on and off, appends, rewrites of bytes already written (chunks
 * whose CRC the collector computes from the file) and a hole. Every stream
 * is read back byte-exact in parallel and serially and verified. A
 * collector whose data write fails fails the flush of every member of its
 * group (MPI_ERR_IO, naming the collector), the other groups' flushes
 * succeed, the failed group's streams keep what their last good flush
 * recorded; a collector whose trailer write fails fails the flush of every
 * member, and the next flush writes the trailers: no byte is lost.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_container.h"
#include "ferry_test.h"
#include "fs/fs.h"

enum { ROUNDS = 6, MAX_PIECE = 3000 };

typedef struct config {
    int files, collector_size, checksums;
    MPI_Offset block_size, chunk_size;
    size_t buffer_size;
} config_t;

/* The byte at position pos of stream `stream`; the hole [hole_start(stream), +HOLE) reads zero. */
enum { HOLE = 1500 };
static size_t hole_start(int stream)
{
    return 5000 + (size_t)stream * 777;
}

static unsigned char expected_byte(int stream, size_t pos)
{
    if (pos >= hole_start(stream) && pos < hole_start(stream) + HOLE) return 0;
    return (unsigned char)(pos * 131 + (size_t)stream * 17 + (pos >> 9) + 1);
}

static void fill_expected(int stream, size_t from, unsigned char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) buf[i] = expected_byte(stream, from + i);
}

/* This rank's writes in round `round`: pieces of random size (the same plan in both modes), now and
 * then a step back to rewrite bytes already written, the hole skipped by seeking. */
static size_t write_round(ferry_container_t c, int round, size_t length)
{
    uint64_t state = ft_seed * 31 + (uint64_t)ft_rank * 1000 + (uint64_t)round;
    size_t target = length + (size_t)(ft_rand(&state) % 9000), hole = hole_start(ft_rank);
    unsigned char piece[MAX_PIECE];
    while (length < target) {
        if (length >= hole && length < hole + HOLE) {
            length = hole + HOLE;
            if (target <= length) target = length + 1; /* a seek alone does not lengthen the stream */
            FT_OK(ferry_container_seek(c, (MPI_Offset)length, MPI_SEEK_SET));
            continue;
        }
        size_t pos = length, len = 1 + (size_t)(ft_rand(&state) % MAX_PIECE), done = 0;
        if (ft_rand(&state) % 5 == 0 && pos > 100) pos -= 1 + (size_t)(ft_rand(&state) % 100); /* rewrite */
        if (pos < hole && pos + len > hole) len = hole - pos;
        fill_expected(ft_rank, pos, piece, len);
        FT_OK(ferry_container_seek(c, (MPI_Offset)pos, MPI_SEEK_SET));
        FT_OK(ferry_container_write(c, piece, len, &done));
        FT_EQ(done, len);
        if (pos + len > length) length = pos + len;
    }
    return length;
}

static size_t write_container(const char *path, const config_t *cfg, int collective)
{
    ferry_container_params_t p = {0};
    p.files = cfg->files;
    p.block_size = cfg->block_size;
    p.chunk_size = cfg->chunk_size + 512 * (ft_rank % 3); /* ranks differ */
    p.data_checksums = cfg->checksums;
    p.buffer_size = cfg->buffer_size;
    ferry_container_modes_t modes = {.collector_size = collective ? cfg->collector_size : 0};
    ferry_container_t c;
    FT_OK(ferry_container_open_write_modes(MPI_COMM_WORLD, path, &p, &modes, &c));
    size_t length = 0;
    for (int round = 0; round < ROUNDS; round++) {
        length = write_round(c, round, length);
        FT_OK(ferry_container_flush(c));
    }
    FT_OK(ferry_container_close(&c));
    return length;
}

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    FT_CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = malloc(*size + 1);
    FT_EQ(fread(bytes, 1, *size, f), *size);
    fclose(f);
    return bytes;
}

static void blank(unsigned char *bytes, size_t size, size_t at, size_t len)
{
    FT_CHECK(at + len <= size);
    if (at + len <= size) memset(bytes + at, 0, len);
}

/* Blanks what differs between two containers by design: the container id (superblock, completion
 * record, end table, every chunk trailer), the CRCs covering it, the creation time. */
static void blank_ids(ferry_container_set_t set, int file, unsigned char *bytes, size_t size)
{
    blank(bytes, size, 16, 8);
    blank(bytes, size, 80, 8);
    blank(bytes, size, 252, 4);
    uint64_t end_offset;
    memcpy(&end_offset, bytes + 512 + 16, 8);
    blank(bytes, size, 512 + 8, 8);
    blank(bytes, size, 512 + 32, 4); /* the end table's CRC */
    blank(bytes, size, 512 + 60, 4);
    blank(bytes, size, (size_t)end_offset + 8, 8);
    blank(bytes, size, size - 4, 4); /* the end table's CRC ends the file */
    int streams, files, complete;
    FT_OK(ferry_container_serial_describe(set, &streams, &files, &complete));
    for (int s = 0; s < streams; s++) {
        ferry_container_info_t info;
        FT_OK(ferry_container_serial_stream(set, s, &info));
        if (info.file_index != file) continue;
        for (MPI_Offset b = 0; b < info.chunks; b++) {
            int k;
            MPI_Offset offset, used;
            FT_OK(ferry_container_serial_chunk(set, s, b, &k, &offset, &used));
            size_t trailer = (size_t)(offset + info.chunk_capacity);
            blank(bytes, size, trailer + 8, 8);
            blank(bytes, size, trailer + 60, 4);
        }
    }
}

/* Rank 0: every file of the two sets the same after blank_ids. */
static void compare_files(const char *independent, const char *collective)
{
    ferry_container_set_t a, b;
    int streams, files, complete;
    FT_OK(ferry_container_serial_open(independent, 0, &a));
    FT_OK(ferry_container_serial_open(collective, 0, &b));
    FT_OK(ferry_container_serial_describe(a, &streams, &files, &complete));
    for (int k = 0; k < files; k++) {
        char name_a[700], name_b[700];
        snprintf(name_a, sizeof name_a, k ? "%s.%06d" : "%s", independent, k);
        snprintf(name_b, sizeof name_b, k ? "%s.%06d" : "%s", collective, k);
        size_t size_a, size_b;
        unsigned char *bytes_a = slurp(name_a, &size_a), *bytes_b = slurp(name_b, &size_b);
        FT_EQ(size_a, size_b);
        if (size_a == size_b) {
            blank_ids(a, k, bytes_a, size_a);
            blank_ids(b, k, bytes_b, size_b);
            FT_EQ_MEM(bytes_a, bytes_b, size_a);
        }
        free(bytes_a);
        free(bytes_b);
    }
    FT_OK(ferry_container_serial_close(&a));
    FT_OK(ferry_container_serial_close(&b));
}

static void check_streams(const char *path, const size_t *lengths, const int *failed);

/* Every stream byte-exact: this rank's in parallel, all of them serially on rank 0, and verify. */
static void check_readback(const char *path, const size_t *lengths)
{
    ferry_container_t c;
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    size_t mine = lengths[ft_rank], done = 0;
    unsigned char *got = malloc(mine + 1), *want = malloc(mine + 1);
    fill_expected(ft_rank, 0, want, mine);
    FT_OK(ferry_container_read(c, got, mine + 1, &done));
    FT_EQ(done, mine);
    FT_EQ_MEM(got, want, mine);
    FT_OK(ferry_container_close(&c));
    free(got);
    free(want);
    int *none_failed = calloc((size_t)ft_size, sizeof *none_failed);
    check_streams(path, lengths, none_failed);
    free(none_failed);
}

static void round_trip(const config_t *cfg, int n)
{
    char name_a[32], name_b[32];
    snprintf(name_a, sizeof name_a, "indep%d.ctr", n);
    snprintf(name_b, sizeof name_b, "coll%d.ctr", n);
    char independent[700], collective[700];
    snprintf(independent, sizeof independent, "%s", ft_path(name_a));
    snprintf(collective, sizeof collective, "%s", ft_path(name_b));
    size_t length = write_container(independent, cfg, 0);
    FT_EQ(write_container(collective, cfg, 1), length);
    size_t *lengths = malloc((size_t)ft_size * sizeof *lengths);
    MPI_Allgather(&length, sizeof length, MPI_BYTE, lengths, sizeof length, MPI_BYTE, MPI_COMM_WORLD);
    check_readback(collective, lengths);
    if (ft_rank == 0) compare_files(independent, collective);
    free(lengths);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0 (serially): stream s holds exactly its first lengths[s] bytes, and whether a write failed. */
static void check_streams(const char *path, const size_t *lengths, const int *failed)
{
    if (ft_rank != 0) return;
    ferry_container_set_t set;
    FT_OK(ferry_container_serial_open(path, 0, &set));
    for (int s = 0; s < ft_size; s++) {
        ferry_container_info_t info;
        size_t done;
        FT_OK(ferry_container_serial_stream(set, s, &info));
        FT_EQ((size_t)info.length, lengths[s]);
        FT_EQ(info.write_failed, failed[s]);
        unsigned char *got = malloc(lengths[s] + 1), *want = malloc(lengths[s] + 1);
        fill_expected(s, 0, want, lengths[s]);
        FT_OK(ferry_container_serial_read(set, s, 0, got, lengths[s] + 1, &done));
        FT_EQ(done, lengths[s]);
        FT_EQ_MEM(got, want, lengths[s]);
        free(got);
        free(want);
    }
    FT_OK(ferry_container_serial_close(&set));
    ferry_container_check_t check = {0};
    FT_OK(ferry_container_verify(path, &check));
    FT_EQ(check.problems, 0);
}

/* After a closed container: every rank's stream length (mine) gathered, the streams of ranks below
 * failed_below marked as ended by a failed write, every stream checked on rank 0. */
static void check_closed(const char *path, size_t mine, int failed_below)
{
    size_t *lengths = malloc((size_t)ft_size * sizeof *lengths);
    int *failed = calloc((size_t)ft_size, sizeof *failed);
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, lengths, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < ft_size && r < failed_below; r++) failed[r] = 1;
    check_streams(path, lengths, failed);
    free(lengths);
    free(failed);
    MPI_Barrier(MPI_COMM_WORLD);
}

static ferry_container_t open_groups_of_two(const char *path)
{
    ferry_container_params_t p = {0};
    p.block_size = 512;
    p.chunk_size = 4096;
    ferry_container_modes_t modes = {.collector_size = 2};
    ferry_container_t c;
    FT_OK(ferry_container_open_write_modes(MPI_COMM_WORLD, path, &p, &modes, &c));
    return c;
}

/* The collector of ranks 0 and 1 fails its data writes: both flushes fail, naming the collector; the
 * other groups' succeed; the two streams end at their first flush and take no more writes. */
static void data_write_fails(void)
{
    const char *path = ft_path("collect_fault.ctr");
    ferry_container_t c = open_groups_of_two(path);
    size_t first = write_round(c, 0, 0);
    FT_OK(ferry_container_flush(c));
    size_t second = write_round(c, 1, first), done;
    if (ft_rank == 0) FT_OK(ferry__fs_fault_arm("write:1+:EIO"));
    int rc = ft_capture(ferry_container_flush(c));
    ferry__fs_fault_disarm();
    int in_group = ft_rank < 2;
    FT_EQ(ft_class(rc), in_group ? MPI_ERR_IO : MPI_SUCCESS);
    if (ft_rank == 1) FT_CHECK(strstr(ft_message, "collector") && strstr(ft_message, "rank 1"));
    if (in_group) FT_FAILS(MPI_ERR_IO, ferry_container_write(c, "x", 1, &done));
    FT_OK(ferry_container_close(&c));
    check_closed(path, in_group ? first : second, 2);
}

/* The collector of ranks 0 and 1 fails its first trailer write: both flushes fail; the data are in
 * the file and the next flush writes the trailers: every byte comes back. */
static void trailer_write_fails(void)
{
    const char *path = ft_path("collect_trailer.ctr");
    ferry_container_t c = open_groups_of_two(path);
    size_t length = write_round(c, 0, 0), done;
    FT_OK(ferry_container_flush(c));
    MPI_Offset avail;
    unsigned char piece[100];
    FT_OK(ferry_container_seek(c, 0, MPI_SEEK_END));
    FT_OK(ferry_container_bytes_avail(c, &avail));
    size_t len = avail < 100 ? (size_t)avail : 100; /* one data piece per member, in one chunk */
    fill_expected(ft_rank, length, piece, len);
    FT_OK(ferry_container_write(c, piece, len, &done));
    length += len;
    char fault[32];
    snprintf(fault, sizeof fault, "write:%d:EIO", (ft_size < 2 ? ft_size : 2) + 1); /* after the data */
    if (ft_rank == 0) FT_OK(ferry__fs_fault_arm(fault));
    int rc = ferry_container_flush(c);
    ferry__fs_fault_disarm();
    FT_EQ(ft_class(rc), ft_rank < 2 ? MPI_ERR_IO : MPI_SUCCESS);
    FT_OK(ferry_container_flush(c));
    FT_OK(ferry_container_close(&c));
    check_closed(path, length, 0);
}

/* Modes every rank must agree on: a differing collector_size is MPI_ERR_NOT_SAME everywhere, a bad
 * one or collectors with buddy copies MPI_ERR_ARG everywhere; no handle is left. */
static void refusals(void)
{
    const char *path = ft_path("collect_refused.ctr");
    ferry_container_modes_t cases[][2] = {{{2, 0}, {3, 0}}, {{-2, 0}, {-2, 0}}, {{2, 1}, {2, 1}}, {{0, 0}, {2, 0}}};
    const int want[] = {MPI_ERR_NOT_SAME, MPI_ERR_ARG, MPI_ERR_ARG, MPI_ERR_NOT_SAME};
    for (int i = 0; i < 4; i++) {
        ferry_container_t c = NULL;
        const ferry_container_modes_t *m = &cases[i][ft_rank == ft_size - 1 && ft_size > 1 ? 1 : 0];
        int rc = ferry_container_open_write_modes(MPI_COMM_WORLD, path, NULL, m, &c);
        FT_EQ(ft_class(rc), ft_size > 1 || want[i] == MPI_ERR_ARG ? want[i] : MPI_SUCCESS);
        if (rc == MPI_SUCCESS) FT_OK(ferry_container_close(&c));
        FT_CHECK(c == NULL);
    }
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const config_t configs[] = {
        {1, 1, 1, 512, 2048, 100},
        {1, 2, 1, 512, 4096, 0},
        {1, 3, FERRY_CONTAINER_CHECKSUMS_OFF, 4096, 8192, 4096},
        {2, 2, 1, 1024, 3000, 0},
        {2, 3, 0, 512, 1500, 700},
        {FERRY_CONTAINER_FILE_PER_NODE, FERRY_CONTAINER_COLLECTOR_PER_NODE, 1, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) round_trip(&configs[i], (int)i);
    data_write_fails();
    trailer_write_fails();
    refusals();
    return ft_finish();
}

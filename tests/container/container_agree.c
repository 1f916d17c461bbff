/*
 * The container's public API against bad and disagreeing arguments (issue
 * 29 items 1-3): 0 crashes, 0 hangs (the runner's timeout), 0 silent
 * successes.
 *
 * Collective opens: every bad argument of open_write, open_read and
 * open_mapped (NULL path, NULL handle pointer, a path differing between
 * ranks, negative chunk size, bad block size, bad or differing file counts,
 * NULL or negative stream lists, streams that do not exist), passed by one
 * rank (the first, the last), by several (every other rank, all but the
 * first) and by all: every rank must fail with the same class, the handle
 * stays NULL, and the containers already there are untouched. Regressions
 * it holds: a NULL path on several ranks overflowed rank 0's list of names
 * (ASan at 2-3 ranks, glibc's heap check at 16); a differing path wrote
 * into another file, or read another container, with no error; a NULL
 * handle pointer on one rank left the others waiting. Arguments the ranks
 * may differ in (chunk size, rank 0's block size and checksums) do not fail.
 *
 * Independent and serial calls: NULL handles, NULL outputs, NULL buffers,
 * bad positions, streams, chunks, files and whence values, calls the handle
 * cannot do: each returns its error class, none succeeds.
 *
 * At 16 ranks (oversubscribed) only the open_read and open_mapped rows run.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_container.h"
#include "ferry_test.h"

enum { LENGTH = 3000 };

typedef enum { FIRST, LAST, EVERY_OTHER, ALL_BUT_FIRST, ALL, WHO_COUNT } who_t;
static const char *who_names[WHO_COUNT] = {"the first rank", "the last rank", "every other rank",
                                           "all but the first", "every rank"};

static int chosen(who_t who)
{
    switch (who) {
    case FIRST: return ft_rank == 0;
    case LAST: return ft_rank == ft_size - 1;
    case EVERY_OTHER: return ft_rank % 2 == 0;
    case ALL_BUT_FIRST: return ft_rank > 0;
    default: return 1;
    }
}

/* One rank's arguments to an open. */
typedef struct args {
    const char *path;
    ferry_container_params_t params;
    const ferry_container_params_t *p;
    int stream;
    const int *streams;
    int count;
    ferry_container_t handle, *result;
} args_t;

typedef enum { OPEN_WRITE, OPEN_READ, OPEN_MAPPED } op_t;

typedef struct row {
    const char *name;
    op_t op;
    int cls;
    void (*spoil)(args_t *a);
    int consistent_when_all; /* every rank spoiling alike is a valid call: skip ALL */
} row_t;

static const char *other_path;

static void null_path(args_t *a) { a->path = NULL; }
static void null_result(args_t *a) { a->result = NULL; }
static void another_path(args_t *a) { a->path = other_path; }
static void negative_chunk(args_t *a) { a->params.chunk_size = -5; }
static void odd_block(args_t *a) { a->params.block_size = 1000; }
static void bad_files(args_t *a) { a->params.files = -7; }
static void two_files(args_t *a) { a->params.files = 2; }
static void per_node(args_t *a) { a->params.files = FERRY_CONTAINER_FILE_PER_NODE; }
static void null_streams(args_t *a) { a->streams = NULL; }
static void negative_count(args_t *a) { a->count = -1; }
static void no_such_stream(args_t *a) { a->stream = ft_size + 5; }
static void negative_stream(args_t *a) { a->stream = -1; }

static const row_t rows[] = {
    {"NULL path", OPEN_READ, MPI_ERR_ARG, null_path, 0},
    {"NULL handle pointer", OPEN_READ, MPI_ERR_ARG, null_result, 0},
    {"another path", OPEN_READ, MPI_ERR_NOT_SAME, another_path, 1},
    {"NULL path", OPEN_MAPPED, MPI_ERR_ARG, null_path, 0},
    {"NULL handle pointer", OPEN_MAPPED, MPI_ERR_ARG, null_result, 0},
    {"another path", OPEN_MAPPED, MPI_ERR_NOT_SAME, another_path, 1},
    {"NULL stream list", OPEN_MAPPED, MPI_ERR_ARG, null_streams, 0},
    {"negative count", OPEN_MAPPED, MPI_ERR_ARG, negative_count, 0},
    {"stream beyond the last", OPEN_MAPPED, MPI_ERR_ARG, no_such_stream, 0},
    {"stream -1", OPEN_MAPPED, MPI_ERR_ARG, negative_stream, 0},
    {"NULL path", OPEN_WRITE, MPI_ERR_ARG, null_path, 0},
    {"NULL handle pointer", OPEN_WRITE, MPI_ERR_ARG, null_result, 0},
    {"another path", OPEN_WRITE, MPI_ERR_NOT_SAME, another_path, 1},
    {"negative chunk size", OPEN_WRITE, MPI_ERR_ARG, negative_chunk, 0},
    {"block size 1000", OPEN_WRITE, MPI_ERR_ARG, odd_block, 0},
    {"files = -7", OPEN_WRITE, MPI_ERR_ARG, bad_files, 0},
    {"files = 2 against 1", OPEN_WRITE, MPI_ERR_NOT_SAME, two_files, 1},
    {"one file per node against 1", OPEN_WRITE, MPI_ERR_NOT_SAME, per_node, 1},
};

static void write_container(const char *path, int salt)
{
    ferry_container_params_t p = {0};
    p.block_size = 512;
    p.chunk_size = 1024;
    ferry_container_t c;
    unsigned char bytes[LENGTH];
    size_t done;
    ft_fill(bytes, sizeof bytes, ft_seed + (uint64_t)(ft_rank * 7 + salt));
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    FT_OK(ferry_container_write(c, bytes, sizeof bytes, &done));
    FT_OK(ferry_container_close(&c));
}

/* Every rank's stream of the container at path holds what write_container(salt) wrote. */
static void check_container(const char *path, int salt)
{
    ferry_container_t c;
    unsigned char want[LENGTH], got[LENGTH + 1];
    size_t done;
    ft_fill(want, sizeof want, ft_seed + (uint64_t)(ft_rank * 7 + salt));
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    FT_OK(ferry_container_read(c, got, sizeof got, &done));
    FT_EQ(done, LENGTH);
    FT_EQ_MEM(got, want, LENGTH);
    FT_OK(ferry_container_close(&c));
}

static int call(op_t op, args_t *a)
{
    switch (op) {
    case OPEN_WRITE: return ferry_container_open_write(MPI_COMM_WORLD, a->path, a->p, a->result);
    case OPEN_READ: return ferry_container_open_read(MPI_COMM_WORLD, a->path, a->result);
    default: return ferry_container_open_mapped(MPI_COMM_WORLD, a->path, a->streams, a->count, a->result);
    }
}

/* One row, passed by `who`: every rank fails with the row's class. */
static void run_row(const row_t *row, who_t who, const char *path)
{
    args_t a = {.path = path, .stream = ft_size - 1 - ft_rank, .count = 1};
    a.params.block_size = 512;
    a.p = &a.params;
    a.streams = &a.stream;
    a.result = &a.handle;
    a.handle = (ferry_container_t)&a; /* the open must set it to NULL */
    if (chosen(who)) row->spoil(&a);
    int rc = call(row->op, &a), cls = rc == MPI_SUCCESS ? 0 : ft_class(rc), all[64];
    static const char *ops[] = {"open_write", "open_read", "open_mapped"};
    if (rc != MPI_SUCCESS && a.result) FT_CHECK(a.handle == NULL);
    if (rc == MPI_SUCCESS) ferry_container_close(&a.handle);
    MPI_Allgather(&cls, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < ft_size; r++)
        if (all[r] != row->cls)
            ft_fail(__FILE__, __LINE__, "%s with %s on %s: rank %d got class %d (%s), expected %d", ops[row->op],
                    row->name, who_names[who], r, all[r], all[r] ? "an error" : "success", row->cls);
}

static void collective_matrix(const char *path)
{
    int cases = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (ft_size > 8 && rows[i].op == OPEN_WRITE) continue; /* 16 ranks: keep it short */
        for (who_t who = 0; who < WHO_COUNT; who++) {
            if (who == ALL && rows[i].consistent_when_all) continue;
            if (ft_size == 1 && who != ALL) continue;
            run_row(&rows[i], who, path);
            cases++;
        }
        check_container(path, 0); /* nothing emptied or written */
    }
    check_container(other_path, 1);
    if (ft_rank == 0) printf("container_agree: %d collective cases, every rank failed alike in each\n", cases);
}

/* Arguments ranks may differ in: each rank's chunk size, and rank 0's block size and checksums apply to all. */
static void allowed_differences(const char *path)
{
    ferry_container_params_t p = {0};
    p.chunk_size = 1000 + 700 * ft_rank;
    p.block_size = ft_rank == 0 ? 1024 : 512;
    p.data_checksums = ft_rank == 0 ? FERRY_CONTAINER_CHECKSUMS_OFF : 1;
    ferry_container_t c;
    ferry_container_info_t info;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    FT_OK(ferry_container_info(c, &info));
    FT_EQ(info.block_size, 1024);
    FT_EQ(info.data_checksums, 0);
    FT_EQ(info.chunk_size, (1000 + 700 * ft_rank + 1023) / 1024 * 1024);
    FT_OK(ferry_container_close(&c));
}

/* Local calls on a handle (a writer, or a reader): each bad argument fails. */
static void handle_calls(ferry_container_t c, int writing)
{
    char byte = 0;
    size_t done;
    MPI_Offset at;
    int flag;
    ferry_container_info_t info;
    FT_FAILS(MPI_ERR_ARG, ferry_container_write(NULL, &byte, 1, &done));
    FT_FAILS(MPI_ERR_ARG, ferry_container_read(NULL, &byte, 1, &done));
    FT_FAILS(writing ? MPI_ERR_ARG : MPI_ERR_READ_ONLY, ferry_container_write(c, NULL, 1, &done));
    FT_FAILS(writing ? MPI_ERR_ACCESS : MPI_ERR_ARG, ferry_container_read(c, NULL, 1, &done));
    FT_FAILS(writing ? MPI_ERR_ACCESS : MPI_ERR_ARG, writing ? ferry_container_read(c, &byte, 1, &done)
                                                             : ferry_container_read(c, NULL, 1, &done));
    FT_FAILS(MPI_ERR_ARG, ferry_container_flush(NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_container_seek(NULL, 0, MPI_SEEK_SET));
    FT_FAILS(MPI_ERR_ARG, ferry_container_seek(c, -1, MPI_SEEK_SET));
    FT_FAILS(MPI_ERR_ARG, ferry_container_seek(c, -1, MPI_SEEK_CUR));
    FT_FAILS(MPI_ERR_ARG, ferry_container_seek(c, 0, 777));
    FT_OK(ferry_container_seek(c, INT64_MAX, MPI_SEEK_SET));
    FT_FAILS(MPI_ERR_ARG, ferry_container_seek(c, 1, MPI_SEEK_CUR)); /* beyond 2^63 */
    FT_OK(ferry_container_seek(c, 0, MPI_SEEK_SET));
    FT_FAILS(MPI_ERR_ARG, ferry_container_tell(NULL, &at));
    FT_FAILS(MPI_ERR_ARG, ferry_container_tell(c, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_container_bytes_avail(NULL, &at));
    FT_FAILS(MPI_ERR_ARG, ferry_container_bytes_avail(c, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_container_eof(NULL, &flag));
    FT_FAILS(MPI_ERR_ARG, ferry_container_eof(c, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_container_select(NULL, 0));
    FT_FAILS(MPI_ERR_ARG, ferry_container_select(c, -1));
    FT_FAILS(MPI_ERR_ARG, ferry_container_select(c, 1));
    FT_FAILS(MPI_ERR_ARG, ferry_container_info(NULL, &info));
    FT_FAILS(MPI_ERR_ARG, ferry_container_info(c, NULL));
}

static void independent_calls(const char *path)
{
    ferry_container_t c;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, ft_path("indep.ctr"), NULL, &c));
    handle_calls(c, 1);
    FT_OK(ferry_container_close(&c));
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    handle_calls(c, 0);
    FT_OK(ferry_container_close(&c));
    int none = 0;
    FT_OK(ferry_container_open_mapped(MPI_COMM_WORLD, path, &none, 0, &c)); /* a rank may read no stream */
    char byte;
    size_t done;
    FT_FAILS_NAMING(MPI_ERR_ARG, "opened no stream", ferry_container_read(c, &byte, 1, &done));
    FT_OK(ferry_container_close(&c));
    FT_FAILS(MPI_ERR_ARG, ferry_container_close(NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_container_close(&c));
}

static void serial_reads(const char *path)
{
    ferry_container_set_t set, none = NULL;
    int a, b, d, file;
    unsigned char buf[16];
    size_t done;
    MPI_Offset off, used;
    ferry_container_info_t info;
    ferry_container_file_info_t finfo;
    FT_EQ(ferry_container_serial_open(NULL, 0, &set), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_open(path, 0, NULL), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_open(ft_path("missing.ctr"), 0, &set), MPI_ERR_NO_SUCH_FILE);
    FT_OK(ferry_container_serial_open(path, 0, &set));
    FT_EQ(ferry_container_serial_describe(NULL, &a, &b, &d), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_describe(set, NULL, &b, &d), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_stream(set, -1, &info), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_stream(set, ft_size, &info), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_stream(set, 0, NULL), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_stream(NULL, 0, &info), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_file(set, 1, &finfo), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_file(set, 0, NULL), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_file(NULL, 0, &finfo), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_read(set, 0, 0, NULL, 1, &done), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_read(set, 0, -1, buf, 1, &done), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_read(set, 0, 0, buf, 1, NULL), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_read(set, ft_size, 0, buf, 1, &done), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_read(NULL, 0, 0, buf, 1, &done), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_chunk(set, 0, -1, &file, &off, &used), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_chunk(set, 0, 1000000, &file, &off, &used), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_chunk(set, 0, 0, NULL, &off, &used), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_write(set, 0, buf, 1), MPI_ERR_ARG); /* not a set being created */
    FT_OK(ferry_container_serial_close(&set));
    FT_EQ(ferry_container_serial_close(NULL), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_close(&none), MPI_ERR_ARG);
}

static void serial_writes_and_tools(void)
{
    const char *path = ft_path(ft_rank == 0 ? "serial0.ctr" : ft_rank == 1 ? "serial1.ctr" : "serial.ctr");
    ferry_container_set_t set;
    MPI_Offset sizes[2] = {1000, -1}, bytes;
    ferry_container_layout_t layout = {2, sizes, 512, 1};
    ferry_container_check_t check = {0};
    int was;
    FT_EQ(ferry_container_serial_create(NULL, &layout, &set), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_create(path, NULL, &set), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_create(path, &layout, NULL), MPI_ERR_ARG);
    FT_EQ(ferry_container_serial_create(path, &layout, &set), MPI_ERR_ARG); /* negative chunk size */
    sizes[1] = 1000;
    layout.block_size = 3000;
    FT_EQ(ferry_container_serial_create(path, &layout, &set), MPI_ERR_ARG);
    layout.block_size = 512;
    layout.streams = 0;
    FT_EQ(ferry_container_serial_create(path, &layout, &set), MPI_ERR_ARG);
    layout.streams = 2;
    layout.chunk_sizes = NULL;
    FT_EQ(ferry_container_serial_create(path, &layout, &set), MPI_ERR_ARG);
    layout.chunk_sizes = sizes;
    if (ft_rank < 2 || ft_size < 3) { /* ranks 0 and 1 each their own file */
        FT_OK(ferry_container_serial_create(path, &layout, &set));
        FT_EQ(ferry_container_serial_write(set, 2, "x", 1), MPI_ERR_ARG);
        FT_EQ(ferry_container_serial_write(set, -1, "x", 1), MPI_ERR_ARG);
        FT_EQ(ferry_container_serial_write(set, 0, NULL, 1), MPI_ERR_ARG);
        FT_EQ(ferry_container_serial_write(NULL, 0, "x", 1), MPI_ERR_ARG);
        FT_OK(ferry_container_serial_write(set, 1, "x", 1));
        FT_OK(ferry_container_serial_close(&set));
    }
    FT_EQ(ferry_container_verify(NULL, &check), MPI_ERR_ARG);
    FT_EQ(ferry_container_verify(path, NULL), MPI_ERR_ARG);
    FT_EQ(ferry_container_recover(NULL, &bytes, &was), MPI_ERR_ARG);
    FT_EQ(ferry_container_recover(path, NULL, &was), MPI_ERR_ARG);
    FT_EQ(ferry_container_recover(path, &bytes, NULL), MPI_ERR_ARG);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *path = ft_path("a.ctr");
    other_path = ft_path("b.ctr");
    write_container(path, 0);
    write_container(other_path, 1);
    collective_matrix(path);
    if (ft_size <= 8) {
        allowed_differences(ft_path("allowed.ctr"));
        independent_calls(path);
        serial_reads(path);
        serial_writes_and_tools();
    }
    check_container(path, 0);
    return ft_finish();
}

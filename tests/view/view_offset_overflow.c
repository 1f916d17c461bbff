/*
 * Offsets that would pass 64 bits (or ferry's FERRY_OFFSET_MAX, 2^61 - 1)
 * fail with MPI_ERR_ARG and a message naming the call, the file and the
 * value, and change nothing (issue 13). Before the fix 1 byte at etype
 * offset 2^24 through a filetype of extent 2^40 was written at file byte 0
 * and get_byte_offset returned 0 (a signed overflow in view navigation,
 * flagged by UBSan), and set_view took a displacement near INT64_MAX.
 *
 *   - every data-access form (explicit offset, individual and shared
 *     pointer, independent, collective, nonblocking, split) at etype offset
 *     2^24 through that view; in collectives one rank's bad offset fails
 *     every rank;
 *   - get_byte_offset there, and the largest offsets that still work;
 *   - a contiguous view whose access ends past FERRY_OFFSET_MAX;
 *   - set_view displacements near INT64_MAX, or whose first tile passes it;
 *   - the individual and shared pointers far out (positions may be
 *     anything; an access there fails, a shared-pointer claim past the
 *     limit is given back), and a seek whose sum overflows.
 * The file stays empty until the last case, where a valid rank whose byte moved early may have written it.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ferry_test.h"

static const MPI_Offset TILE_EXTENT = (MPI_Offset)1 << 40;
static const MPI_Offset FAR = (MPI_Offset)1 << 24; /* etypes: 2^24 tiles of 2^40 bytes = 2^64 */
static const char *path;

/* The error has class MPI_ERR_ARG and names the call, the file and `value`. */
static void expect_arg(int line, int rc, const char *op, const char *value)
{
    ft_expect_fail(__FILE__, line, op, rc, MPI_ERR_ARG, op);
    const char *text = ft_errstr(rc);
    if (!strstr(text, path) || !strstr(text, value))
        ft_fail(__FILE__, line, "%s: the message should name '%s' and %s: %s", op, path, value, text);
    if (ft_rank == 0) printf("%s\n", text);
}
#define EXPECT_ARG(call, op, value) expect_arg(__LINE__, (call), (op), (value))

/* One byte per tile of 2^40 bytes. */
static MPI_Datatype sparse_filetype(void)
{
    MPI_Datatype t;
    MPI_Type_create_resized(MPI_BYTE, 0, (MPI_Aint)TILE_EXTENT, &t);
    MPI_Type_commit(&t);
    return t;
}

static void file_is_empty(void)
{
    struct stat st;
    FT_EQ(stat(path, &st), 0);
    FT_EQ(st.st_size, 0);
}

static void independent_forms(ferry_File fh)
{
    char byte = 'x';
    MPI_Request req;
    EXPECT_ARG(ferry_File_write_at(fh, FAR, &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE), "write_at", "16777216");
    EXPECT_ARG(ferry_File_read_at(fh, FAR, &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE), "read_at", "16777216");
    int rc = ferry_File_iwrite_at(fh, FAR, &byte, 1, MPI_BYTE, &req);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    EXPECT_ARG(rc, "iwrite_at", "16777216");
    FT_OK(ferry_File_seek(fh, FAR, MPI_SEEK_SET)); /* a position is fine until it is used */
    EXPECT_ARG(ferry_File_write(fh, &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE), "write", "16777216");
    MPI_Offset position = -1;
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, FAR); /* the failed write moved nothing */
}

/* Aggregation forced: under the cost model a valid rank's one contiguous byte moves early, before the
 * call learns that another rank's arguments fail it (docs/coll.md, "Early ranks"); that byte would be
 * written. Here no rank's part moves before the agreement, so nothing may be written. */
static void collective_forms(ferry_File fh)
{
    char byte = 'x';
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    FT_OK(ferry_File_set_info(fh, info));
    MPI_Info_free(&info);
    MPI_Offset mine = ft_rank == 0 ? FAR : 0; /* rank 0's offset is bad: everyone fails */
    int rc = ferry_File_write_at_all(fh, mine, &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    if (ft_rank == 0) EXPECT_ARG(rc, "write_at_all", "16777216");
    else FT_FAILS_NAMING(MPI_ERR_ARG, "rank 0", rc);
    EXPECT_ARG(ferry_File_read_at_all(fh, FAR, &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE), "read_at_all", "16777216");
    FT_OK(ferry_File_seek(fh, FAR, MPI_SEEK_SET));
    EXPECT_ARG(ferry_File_write_all(fh, &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE), "write_all", "16777216");
    rc = ferry_File_write_at_all_begin(fh, FAR, &byte, 1, MPI_BYTE);
    if (rc == MPI_SUCCESS) rc = ferry_File_write_at_all_end(fh, &byte, MPI_STATUS_IGNORE);
    EXPECT_ARG(rc, "write_at_all", "16777216");
    MPI_Request req;
    rc = ferry_File_iwrite_at_all(fh, FAR, &byte, 1, MPI_BYTE, &req);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    FT_CHECK(rc != MPI_SUCCESS && ft_class(rc) == MPI_ERR_ARG);
}

/* The shared pointer, moved to etype FAR collectively. */
static void shared_forms(ferry_File fh)
{
    char byte = 'x';
    int rc = ferry_File_seek_shared(fh, FAR, MPI_SEEK_SET);
    if (rc != MPI_SUCCESS && ft_class(rc) == MPI_ERR_UNSUPPORTED_OPERATION) {
        ft_skip("shared file pointers unavailable here: %s", ft_errstr(rc));
        return;
    }
    FT_OK(rc);
    rc = ferry_File_write_ordered(fh, &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    FT_CHECK(rc != MPI_SUCCESS && ft_class(rc) == MPI_ERR_ARG);
    if (ft_rank == 0) EXPECT_ARG(rc, "write_ordered", "1677721");
    FT_OK(ferry_File_seek_shared(fh, 0, MPI_SEEK_SET));
}

static void byte_offsets(ferry_File fh)
{
    MPI_Offset at = -1;
    EXPECT_ARG(ferry_File_get_byte_offset(fh, FAR, &at), "get_byte_offset", "16777216");
    /* 2^20 tiles of 2^40 bytes: byte 2^60, well inside; 2^21 tiles: 2^61, past FERRY_OFFSET_MAX. */
    FT_OK(ferry_File_get_byte_offset(fh, (MPI_Offset)1 << 20, &at));
    FT_EQ(at, (MPI_Offset)1 << 60);
    EXPECT_ARG(ferry_File_get_byte_offset(fh, (MPI_Offset)1 << 21, &at), "get_byte_offset", "2097152");
}

static void sparse_view(ferry_File fh)
{
    MPI_Datatype sparse = sparse_filetype();
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, sparse, "native", MPI_INFO_NULL));
    independent_forms(fh);
    collective_forms(fh);
    shared_forms(fh);
    byte_offsets(fh);
    MPI_Type_free(&sparse);
}

/* Byte view: accesses whose last byte passes FERRY_OFFSET_MAX, at an
 * explicit offset, the individual pointer and the shared pointer (whose
 * claim is given back). Positions themselves may be anything up to
 * INT64_MAX, as in ROMIO; a seek whose sum overflows fails. */
static void contiguous_view(ferry_File fh)
{
    char bytes[16] = {0};
    const MPI_Offset max = INT64_MAX / 4;
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    EXPECT_ARG(ferry_File_write_at(fh, max - 8, bytes, 16, MPI_BYTE, MPI_STATUS_IGNORE), "write_at",
               "2305843009213693943");
    FT_OK(ferry_File_seek(fh, INT64_MAX / 2, MPI_SEEK_SET));
    EXPECT_ARG(ferry_File_write(fh, bytes, 1, MPI_BYTE, MPI_STATUS_IGNORE), "write", "4611686018427387903");
    EXPECT_ARG(ferry_File_seek(fh, INT64_MAX, MPI_SEEK_CUR), "seek", "9223372036854775807");
    int rc = ferry_File_seek_shared(fh, max - 4, MPI_SEEK_SET);
    if (ft_class(rc) == MPI_ERR_UNSUPPORTED_OPERATION) return; /* no shared pointers here */
    FT_OK(rc);
    if (ft_rank == 0) {
        EXPECT_ARG(ferry_File_write_shared(fh, bytes, 16, MPI_BYTE, MPI_STATUS_IGNORE), "write_shared",
                   "2305843009213693947");
        MPI_Offset position = -1;
        FT_OK(ferry_File_get_position_shared(fh, &position));
        FT_EQ(position, max - 4);
    }
    FT_OK(ferry_File_seek_shared(fh, INT64_MAX - 1, MPI_SEEK_SET));
    if (ft_rank == 1) EXPECT_ARG(ferry_File_write_shared(fh, bytes, 16, MPI_BYTE, MPI_STATUS_IGNORE), "write_shared",
                                 "9223372036854775806");
    FT_OK(ferry_File_seek_shared(fh, 0, MPI_SEEK_SET));
}

/* One byte at the end of each tile of 2^40 bytes: the first tile spans it all. */
static MPI_Datatype last_byte_filetype(void)
{
    MPI_Datatype at_end, t;
    MPI_Aint last = (MPI_Aint)TILE_EXTENT - 1;
    MPI_Type_create_hindexed_block(1, 1, &last, MPI_BYTE, &at_end);
    MPI_Type_create_resized(at_end, 0, (MPI_Aint)TILE_EXTENT, &t);
    MPI_Type_free(&at_end);
    MPI_Type_commit(&t);
    return t;
}

static void displacements(ferry_File fh)
{
    EXPECT_ARG(ferry_File_set_view(fh, INT64_MAX - 10, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view",
               "9223372036854775797");
    EXPECT_ARG(ferry_File_set_view(fh, INT64_MAX / 4, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), "set_view",
               "2305843009213693951");
    MPI_Datatype at_end = last_byte_filetype();
    /* The first tile's byte, 2^40 - 1 past 2^61 - 2^39, passes FERRY_OFFSET_MAX. */
    MPI_Offset disp = ((MPI_Offset)1 << 61) - ((MPI_Offset)1 << 39);
    EXPECT_ARG(ferry_File_set_view(fh, disp, MPI_BYTE, at_end, "native", MPI_INFO_NULL), "set_view",
               "2305842459457880064");
    FT_OK(ferry_File_set_view(fh, (MPI_Offset)1 << 60, MPI_BYTE, at_end, "native", MPI_INFO_NULL));
    MPI_Offset at = -1;
    FT_OK(ferry_File_get_byte_offset(fh, 3, &at));
    FT_EQ(at, ((MPI_Offset)1 << 60) + 4 * TILE_EXTENT - 1);
    MPI_Type_free(&at_end);
}

/* Under the cost model's choice a valid rank's one contiguous byte may move early, before the call learns
 * that rank 0's offset fails it: every rank still gets the error naming rank 0, and the file holds at most
 * that valid byte, at its place. */
static void early_rank_beside_bad_offset(void)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Datatype sparse = sparse_filetype();
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, sparse, "native", MPI_INFO_NULL));
    char byte = 'x';
    int rc = ferry_File_write_at_all(fh, ft_rank == 0 ? FAR : 0, &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    if (ft_rank == 0) EXPECT_ARG(rc, "write_at_all", "16777216");
    else FT_FAILS_NAMING(MPI_ERR_ARG, "rank 0", rc);
    FT_OK(ferry_File_close(&fh));
    MPI_Type_free(&sparse);
    MPI_Barrier(MPI_COMM_WORLD);
    struct stat st;
    FT_EQ(stat(path, &st), 0);
    FT_CHECK(st.st_size <= 1);
    char got = 0;
    int fd = open(path, O_RDONLY);
    FT_CHECK(fd >= 0);
    FT_EQ(pread(fd, &got, 1, 0), (ssize_t)st.st_size);
    close(fd);
    if (st.st_size == 1) FT_EQ(got, 'x');
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* failed requests report there */
    path = ft_path("overflow");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    sparse_view(fh);
    contiguous_view(fh);
    displacements(fh);
    FT_OK(ferry_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    file_is_empty();
    early_rank_beside_bad_offset();
    return ft_finish();
}

/*
 * Large transfers and offsets (issue 2: "transfers larger than 2 GiB and
 * files larger than 4 GiB work"), on one rank to keep memory near 6 GiB:
 *  - one write_at_all moving 3 GiB as count 3 of a 1 GiB contiguous type,
 *    read back with one read_at (MPI_Get_count 3, MPI_Get_elements_x 3 GiB);
 *  - write_c/read_c with count 2^31 + 4097 > INT_MAX of MPI_BYTE, through
 *    the individual pointer;
 *  - a sparse file: write at 5 GiB, get_size, read back, the hole reads as
 *    zeros, a read crossing EOF there is short, set_size above 4 GiB, and a
 *    view with etype MPI_INT whose offsets (in etypes) exceed 2^31.
 * Run with FERRY_TEST_DIR on a file system with room (the tests use
 * /dev/shm); part "sparse" alone needs no memory: `mpiio_large sparse`.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

static const MPI_Offset GiB = (MPI_Offset)1 << 30;

/* The 8-byte word at byte offset i of the pattern: cheap to make and check. */
static uint64_t word_at(uint64_t i, uint64_t salt)
{
    return (i * 0x9e3779b97f4a7c15ull) ^ salt;
}

static void fill_words(unsigned char *buf, size_t len, uint64_t salt)
{
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t w = word_at(i, salt);
        memcpy(buf + i, &w, 8);
    }
}

static void check_words(const unsigned char *buf, size_t len, uint64_t salt)
{
    for (size_t i = 0; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, buf + i, 8);
        if (w != word_at(i, salt))
            ft_fail(__FILE__, __LINE__, "word at byte %zu of %zu differs: %llx != %llx", i, len,
                    (unsigned long long)w, (unsigned long long)word_at(i, salt));
    }
}

static void three_gib_transfer(void)
{
    const char *path = ft_path("three-gib");
    size_t len = 3 * (size_t)GiB;
    unsigned char *buf = malloc(len);
    FT_CHECK(buf != NULL);
    fill_words(buf, len, ft_seed);
    MPI_Datatype gib;
    MPI_Type_contiguous((int)GiB, MPI_BYTE, &gib);
    MPI_Type_commit(&gib);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Status st;
    FT_OK(ferry_File_write_at_all(fh, 0, buf, 3, gib, &st));
    int count = -1;
    MPI_Count bytes = -1;
    MPI_Get_count(&st, gib, &count);
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    FT_EQ(count, 3);
    FT_EQ(bytes, 3 * GiB);
    MPI_Offset size = 0;
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, 3 * GiB);
    memset(buf, 0, len);
    FT_OK(ferry_File_read_at(fh, 0, buf, 3, gib, &st));
    MPI_Get_count(&st, gib, &count);
    FT_EQ(count, 3);
    check_words(buf, len, ft_seed);
    /* A short read of the same type: 2 GiB + 512 bytes are left after this offset. */
    FT_OK(ferry_File_read_at(fh, GiB - 512, buf, 3, gib, &st));
    MPI_Get_count(&st, gib, &count);
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    FT_EQ(count, MPI_UNDEFINED);
    FT_EQ(bytes, 2 * GiB + 512);
    FT_OK(ferry_File_close(&fh));
    FT_OK(ferry_File_delete(path, MPI_INFO_NULL));
    MPI_Type_free(&gib);
    free(buf);
}

static void large_count(void)
{
    const char *path = ft_path("large-count");
    MPI_Count n = (MPI_Count)INT_MAX + 4098; /* > INT_MAX, not a multiple of 8 */
    unsigned char *buf = malloc((size_t)n);
    FT_CHECK(buf != NULL);
    fill_words(buf, (size_t)n, ft_seed + 1);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Status st;
    FT_OK(ferry_File_seek(fh, 100, MPI_SEEK_SET));
    FT_OK(ferry_File_write_c(fh, buf, n, MPI_BYTE, &st));
    MPI_Count bytes = -1;
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    FT_EQ(bytes, n);
    MPI_Offset pos = -1;
    FT_OK(ferry_File_get_position(fh, &pos));
    FT_EQ(pos, 100 + n);
    memset(buf, 0xee, (size_t)n);
    FT_OK(ferry_File_seek(fh, 100, MPI_SEEK_SET));
    FT_OK(ferry_File_read_all_c(fh, buf, n, MPI_BYTE, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    FT_EQ(bytes, n);
    check_words(buf, (size_t)n, ft_seed + 1);
    /* MPI_Get_count cannot express more than INT_MAX elements. */
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    FT_EQ(count, MPI_UNDEFINED);
    FT_OK(ferry_File_close(&fh));
    FT_OK(ferry_File_delete(path, MPI_INFO_NULL));
    free(buf);
}

static void sparse_offsets(void)
{
    const char *path = ft_path("sparse");
    enum { N = 1 << 20 };
    unsigned char *data = malloc(N), *back = malloc(N), *zeros = calloc(1, N);
    ft_fill(data, N, ft_seed + 2);
    const MPI_Offset at = 5 * GiB + 12345;
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Status st;
    FT_OK(ferry_File_write_at(fh, at, data, N, MPI_BYTE, &st));
    MPI_Offset size = 0;
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, at + N);
    FT_OK(ferry_File_read_at(fh, at, back, N, MPI_BYTE, &st));
    FT_EQ_MEM(back, data, N);
    FT_OK(ferry_File_read_at(fh, 4 * GiB + 7, back, N, MPI_BYTE, &st)); /* the hole */
    FT_EQ_MEM(back, zeros, N);
    FT_OK(ferry_File_read_at(fh, at + N - 100, back, N, MPI_BYTE, &st)); /* short, past 4 GiB */
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    FT_EQ(count, 100);
    FT_EQ_MEM(back, data + N - 100, 100);
    FT_OK(ferry_File_seek(fh, 0, MPI_SEEK_END));
    MPI_Offset pos = -1;
    FT_OK(ferry_File_get_position(fh, &pos));
    FT_EQ(pos, at + N);

    /* A view of ints at a displacement above 4 GiB; offsets in etypes above 2^31. */
    const MPI_Offset disp = 4 * GiB + 4;
    FT_OK(ferry_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset etype_off = ((MPI_Offset)1 << 31) + 3, byte_off = 0;
    FT_OK(ferry_File_get_byte_offset(fh, etype_off, &byte_off));
    FT_EQ(byte_off, disp + 4 * etype_off);
    int vals[4] = {11, 22, 33, 44}, got[4] = {0};
    FT_OK(ferry_File_write_at(fh, etype_off, vals, 4, MPI_INT, &st));
    FT_OK(ferry_File_seek(fh, etype_off, MPI_SEEK_SET));
    FT_OK(ferry_File_read(fh, got, 4, MPI_INT, &st));
    FT_EQ_MEM(got, vals, sizeof vals);
    FT_OK(ferry_File_get_position(fh, &pos));
    FT_EQ(pos, etype_off + 4);
    FT_OK(ferry_File_seek(fh, 0, MPI_SEEK_END));
    FT_OK(ferry_File_get_position(fh, &pos));
    FT_EQ(pos, etype_off + 4); /* the ints end the file */
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_read_at(fh, byte_off, got, 4, MPI_INT, &st));
    FT_EQ_MEM(got, vals, sizeof vals);

    /* set_size above 4 GiB, shrinking and growing. */
    FT_OK(ferry_File_set_size(fh, 4 * GiB + 1));
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, 4 * GiB + 1);
    FT_OK(ferry_File_set_size(fh, 6 * GiB));
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, 6 * GiB);
    FT_OK(ferry_File_read_at(fh, at, back, N, MPI_BYTE, &st)); /* truncated away: zeros now */
    FT_EQ_MEM(back, zeros, N);
    FT_OK(ferry_File_close(&fh));
    FT_OK(ferry_File_delete(path, MPI_INFO_NULL));
    free(data);
    free(back);
    free(zeros);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *part = argc > 1 ? argv[1] : "all";
    if (!strcmp(part, "all") || !strcmp(part, "sparse")) sparse_offsets();
    if (!strcmp(part, "all") || !strcmp(part, "transfer")) {
        three_gib_transfer();
        large_count();
    }
    return ft_finish();
}

/*
 * Views that break MPI-3.1 13.3's rules, and views that overlap themselves
 * on a file that cannot be written (issue 33 item 4).
 *
 * - The cases of MPICH's io/tst_fileview: an etype or filetype with a
 *   negative or a decreasing displacement fails with MPI_ERR_IO (MPICH's
 *   class, chosen in view.c), whatever the access mode; one that overlaps
 *   itself fails with MPI_ERR_IO on a file opened for writing and is
 *   accepted on a file opened MPI_MODE_RDONLY. A filetype not made of whole
 *   etypes is MPI_ERR_IO too; a null etype stays MPI_ERR_TYPE.
 * - Reads through such views return the bytes the view names, in stream
 *   order, checked against a byte model: explicit offsets, the individual
 *   pointer (seek to the end included), nonblocking, collective with
 *   ranks on ordinary views beside them (two-phase forced), collective with
 *   every rank on one, external32, a read that meets the end of file, and
 *   an overlapping etype.
 */
#include <string.h>

#include "ferry_test.h"

enum { FILE_BYTES = 4096, TILE_SIZE = 16, TILE_EXTENT = 12 };

static unsigned char content[FILE_BYTES];

/* indexed(blocks (disp, len) of ints): commits and returns it. */
static MPI_Datatype ints_at(int d0, int l0, int d1, int l1)
{
    int lens[2] = {l0, l1}, disps[2] = {d0, d1};
    MPI_Datatype t;
    FT_OK(MPI_Type_indexed(2, lens, disps, MPI_INT, &t));
    FT_OK(MPI_Type_commit(&t));
    return t;
}

/* The overlapping filetype: ints 0-2, then int 1 again (bytes [0, 12), [4, 8)); extent 12. */
static MPI_Datatype overlapping(void)
{
    return ints_at(0, 3, 1, 1);
}

/* The file byte of stream byte s through the overlapping filetype at disp. */
static MPI_Offset model_offset(MPI_Offset disp, MPI_Offset s)
{
    MPI_Offset tile = s / TILE_SIZE, within = s % TILE_SIZE;
    return disp + tile * TILE_EXTENT + (within < 12 ? within : 4 + within - 12);
}

/* Checks n bytes read from stream byte `from` against the model. */
static void expect_model(const unsigned char *got, MPI_Offset disp, MPI_Offset from, int n)
{
    for (int i = 0; i < n; i++) {
        MPI_Offset at = model_offset(disp, from + i);
        if (got[i] != content[at])
            ft_fail(__FILE__, __LINE__, "stream byte %lld: got 0x%02x, file byte %lld holds 0x%02x",
                    (long long)(from + i), got[i], (long long)at, content[at]);
    }
}

static int count_of(MPI_Status *status)
{
    int n = -1;
    MPI_Get_count(status, MPI_BYTE, &n);
    return n;
}

static void fill_file(void)
{
    ft_fill(content, sizeof content, 33);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("data"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    if (ft_rank == 0) FT_OK(ferry_File_write_at(fh, 0, content, FILE_BYTES, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_close(&fh));
}

/* tst_fileview's cases, on a file opened with `amode`. */
static void rule_classes(int amode)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("data"), amode, MPI_INFO_NULL, &fh));
    int writable = !(amode & MPI_MODE_RDONLY);
    MPI_Datatype negative = ints_at(-2, 1, 2, 1), decreasing = ints_at(3, 1, 0, 1), overlap = overlapping();
    FT_FAILS_NAMING(MPI_ERR_IO, "negative", ferry_File_set_view(fh, 0, negative, negative, "native", MPI_INFO_NULL));
    FT_FAILS_NAMING(MPI_ERR_IO, "negative", ferry_File_set_view(fh, 0, MPI_INT, negative, "native", MPI_INFO_NULL));
    FT_FAILS_NAMING(MPI_ERR_IO, "monotonically",
                    ferry_File_set_view(fh, 0, decreasing, decreasing, "native", MPI_INFO_NULL));
    FT_FAILS_NAMING(MPI_ERR_IO, "monotonically",
                    ferry_File_set_view(fh, 0, MPI_INT, decreasing, "native", MPI_INFO_NULL));
    if (writable) {
        FT_FAILS_NAMING(MPI_ERR_IO, "overlaps itself",
                        ferry_File_set_view(fh, 0, overlap, overlap, "native", MPI_INFO_NULL));
        FT_FAILS_NAMING(MPI_ERR_IO, "overlaps itself",
                        ferry_File_set_view(fh, 0, MPI_INT, overlap, "native", MPI_INFO_NULL));
    } else {
        FT_OK(ferry_File_set_view(fh, 0, overlap, overlap, "native", MPI_INFO_NULL));
        FT_OK(ferry_File_set_view(fh, 0, MPI_INT, overlap, "native", MPI_INFO_NULL));
    }
    FT_FAILS_NAMING(MPI_ERR_IO, "whole etypes", ferry_File_set_view(fh, 0, MPI_INT, MPI_SHORT, "native", MPI_INFO_NULL));
    FT_FAILS(MPI_ERR_TYPE, ferry_File_set_view(fh, 0, MPI_DATATYPE_NULL, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Type_free(&negative);
    MPI_Type_free(&decreasing);
    MPI_Type_free(&overlap);
    FT_OK(ferry_File_close(&fh));
}

/* Independent reads through the overlapping filetype at displacement `disp`. */
static void independent_reads(ferry_File fh, MPI_Offset disp)
{
    int words[150];
    unsigned char *got = (unsigned char *)words;
    MPI_Status status;
    FT_OK(ferry_File_read_at(fh, 5, got, 75, MPI_INT, &status)); /* etype offset 5: stream byte 20 */
    FT_EQ(count_of(&status), 300);
    expect_model(got, disp, 20, 300);
    FT_OK(ferry_File_seek(fh, 3, MPI_SEEK_SET));
    FT_OK(ferry_File_read(fh, got, 25, MPI_INT, &status));
    expect_model(got, disp, 12, 100);
    MPI_Offset position = -1, byte = -1;
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, 3 + 100 / 4);
    FT_OK(ferry_File_get_byte_offset(fh, 4, &byte)); /* stream byte 16: tile 1 starts at 12 */
    FT_EQ(byte, model_offset(disp, 16));
    MPI_Request request;
    FT_OK(ferry_File_iread_at(fh, 40, got, 16, MPI_INT, &request));
    FT_OK(MPI_Wait(&request, &status));
    FT_EQ(count_of(&status), 64);
    expect_model(got, disp, 160, 64);
}

/* The end of file: a read stops at the first stream byte at or past it
 * (stream bytes before it may lie anywhere below), and seek to the end
 * lands there, a partial etype counting as one. */
static void end_of_file(ferry_File fh, MPI_Offset disp)
{
    MPI_Offset below = 0;
    while (model_offset(disp, below) < FILE_BYTES) below++;
    MPI_Offset from = 4 * (below / 4 - 2);
    int words[16];
    unsigned char *got = (unsigned char *)words;
    MPI_Status status;
    FT_OK(ferry_File_read_at(fh, from / 4, got, 16, MPI_INT, &status));
    FT_EQ(count_of(&status), below - from);
    expect_model(got, disp, from, (int)(below - from));
    FT_OK(ferry_File_seek(fh, 0, MPI_SEEK_END));
    MPI_Offset position = -1;
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, (below + 3) / 4);
}

static void reads_through_overlap(void)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("data"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPI_Datatype overlap = overlapping();
    MPI_Offset disp = 8 * (ft_rank + 1);
    FT_OK(ferry_File_set_view(fh, disp, MPI_INT, overlap, "native", MPI_INFO_NULL));
    independent_reads(fh, disp);
    end_of_file(fh, disp);
    /* The overlapping etype itself: one etype is 16 stream bytes. */
    FT_OK(ferry_File_set_view(fh, disp, overlap, overlap, "native", MPI_INFO_NULL));
    int words[16];
    unsigned char *got = (unsigned char *)words;
    MPI_Status status;
    MPI_Datatype four; /* memory as plain bytes of whole etypes */
    FT_OK(MPI_Type_contiguous(4, MPI_INT, &four));
    FT_OK(MPI_Type_commit(&four));
    FT_OK(ferry_File_read_at(fh, 1, got, 2, four, &status));
    MPI_Type_free(&four);
    FT_EQ(count_of(&status), 32);
    expect_model(got, disp, 16, 32);
    MPI_Type_free(&overlap);
    FT_OK(ferry_File_close(&fh));
}

/* Collective reads: even ranks through the overlapping view, odd ranks
 * through a plain one (two-phase forced for them), then every rank
 * overlapping; external32 last. */
static void collective_reads(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_read", "enable");
    MPI_Info_set(info, "cb_nodes", "2");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("data"), MPI_MODE_RDONLY, info, &fh));
    MPI_Info_free(&info);
    MPI_Datatype overlap = overlapping();
    int odd = ft_rank % 2;
    FT_OK(ferry_File_set_view(fh, 0, MPI_INT, odd ? MPI_INT : overlap, "native", MPI_INFO_NULL));
    int words[128];
    unsigned char *got = (unsigned char *)words;
    MPI_Status status;
    FT_OK(ferry_File_read_at_all(fh, 10 * ft_rank, got, 128, MPI_INT, &status));
    FT_EQ(count_of(&status), 512);
    if (odd) FT_EQ_MEM(got, content + 40 * ft_rank, 512);
    else expect_model(got, 0, 40 * ft_rank, 512);
    FT_OK(ferry_File_set_view(fh, 0, MPI_INT, overlap, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_read_at_all(fh, 10 * ft_rank, got, 128, MPI_INT, &status));
    expect_model(got, 0, 40 * ft_rank, 512);
    /* external32: the file's ints are big-endian; memory gets them converted. */
    FT_OK(ferry_File_set_view(fh, 0, MPI_INT, overlap, "external32", MPI_INFO_NULL));
    int ints[32];
    FT_OK(ferry_File_read_all(fh, ints, 32, MPI_INT, &status));
    for (int i = 0; i < 32; i++) {
        unsigned char be[4];
        for (int b = 0; b < 4; b++) be[b] = content[model_offset(0, 4 * i + b)];
        int want = (int)((unsigned)be[0] << 24 | (unsigned)be[1] << 16 | (unsigned)be[2] << 8 | be[3]);
        FT_EQ(ints[i], want);
    }
    MPI_Type_free(&overlap);
    FT_OK(ferry_File_close(&fh));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    fill_file();
    rule_classes(MPI_MODE_RDWR);
    rule_classes(MPI_MODE_RDONLY);
    reads_through_overlap();
    collective_reads();
    return ft_finish();
}

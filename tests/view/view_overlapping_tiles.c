/*
 * Filetypes whose single tile is monotone but whose tiles overlap (extent
 * smaller than the bytes spanned), as parallel HDF5 builds for chunked
 * collective I/O: a struct of resized members, whose lower bound the
 * standard's sticky markers put above the first byte. MPI-3.1 asks
 * monotone displacements of the filetype's typemap only, and ROMIO accepts
 * them, so ferry must too: data access in the first tile works
 * (collectively and independently, bytes checked through a plain view), an
 * access that leaves the first tile fails with MPI_ERR_UNSUPPORTED_OPERATION
 * on every rank and changes nothing, get_view returns the caller's
 * filetype, get_byte_offset places tile k at k * extent, and seek to the
 * end counts the stream bytes before the first one at or past the end.
 */
#include <string.h>

#include "ferry_test.h"

enum { REGION = 256 };

/* resized(vector(2 blocks of 3 ints, stride 5), lb 0, extent 16): ints 0-2 and 5-7 of each tile, tiles 16 bytes apart. */
static MPI_Datatype short_extent_vector(void)
{
    MPI_Datatype v, t;
    MPI_Type_vector(2, 3, 5, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 16, &t);
    MPI_Type_free(&v);
    MPI_Type_commit(&t);
    return t;
}

/* HDF5's shape: struct{4 ints at 0, resized(2 ints, 0, 16) at 32}: ints 0-3 and 8-9. */
static MPI_Datatype sticky_struct(void)
{
    MPI_Datatype c4, c2, r2, t;
    MPI_Type_contiguous(4, MPI_INT, &c4);
    MPI_Type_contiguous(2, MPI_INT, &c2);
    MPI_Type_create_resized(c2, 0, 16, &r2);
    int lens[2] = {1, 1};
    MPI_Aint displs[2] = {0, 32};
    MPI_Datatype types[2] = {c4, r2};
    MPI_Type_create_struct(2, lens, displs, types, &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&c4);
    MPI_Type_free(&c2);
    MPI_Type_free(&r2);
    return t;
}

/* The region's ints as a plain read sees them. */
static void read_region(ferry_File fh, MPI_Offset disp, int *ints)
{
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_read_at(fh, disp, ints, REGION / 4, MPI_INT, MPI_STATUS_IGNORE));
}

/* Writes n ints through the view at etype offset `at`; checks that exactly
 * the ints at `where` (region int indices) changed, and reads them back. */
static void write_check(ferry_File fh, MPI_Datatype ftype, MPI_Offset disp, int collective, MPI_Offset at, int n,
                        const int *where)
{
    int before[REGION / 4], after[REGION / 4], out[8], in[8];
    read_region(fh, disp, before);
    for (int i = 0; i < n; i++) out[i] = 1000 * ft_rank + 10 * (int)at + i + (collective ? 500 : 0);
    FT_OK(ferry_File_set_view(fh, disp, MPI_INT, ftype, "native", MPI_INFO_NULL));
    MPI_Status status;
    if (collective) FT_OK(ferry_File_write_at_all(fh, at, out, n, MPI_INT, &status));
    else FT_OK(ferry_File_write_at(fh, at, out, n, MPI_INT, &status));
    int count = -1;
    MPI_Get_count(&status, MPI_INT, &count);
    FT_EQ(count, n);
    memset(in, 0, sizeof in);
    if (collective) FT_OK(ferry_File_read_at_all(fh, at, in, n, MPI_INT, MPI_STATUS_IGNORE));
    else FT_OK(ferry_File_read_at(fh, at, in, n, MPI_INT, MPI_STATUS_IGNORE));
    FT_EQ_MEM(in, out, sizeof(int) * n);
    read_region(fh, disp, after);
    for (int i = 0; i < n; i++) {
        FT_EQ(after[where[i]], out[i]);
        before[where[i]] = out[i];
    }
    FT_EQ_MEM(after, before, sizeof after);
}

static void crossing_fails(ferry_File fh, MPI_Datatype ftype, MPI_Offset disp, MPI_Offset at, int n)
{
    int before[REGION / 4], after[REGION / 4], out[16] = {0};
    read_region(fh, disp, before);
    FT_OK(ferry_File_set_view(fh, disp, MPI_INT, ftype, "native", MPI_INFO_NULL));
    FT_FAILS_NAMING(MPI_ERR_UNSUPPORTED_OPERATION, "tiles overlap",
                    ferry_File_write_at_all(fh, at, out, n, MPI_INT, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_UNSUPPORTED_OPERATION, "first tile",
                    ferry_File_read_at(fh, at, out, n, MPI_INT, MPI_STATUS_IGNORE));
    read_region(fh, disp, after);
    FT_EQ_MEM(after, before, sizeof after);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("tiles"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_set_size(fh, (MPI_Offset)REGION * (2 * ft_size + 1)));
    MPI_Offset disp = (MPI_Offset)REGION * 2 * ft_rank + 8;

    MPI_Datatype vec = short_extent_vector();
    int all6[6] = {0, 1, 2, 5, 6, 7}, last3[3] = {5, 6, 7};
    write_check(fh, vec, disp, 1, 0, 6, all6);
    write_check(fh, vec, disp, 0, 3, 3, last3);
    crossing_fails(fh, vec, disp, 4, 3);
    FT_OK(ferry_File_set_view(fh, disp, MPI_INT, vec, "native", MPI_INFO_NULL));
    MPI_Offset byte = -1;
    FT_OK(ferry_File_get_byte_offset(fh, 6, &byte)); /* tile 1 starts 16 bytes after tile 0 */
    FT_EQ(byte, disp + 16);
    FT_OK(ferry_File_get_byte_offset(fh, 2 * 6 + 4, &byte)); /* tile 2, its fifth int: int 6 */
    FT_EQ(byte, disp + 2 * 16 + 6 * 4);
    /* Tiles 16 bytes apart, data in [0, 32) of each: tiles 0..k-1 lie below the end, then 4 ints of tile k. */
    MPI_Offset end = (MPI_Offset)REGION * (2 * ft_size + 1) - disp, position = -1;
    FT_OK(ferry_File_seek(fh, 0, MPI_SEEK_END));
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(end % 16, 8); /* so tile k holds ints 0-2 and 5 below the end: 16 bytes */
    FT_EQ(position, ((end - 32) / 16 + 1) * 6 + 4);
    MPI_Offset got_disp;
    MPI_Datatype etype, ftype;
    char rep[MPI_MAX_DATAREP_STRING];
    FT_OK(ferry_File_get_view(fh, &got_disp, &etype, &ftype, rep));
    MPI_Aint lb, extent;
    MPI_Type_get_extent(ftype, &lb, &extent);
    FT_EQ(extent, 16);
    MPI_Type_free(&ftype);

    MPI_Datatype hdf5 = sticky_struct();
    MPI_Offset disp2 = disp + REGION;
    int six[6] = {0, 1, 2, 3, 8, 9}, two[2] = {8, 9};
    write_check(fh, hdf5, disp2, 1, 0, 6, six);
    write_check(fh, hdf5, disp2, 0, 4, 2, two);
    MPI_Type_get_extent(hdf5, &lb, &extent);
    if (extent < 40) crossing_fails(fh, hdf5, disp2, 2, 6); /* the host's markers made the tiles overlap */
    if (ft_rank == 0) printf("struct{4 ints, resized(2 ints, 0, 16) at 32}: lb %ld extent %ld on this host\n",
                             (long)lb, (long)extent);

    MPI_Type_free(&vec);
    MPI_Type_free(&hdf5);
    FT_OK(ferry_File_close(&fh));
    return ft_finish();
}

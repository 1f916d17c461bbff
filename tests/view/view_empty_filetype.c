/*
 * A filetype of size 0: what parallel HDF5's chunk fill and PnetCDF's
 * variable fill set on ranks with nothing to write. ROMIO and OMPIO accept
 * the view and a rank with it accesses nothing; ferry refused it on that
 * rank, so the agreement failed the view everywhere, the old view stayed,
 * and the next collective write landed at the old view's offsets: over the
 * netCDF header ("not a netCDF file", issue 19). Here rank 1 takes each
 * shape of empty filetype (contiguous(0), hindexed with no blocks, and one
 * resized to a positive extent) while the others take plain ones; the file
 * must hold exactly the header and the other ranks' ints, and through the
 * empty view writes and reads of any count succeed, move nothing and leave
 * the individual file pointer where it was (OMPIO's answers).
 */
#include <string.h>

#include "ferry_test.h"

enum { HEADER = 32, INTS = 4, REGION = INTS * (int)sizeof(int), EMPTY_RANK = 1 };

static MPI_Datatype empty_type(int shape)
{
    MPI_Datatype t, none;
    if (shape == 0) MPI_Type_contiguous(0, MPI_INT, &t);
    else if (shape == 1) MPI_Type_create_hindexed(0, NULL, NULL, MPI_INT, &t);
    else {
        MPI_Type_contiguous(0, MPI_INT, &none);
        MPI_Type_create_resized(none, 0, 16, &t);
        MPI_Type_free(&none);
    }
    MPI_Type_commit(&t);
    return t;
}

static void fill_ints(int *ints, int shape, int rank)
{
    for (int i = 0; i < INTS; i++) ints[i] = 1000 * (shape + 1) + 100 * rank + i;
}

/* Every rank reads the whole file through a plain view and compares it
 * with the header, then the ints of every rank but the empty one. */
static void check_file(ferry_File fh, const unsigned char *header, int shape)
{
    size_t len = HEADER + (size_t)ft_size * REGION;
    unsigned char got[HEADER + 16 * REGION], want[HEADER + 16 * REGION];
    memset(want, 0, len);
    memcpy(want, header, HEADER);
    for (int r = 0; r < ft_size; r++)
        if (r != EMPTY_RANK) fill_ints((int *)(want + HEADER + (size_t)r * REGION), shape, r);
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    memset(got, 0xee, len);
    FT_OK(ferry_File_read_at(fh, 0, got, (int)len, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(got, want, len);
}

/* Through the empty view: independent and collective accesses of 4 ints
 * succeed and move none; the pointer stays; every offset maps to disp. */
static void empty_view_moves_nothing(ferry_File fh, MPI_Offset disp)
{
    int ints[INTS] = {7, 7, 7, 7}, count = -1;
    MPI_Status status;
    MPI_Offset position = -1, byte = -1;
    FT_OK(ferry_File_write_at(fh, 0, ints, INTS, MPI_INT, &status));
    MPI_Get_count(&status, MPI_INT, &count);
    FT_EQ(count, 0);
    FT_OK(ferry_File_write(fh, ints, INTS, MPI_INT, &status));
    FT_OK(ferry_File_read(fh, ints, INTS, MPI_INT, &status));
    MPI_Get_count(&status, MPI_INT, &count);
    FT_EQ(count, 0);
    FT_EQ(ints[0], 7);
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, 0);
    FT_OK(ferry_File_get_byte_offset(fh, 3, &byte));
    FT_EQ(byte, disp);
    FT_OK(ferry_File_seek(fh, 0, MPI_SEEK_END));
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, 0);
}

static void one_shape(ferry_File fh, const unsigned char *header, int shape)
{
    MPI_Offset disp = HEADER + (MPI_Offset)ft_rank * REGION;
    MPI_Datatype filetype = ft_rank == EMPTY_RANK ? empty_type(shape) : MPI_INT;
    int out[INTS], in[INTS], count = -1;
    fill_ints(out, shape, ft_rank);
    FT_OK(ferry_File_set_view(fh, disp, MPI_INT, filetype, "native", MPI_INFO_NULL));
    int n = ft_rank == EMPTY_RANK ? 0 : INTS;
    MPI_Status status;
    FT_OK(ferry_File_write_at_all(fh, 0, out, n, MPI_INT, &status));
    /* Collectives where the empty rank asks for data too: it gets none. */
    FT_OK(ferry_File_write_at_all(fh, 0, out, INTS, MPI_INT, &status));
    MPI_Get_count(&status, MPI_INT, &count);
    FT_EQ(count, ft_rank == EMPTY_RANK ? 0 : INTS);
    memset(in, 0, sizeof in);
    FT_OK(ferry_File_read_at_all(fh, 0, in, INTS, MPI_INT, &status));
    MPI_Get_count(&status, MPI_INT, &count);
    FT_EQ(count, ft_rank == EMPTY_RANK ? 0 : INTS);
    if (ft_rank != EMPTY_RANK) FT_EQ_MEM(in, out, sizeof in);
    if (ft_rank == EMPTY_RANK) empty_view_moves_nothing(fh, disp);
    if (ft_rank == EMPTY_RANK) MPI_Type_free(&filetype);
    MPI_Barrier(MPI_COMM_WORLD);
    check_file(fh, header, shape);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    if (ft_size > 16) return ft_finish();
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("empty"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    unsigned char header[HEADER];
    memcpy(header, "CDF\001", 4);
    for (int i = 4; i < HEADER; i++) header[i] = (unsigned char)(0xa0 + i);
    if (ft_rank == 0) FT_OK(ferry_File_write_at(fh, 0, header, HEADER, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_sync(fh));
    for (int shape = 0; shape < 3; shape++) one_shape(fh, header, shape);
    FT_OK(ferry_File_close(&fh));
    return ft_finish();
}

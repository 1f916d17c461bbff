/* The simplest round trip: every rank writes its block, reads it back. */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    enum { N = 1 << 16 };
    char *out = malloc(N), *in = malloc(N);
    ft_fill(out, N, ft_seed + (uint64_t)ft_rank);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("smoke"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Status status;
    FT_OK(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * N, out, N, MPI_BYTE, &status));
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    FT_EQ(count, N);
    FT_OK(ferry_File_read_at(fh, (MPI_Offset)ft_rank * N, in, N, MPI_BYTE, &status));
    FT_EQ_MEM(in, out, N);
    MPI_Offset size;
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, (MPI_Offset)ft_size * N);
    FT_OK(ferry_File_close(&fh));
    FT_CHECK(fh == FERRY_FILE_NULL);
    free(out);
    free(in);
    return ft_finish();
}

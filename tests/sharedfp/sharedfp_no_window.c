/*
 * A host that cannot create one-sided windows (Open MPI 4.1's osc/pt2pt
 * with MPI_THREAD_MULTIPLE, as between nodes without RDMA; this test is
 * run with OMPI_MCA_osc=pt2pt): files still open and work, and the shared
 * file pointer calls fail with MPI_ERR_UNSUPPORTED_OPERATION saying why,
 * on every rank for the collective ones, without a hang or an abort; the
 * same for a second file on the same communicator (its windowless pool).
 */
#include "ferry_test.h"

int main(int argc, char **argv)
{
    if (ft_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE) != MPI_THREAD_MULTIPLE) {
        ft_skip("MPI_THREAD_MULTIPLE not provided");
        return ft_finish();
    }
    /* Twice: the second open finds the communicator's windowless pool. */
    for (int round = 0; round < 2; round++) {
        const char *path = ft_path(round ? "file2" : "file");
        ferry_File fh;
        FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_INFO_NULL,
                              &fh));
        int v = ft_rank;
        FT_OK(ferry_File_write_at_all(fh, 4 * ft_rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
        FT_OK(ferry_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
        const int unsup = MPI_ERR_UNSUPPORTED_OPERATION;
        FT_FAILS_NAMING(unsup, "one-sided", ferry_File_write_shared(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
        MPI_Offset pos = -1;
        FT_FAILS_NAMING(unsup, path, ferry_File_get_position_shared(fh, &pos));
        FT_FAILS(unsup, ferry_File_write_ordered(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
        FT_FAILS(unsup, ferry_File_seek_shared(fh, 0, MPI_SEEK_SET));
        FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        int back = -1;
        FT_OK(ferry_File_read_at(fh, 4 * ((ft_rank + 1) % ft_size), &back, 1, MPI_INT, MPI_STATUS_IGNORE));
        FT_EQ(back, (ft_rank + 1) % ft_size);
        FT_OK(ferry_File_close(&fh));
    }
    return ft_finish();
}

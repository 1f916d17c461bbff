/*
 * An amode that differs between ranks (MPI requires the same on every
 * rank) fails the open on every rank without a hang: MPI_ERR_AMODE, or
 * MPI_ERR_NOT_SAME in develop mode (tests/mpiio/CMakeLists.txt runs this
 * program with and without FERRY_DEVELOP=1). The CREATE bit is the
 * dangerous one: it decides which ranks wait for rank 0 to create the file.
 * No handle is left, and the file opens normally afterwards.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

static void open_fails(const char *what, int amode, int expected)
{
    ferry_File fh = (ferry_File)&fh; /* must come back FERRY_FILE_NULL */
    int rc = ft_capture(ferry_File_open(MPI_COMM_WORLD, ft_path("mismatch"), amode, MPI_INFO_NULL, &fh));
    if (rc == MPI_SUCCESS || ft_class(rc) != expected)
        ft_fail(__FILE__, __LINE__, "%s: expected class %d, got %d: %s", what, expected,
                rc == MPI_SUCCESS ? 0 : ft_class(rc), ft_message);
    FT_CHECK(fh == FERRY_FILE_NULL);
    FT_CHECK(strstr(ft_message, "amode") != NULL);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *develop = getenv("FERRY_DEVELOP");
    int expected = develop && strcmp(develop, "0") != 0 ? MPI_ERR_NOT_SAME : MPI_ERR_AMODE;
    int last = ft_rank == ft_size - 1;
    if (ft_size > 1) {
        open_fails("CREATE on rank 0 only", MPI_MODE_RDWR | (ft_rank == 0 ? MPI_MODE_CREATE : 0), expected);
        open_fails("CREATE on the last rank only", MPI_MODE_RDWR | (last ? MPI_MODE_CREATE : 0), expected);
        open_fails("CREATE everywhere but rank 0", MPI_MODE_RDWR | (ft_rank != 0 ? MPI_MODE_CREATE : 0), expected);
        open_fails("RDONLY on the last rank", (last ? MPI_MODE_RDONLY : MPI_MODE_RDWR | MPI_MODE_CREATE), expected);
        open_fails("APPEND on one rank", MPI_MODE_RDWR | MPI_MODE_CREATE | (last ? MPI_MODE_APPEND : 0), expected);
    }
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("mismatch"), MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_close(&fh));
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("mismatch"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_close(&fh));
    return ft_finish();
}

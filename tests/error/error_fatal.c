/*
 * MPI_ERRORS_ARE_FATAL aborts the job. Mode "default": set on
 * FERRY_FILE_NULL, then an open failure. Mode "file": set on an open file,
 * then a bad read. Run by tests/common/expect_abort.sh, which passes only if
 * the job ends with an error status (not a timeout) after printing the
 * failing call's message; reaching the end of main prints NOT ABORTED.
 */
#include <stdio.h>
#include <string.h>

#include "ferry_test.h"

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "default";
    ferry_File fh;
    if (strcmp(mode, "default") == 0) {
        FT_OK(ferry_File_set_errhandler(FERRY_FILE_NULL, MPI_ERRORS_ARE_FATAL));
        ferry_File_open(MPI_COMM_WORLD, ft_path("fatal-missing"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    } else {
        FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("fatal-file"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                              &fh));
        FT_OK(ferry_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL));
        char c;
        if (ft_rank == ft_size - 1) ferry_File_read_at(fh, -1, &c, 1, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        ferry_File_close(&fh);
    }
    printf("NOT ABORTED\n");
    return ft_finish();
}

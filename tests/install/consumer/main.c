/* A program built against an installed ferry: opens, writes, reads back. */
#include <ferry.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ferry_File fh;
    char out[] = "ferry installed", in[sizeof out] = "";
    int ok = argc > 1 &&
             ferry_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) == MPI_SUCCESS &&
             ferry_File_write_at(fh, 0, out, sizeof out, MPI_CHAR, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
             ferry_File_read_at(fh, 0, in, sizeof in, MPI_CHAR, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
             ferry_File_close(&fh) == MPI_SUCCESS && strcmp(in, out) == 0;
    printf("consumer: ferry %s %s\n", ferry_version(), ok ? "ok" : "FAILED");
    MPI_Finalize();
    return ok ? 0 : 1;
}

/*
 * A plain MPI-IO program: compiled and linked against the host MPI only.
 * usage: dropin_program <file> <ferry|host>
 * It writes a deterministic file through MPI_File_* and reads it back, and
 * checks whether ferry serves the file (get_info has "ferry_version") as the
 * second argument says. It also moves the shared file pointer (seek_shared,
 * write_ordered) and compares the result with the host's run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropin_check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dropin_check(argc == 3, "usage: dropin_program <file> <ferry|host>");
    int expect_ferry = strcmp(argv[2], "ferry") == 0;
    enum { N = 4096 };
    int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) out[i] = rank * 1000003 + i;

    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    dropin_must(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                "open");
    dropin_check(dropin_served_by_ferry(fh) == expect_ferry,
                 expect_ferry ? "file not served by ferry" : "ferry served the host run");
    MPI_Status status;
    MPI_Offset block = (MPI_Offset)N * sizeof(int);
    dropin_must(MPI_File_write_at_all(fh, rank * block, out, N / 2, MPI_INT, &status), "write_at_all");
    dropin_must(MPI_File_seek(fh, rank * block + block / 2, MPI_SEEK_SET), "seek");
    dropin_must(MPI_File_write(fh, out + N / 2, N / 2, MPI_INT, &status), "write");
    int count = -1;
    MPI_Get_count(&status, MPI_INT, &count);
    dropin_check(count == N / 2, "write count");
    dropin_must(MPI_File_sync(fh), "sync");
    MPI_Barrier(MPI_COMM_WORLD);
    int peer = (rank + 1) % size;
    dropin_must(MPI_File_read_at(fh, peer * block, in, N, MPI_INT, &status), "read_at");
    for (int i = 0; i < N; i++) dropin_check(in[i] == peer * 1000003 + i, "read back the peer's block");
    MPI_Offset fsize = 0;
    dropin_check(MPI_File_get_size(fh, &fsize) == MPI_SUCCESS && fsize == size * block, "get_size");
    { /* shared file pointer: the ranks append one int each after the blocks, in rank order */
        dropin_must(MPI_File_seek_shared(fh, size * block, MPI_SEEK_SET), "seek_shared");
        dropin_must(MPI_File_write_ordered(fh, out, 1, MPI_INT, &status), "write_ordered");
        dropin_must(MPI_File_sync(fh), "sync");
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Offset end = -1;
        dropin_must(MPI_File_get_position_shared(fh, &end), "get_position_shared");
        dropin_check(end == size * block + size * (MPI_Offset)sizeof(int), "shared pointer after write_ordered");
    }
    dropin_must(MPI_File_close(&fh), "close");
    dropin_check(fh == MPI_FILE_NULL, "close leaves MPI_FILE_NULL");
    if (rank == 0) printf("dropin_program: %s run ok (ferry served: %s)\n", argv[2], expect_ferry ? "yes" : "no");
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}

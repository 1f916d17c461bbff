/*
 * MPI_Finalize with files still open: ferry closes them in the finalize
 * hook, on every rank in the same order, so the host's objects (the shared
 * file pointer's window, communicators) are gone before the host finalizes
 * (MPICH aborted in MPI_Finalize on the window ferry had not freed) and
 * what the files need at close happens: pending nonblocking writes land,
 * MPI_MODE_DELETE_ON_CLOSE deletes. Files on MPI_COMM_WORLD, on a split
 * communicator and on MPI_COMM_SELF; run at MPI_THREAD_MULTIPLE so a
 * background request is pending at finalize. Rank 0 checks the files with
 * POSIX calls after MPI_Finalize returned on every rank.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ferry_test.h"

enum { N = 4096 };

static ferry_File open_and_write(MPI_Comm comm, const char *path, int amode, const char *data, MPI_Offset at)
{
    ferry_File fh;
    FT_OK(ferry_File_open(comm, path, amode | MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_write_at_all(fh, at, data, N, MPI_BYTE, MPI_STATUS_IGNORE));
    return fh;
}

static void expect_bytes(const char *path, MPI_Offset at, const char *data)
{
    char got[N];
    FILE *f = fopen(path, "rb");
    if (!f) ft_fail(__FILE__, __LINE__, "%s is missing", path);
    FT_EQ(fseek(f, (long)at, SEEK_SET), 0);
    FT_EQ(fread(got, 1, N, f), N);
    fclose(f);
    FT_EQ_MEM(got, data, N);
}

int main(int argc, char **argv)
{
    ft_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    char dir[600], world[700], half[700], self[700], gone[700], late[700];
    snprintf(dir, sizeof dir, "%s", ft_scratch_dir());
    snprintf(world, sizeof world, "%s/world", dir);
    snprintf(half, sizeof half, "%s/half%d", dir, ft_rank % 2);
    snprintf(self, sizeof self, "%s/self%d", dir, ft_rank);
    snprintf(gone, sizeof gone, "%s/gone", dir);
    snprintf(late, sizeof late, "%s/late", dir);
    char data[N];
    ft_fill(data, N, ft_seed + (uint64_t)ft_rank);
    MPI_Comm halves;
    MPI_Comm_split(MPI_COMM_WORLD, ft_rank % 2, ft_rank, &halves);
    int half_rank;
    MPI_Comm_rank(halves, &half_rank);

    open_and_write(MPI_COMM_WORLD, world, 0, data, (MPI_Offset)ft_rank * N);
    open_and_write(halves, half, 0, data, (MPI_Offset)half_rank * N);
    open_and_write(MPI_COMM_SELF, self, 0, data, 0);
    open_and_write(MPI_COMM_WORLD, gone, MPI_MODE_DELETE_ON_CLOSE, data, (MPI_Offset)ft_rank * N);
    ferry_File fh = open_and_write(MPI_COMM_WORLD, late, 0, data, (MPI_Offset)ft_rank * N);
    MPI_Request pending;
    FT_OK(ferry_File_iwrite_at(fh, (MPI_Offset)(ft_size + ft_rank) * N, data, N, MPI_BYTE, &pending));
    MPI_Request_free(&pending); /* completes on its own; finalize must wait for it */
    MPI_Comm_free(&halves);
    if (ft_rank == 0) printf("mpiio_finalize_open: finalizing with 5 files open\n");
    FT_OK(MPI_Finalize());

    if (ft_rank == 0) {
        char zero[N];
        ft_fill(zero, N, ft_seed);
        expect_bytes(world, 0, zero);
        expect_bytes(half, 0, zero);
        expect_bytes(self, 0, zero);
        expect_bytes(late, (MPI_Offset)ft_size * N, zero); /* the request rank 0 left pending */
        FT_CHECK(access(gone, F_OK) != 0);
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "mpiio_finalize_open: could not remove %s\n", dir);
        printf("mpiio_finalize_open: passed\n");
    }
    return 0;
}

/*
 * Consistency semantics (MPI-3.1 13.6.1): the sync-barrier-sync pattern
 * makes one rank's writes visible to another's reads through separate
 * handles; sync is collective (one rank's failing fsync fails it on every
 * rank); atomic mode on a file system that refuses byte-range locks is an
 * error naming the file (set_atomicity, and a transfer when the locks go
 * away later), never silently non-atomic.
 */
#include <string.h>

#include "ferry_test.h"
#include "fs/fs.h"

static void sync_barrier_sync(const char *path)
{
    /* Each rank its own handle (MPI_COMM_SELF), as the standard's example. */
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int block[256];
    for (int round = 0; round < 3; round++) {
        int writer = round % ft_size;
        if (ft_rank == writer) {
            for (int i = 0; i < 256; i++) block[i] = round * 1000 + i;
            FT_OK(ferry_File_write_at(fh, 0, block, 256, MPI_INT, MPI_STATUS_IGNORE));
        }
        FT_OK(ferry_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        FT_OK(ferry_File_sync(fh));
        memset(block, 0xff, sizeof block);
        FT_OK(ferry_File_read_at(fh, 0, block, 256, MPI_INT, MPI_STATUS_IGNORE));
        for (int i = 0; i < 256; i++) FT_EQ(block[i], round * 1000 + i);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    FT_OK(ferry_File_close(&fh));
}

static void sync_fails_everywhere(const char *path)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_EQ(ferry__fs_fault_arm("sync:1:EIO@1"), 0);
    FT_FAILS_NAMING(MPI_ERR_IO, ft_rank == 1 ? path : "rank 1", ferry_File_sync(fh));
    ferry__fs_fault_disarm();
    FT_OK(ferry_File_sync(fh));
    FT_OK(ferry_File_close(&fh));
}

static void atomic_without_locks(const char *path)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_EQ(ferry__fs_fault_arm("lock:1+:ENOLCK@0"), 0);
    FT_FAILS_NAMING(MPI_ERR_UNSUPPORTED_OPERATION, ft_rank == 0 ? path : "rank 0", ferry_File_set_atomicity(fh, 1));
    int flag = -1;
    FT_OK(ferry_File_get_atomicity(fh, &flag));
    FT_EQ(flag, 0);
    ferry__fs_fault_disarm();
    FT_OK(ferry_File_set_atomicity(fh, 1));
    /* Locks refused after atomic mode was set: the transfer fails, naming the file. */
    FT_EQ(ferry__fs_fault_arm("lock:1+:ENOLCK"), 0);
    int v = 7;
    FT_FAILS_NAMING(MPI_ERR_UNSUPPORTED_OPERATION, "atomic mode", ferry_File_write_at(fh, 4 * ft_rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_UNSUPPORTED_OPERATION, path, ferry_File_read_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    /* Without atomic mode no lock is taken: plain writes work. */
    FT_OK(ferry_File_set_atomicity(fh, 0));
    FT_OK(ferry_File_write_at(fh, 4 * ft_rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    FT_OK(ferry_File_close(&fh));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    sync_barrier_sync(ft_path("sync-barrier-sync"));
    sync_fails_everywhere(ft_path("sync-fails"));
    atomic_without_locks(ft_path("atomic-no-locks"));
    return ft_finish();
}

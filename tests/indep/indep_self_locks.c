/*
 * Sieving writes lock even on a file opened by one rank: another process
 * may have the same file open (PnetCDF opens an MPI_COMM_SELF handle per
 * rank for independent mode beside its collective one, and ranks sieve
 * interleaved pieces of one variable through them). Rank 1 holds a lock on
 * the file and, while holding it, writes bytes in the hole between rank 0's
 * pieces; rank 0 meanwhile writes those pieces by data sieving through its
 * own MPI_COMM_SELF handle. Rank 0's write must wait for the lock (so it
 * reads the window after rank 1's bytes are there and keeps them): it ends
 * after rank 1 began to unlock (clock times on one machine: a duration
 * measured from a barrier failed under load, when rank 0 left the barrier
 * late), and every byte of both is in the file afterwards. (Before the fix the write did not lock with one rank.)
 */
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ferry_test.h"

enum { SIZE = 4096, PIECE = 16, PIECES = 4 };
static const double HOLD = 0.3; /* seconds rank 1 holds its lock */

static double clock_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Returns when it began to unlock. */
static double other_process(const char *path)
{
    int fd = open(path, O_RDWR);
    FT_CHECK(fd >= 0);
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = SIZE};
    FT_EQ(fcntl(fd, F_OFD_SETLK, &lock), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    struct timespec hold = {0, (long)(HOLD * 1e9)};
    nanosleep(&hold, NULL);
    char mine[PIECE];
    memset(mine, 'B', sizeof mine);
    FT_EQ(pwrite(fd, mine, sizeof mine, PIECE), (ssize_t)sizeof mine); /* the hole after rank 0's first piece */
    double unlocking = clock_now();
    lock.l_type = F_UNLCK;
    FT_EQ(fcntl(fd, F_OFD_SETLK, &lock), 0);
    close(fd);
    return unlocking;
}

/* Returns when its write ended. */
static double sieving_writer(const char *path)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "enable");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    MPI_Datatype pieces;
    MPI_Type_vector(PIECES, PIECE, 2 * PIECE, MPI_BYTE, &pieces);
    MPI_Type_commit(&pieces);
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, pieces, "native", MPI_INFO_NULL));
    char data[PIECE * PIECES];
    memset(data, 'A', sizeof data);
    MPI_Barrier(MPI_COMM_WORLD); /* rank 1 holds its lock now */
    FT_OK(ferry_File_write_at(fh, 0, data, sizeof data, MPI_BYTE, MPI_STATUS_IGNORE));
    double ended = clock_now();
    FT_OK(ferry_File_close(&fh));
    MPI_Type_free(&pieces);
    return ended;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *path = ft_path("self");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_set_size(fh, SIZE));
    FT_OK(ferry_File_close(&fh));
    double unlocking = 0, ended = 0;
    if (ft_rank == 1) unlocking = other_process(path);
    else if (ft_rank == 0) ended = sieving_writer(path);
    else MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(&unlocking, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD); /* rank 0's write and close are done */
    if (ft_rank == 0 && ended < unlocking)
        ft_fail(__FILE__, __LINE__, "the sieving write ended %.3f s before the lock was released: it did not wait",
                unlocking - ended);

    char file[SIZE], want[SIZE];
    memset(want, 0, sizeof want);
    for (int i = 0; i < PIECES; i++) memset(want + 2 * i * PIECE, 'A', PIECE);
    memset(want + PIECE, 'B', PIECE);
    int fd = open(path, O_RDONLY);
    FT_CHECK(fd >= 0);
    FT_EQ(pread(fd, file, sizeof file, 0), SIZE);
    close(fd);
    FT_EQ_MEM(file, want, sizeof want);
    return ft_finish();
}

/*
 * ferry__fs_next_data, which lets a two-phase aggregator skip reading the
 * file-system holes of a window it patches under its lock (issue 13): it
 * must never answer past the first byte that holds data, whatever the file
 * system (one that cannot tell answers the offset itself), on /dev/shm and
 * in FERRY_TEST_DIR; with injected lseek failures it answers the offset
 * (assume data), and past the last data it answers INT64_MAX or the offset.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "ferry_test.h"
#include "fs/fs.h"

enum { MIB = 1 << 20 };

static void check_in(const char *dir)
{
    char path[600];
    snprintf(path, sizeof path, "%s/ferry-next-data-%d-%d", dir, (int)getpid(), ft_rank);
    ferry__fs_file_t *f = NULL;
    FT_EQ(ferry__fs_open(path, FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, &f), 0);
    char data[100];
    memset(data, 7, sizeof data);
    FT_EQ(ferry__fs_pwrite(f, data, sizeof data, 4 * MIB + 10), 0); /* a hole of 4 MiB, then data */
    MPI_Offset first = ferry__fs_next_data(f, 0);
    FT_CHECK(first >= 0 && first <= 4 * MIB + 10);
    FT_EQ(ferry__fs_next_data(f, 4 * MIB + 50), 4 * MIB + 50); /* inside the data */
    MPI_Offset after = ferry__fs_next_data(f, 8 * MIB);          /* past the end */
    FT_CHECK(after == INT64_MAX || after == 8 * MIB);
    FT_EQ(ferry__fs_fault_arm("seek:1+:EIO"), 0);
    FT_EQ(ferry__fs_next_data(f, 0), 0); /* cannot tell: data assumed */
    ferry__fs_fault_disarm();
    if (ft_rank == 0) printf("%s: first data at %lld of %lld, past the end %lld\n", dir, (long long)first,
                             (long long)(4 * MIB + 10), (long long)after);
    FT_EQ(ferry__fs_close(f), 0);
    unlink(path);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    check_in("/dev/shm");
    check_in(ft_scratch_dir());
    return ft_finish();
}

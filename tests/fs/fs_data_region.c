/*
 * ferry__fs_data_region, which lets a two-phase aggregator skip reading the
 * file-system holes of a window it patches under its lock (issue 13): the
 * region it names must hold every byte of data from the offset on up to its
 * end (never a data byte outside it), whatever the file system (one that
 * cannot tell names [offset, INT64_MAX)), on /dev/shm and in
 * FERRY_TEST_DIR; with lseek failing it names [offset, INT64_MAX); past
 * the last data it names none (INT64_MAX) or the offset onwards.
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
    snprintf(path, sizeof path, "%s/ferry-data-region-%d-%d", dir, (int)getpid(), ft_rank);
    ferry__fs_file_t *f = NULL;
    FT_EQ(ferry__fs_open(path, FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, &f), 0);
    char data[100];
    memset(data, 7, sizeof data);
    FT_EQ(ferry__fs_pwrite(f, NULL, data, sizeof data, 10), 0);           /* data, */
    FT_EQ(ferry__fs_pwrite(f, NULL, data, sizeof data, 4 * MIB + 10), 0); /* a hole of 4 MiB, data */
    MPI_Offset start, end;
    ferry__fs_data_region(f, 0, &start, &end);
    FT_CHECK(start <= 10 && end >= 110);
    MPI_Offset first_end = end;
    ferry__fs_data_region(f, 1 * MIB, &start, &end); /* inside the hole: the next data */
    FT_CHECK(start >= 1 * MIB && start <= 4 * MIB + 10 && end >= 4 * MIB + 110);
    MPI_Offset second = start;
    ferry__fs_data_region(f, 8 * MIB, &start, &end); /* past the end */
    FT_CHECK(start == INT64_MAX || (start == 8 * MIB && end == INT64_MAX));
    FT_EQ(ferry__fs_fault_arm("seek:1+:EIO"), 0);
    ferry__fs_data_region(f, 1 * MIB, &start, &end); /* cannot tell: data */
    FT_EQ(start, 1 * MIB);
    FT_EQ(end, INT64_MAX);
    ferry__fs_fault_disarm();
    if (ft_rank == 0) printf("%s: data [0, %lld), then from %lld\n", dir, (long long)first_end, (long long)second);
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

/*
 * An open that may create (O_CREAT without O_EXCL) and meets EEXIST: on a
 * network client another client created the name between this client's
 * lookup and its create (GlusterFS, several ranks opening one new container
 * file: tools/cluster-faults client-kill/container failed its fresh
 * container on one rank with MPI_ERR_FILE_EXISTS). The fs layer opens again:
 * one such failure (injected) is absorbed; an exclusive create still fails
 * with MPI_ERR_FILE_EXISTS, and so does an EEXIST that never ends.
 */
#include <string.h>
#include <unistd.h>

#include "ferry_test.h"
#include "error/error.h"
#include "fs/fs.h"

static int open_with(const char *path, int flags, const char *fault)
{
    ferry__fs_file_t *f = NULL;
    if (fault) FT_EQ(ferry__fs_fault_arm(fault), 0);
    int cls = ferry__fs_open(path, flags, &f);
    ferry__fs_fault_disarm();
    if (f) ferry__fs_close(f);
    return cls;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    char path[700];
    snprintf(path, sizeof path, "%s/ferry-create-race-%d-%d", ft_scratch_dir(), (int)getpid(), ft_rank);
    int rw = FERRY_FS_READ | FERRY_FS_WRITE;
    FT_EQ(open_with(path, rw | FERRY_FS_CREATE, NULL), 0); /* the first open reads FERRY_FAULT, disarming */
    unlink(path);
    FT_EQ(open_with(path, rw | FERRY_FS_CREATE, "open:1:EEXIST"), 0);
    FT_EQ(open_with(path, rw | FERRY_FS_CREATE, "open:1+:EEXIST"), MPI_ERR_FILE_EXISTS);
    FT_EQ(open_with(path, rw | FERRY_FS_CREATE | FERRY_FS_EXCL, "open:1:EEXIST"), MPI_ERR_FILE_EXISTS);
    FT_CHECK(strstr(ferry__error_message(), path) != NULL);
    unlink(path);
    return ft_finish();
}

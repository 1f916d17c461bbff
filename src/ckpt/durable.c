/*
 * What makes a written checkpoint durable and whole, beyond the MPI-IO calls.
 *
 * The host's MPI-IO cannot be trusted to report a full device: Open MPI
 * 4.1.4's OMPIO returns MPI_SUCCESS from collective writes whose aggregator
 * hit ENOSPC, with every rank's status counting all its bytes (a 4-rank
 * steered checkpoint on a full 1200 KiB tmpfs: 396 KiB of 804 written,
 * success everywhere). So for the host, rank 0 reserves the file's blocks
 * with fallocate before any data is written: a full device fails there,
 * visibly. Where the file system cannot reserve (EOPNOTSUPP), the written
 * file is verified against its checksums before it is committed
 * (FERRY_CKPT_RESERVE=0 takes that path everywhere: tests/ckpt/ckpt_faults).
 *
 * Nor its MPI_File_sync: after one failed write, OMPIO keeps a request in its
 * process-wide pending list and every later MPI_File_sync on that rank returns
 * MPI_ERR_OTHER without entering the barrier the other ranks wait in (the next
 * checkpoint hung). Host-written files are therefore closed, then synced by
 * every rank with fsync on the path, which flushes what that rank's node
 * cached of the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

int ferry__ckpt_sync_directory(const char *path)
{
    char *copy = ferry__strdup(path);
    int fd = copy ? open(dirname(copy), O_RDONLY | O_DIRECTORY) : -1;
    ferry__free(copy);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int ferry__ckpt_reserve(ferry_ckpt_t ck, const char *path, MPI_Offset bytes, int *reserved)
{
    int64_t done = 0, cls = 0;
    const char *hook = getenv("FERRY_CKPT_RESERVE");
    if (ck->rank == 0 && !(hook && strcmp(hook, "0") == 0)) {
        int fd = open(path, O_WRONLY);
        int rc = fd < 0 ? -1 : fallocate(fd, 0, 0, (off_t)bytes);
        int err = errno;
        if (fd >= 0) close(fd);
        done = rc == 0;
        if (rc != 0 && err != EOPNOTSUPP && err != ENOSYS)
            cls = ferry__error_set(err == ENOSPC || err == EDQUOT ? MPI_ERR_NO_SPACE : MPI_ERR_IO,
                                   "ferry_ckpt: cannot reserve %lld bytes for %s: %s", (long long)bytes, path,
                                   strerror(err));
    }
    cls = ferry__error_agree_max(ck->comm, (int)cls, "ferry_ckpt_write", &done, 1);
    *reserved = done != 0;
    return (int)cls;
}

int ferry__ckpt_sync_path(ferry_ckpt_t ck, const char *path)
{
    int fd = open(path, O_RDONLY), cls = 0;
    if (fd < 0 || fsync(fd) != 0)
        cls = ferry__error_set(errno == ENOSPC || errno == EDQUOT ? MPI_ERR_NO_SPACE : MPI_ERR_IO,
                               "ferry_ckpt: cannot sync %s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return ferry__error_agree(ck->comm, cls, "ferry_ckpt_write");
}

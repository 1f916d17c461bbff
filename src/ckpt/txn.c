/*
 * Transactions: a checkpoint is written under "<path>.tmp", synced on every
 * rank, closed, then renamed by rank 0 (and the directory synced), so a
 * file with a checkpoint's final name is always complete; the newest K are
 * kept. A restart tries the newest and falls back to older ones, with a
 * message, when one is incomplete or fails its checksums.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"
#include "core/core.h"

/* Rank 0's system call outcome on every rank (0 or MPI_ERR_IO with message). */
static int root_outcome(ferry_ckpt_t ck, int cls, const char *what)
{
    return ferry__error_agree(ck->comm, cls, what);
}

static int sync_directory(const char *path)
{
    char *copy = ferry__strdup(path);
    int fd = copy ? open(dirname(copy), O_RDONLY | O_DIRECTORY) : -1;
    ferry__free(copy);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Rank 0: header and index variables, then (steer, stack) data on every rank. */
static int write_body(ferry_ckpt_t ck, ckpt_file_t *f, ckpt_layout_t *layout, void *const *bufs, uint64_t *sums,
                      long long step, double time)
{
    int cls = 0;
    if (ck->strategy == FERRY_CKPT_GATHER) cls = ckpt_gather_write(ck, f, layout, bufs, sums);
    cls = root_outcome(ck, cls, "ferry_ckpt_write");
    if (!cls && ck->rank == 0) {
        ckpt_layout_t final;
        cls = ckpt_layout_build(ck, sums, step, time, &final);
        if (!cls) cls = ckpt_io_transfer_at(f, CKPT_WRITE, 0, final.region, (int)final.region_len, MPI_BYTE);
        ckpt_layout_free(ck, &final);
    }
    if (ck->strategy != FERRY_CKPT_GATHER) {
        int data = ckpt_write_data(ck, f, layout, bufs);
        cls = cls ? cls : data;
    }
    return root_outcome(ck, cls, "ferry_ckpt_write");
}

/* Steer and stack: checksums and the swap to big-endian before, the swap back after. */
static int write_open_file(ferry_ckpt_t ck, const char *tmp, ckpt_layout_t *layout, void *const *bufs,
                           long long step, double time)
{
    uint64_t *sums = ferry__calloc((size_t)ck->nvars + 1, sizeof *sums), *total = ferry__calloc((size_t)ck->nvars + 1, sizeof *total);
    int cls = root_outcome(ck, sums && total ? 0 : MPI_ERR_NO_MEM, "ferry_ckpt_write"), swapped = 0;
    if (!cls && ck->strategy != FERRY_CKPT_GATHER) {
        cls = root_outcome(ck, ckpt_checksums(ck, bufs, sums), "ferry_ckpt_write");
        swapped = 1;
        if (!cls) MPI_Reduce(sums, total, ck->nvars, MPI_UINT64_T, MPI_SUM, 0, ck->comm);
    }
    ckpt_file_t f;
    if (!cls) cls = root_outcome(ck, ckpt_file_open(ckpt_io_get(ck->io_kind), ck->comm, tmp, MPI_MODE_CREATE | MPI_MODE_WRONLY, ck->info, &f), "ferry_ckpt_write");
    if (!cls) {
        /* The final size first: points no rank writes then read as zeros, also to an MPI-IO whose
         * sieving writes read back what lies around the data (MPICH's ROMIO otherwise writes its
         * buffer's stale bytes there, past the end of file). */
        cls = ckpt_io_check(&f, f.io->set_size(&f, layout->total), "set_size");
        if (!cls) cls = write_body(ck, &f, layout, bufs, ck->strategy == FERRY_CKPT_GATHER ? sums : total, step, time);
        if (!cls) cls = ckpt_io_check(&f, f.io->sync(&f), "sync");
        int closed = ckpt_file_close(&f);
        cls = root_outcome(ck, cls ? cls : closed, "ferry_ckpt_write");
    }
    for (int i = 0; swapped && i < ck->nvars; i++) {
        ckpt_block_t b = ckpt_block_of(ck, &ck->vars[i], bufs[i], ck->strategy);
        if (b.base) ckpt_walk(&b, CKPT_SWAP);
    }
    ferry__free(sums);
    ferry__free(total);
    return cls;
}

static int unlink_quietly(const char *path)
{
    if (unlink(path) == 0 || errno == ENOENT) return 0;
    return ferry__error_set(MPI_ERR_IO, "ferry_ckpt: cannot remove %s: %s", path, strerror(errno));
}

static int commit(ferry_ckpt_t ck, const char *tmp, const char *path)
{
    int cls = 0;
    if (ck->rank == 0 && rename(tmp, path) != 0)
        cls = ferry__error_set(MPI_ERR_IO, "ferry_ckpt: cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (ck->rank == 0 && !cls && sync_directory(path) != 0)
        cls = ferry__error_set(MPI_ERR_IO, "ferry_ckpt: cannot sync the directory of %s: %s", path, strerror(errno));
    return root_outcome(ck, cls, "ferry_ckpt_write");
}

int ferry_ckpt_write_file(ferry_ckpt_t ck, const char *path, long long step, double time, void *const *bufs)
{
    size_t n = strlen(path) + 5;
    char *tmp = ferry__malloc(n);
    ckpt_layout_t layout;
    int cls = tmp ? 0 : MPI_ERR_NO_MEM;
    if (tmp) snprintf(tmp, n, "%s.tmp", path);
    if (!cls && ck->rank == 0) cls = unlink_quietly(tmp); /* a crashed write's leftovers */
    cls = root_outcome(ck, cls, "ferry_ckpt_write");
    if (!cls) cls = root_outcome(ck, ckpt_layout_build(ck, NULL, step, time, &layout), "ferry_ckpt_write");
    if (!cls) {
        cls = write_open_file(ck, tmp, &layout, bufs, step, time);
        ckpt_layout_free(ck, &layout);
    }
    if (!cls) cls = commit(ck, tmp, path);
    ferry__free(tmp);
    return ferry__error_code(cls);
}

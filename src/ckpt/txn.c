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
#include "base/alloc.h"

/* Collective: one rank's failure (a system call on rank 0, a local allocation) fails the call everywhere. */
static int agree_all(ferry_ckpt_t ck, int cls, const char *what)
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
    if (ck->strategy == FERRY_CKPT_GATHER) cls = ckpt_gather_write(ck, f, layout, bufs, sums); /* agreed */
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
    return agree_all(ck, cls, "ferry_ckpt_write");
}

/* Steer and stack: every block's checksum (swapping it to big-endian on the way
 * when the backend does not convert), summed over ranks in one reduction that
 * also counts the ranks that failed (sums[nvars]). */
static int block_sums(ferry_ckpt_t ck, const ckpt_file_t *f, void *const *bufs, uint64_t *sums, uint64_t *total)
{
    int cls = ckpt_checksums(ck, bufs, sums, f->swaps);
    sums[ck->nvars] = cls != 0;
    MPI_Allreduce(sums, total, ck->nvars + 1, MPI_UINT64_T, MPI_SUM, ck->comm);
    if (!cls && total[ck->nvars])
        cls = ferry__error_set(MPI_ERR_BUFFER, "ferry_ckpt_write: %llu other rank(s) passed no buffer for a block",
                               (unsigned long long)total[ck->nvars]);
    return cls;
}

static void swap_back(ferry_ckpt_t ck, void *const *bufs)
{
    for (int i = 0; i < ck->nvars; i++) {
        ckpt_block_t b = ckpt_block_of(ck, &ck->vars[i], bufs[i], ck->strategy);
        if (b.base) ckpt_walk(&b, CKPT_SWAP);
    }
}

/* One write in progress: its layout and checksums ([nvars + 1] each, owned). */
typedef struct ckpt_txn {
    ckpt_layout_t layout;
    uint64_t *sums, *total;
    long long step;
    double time;
} ckpt_txn_t;

static int write_open_file(ferry_ckpt_t ck, const char *tmp, ckpt_txn_t *t, void *const *bufs)
{
    uint64_t *sums = t->sums, *total = t->total;
    ckpt_layout_t *layout = &t->layout;
    int cls = 0, swapped = 0;
    ckpt_file_t f = {0};
    cls = agree_all(ck, ckpt_file_open(ckpt_io_get(ck->io_kind), ck->comm, tmp, MPI_MODE_CREATE | MPI_MODE_WRONLY, ck->info, &f), "ferry_ckpt_write");
    if (!cls && ck->strategy != FERRY_CKPT_GATHER) {
        cls = block_sums(ck, &f, bufs, sums, total);
        swapped = f.swaps && !cls;
    }
    /* The final size first: points no rank writes then read as zeros, also to an MPI-IO whose
     * sieving writes read back what lies around the data (MPICH's ROMIO otherwise writes its
     * buffer's stale bytes there, past the end of file). */
    if (!cls) cls = ckpt_io_collective(ck->comm, &f, f.io->set_size(&f, layout->total), "set_size");
    if (!cls) cls = write_body(ck, &f, layout, bufs, ck->strategy == FERRY_CKPT_GATHER ? sums : total, t->step, t->time);
    if (!cls) cls = ckpt_io_collective(ck->comm, &f, f.io->sync(&f), "sync");
    int closed = ckpt_file_close(&f);
    cls = agree_all(ck, cls ? cls : closed, "ferry_ckpt_write");
    if (swapped) swap_back(ck, bufs);
    return cls;
}

static int unlink_quietly(const char *path)
{
    if (unlink(path) == 0 || errno == ENOENT) return 0;
    return ferry__error_set(MPI_ERR_IO, "ferry_ckpt: cannot remove %s: %s", path, strerror(errno));
}

/* Rank 0 renames the synced file, syncs the directory and (for the set's own
 * names) drops checkpoints beyond the newest K; one agreement tells everyone. */
static int commit(ferry_ckpt_t ck, const char *tmp, const char *path, int prune)
{
    int cls = 0;
    if (ck->rank == 0 && rename(tmp, path) != 0)
        cls = ferry__error_set(MPI_ERR_IO, "ferry_ckpt: cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (ck->rank == 0 && !cls && sync_directory(path) != 0)
        cls = ferry__error_set(MPI_ERR_IO, "ferry_ckpt: cannot sync the directory of %s: %s", path, strerror(errno));
    if (ck->rank == 0 && !cls && prune) ckpt_prune(ck);
    return agree_all(ck, cls, "ferry_ckpt_write");
}

int ckpt_write_path(ferry_ckpt_t ck, const char *path, long long step, double time, void *const *bufs, int prune)
{
    size_t n = strlen(path) + 5;
    char *tmp = ferry__malloc(n);
    ckpt_txn_t t = {.sums = ferry__calloc((size_t)ck->nvars + 1, sizeof(uint64_t)),
                    .total = ferry__calloc((size_t)ck->nvars + 1, sizeof(uint64_t)), .step = step, .time = time};
    int cls = tmp && t.sums && t.total ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_write: no memory");
    if (tmp) snprintf(tmp, n, "%s.tmp", path);
    if (!cls && ck->rank == 0) cls = unlink_quietly(tmp); /* a crashed write's leftovers */
    int built = cls ? cls : ckpt_layout_build(ck, NULL, step, time, &t.layout);
    cls = agree_all(ck, built, "ferry_ckpt_write"); /* one agreement for all the preparations */
    if (!cls) cls = write_open_file(ck, tmp, &t, bufs);
    if (!built) ckpt_layout_free(ck, &t.layout);
    if (!cls) cls = commit(ck, tmp, path, prune);
    ferry__free(t.sums);
    ferry__free(t.total);
    ferry__free(tmp);
    return cls;
}

int ferry_ckpt_write_file(ferry_ckpt_t ck, const char *path, long long step, double time, void *const *bufs)
{
    return ferry__error_code(ckpt_write_path(ck, path, step, time, bufs, 0));
}

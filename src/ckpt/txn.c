/*
 * One write as a transaction: the file (a new "<path>.tmp", or a series
 * file's next record) opened, sized, its checksums summed over the ranks,
 * header or record stamp and data written, synced on every rank, closed and,
 * where the MPI-IO cannot be trusted, verified; the user's buffers restored.
 * The commit (rename, prune) is commit.c's, a record's series.c's.
 *
 * Calls go one way: commit.c and series.c call here; this file calls down
 * (layout.c, write.c, gather.c, fill.c, durable.c, verify.c, io.c), never
 * back up, and never into the read side (restart.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"
#include "progress/progress.h"

/* Collective: one rank's failure (a system call on rank 0, a local allocation) fails the call everywhere. */
static int agree_all(ferry_ckpt_t ck, int cls, const char *what)
{
    return ferry__error_agree(ck->comm, cls, what);
}

/* Rank 0, a series record: its time, step and checksums (sums[nvars]) at the record's place. */
static int write_stamp(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_txn_t *t, const uint64_t *sums)
{
    const ferry__ckpt_nc_t *nc = &t->layout.nc;
    MPI_Offset shift = t->record * t->layout.recsize;
    int ssize = ferry__ckpt_nc_type_size(nc->vars[FERRY__CKPT_REC_STEP].type);
    uint64_t bits;
    char hex[17];
    memcpy(&bits, &t->time, sizeof bits);
    ferry__ckpt_bytes_t b = {0};
    ferry__ckpt_bytes_put_be(&b, bits, 8);
    ferry__ckpt_bytes_put_be(&b, (uint64_t)t->step, ssize);
    for (int i = 0; i < ck->nvars; i++) {
        ferry__ckpt_hex(sums[i], hex);
        ferry__ckpt_bytes_put(&b, hex, 16);
    }
    int cls = b.failed ? ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for a record's checksums") : 0;
    const MPI_Offset at[3] = {nc->vars[FERRY__CKPT_REC_TIME].begin, nc->vars[FERRY__CKPT_REC_STEP].begin,
                              nc->vars[FERRY__CKPT_REC_SUMS].begin};
    const int len[3] = {8, ssize, 16 * ck->nvars};
    for (int k = 0, from = 0; k < 3 && !cls; from += len[k++])
        cls = ferry__ckpt_io_transfer_at(f, FERRY__CKPT_WRITE, at[k] + shift, b.p + from, len[k], MPI_BYTE);
    ferry__free(b.p);
    return cls;
}

/* Rank 0: header and index variables (or a series record's time, step and checksums), then
 * (steer, stack) data on every rank. */
static int write_body(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_txn_t *t, void *const *bufs,
                      uint64_t *sums)
{
    int cls = 0;
    ferry__ckpt_layout_t *layout = (ferry__ckpt_layout_t *)&t->layout;
    if (ck->strategy == FERRY_CKPT_GATHER) cls = ferry__ckpt_gather_write(ck, f, layout, bufs, sums); /* agreed */
    if (!cls && ck->rank == 0 && t->record >= 0) cls = write_stamp(ck, f, t, sums);
    if (!cls && ck->rank == 0 && t->record < 0) {
        ferry__ckpt_layout_t final;
        cls = ferry__ckpt_layout_build(ck, sums, t->step, t->time, &final);
        if (!cls)
            cls = ferry__ckpt_io_transfer_at(f, FERRY__CKPT_WRITE, 0, final.region, (int) final.region_len, MPI_BYTE);
        ferry__ckpt_layout_free(ck, &final);
    }
    if (ck->strategy != FERRY_CKPT_GATHER) {
        int data = ferry__ckpt_write_data(ck, f, layout, bufs);
        cls = cls ? cls : data;
    }
    return agree_all(ck, cls, "ferry_ckpt_write");
}

/* Steer and stack: every block's checksum (swapping it to big-endian on the way
 * when the backend does not convert: *swapped) and the holes' fill values', summed
 * over ranks in one reduction that also counts the ranks that failed (sums[nvars]). */
static int block_sums(ferry_ckpt_t ck, const ferry__ckpt_file_t *f, void *const *bufs, ferry__ckpt_txn_t *t,
                      int *swapped)
{
    uint64_t *sums = t->sums, *total = t->total;
    int cls = f->staged ? ferry__ckpt_stage_blocks(ck, bufs, sums) : ferry__ckpt_checksums(ck, bufs, sums, f->swaps);
    *swapped = f->swaps && !f->staged && !cls;
    if (!cls) cls = ferry__ckpt_holes_find(ck, &t->holes, sums);
    sums[ck->nvars] = cls != 0;
    int rc = ferry__progress_allreduce(sums, total, ck->nvars + 1, MPI_UINT64_T, MPI_SUM, ck->comm);
    if (rc != MPI_SUCCESS) return ferry__error_host(rc, "ferry_ckpt_write", ck->base, "MPI_Allreduce");
    if (!cls && total[ck->nvars])
        cls = ferry__error_set(MPI_ERR_BUFFER, "ferry_ckpt_write: %llu other rank(s) passed no buffer for a block",
                               (unsigned long long)total[ck->nvars]);
    return cls;
}

static void swap_back(ferry_ckpt_t ck, void *const *bufs)
{
    for (int i = 0; i < ck->nvars; i++) {
        ferry__ckpt_block_t b = ferry__ckpt_block_of(ck, &ck->vars[i], bufs[i], ck->strategy);
        if (b.base) ferry__ckpt_walk(&b, FERRY__CKPT_SWAP);
    }
}

/* The file's blocks reserved (host), then the data; synced before the close (ferry) or after it (host). */
static int write_sized_file(ferry_ckpt_t ck, ferry__ckpt_file_t *f, ferry__ckpt_txn_t *t, void *const *bufs,
                            int *reserved)
{
    const ferry__ckpt_layout_t *layout = &t->layout;
    /* The final size first: points no rank writes then read as zeros, also to an MPI-IO whose
     * sieving writes read back what lies around the data (MPICH's ROMIO otherwise writes its
     * buffer's stale bytes there, past the end of file). */
    int cls = 0;
    if (t->record >= 0) /* a series record written again: nothing stale may stay where it goes */
        cls = ferry__ckpt_io_collective(ck->comm, f, f->io->set_size(f, t->record_at), "set_size");
    if (!cls && t->record >= 0) /* (a new file: created at its size before the open, presize) */
        cls = ferry__ckpt_io_collective(ck->comm, f, f->io->set_size(f, layout->total), "set_size");
    *reserved = 1;
    if (!cls && f->io->untrusted) cls = ferry__ckpt_reserve(ck, f->path, layout->total, reserved);
    if (!cls) cls = write_body(ck, f, t, bufs, ck->strategy == FERRY_CKPT_GATHER ? t->sums : t->total);
    if (!cls && t->holes.any)
        cls = agree_all(ck, ferry__ckpt_holes_write(ck, f, layout->begin, &t->holes), "ferry_ckpt_write");
    if (!cls && !f->io->untrusted) cls = ferry__ckpt_io_collective(ck->comm, f, f->io->sync(f), "sync");
    return cls;
}

/* The info a write opens its file with: the set's; for a stacked set on ferry's MPI-IO also
 * ferry_cb_strategy=independent, unless the user chose a collective path. Every rank's stacked blocks
 * are runs of its own, one per variable: two-phase aggregation would only copy and ship them (ferry's
 * cost model counts a rank's several runs as one sieved span); independently each run is one write
 * (shelfsea, 16 MiB on 4 ranks: 17 file-system calls and no exchange instead of 54 and an exchange). */
static MPI_Info write_info(ferry_ckpt_t ck, const ferry__ckpt_io_t *io, MPI_Info *owned)
{
    char value[32];
    int chosen = 0, flag = 0;
    *owned = MPI_INFO_NULL;
    if (ck->strategy != FERRY_CKPT_STACK || io != ferry__ckpt_io_get(FERRY_CKPT_IO_FERRY)) return ck->info;
    if (ck->info != MPI_INFO_NULL) {
        MPI_Info_get(ck->info, "ferry_cb_strategy", (int)sizeof value - 1, value, &flag);
        chosen = flag;
        MPI_Info_get(ck->info, "romio_cb_write", (int)sizeof value - 1, value, &flag);
        chosen |= flag;
    }
    if (chosen) return ck->info;
    if (ck->info != MPI_INFO_NULL) MPI_Info_dup(ck->info, owned);
    else MPI_Info_create(owned);
    MPI_Info_set(*owned, "ferry_cb_strategy", "independent");
    return *owned;
}

/* Rank 0, a new file: created at its final size before the collective open, which is what set_size
 * did after it, without set_size's two agreements (the open's agreement carries a failure). */
static int presize(const char *path, MPI_Offset size)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0666);
    int rc = fd < 0 ? -1 : ftruncate(fd, (off_t)size), err = errno;
    if (fd >= 0) close(fd);
    if (rc == 0) return 0;
    int cls = err == ENOSPC || err == EDQUOT ? MPI_ERR_NO_SPACE
              : err == ENOENT                 ? MPI_ERR_NO_SUCH_FILE
              : err == EACCES || err == EPERM ? MPI_ERR_ACCESS
                                              : MPI_ERR_IO;
    return ferry__error_set(cls,
                            "ferry_ckpt: cannot create %s at %lld bytes: %s", path, (long long)size, strerror(err));
}

int ferry__ckpt_txn_write(ferry_ckpt_t ck, const char *tmp, ferry__ckpt_txn_t *t, void *const *bufs)
{
    int cls = 0, swapped = 0, reserved = 1;
    ferry__ckpt_file_t f = {0};
    const ferry__ckpt_io_t *io = ferry__ckpt_io_get(ck->io_kind);
    int amode = MPI_MODE_WRONLY | (t->record < 0 ? MPI_MODE_CREATE : 0);
    MPI_Info owned, info = write_info(ck, io, &owned);
    int sized = t->record < 0 && ck->rank == 0 ? presize(tmp, t->layout.total) : 0;
    int opened = ferry__ckpt_file_open(io, ck->comm, tmp, amode, info, &f);
    cls = agree_all(ck, opened ? opened : sized, "ferry_ckpt_write"); /* the MPI-IO's words first */
    if (owned != MPI_INFO_NULL) MPI_Info_free(&owned);
    if (!cls && ferry__ckpt_stage_fits(ck)) { /* big-endian bytes from the staging buffer: nothing to convert */
        f.staged = f.swaps = 1;
        f.datarep = "native";
    }
    if (!cls && ck->strategy != FERRY_CKPT_GATHER)
        cls = agree_all(ck, block_sums(ck, &f, bufs, t, &swapped), "ferry_ckpt_write");
    if (!cls) cls = write_sized_file(ck, &f, t, bufs, &reserved);
    int closed = ferry__ckpt_file_close(&f);
    cls = agree_all(ck, cls ? cls : closed, "ferry_ckpt_write");
    if (swapped) swap_back(ck, bufs);
    if (!cls && io->untrusted) cls = ferry__ckpt_sync_path(ck, tmp);
    if (!cls && !reserved && (cls = ferry__ckpt_verify_path(ck->comm, tmp, t->record)) != 0) {
        char why[400];
        snprintf(why, sizeof why, "%s", ferry__error_message());
        cls = ferry__error_set(cls,
                               "ferry_ckpt_write: the host MPI-IO reported success, but the file it wrote does not "
                               "verify (is the device full?): %s",
                               why);
    }
    return cls;
}

/*
 * Writing a step: ferry_ckpt_write and ferry_ckpt_write_file. A file of its
 * own is one transaction (txn.c) on "<path>.tmp"; then rank 0 renames it to
 * its final name, syncs the directory and (for the set's own names) prunes
 * the set (steps.c), and one agreement tells every rank. A series set
 * appends a record to its file instead (series.c).
 *
 * The top of the write side: it calls txn.c, series.c and steps.c, and
 * nothing calls back here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

static int unlink_quietly(const char *path)
{
    if (unlink(path) == 0 || errno == ENOENT) return 0;
    return ferry__error_set(MPI_ERR_IO, "ferry_ckpt: cannot remove %s: %s", path, strerror(errno));
}

/* Rank 0 renames the synced file, syncs the directory and (for the set's own
 * names) prunes the set; one agreement tells everyone. */
static int commit(ferry_ckpt_t ck, const char *tmp, const char *path, int prune, long long step)
{
    int cls = 0;
    if (ck->rank == 0 && rename(tmp, path) != 0)
        cls = ferry__error_set(MPI_ERR_IO, "ferry_ckpt: cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (ck->rank == 0 && !cls && ferry__ckpt_sync_directory(path) != 0)
        cls = ferry__error_set(MPI_ERR_IO, "ferry_ckpt: cannot sync the directory of %s: %s", path, strerror(errno));
    if (ck->rank == 0 && !cls && prune) ferry__ckpt_prune(ck, step);
    return ferry__error_agree(ck->comm, cls, "ferry_ckpt_write");
}

/* Collective, after the definitions are agreed: the transaction on tmp, then the commit. A failed
 * write leaves no temporary file behind (it would fill the disk until the next write). */
static int write_txn(ferry_ckpt_t ck, const char *path, ferry__ckpt_txn_t *t, void *const *bufs, int prune)
{
    size_t n = strlen(path) + 5;
    char *tmp = ferry__malloc(n);
    int cls = tmp && t->sums && t->total ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_write: no memory");
    if (tmp) snprintf(tmp, n, "%s.tmp", path);
    if (!cls && ck->rank == 0) cls = unlink_quietly(tmp); /* a crashed write's leftovers */
    if (!cls) cls = ferry__ckpt_check_overlaps(ck, "ferry_ckpt_write");
    int built = cls ? cls : ferry__ckpt_layout_build(ck, NULL, t->step, t->time, &t->layout);
    cls = ferry__error_agree(ck->comm, built, "ferry_ckpt_write"); /* one agreement for all the preparations */
    int begun = !cls;
    if (!cls) cls = ferry__ckpt_txn_write(ck, tmp, t, bufs);
    if (!built) ferry__ckpt_layout_free(ck, &t->layout);
    if (!cls) cls = commit(ck, tmp, path, prune, t->step);
    if (cls && begun && ck->rank == 0 && unlink(tmp) != 0 && errno != ENOENT)
        fprintf(stderr, "ferry_ckpt: cannot remove %s after a failed write: %s\n", tmp, strerror(errno));
    if (cls && begun)
        cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt_write"); /* every rank returns after the removal */
    ferry__free(tmp);
    return cls;
}

/* Collective: writes step as a transaction into the file named (or, when NULL, the set's file of
 * step, pruning the set after it); a series set appends it to its file. */
static int write_path(ferry_ckpt_t ck, const char *named, long long step, double time, void *const *bufs)
{
    char path[4200], call[4400];
    int cls = 0;
    if (named && strlen(named) + 5 >= sizeof path)
        cls = ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_write_file: the name is too long");
    else if (named) snprintf(path, sizeof path, "%s", named);
    else cls = ferry__ckpt_step_path(ck, step, path, sizeof path);
    if (!cls && !bufs && ck->nvars)
        cls = ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_write on %s: a NULL buffer array for %d variables", ck->base,
                               ck->nvars);
    if (!cls && named && ck->series)
        cls = ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                               "ferry_ckpt_write_file: %s is a series set: its steps go into one file", ck->base);
    snprintf(call, sizeof call, "%s step %lld%s%.4096s", named ? "ferry_ckpt_write_file" : "ferry_ckpt_write", step,
             named ? " to " : "", named ? named : "");
    cls = ferry__ckpt_defs_agree(ck, cls, "ferry_ckpt_write", call);
    if (cls) return cls;
    if (ck->series) return ferry__ckpt_series_write(ck, step, time, bufs);
    if (ck->levels && !named) return ferry__ckpt_levels_write(ck, step, time, bufs);
    ferry__ckpt_txn_t t = {.sums = ferry__calloc((size_t)ck->nvars + 1, sizeof(uint64_t)),
                           .total = ferry__calloc((size_t)ck->nvars + 1, sizeof(uint64_t)),
                           .step = step,
                           .time = time,
                           .record = -1};
    cls = write_txn(ck, path, &t, bufs, !named);
    ferry__ckpt_holes_free(ck, &t.holes);
    ferry__free(t.sums);
    ferry__free(t.total);
    return cls;
}

int ferry_ckpt_write(ferry_ckpt_t ck, long long step, double time, void *const *bufs)
{
    if (!ck) return ferry__error_code(ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_write: a NULL set"));
    return ferry__error_code(write_path(ck, NULL, step, time, bufs));
}

int ferry_ckpt_write_file(ferry_ckpt_t ck, const char *path, long long step, double time, void *const *bufs)
{
    if (!ck) return ferry__error_code(ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_write_file: a NULL set"));
    if (!path)
        return ferry__error_code(ferry__ckpt_defs_agree(
            ck, ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_write_file: a NULL path"), "ferry_ckpt_write", ""));
    return ferry__error_code(write_path(ck, path, step, time, bufs));
}

/*
 * Restart and reading a file: the set's newest valid step (falling back to
 * older ones with a message when one is incomplete or fails its checksums),
 * a series' newest valid record, or one named file.
 *
 * The top of the read side: it calls down (steps.c to list the set,
 * verify.c, read.c, series.c), and nothing calls back here; the write side
 * (commit.c, txn.c) never calls it, nor it them.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"
#include "progress/progress.h"

static void fill_info(const ferry__ckpt_nc_t *nc, const char *path, ferry_ckpt_info_t *info)
{
    char strategy[16];
    ferry__ckpt_nc_att_text(&nc->gatts, "ferry_strategy", strategy, sizeof strategy);
    info->step = ferry__ckpt_nc_step(nc, path);
    info->time = ferry__ckpt_nc_att_double(ferry__ckpt_nc_att(&nc->gatts, "ferry_time"), 0);
    info->writer_ranks = (int)ferry__ckpt_nc_att_int(ferry__ckpt_nc_att(&nc->gatts, "ferry_nranks"), 0);
    info->strategy = strcmp(strategy, "stack") == 0 ? FERRY_CKPT_STACK
                     : strcmp(strategy, "gather") == 0 ? FERRY_CKPT_GATHER : FERRY_CKPT_STEER;
    snprintf(info->path, sizeof info->path, "%s", path);
    info->level = 3;
}

/* A file's header as read: the model and the bytes up to its first data variable. */
typedef struct read_header {
    ferry__ckpt_nc_t nc;
    unsigned char *region;
    size_t len;
} read_header_t;

/* Collective: verifies and reads path (a series file: its newest valid record) into bufs. */
static int read_open(ferry_ckpt_t ck, const char *path, read_header_t *h, void *const *bufs, ferry_ckpt_info_t *info)
{
    ferry__ckpt_file_t f;
    char strategy[16];
    ferry__ckpt_nc_t *nc = &h->nc;
    ferry__ckpt_nc_att_text(&nc->gatts, "ferry_strategy", strategy, sizeof strategy);
    int stacked = strcmp(strategy, "stack") == 0, series = ferry__ckpt_nc_is_series(nc);
    int cls = ferry__ckpt_file_open(ferry__ckpt_io_get(ck->io_kind), ck->comm, path, MPI_MODE_RDONLY, ck->info, &f);
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt read");
    if (!cls && series) cls = ferry__ckpt_series_read(ck, &f, nc, bufs, info);
    else if (!cls) cls = ferry__ckpt_verify_file(ck->comm, &f, nc);
    if (!cls && !series && stacked)
        cls =
            ferry__error_agree(ck->comm, ferry__ckpt_read_data(ck, &f, nc, h->region, h->len, bufs), "ferry_ckpt read");
    else if (!cls && !series) cls = ferry__ckpt_read_image(ck, &f, nc, bufs);
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt read");
    int closed = ferry__ckpt_file_close(&f);
    return cls ? cls : closed;
}

/* How read_file failed: not at all, through the file (damaged, incomplete, not verifiable: a
 * restart tries an older one) or through the declarations (another type, shape, a missing
 * variable: every file of the set would fail the same way). */
enum { READ_OK, READ_BAD_FILE, READ_BAD_DECLS };

/* Collective: reads path into bufs; a file without ferry's checksums only when !verified_only. */
static int read_file(ferry_ckpt_t ck, const char *path, void *const *bufs, ferry_ckpt_info_t *info, int verified_only,
                     int *how)
{
    read_header_t h;
    *how = READ_BAD_FILE;
    FERRY_TRY(ferry__ckpt_read_header(ck->comm, path, ck->io_kind, &h.nc, &h.region, &h.len));
    int cls = ferry__ckpt_match_decls(ck, &h.nc, path); /* the same header on every rank: the same answer */
    if (cls) *how = READ_BAD_DECLS;
    if (!cls && verified_only && !ferry__ckpt_nc_sealed(&h.nc))
        cls = ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION, "ferry_ckpt: %s is not a ferry checkpoint: it carries no "
                               "checksums, so nothing says it is whole", path);
    ferry_ckpt_info_t found = {0};
    if (!cls) cls = read_open(ck, path, &h, bufs, &found);
    if (!cls && info) fill_info(&h.nc, path, info);
    if (info) info->fallbacks += found.fallbacks;
    if (!cls && info && ferry__ckpt_nc_is_series(&h.nc)) info->step = found.step, info->time = found.time;
    if (!cls) *how = READ_OK;
    ferry__ckpt_nc_free(&h.nc);
    ferry__ckpt_region_free(h.region);
    return cls;
}

/* Collective: the first step of a read or restart; bufs NULL only for a set without variables. */
static int read_prologue(ferry_ckpt_t ck, void *const *bufs, const char *what, const char *call, int cls)
{
    if (!cls && !bufs && ck->nvars)
        cls = ferry__error_set(MPI_ERR_ARG, "%s on %s: a NULL buffer array", what, ck->base);
    for (int i = 0; i < ck->nvars && !cls; i++) /* the caller's fault, found before any file is tried */
        if (!bufs[i] && ferry__ckpt_elems(ck->vars[i].count))
            cls = ferry__error_set(MPI_ERR_BUFFER, "%s on %s: no buffer for variable %s, whose block is not empty",
                                   what, ck->base, ck->vars[i].name);
    return ferry__ckpt_defs_agree(ck, cls, what, call);
}

int ferry_ckpt_read_file(ferry_ckpt_t ck, const char *path, void *const *bufs, ferry_ckpt_info_t *info)
{
    if (info) memset(info, 0, sizeof *info);
    if (!ck) return ferry__error_code(ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_read_file: a NULL set"));
    char call[4200];
    snprintf(call, sizeof call, "ferry_ckpt_read_file %.4096s", path ? path : "(null)");
    int how, cls = path ? 0 : ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_read_file on %s: a NULL path", ck->base);
    cls = read_prologue(ck, bufs, "ferry_ckpt_read_file", call, cls);
    return ferry__error_code(cls ? cls : read_file(ck, path, bufs, info, 0, &how));
}

/* Collective: the set's steps, newest first (rank 0 lists them), in *steps (owned), *count of them. */
static int shared_steps(ferry_ckpt_t ck, long long **steps, int *count_out)
{
    int n = ck->rank == 0 ? ferry__ckpt_list_steps(ck->base, ".nc", steps) : 0;
    *count_out = 0;
    int cls = n < 0 ? ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_restart: no memory to list %s", ck->base) : 0;
    int64_t count = n;
    cls = ferry__error_agree_max(ck->comm, cls, "ferry_ckpt_restart", &count, 1);
    if (cls || count == 0) return cls;
    if (ck->rank != 0) *steps = ferry__malloc((size_t)count * sizeof **steps);
    cls =
        *steps ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_restart: no memory for %lld steps", (long long)count);
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt_restart");
    int rc = cls ? MPI_SUCCESS : ferry__progress_bcast(*steps, (int)count, MPI_LONG_LONG, 0, ck->comm);
    if (!cls)
        cls = ferry__error_agree(
            ck->comm, rc == MPI_SUCCESS ? 0 : ferry__error_host(rc, "ferry_ckpt_restart", ck->base, "MPI_Bcast"),
            "ferry_ckpt_restart");
    *count_out = cls ? 0 : (int)count;
    return cls;
}

/* Collective: the newest valid record of the set's series file. */
static int restart_series(ferry_ckpt_t ck, void *const *bufs, ferry_ckpt_info_t *info)
{
    char path[4200];
    int how = READ_BAD_FILE, cls = ferry__ckpt_step_path(ck, 0, path, sizeof path), exists = 0;
    if (ck->rank == 0) exists = access(path, F_OK) == 0;
    int64_t found = exists;
    cls = ferry__error_agree_max(ck->comm, cls, "ferry_ckpt_restart", &found, 1);
    if (!cls && found) cls = read_file(ck, path, bufs, info, 1, &how);
    if (!cls && !found) cls = MPI_ERR_NO_SUCH_FILE;
    if (cls && how == READ_BAD_FILE) {
        if (found && ck->rank == 0) fprintf(stderr, "ferry_ckpt: restart: %s: %s\n", path, ferry__error_message());
        cls = ferry__error_set(MPI_ERR_NO_SUCH_FILE, "ferry_ckpt_restart: no valid record in the series %s", path);
    }
    return cls;
}

/* Collective: step from the set's netCDF file (level 3) when it is one of the shared steps. */
static int restart_shared(ferry_ckpt_t ck, long long step, int listed, void *const *bufs, ferry_ckpt_info_t *info,
                          int *how)
{
    char path[4200];
    *how = READ_BAD_FILE;
    if (!listed || ferry__ckpt_step_path(ck, step, path, sizeof path)) return MPI_ERR_NO_SUCH_FILE;
    int cls = read_file(ck, path, bufs, info, 1, how);
    if (cls && *how == READ_BAD_FILE && ck->rank == 0)
        fprintf(stderr, "ferry_ckpt: restart: skipping %s: %s\n", path, ferry__error_message());
    return cls;
}

/* Collective, a multi-level set: the newest step whole at any level, the fastest level first (level
 * 1, level 2, the netCDF file), falling back step by step. */
static int restart_levels(ferry_ckpt_t ck, long long *steps, int n, void *const *bufs, ferry_ckpt_info_t *info)
{
    int cls = ferry__ckpt_drain_finish(ck), how = READ_BAD_FILE, level = 0, tried = 0;
    if (cls && ck->rank == 0) fprintf(stderr, "ferry_ckpt_restart: %s\n", ferry__error_message());
    for (int64_t bound = INT64_MAX;; tried++) {
        int64_t step = ferry__ckpt_levels_newest(ck, bound);
        for (int i = 0; i < n; i++)
            if (steps[i] < bound && steps[i] > step) step = steps[i];
        cls = ferry__error_agree_max(ck->comm, 0, "ferry_ckpt_restart", &step, 1);
        if (cls) return cls;
        if (step < 0) break;
        if (ferry__ckpt_levels_read(ck, step, bufs, &level, info) == 0) return 0;
        int listed = 0;
        for (int i = 0; i < n && !listed; i++) listed = steps[i] == step;
        cls = restart_shared(ck, step, listed, bufs, info, &how);
        if (!cls || how == READ_BAD_DECLS) return cls;
        if (info) info->fallbacks++;
        bound = step;
    }
    return ferry__error_set(MPI_ERR_NO_SUCH_FILE,
                            "ferry_ckpt_restart: no step of %s is whole at any level (node-local %s, partner copies, "
                            "%s.<step>.nc; %d tried)", ck->base, ck->levels->dir, ck->base, tried);
}

int ferry_ckpt_restart(ferry_ckpt_t ck, void *const *bufs, ferry_ckpt_info_t *info)
{
    if (info) memset(info, 0, sizeof *info);
    if (!ck) return ferry__error_code(ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_restart: a NULL set"));
    int cls = read_prologue(ck, bufs, "ferry_ckpt_restart", "ferry_ckpt_restart", 0), how = READ_BAD_FILE;
    if (!cls && ck->series) return ferry__error_code(restart_series(ck, bufs, info));
    long long *steps = NULL;
    int n = 0;
    if (!cls) cls = shared_steps(ck, &steps, &n);
    if (cls) {
        ferry__free(steps);
        return ferry__error_code(cls);
    }
    if (ck->levels) {
        cls = restart_levels(ck, steps, n, bufs, info);
        ferry__free(steps);
        return ferry__error_code(cls);
    }
    cls = MPI_ERR_NO_SUCH_FILE;
    for (int i = 0; i < n && cls && how != READ_BAD_DECLS; i++) {
        char path[4200];
        if (ferry__ckpt_step_path(ck, steps[i], path, sizeof path)) continue;
        cls = read_file(ck, path, bufs, info, 1, &how);
        if (cls && how == READ_BAD_FILE && ck->rank == 0)
            fprintf(stderr, "ferry_ckpt: restart: skipping %s: %s\n", path, ferry__error_message());
        if (cls && how == READ_BAD_FILE && info) info->fallbacks++;
    }
    if (cls && how != READ_BAD_DECLS)
        cls = ferry__error_set(MPI_ERR_NO_SUCH_FILE, "ferry_ckpt_restart: no valid checkpoint %s.<step>.nc (%d tried)",
                               ck->base, n);
    ferry__free(steps);
    return ferry__error_code(cls);
}

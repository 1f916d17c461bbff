/*
 * The checkpoint set on disk: listing its steps, keeping the newest K,
 * restarting from the newest valid one, reading and verifying one file.
 */
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

enum { MAX_LISTED = 4096 };

static int newest_first(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x < y) - (x > y);
}

/* Rank 0: the steps of "<base>.<digits>.nc" files, newest first; returns how many (at most max). */
static int list_steps(const char *base, long long *steps, int max)
{
    char *d = ferry__strdup(base), *b = ferry__strdup(base);
    DIR *dir = d && b ? opendir(dirname(d)) : NULL;
    const char *name = b ? basename(b) : "";
    size_t len = strlen(name);
    int n = 0;
    for (struct dirent *e; dir && n < max && (e = readdir(dir));) {
        char *end;
        if (strncmp(e->d_name, name, len) != 0 || e->d_name[len] != '.') continue;
        long long step = strtoll(e->d_name + len + 1, &end, 10);
        if (end != e->d_name + len + 1 && strcmp(end, ".nc") == 0 && step >= 0) steps[n++] = step;
    }
    if (dir) closedir(dir);
    ferry__free(d);
    ferry__free(b);
    qsort(steps, (size_t)n, sizeof *steps, newest_first);
    return n;
}

void ckpt_prune(ferry_ckpt_t ck)
{
    long long *steps = ferry__malloc(MAX_LISTED * sizeof *steps);
    int n = steps ? list_steps(ck->base, steps, MAX_LISTED) : 0;
    char path[4200];
    for (int i = ck->keep; i < n; i++)
        if (ferry_ckpt_path(ck, steps[i], path, (int)sizeof path) == MPI_SUCCESS) unlink(path);
    ferry__free(steps);
}

int ferry_ckpt_write(ferry_ckpt_t ck, long long step, double time, void *const *bufs)
{
    char path[4200];
    int rc = ferry_ckpt_path(ck, step, path, (int)sizeof path);
    return rc == MPI_SUCCESS ? ferry__error_code(ckpt_write_path(ck, path, step, time, bufs, 1)) : rc;
}

static void fill_info(const ckpt_nc_t *nc, const char *path, ferry_ckpt_info_t *info)
{
    char strategy[16];
    ckpt_nc_att_text(&nc->gatts, "ferry_strategy", strategy, sizeof strategy);
    info->step = ckpt_nc_att_int(ckpt_nc_att(&nc->gatts, "ferry_step"), 0);
    info->time = ckpt_nc_att_double(ckpt_nc_att(&nc->gatts, "ferry_time"), 0);
    info->writer_ranks = (int)ckpt_nc_att_int(ckpt_nc_att(&nc->gatts, "ferry_nranks"), 0);
    info->strategy = strcmp(strategy, "stack") == 0 ? FERRY_CKPT_STACK
                     : strcmp(strategy, "gather") == 0 ? FERRY_CKPT_GATHER : FERRY_CKPT_STEER;
    snprintf(info->path, sizeof info->path, "%s", path);
}

/* Rank 0 reads image files whole and scatters them when the set's strategy is gather. */
static int read_scattered(ferry_ckpt_t ck, ckpt_file_t *f, const ckpt_nc_t *nc, void *const *bufs)
{
    for (int i = 0; i < ck->nvars; i++) {
        int k = ckpt_nc_find_var(nc, ck->vars[i].name);
        if (k < 0) return ferry__error_set(MPI_ERR_IO, "ferry_ckpt: the checkpoint has no variable %s", ck->vars[i].name);
        FERRY_TRY(ckpt_scatter_read(ck, f, &ck->vars[i], bufs[i], nc->vars[k].begin));
    }
    return 0;
}

static int read_open(ferry_ckpt_t ck, const char *path, const ckpt_nc_t *nc, const unsigned char *region,
                     size_t region_len, void *const *bufs)
{
    ckpt_file_t f;
    char strategy[16];
    ckpt_nc_att_text(&nc->gatts, "ferry_strategy", strategy, sizeof strategy);
    FERRY_TRY(ckpt_file_open(ckpt_io_get(ck->io_kind), ck->comm, path, MPI_MODE_RDONLY, ck->info, &f));
    int cls = ckpt_verify_file(ck->comm, &f, nc);
    if (!cls && ck->strategy == FERRY_CKPT_GATHER && strcmp(strategy, "stack") != 0)
        cls = read_scattered(ck, &f, nc, bufs);
    else if (!cls)
        cls = ckpt_read_data(ck, &f, nc, region, region_len, bufs);
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt read");
    int closed = ckpt_file_close(&f);
    return cls ? cls : closed;
}

static int read_file(ferry_ckpt_t ck, const char *path, void *const *bufs, ferry_ckpt_info_t *info)
{
    ckpt_nc_t nc;
    unsigned char *region;
    size_t region_len;
    FERRY_TRY(ckpt_read_header(ck->comm, path, ck->io_kind, &nc, &region, &region_len));
    int cls = read_open(ck, path, &nc, region, region_len, bufs);
    if (!cls && info) fill_info(&nc, path, info);
    ckpt_nc_free(&nc);
    ckpt_region_free(region);
    return cls;
}

int ferry_ckpt_read_file(ferry_ckpt_t ck, const char *path, void *const *bufs, ferry_ckpt_info_t *info)
{
    if (info) memset(info, 0, sizeof *info);
    return ferry__error_code(read_file(ck, path, bufs, info));
}

int ferry_ckpt_restart(ferry_ckpt_t ck, void *const *bufs, ferry_ckpt_info_t *info)
{
    long long *steps = ferry__malloc(MAX_LISTED * sizeof *steps);
    int n = ck->rank == 0 && steps ? list_steps(ck->base, steps, MAX_LISTED) : 0, cls = MPI_ERR_NO_SUCH_FILE;
    MPI_Bcast(&n, 1, MPI_INT, 0, ck->comm);
    if (steps) MPI_Bcast(steps, n, MPI_LONG_LONG, 0, ck->comm);
    if (info) memset(info, 0, sizeof *info);
    for (int i = 0; i < n && cls && steps; i++) {
        char path[4200];
        ferry_ckpt_path(ck, steps[i], path, (int)sizeof path);
        cls = read_file(ck, path, bufs, info);
        if (cls && ck->rank == 0)
            fprintf(stderr, "ferry_ckpt: restart: skipping %s: %s\n", path, ferry__error_message());
        if (cls && info) info->fallbacks++;
    }
    if (cls) cls = ferry__error_set(MPI_ERR_NO_SUCH_FILE, "ferry_ckpt_restart: no valid checkpoint %s.<step>.nc (%d tried)",
                                    ck->base, n);
    ferry__free(steps);
    return ferry__error_code(cls);
}

int ferry_ckpt_verify(MPI_Comm comm, const char *path)
{
    ckpt_nc_t nc;
    unsigned char *region;
    size_t region_len;
    int cls = ckpt_read_header(comm, path, FERRY_CKPT_IO_FERRY, &nc, &region, &region_len);
    if (cls) return ferry__error_code(cls);
    ckpt_file_t f;
    cls = ckpt_file_open(ckpt_io_get(FERRY_CKPT_IO_FERRY), comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    if (!cls) {
        cls = ckpt_verify_file(comm, &f, &nc);
        int closed = ckpt_file_close(&f);
        cls = cls ? cls : closed;
    }
    ckpt_nc_free(&nc);
    ckpt_region_free(region);
    return ferry__error_code(cls);
}

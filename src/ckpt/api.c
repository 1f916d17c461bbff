/*
 * Checkpoint sets: creation, declarations, memory accounting.
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"
#include "progress/progress.h"

static long long info_number(MPI_Info info, const char *key, long long fallback)
{
    char value[64];
    int flag = 0;
    if (info != MPI_INFO_NULL) MPI_Info_get(info, key, (int)sizeof value - 1, value, &flag);
    return flag ? atoll(value) : fallback;
}

/* Rank 0: the block size of the directory the set lives in (the data alignment), at least 512. */
static long long directory_block(const char *base)
{
    char *copy = ferry__strdup(base);
    struct stat st;
    long long block = copy && stat(dirname(copy), &st) == 0 ? (long long)st.st_blksize : 4096;
    ferry__free(copy);
    return block < 512 ? 512 : block;
}

/* Local: the options and hints (every rank's keep is compared at the first collective call). */
static int set_options(ferry_ckpt_t ck, const ferry_ckpt_options_t *opt)
{
    ferry_ckpt_options_t o = opt ? *opt : (ferry_ckpt_options_t){0};
    if (o.strategy < 0 || o.strategy > FERRY_CKPT_AUTO || o.io < 0 || o.io > 1 || o.format < 0 || o.format > 1)
        return ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_create: unknown strategy, io or format (%d, %d, %d)",
                                o.strategy, o.io, o.format);
    if (o.series && o.strategy == FERRY_CKPT_STACK)
        return ferry__error_set(MPI_ERR_ARG,
                                "ferry_ckpt_create: a series needs the image layout (steer or gather), not stack");
    ck->series = o.series != 0;
    ck->automatic = o.strategy == FERRY_CKPT_AUTO;
    ck->strategy = ck->automatic ? FERRY_CKPT_STEER : o.strategy; /* auto: chosen with the definitions */
    ck->independent = o.independent != 0;
    ck->format = o.format;
    ck->io_kind = o.io;
    if (o.info && o.info != MPI_INFO_NULL) MPI_Info_dup(o.info, &ck->info);
    ck->keep = (int)info_number(ck->info, "ferry_ckpt_keep", 2);
    ck->auto_limit = info_number(ck->info, "ferry_ckpt_auto_limit", FERRY__CKPT_AUTO_LIMIT);
    const char *limit = getenv("FERRY_CKPT_STAGE_LIMIT"); /* the tests' way to take the converting path */
    ck->stage_limit = info_number(ck->info, "ferry_ckpt_stage_limit", limit ? atoll(limit) : FERRY__CKPT_STAGE_LIMIT);
    if (ck->keep < 1)
        return ferry__error_set(MPI_ERR_INFO_VALUE, "ferry_ckpt_create: ferry_ckpt_keep must be >= 1 (not %d)",
                                ck->keep);
    return 0;
}

/* Collective: rank 0's alignment (a hint, or the directory's block size) for every rank. */
static int agree_alignment(ferry_ckpt_t ck)
{
    long long align = ck->rank == 0 ? info_number(ck->info, "ferry_ckpt_align", directory_block(ck->base)) : 0;
    int rc = ferry__progress_bcast(&align, 1, MPI_LONG_LONG, 0, ck->comm);
    if (rc != MPI_SUCCESS) return ferry__error_host(rc, "ferry_ckpt_create", ck->base, "MPI_Bcast");
    ck->align = align;
    if (align < 4 || align % 4)
        return ferry__error_set(MPI_ERR_INFO_VALUE,
                                "ferry_ckpt_create: ferry_ckpt_align must be a positive multiple of 4 (not %lld)",
                                align);
    return 0;
}

int ferry_ckpt_create(MPI_Comm comm, const char *base, const ferry_ckpt_options_t *opt, ferry_ckpt_t *out)
{
    MPI_Comm dup = MPI_COMM_NULL;
    if (out) *out = NULL;
    if (comm == MPI_COMM_NULL)
        return ferry__error_code(ferry__error_set(MPI_ERR_COMM, "ferry_ckpt_create: MPI_COMM_NULL"));
    int rc = ferry__progress_comm_dup(comm, &dup);
    if (rc != MPI_SUCCESS) return ferry__error_code(ferry__error_host(rc, "ferry_ckpt_create", base, "MPI_Comm_dup"));
    ferry_ckpt_t ck = ferry__calloc(1, sizeof *ck);
    int cls = !ck ? ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_create: no memory")
              : !out || !base || !base[0]
                  ? ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_create: a NULL output, or a NULL or empty name")
                  : 0;
    if (ck) {
        ck->comm = dup;
        ck->info = MPI_INFO_NULL;
        MPI_Comm_rank(dup, &ck->rank);
        MPI_Comm_size(dup, &ck->nprocs);
        ck->base = base ? ferry__strdup(base) : NULL;
        if (!cls && !ck->base) cls = ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_create: no memory");
        if (!cls) cls = set_options(ck, opt);
    }
    /* any rank asking auto: every rank learns its node (a rank that asked another strategy then fails
     * the first collective call's agreement on the options, never a mismatched collective here) */
    int any_auto = ck && ck->automatic;
    cls = ferry__error_agree_flag(dup, cls, "ferry_ckpt_create", &any_auto);
    if (!cls) cls = ferry__error_agree(dup, agree_alignment(ck), "ferry_ckpt_create");
    if (!cls) cls = ferry__ckpt_levels_setup(ck, opt); /* agreed */
    if (!cls && any_auto) cls = ferry__error_agree(dup, ferry__ckpt_find_one_node(ck), "ferry_ckpt_create");
    if (!cls) ferry__ckpt_defs_changed(ck);
    if (cls) {
        if (ck) ferry_ckpt_free(&ck);
        else MPI_Comm_free(&dup);
        return ferry__error_code(cls);
    }
    *out = ck;
    return MPI_SUCCESS;
}

int ferry_ckpt_def_dim(ferry_ckpt_t ck, const char *name, MPI_Offset len, int *dimid)
{
    const char *what = "ferry_ckpt_def_dim";
    int cls = !ck || !dimid ? ferry__error_set(MPI_ERR_ARG, "%s: a NULL set or dimid", what) : 0;
    if (!cls) cls = ferry__ckpt_check_new_name(ck, what, name, 0);
    if (!cls && len < 1)
        cls = ferry__error_set(MPI_ERR_ARG, "%s: dimension '%s' needs a length >= 1 (not %lld)", what, name,
                               (long long)len);
    ferry__ckpt_dim_t *grown = cls ? NULL : ferry__realloc(ck->dims, (size_t)(ck->ndims + 1) * sizeof *grown);
    char *copy = grown ? ferry__strdup(name) : NULL;
    if (!cls && !copy) cls = ferry__error_set(MPI_ERR_NO_MEM, "%s: no memory", what);
    if (grown) ck->dims = grown;
    if (cls) return ferry__error_code(cls);
    grown[ck->ndims].name = copy;
    grown[ck->ndims].len = len;
    ferry__ckpt_defs_changed(ck);
    *dimid = ck->ndims++;
    return MPI_SUCCESS;
}

static void free_var(ferry__ckpt_var_t *v)
{
    ferry__free(v->name);
    ferry__free(v->mask);
    ferry__ckpt_nc_free_atts(&v->atts);
    ferry__free(v->blocks);
}

int ferry_ckpt_free(ferry_ckpt_t *ckp)
{
    ferry_ckpt_t ck = ckp ? *ckp : NULL;
    if (!ck) return MPI_SUCCESS;
    ferry__ckpt_levels_free(ck);
    for (int i = 0; i < ck->nvars; i++) free_var(&ck->vars[i]);
    for (int i = 0; i < ck->ndims; i++) ferry__free(ck->dims[i].name);
    ferry__free(ck->vars);
    ferry__free(ck->dims);
    ferry__ckpt_nc_free_atts(&ck->gatts);
    ferry__ckpt_nc_free_atts(&ck->time_atts);
    ferry__free(ck->base);
    ferry__ckpt_release(ck, ck->stage, ck->stage_cap);
    ferry__ckpt_kept_free(ck->kept);
    if (ck->info != MPI_INFO_NULL) MPI_Info_free(&ck->info);
    if (ck->comm != MPI_COMM_NULL) MPI_Comm_free(&ck->comm);
    ferry__free(ck);
    *ckp = NULL;
    return MPI_SUCCESS;
}

int ferry__ckpt_step_path(ferry_ckpt_t ck, long long step, char *path, size_t len)
{
    int n = ck->series ? snprintf(path, len, "%s.nc", ck->base) : snprintf(path, len, "%s.%012lld.nc", ck->base, step);
    if (n < 0 || (size_t)n >= len || step < 0)
        return ferry__error_set(MPI_ERR_ARG, "ferry_ckpt: step %lld of %s: negative or name too long", step, ck->base);
    return 0;
}

int ferry_ckpt_path(ferry_ckpt_t ck, long long step, char *path, int len)
{
    if (!ck || !path || len < 1)
        return ferry__error_code(
            ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_path: a NULL set or path, or a length below 1"));
    return ferry__error_code(ferry__ckpt_step_path(ck, step, path, (size_t)len));
}

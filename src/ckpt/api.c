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

void *ckpt_alloc(ferry_ckpt_t ck, size_t size)
{
    void *p = ferry__malloc(size ? size : 1);
    if (p) {
        ck->mem_now += (long long)size;
        if (ck->mem_now > ck->mem_peak) ck->mem_peak = ck->mem_now;
    }
    return p;
}

void ckpt_release(ferry_ckpt_t ck, void *p, size_t size)
{
    if (!p) return;
    ck->mem_now -= (long long)size;
    ferry__free(p);
}

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

static int set_options(ferry_ckpt_t ck, const ferry_ckpt_options_t *opt)
{
    ferry_ckpt_options_t o = opt ? *opt : (ferry_ckpt_options_t){0};
    if (o.strategy < 0 || o.strategy > 2 || o.io < 0 || o.io > 1 || o.format < 0 || o.format > 1)
        return ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_create: unknown strategy, io or format (%d, %d, %d)", o.strategy,
                                o.io, o.format);
    ck->strategy = o.strategy;
    ck->independent = o.independent != 0;
    ck->format = o.format;
    ck->io_kind = o.io;
    ck->info = MPI_INFO_NULL;
    if (o.info && o.info != MPI_INFO_NULL) MPI_Info_dup(o.info, &ck->info);
    ck->keep = (int)info_number(ck->info, "ferry_ckpt_keep", 2);
    long long align = ck->rank == 0 ? info_number(ck->info, "ferry_ckpt_align", directory_block(ck->base)) : 0;
    MPI_Bcast(&align, 1, MPI_LONG_LONG, 0, ck->comm);
    ck->align = align;
    if (ck->keep < 1 || ck->align < 4 || ck->align % 4)
        return ferry__error_set(MPI_ERR_INFO_VALUE, "ferry_ckpt_create: ferry_ckpt_keep must be >= 1 and ferry_ckpt_align a multiple of 4 (%d, %lld)",
                                ck->keep, align);
    return 0;
}

int ferry_ckpt_create(MPI_Comm comm, const char *base, const ferry_ckpt_options_t *opt, ferry_ckpt_t *out)
{
    *out = NULL;
    ferry_ckpt_t ck = ferry__calloc(1, sizeof *ck);
    int cls = ck && base && base[0] ? 0 : ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_create: no memory or an empty name");
    if (ck) {
        MPI_Comm_dup(comm, &ck->comm);
        MPI_Comm_rank(ck->comm, &ck->rank);
        MPI_Comm_size(ck->comm, &ck->nprocs);
        ck->base = base ? ferry__strdup(base) : NULL;
        ck->info = MPI_INFO_NULL;
        if (!cls) cls = set_options(ck, opt);
    }
    cls = ck ? ferry__error_agree(ck->comm, cls, "ferry_ckpt_create") : cls;
    if (cls) {
        ferry_ckpt_free(&ck);
        return ferry__error_code(cls);
    }
    *out = ck;
    return MPI_SUCCESS;
}

int ferry_ckpt_def_dim(ferry_ckpt_t ck, const char *name, MPI_Offset len, int *dimid)
{
    if (!ck || !name || !name[0] || strlen(name) > 200 || len < 1)
        return ferry__error_code(ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_def_dim: dimension '%s' needs a name and a length >= 1",
                                                  name ? name : "(null)"));
    ckpt_dim_t *grown = ferry__realloc(ck->dims, (size_t)(ck->ndims + 1) * sizeof *grown);
    if (!grown) return ferry__error_code(ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_def_dim: no memory"));
    ck->dims = grown;
    grown[ck->ndims].name = ferry__strdup(name);
    grown[ck->ndims].len = len;
    *dimid = ck->ndims++;
    return MPI_SUCCESS;
}

static void free_var(ckpt_var_t *v)
{
    ferry__free(v->name);
    ferry__free(v->mask);
    ferry__free(v->units);
    ferry__free(v->blocks);
}

int ferry_ckpt_free(ferry_ckpt_t *ckp)
{
    ferry_ckpt_t ck = ckp ? *ckp : NULL;
    if (!ck) return MPI_SUCCESS;
    for (int i = 0; i < ck->nvars; i++) free_var(&ck->vars[i]);
    for (int i = 0; i < ck->ndims; i++) ferry__free(ck->dims[i].name);
    ferry__free(ck->vars);
    ferry__free(ck->dims);
    ferry__free(ck->base);
    if (ck->info != MPI_INFO_NULL) MPI_Info_free(&ck->info);
    if (ck->comm != MPI_COMM_NULL && ck->comm) MPI_Comm_free(&ck->comm);
    ferry__free(ck);
    *ckp = NULL;
    return MPI_SUCCESS;
}

int ferry_ckpt_path(ferry_ckpt_t ck, long long step, char *path, int len)
{
    int n = snprintf(path, (size_t)len, "%s.%012lld.nc", ck->base, step);
    if (n < 0 || n >= len || step < 0)
        return ferry__error_code(ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_path: step %lld of %s: negative or name too long",
                                                  step, ck->base));
    return MPI_SUCCESS;
}

long long ferry_ckpt_peak_memory(ferry_ckpt_t ck)
{
    return ck ? ck->mem_peak : 0;
}

/*
 * Declaring variables (local): checks, netCDF's name rules, and the 4-D form
 * (leading dimensions of length 1). Every rank's block is shared at the next
 * collective call (defs.c), which also checks that the ranks agree.
 */
#include <stdio.h>
#include <string.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

/* A name netCDF accepts, of at most 200 bytes (room for the suffixes of a stacked file's names). */
static int check_name(const char *what, const char *kind, const char *name)
{
    const char *problem = ferry__ckpt_nc_name_problem(name);
    if (!problem && strlen(name) > 200) problem = "is longer than 200 bytes";
    if (problem)
        return ferry__error_set(MPI_ERR_ARG, "%s: the %s name '%.64s' %s (netCDF's name rules)", what, kind,
                                name ? name : "(null)", problem);
    return 0;
}

static int var_named(ferry_ckpt_t ck, const char *name)
{
    for (int i = 0; i < ck->nvars; i++)
        if (strcmp(ck->vars[i].name, name) == 0) return 1;
    return 0;
}

static int dim_named(ferry_ckpt_t ck, const char *name)
{
    for (int i = 0; i < ck->ndims; i++)
        if (strcmp(ck->dims[i].name, name) == 0) return 1;
    return 0;
}

/* Whether name ends in suffix and what comes before it is a variable of the set. */
static int suffix_of_var(ferry_ckpt_t ck, const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    char prefix[256];
    if (n <= k || n - k >= sizeof prefix || strcmp(name + n - k, suffix) != 0) return 0;
    memcpy(prefix, name, n - k);
    prefix[n - k] = '\0';
    return var_named(ck, prefix);
}

/* Stacked files add dimensions ferry_rank, ferry_dim<n>, <v>_stacked and variables <v>_start,
 * <v>_count, <v>_offset; series files dimensions time, ferry_var, ferry_hex and variables time,
 * ferry_step, ferry_checksum (docs/format/netcdf.md): a declared name must not be one of them. */
static int clashes_with_layout(ferry_ckpt_t ck, const char *name, int is_var)
{
    static const char *const index_suffixes[] = {"_start", "_count", "_offset"};
    char own[300];
    if (ck->series)
        return !strcmp(name, "time") || !strcmp(name, is_var ? "ferry_step" : "ferry_var") ||
               !strcmp(name, is_var ? "ferry_checksum" : "ferry_hex");
    if (ck->strategy != FERRY_CKPT_STACK) return 0;
    if (!is_var) {
        int reserved = strcmp(name, "ferry_rank") == 0 ||
                       (strncmp(name, "ferry_dim", 9) == 0 && name[9] >= '1' && name[9] <= '4' && !name[10]);
        return reserved || suffix_of_var(ck, name, "_stacked");
    }
    for (int k = 0; k < 3; k++) {
        snprintf(own, sizeof own, "%s%s", name, index_suffixes[k]);
        if (suffix_of_var(ck, name, index_suffixes[k]) || var_named(ck, own)) return 1;
    }
    snprintf(own, sizeof own, "%s_stacked", name);
    return dim_named(ck, own);
}

int ferry__ckpt_check_new_name(ferry_ckpt_t ck, const char *what, const char *name, int is_var)
{
    FERRY_TRY(check_name(what, is_var ? "variable" : "dimension", name));
    if (is_var ? var_named(ck, name) : dim_named(ck, name))
        return ferry__error_set(MPI_ERR_ARG, "%s: a %s named '%s' is already defined", what,
                                is_var ? "variable" : "dimension", name);
    if (clashes_with_layout(ck, name, is_var))
        return ferry__error_set(MPI_ERR_ARG, "%s: '%s' is a name the %s layout gives one of its own dimensions or "
                                "variables (docs/format/netcdf.md)", what, name, ck->series ? "series" : "stacked");
    return 0;
}

static int check_var(ferry_ckpt_t ck, const ferry_ckpt_var_t *d, const int *varid)
{
    const char *what = "ferry_ckpt_def_var";
    if (!ck || !d || !varid) return ferry__error_set(MPI_ERR_ARG, "%s: a NULL set, variable or varid", what);
    FERRY_TRY(ferry__ckpt_check_new_name(ck, what, d->name, 1));
    const char *name = d->name;
    int nctype = ferry__ckpt_nc_nctype(d->type);
    if (!nctype || (nctype == NC_INT64 && ck->format == FERRY_CKPT_CDF2))
        return ferry__error_set(MPI_ERR_TYPE, "%s: %s: the type is not one netCDF %s stores", what, name,
                                ck->format == FERRY_CKPT_CDF2 ? "CDF-2" : "CDF-5");
    if (d->ndims < 1 || d->ndims > FERRY__CKPT_D || !d->dimids || !d->start || !d->count)
        return ferry__error_set(MPI_ERR_ARG, "%s: %s: 1 to 4 dimensions with ids, start and count", what, name);
    for (int k = 0; k < d->ndims; k++) {
        int id = d->dimids[k];
        if (id < 0 || id >= ck->ndims)
            return ferry__error_set(MPI_ERR_DIMS, "%s: %s: dimension id %d is not defined", what, name, id);
        MPI_Offset len = ck->dims[id].len, s = d->start[k], c = d->count[k];
        if (s < 0 || c < 0 || s + c > len || (d->halo && d->halo[k] < 0))
            return ferry__error_set(MPI_ERR_ARG,
                                    "%s: %s: dimension %d: block [%lld, +%lld) outside [0, %lld) or a negative halo",
                                    what, name, k, (long long)s, (long long)c, (long long)len);
    }
    return 0;
}

static void normalize(ferry_ckpt_t ck, const ferry_ckpt_var_t *d, ferry__ckpt_var_t *v)
{
    int lead = FERRY__CKPT_D - d->ndims, empty = 0;
    for (int k = 0; k < d->ndims; k++) empty |= d->count[k] == 0;
    for (int k = 0; k < FERRY__CKPT_D; k++) {
        int j = k - lead;
        v->global[k] = j < 0 ? 1 : ck->dims[d->dimids[j]].len;
        v->start[k] = j < 0 || empty ? 0 : d->start[j];
        v->count[k] = j < 0 ? !empty : (empty ? 0 : d->count[j]);
        v->halo[k] = j < 0 || !d->halo ? 0 : d->halo[j];
        v->mem[k] = v->count[k] + 2 * v->halo[k];
        if (v->mem[k] == 0) v->mem[k] = 1; /* an empty block's buffer type stays valid */
        if (j >= 0) v->dimids[j] = d->dimids[j];
    }
    v->ndims = d->ndims;
    v->type = d->type;
    v->nctype = ferry__ckpt_nc_nctype(d->type);
    v->esize = ferry__ckpt_nc_type_size(v->nctype);
}

int ferry_ckpt_def_var(ferry_ckpt_t ck, const ferry_ckpt_var_t *d, int *varid)
{
    int cls = check_var(ck, d, varid);
    ferry__ckpt_var_t *grown = cls ? NULL : ferry__realloc(ck->vars, (size_t)(ck->nvars + 1) * sizeof *grown);
    if (!cls && !grown) cls = ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_def_var: no memory");
    if (cls) return ferry__error_code(cls);
    ck->vars = grown;
    ferry__ckpt_var_t *v = &ck->vars[ck->nvars];
    memset(v, 0, sizeof *v);
    normalize(ck, d, v);
    v->name = ferry__strdup(d->name);
    v->mask = d->mask ? ferry__strdup(d->mask) : NULL;
    int units = d->units ? ferry__ckpt_nc_add_att(&v->atts, "units", NC_CHAR, (int64_t)strlen(d->units), d->units) : 0;
    if (!v->name || (d->mask && !v->mask) || units) {
        ferry__free(v->name), ferry__free(v->mask), ferry__ckpt_nc_free_atts(&v->atts);
        return ferry__error_code(ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_def_var: no memory"));
    }
    *varid = ck->nvars++;
    ferry__ckpt_defs_changed(ck); /* after the count: FERRY_CKPT_AUTO chooses by every variable's size */
    return MPI_SUCCESS;
}

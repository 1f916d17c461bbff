/*
 * Declaring variables: checks, the 4-D form (leading dimensions of length
 * 1), and every rank's block (one allgather), from which stacked offsets
 * are prefix sums in rank order.
 */
#include <string.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

static int check_var(ferry_ckpt_t ck, const ferry_ckpt_var_t *d)
{
    const char *name = d->name ? d->name : "(null)";
    int nctype = ckpt_nc_nctype(d->type);
    if (!d->name || !d->name[0] || strlen(d->name) > 200)
        return ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_def_var: a variable needs a name of 1 to 200 bytes");
    if (!nctype || (nctype == NC_INT64 && ck->format == FERRY_CKPT_CDF2))
        return ferry__error_set(MPI_ERR_TYPE, "ferry_ckpt_def_var: %s: the type is not one netCDF %s stores", name,
                                ck->format == FERRY_CKPT_CDF2 ? "CDF-2" : "CDF-5");
    if (d->ndims < 1 || d->ndims > CKPT_D || !d->dimids || !d->start || !d->count)
        return ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_def_var: %s: 1 to 4 dimensions with ids, start and count", name);
    for (int k = 0; k < d->ndims; k++) {
        int id = d->dimids[k];
        if (id < 0 || id >= ck->ndims)
            return ferry__error_set(MPI_ERR_DIMS, "ferry_ckpt_def_var: %s: dimension id %d is not defined", name, id);
        MPI_Offset len = ck->dims[id].len, s = d->start[k], c = d->count[k];
        if (s < 0 || c < 0 || s + c > len || (d->halo && d->halo[k] < 0))
            return ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_def_var: %s: dimension %d: block [%lld, +%lld) outside [0, %lld) or a negative halo",
                                    name, k, (long long)s, (long long)c, (long long)len);
    }
    for (int i = 0; i < ck->nvars; i++)
        if (strcmp(ck->vars[i].name, d->name) == 0)
            return ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_def_var: %s is already defined", name);
    return 0;
}

static void normalize(ferry_ckpt_t ck, const ferry_ckpt_var_t *d, ckpt_var_t *v)
{
    int lead = CKPT_D - d->ndims, empty = 0;
    for (int k = 0; k < d->ndims; k++) empty |= d->count[k] == 0;
    for (int k = 0; k < CKPT_D; k++) {
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
    v->nctype = ckpt_nc_nctype(d->type);
    v->esize = ckpt_nc_type_size(v->nctype);
}

/* Every rank's 4-D start and count, and the stacked offsets. */
static int share_blocks(ferry_ckpt_t ck, ckpt_var_t *v)
{
    MPI_Offset mine[2 * CKPT_D];
    memcpy(mine, v->start, sizeof v->start);
    memcpy(mine + CKPT_D, v->count, sizeof v->count);
    v->blocks = ferry__malloc(((size_t)ck->nprocs * 2 * CKPT_D + (size_t)ck->nprocs + 1) * sizeof *v->blocks);
    int cls = ferry__error_agree(ck->comm, v->blocks ? 0 : MPI_ERR_NO_MEM, "ferry_ckpt_def_var");
    if (cls) return cls;
    MPI_Allgather(mine, 2 * CKPT_D, MPI_OFFSET, v->blocks, 2 * CKPT_D, MPI_OFFSET, ck->comm);
    v->offsets = v->blocks + (size_t)ck->nprocs * 2 * CKPT_D;
    v->offsets[0] = 0;
    for (int r = 0; r < ck->nprocs; r++) v->offsets[r + 1] = v->offsets[r] + ckpt_elems(&v->blocks[r * 2 * CKPT_D + CKPT_D]);
    return 0;
}

int ferry_ckpt_def_var(ferry_ckpt_t ck, const ferry_ckpt_var_t *d, int *varid)
{
    int cls = check_var(ck, d);
    ckpt_var_t *grown = cls ? NULL : ferry__realloc(ck->vars, (size_t)(ck->nvars + 1) * sizeof *grown);
    if (!cls && !grown) cls = ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_def_var: no memory");
    if (grown) ck->vars = grown;
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt_def_var");
    if (cls) return ferry__error_code(cls);
    ckpt_var_t *v = &ck->vars[ck->nvars];
    memset(v, 0, sizeof *v);
    normalize(ck, d, v);
    v->name = ferry__strdup(d->name);
    v->mask = d->mask ? ferry__strdup(d->mask) : NULL;
    v->units = d->units ? ferry__strdup(d->units) : NULL;
    cls = share_blocks(ck, v);
    if (cls) {
        ferry__free(v->name);
        return ferry__error_code(cls);
    }
    *varid = ck->nvars++;
    return MPI_SUCCESS;
}

/*
 * netCDF attributes the user gives a set's file or its variables (issue 30):
 * long_name, units, _FillValue, title, history, Conventions or any other, as
 * netCDF's nc_put_att has them. Stored in the header's encoding (values
 * big-endian) and written before ferry's own attributes, whose ferry_ prefix
 * is reserved. Local calls; the attributes are part of the definitions the
 * ranks agree on at the next collective call.
 */
#include <string.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

/* Removes the attribute name from atts (no-op when absent). */
static void remove_att(ferry__ckpt_nc_atts_t *atts, const char *name)
{
    for (int i = 0; i < atts->count; i++) {
        if (strcmp(atts->atts[i].name, name) != 0) continue;
        ferry__free(atts->atts[i].name);
        ferry__free(atts->atts[i].values);
        memmove(&atts->atts[i], &atts->atts[i + 1], (size_t)(atts->count - i - 1) * sizeof *atts->atts);
        atts->count--;
        return;
    }
}

/* The attribute list varid names: the file's (FERRY_CKPT_GLOBAL) or a variable's; NULL otherwise. */
static ferry__ckpt_nc_atts_t *att_list(ferry_ckpt_t ck, int varid)
{
    if (varid == FERRY_CKPT_GLOBAL) return &ck->gatts;
    if (varid == FERRY_CKPT_TIME) return ck->series ? &ck->time_atts : NULL;
    return varid >= 0 && varid < ck->nvars ? &ck->vars[varid].atts : NULL;
}

static int check_att(ferry_ckpt_t ck, int varid, const char *name, int nctype, MPI_Offset n, const void *values)
{
    const char *what = "ferry_ckpt_put_att", *problem = ferry__ckpt_nc_name_problem(name);
    if (problem)
        return ferry__error_set(MPI_ERR_ARG, "%s: the attribute name '%.64s' %s (netCDF's name rules)", what,
                                name ? name : "(null)", problem);
    if (strncmp(name, "ferry_", 6) == 0)
        return ferry__error_set(MPI_ERR_ARG, "%s: %s: names beginning 'ferry_' are ferry's own", what, name);
    if (!att_list(ck, varid)) return ferry__error_set(MPI_ERR_ARG, "%s: %s: no variable %d", what, name, varid);
    if (!nctype || (nctype == NC_INT64 && ck->format == FERRY_CKPT_CDF2))
        return ferry__error_set(MPI_ERR_TYPE, "%s: %s: a type netCDF %s has no attributes of", what, name,
                                ck->format == FERRY_CKPT_CDF2 ? "CDF-2" : "CDF-5");
    if (n < 0 || n > ((MPI_Offset)1 << 30) || (n > 0 && !values))
        return ferry__error_set(MPI_ERR_ARG, "%s: %s: %lld values%s", what, name, (long long)n,
                                n > 0 ? " from NULL" : "");
    int fill = strcmp(name, "_FillValue") == 0;
    if (fill && (varid < 0 || n != 1 || nctype != ck->vars[varid].nctype))
        return ferry__error_set(MPI_ERR_TYPE, "%s: _FillValue is one value of its variable's type (netCDF)", what);
    return 0;
}

int ferry_ckpt_put_att(ferry_ckpt_t ck, int varid, const char *name, MPI_Datatype type, MPI_Offset n,
                       const void *values)
{
    if (!ck) return ferry__error_code(ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_put_att: a NULL set"));
    int nctype = type == MPI_CHAR ? NC_CHAR : ferry__ckpt_nc_nctype(type);
    int cls = check_att(ck, varid, name, nctype, n, values);
    if (cls) return ferry__error_code(cls);
    ferry__ckpt_nc_atts_t *atts = att_list(ck, varid);
    remove_att(atts, name);
    ferry__ckpt_defs_changed(ck);
    return ferry__error_code(ferry__ckpt_nc_add_att(atts, name, nctype, (int64_t)n, n ? values : ""));
}

const unsigned char *ferry__ckpt_var_fill(const ferry__ckpt_var_t *v)
{
    const ferry__ckpt_nc_att_t *fill = ferry__ckpt_nc_att(&v->atts, "_FillValue");
    return fill && fill->type == v->nctype && fill->nelems == 1 ? fill->values : NULL;
}

int ferry__ckpt_copy_atts(const ferry__ckpt_nc_atts_t *from, ferry__ckpt_nc_atts_t *to)
{
    for (int i = 0; i < from->count; i++) {
        const ferry__ckpt_nc_att_t *a = &from->atts[i];
        FERRY_TRY(ferry__ckpt_nc_add_att_be(to, a->name, a->type, a->nelems, a->values));
    }
    return 0;
}

int ferry__ckpt_var_fill_native(const ferry__ckpt_var_t *v, unsigned char out[8])
{
    const unsigned char *be = ferry__ckpt_var_fill(v);
    const uint16_t probe = 1;
    int swap = *(const unsigned char *)&probe == 1;
    for (int k = 0; be && k < v->esize; k++) out[k] = be[swap ? v->esize - 1 - k : k];
    return be != NULL;
}

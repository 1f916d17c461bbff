/*
 * Reading values out of a decoded netCDF header (ckpt.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_int.h"

const ferry__ckpt_nc_att_t *ferry__ckpt_nc_att(const ferry__ckpt_nc_atts_t *atts, const char *name)
{
    for (int i = 0; i < atts->count; i++)
        if (atts->atts[i].name && atts->atts[i].values && strcmp(atts->atts[i].name, name) == 0) return &atts->atts[i];
    return NULL;
}

static uint64_t be_bits(const unsigned char *p, int size)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++) v = v << 8 | p[i];
    return v;
}

int64_t ferry__ckpt_nc_att_int(const ferry__ckpt_nc_att_t *att, int64_t k)
{
    if (!att || k < 0 || k >= att->nelems) return 0;
    int size = ferry__ckpt_nc_type_size(att->type);
    uint64_t bits = be_bits(att->values + k * size, size);
    switch (att->type) {
    case NC_BYTE: return (int8_t)bits;
    case NC_SHORT: return (int16_t)bits;
    case NC_INT: return (int32_t)bits;
    case NC_INT64: return (int64_t)bits;
    case NC_FLOAT:
    case NC_DOUBLE: return (int64_t)ferry__ckpt_nc_att_double(att, k);
    default: return 0;
    }
}

double ferry__ckpt_nc_att_double(const ferry__ckpt_nc_att_t *att, int64_t k)
{
    if (!att || k < 0 || k >= att->nelems) return 0;
    if (att->type == NC_DOUBLE) {
        uint64_t bits = be_bits(att->values + k * 8, 8);
        double v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    if (att->type == NC_FLOAT) {
        uint32_t bits = (uint32_t)be_bits(att->values + k * 4, 4);
        float v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    return (double)ferry__ckpt_nc_att_int(att, k);
}

void ferry__ckpt_nc_att_text(const ferry__ckpt_nc_atts_t *atts, const char *name, char *out, size_t len)
{
    const ferry__ckpt_nc_att_t *att = ferry__ckpt_nc_att(atts, name);
    size_t n = att && att->type == NC_CHAR ? (size_t)att->nelems : 0;
    if (n >= len) n = len - 1;
    if (n) memcpy(out, att->values, n);
    out[n] = '\0';
}

int ferry__ckpt_nc_find_var(const ferry__ckpt_nc_t *nc, const char *name)
{
    for (int i = 0; i < nc->nvars; i++)
        if (nc->vars[i].name && strcmp(nc->vars[i].name, name) == 0) return i;
    return -1;
}

int ferry__ckpt_nc_is_record(const ferry__ckpt_nc_t *nc, const ferry__ckpt_nc_var_t *v)
{
    return v->ndims > 0 && nc->dims[v->dimids[0]].len == 0;
}

int64_t ferry__ckpt_nc_var_bytes(const ferry__ckpt_nc_t *nc, const ferry__ckpt_nc_var_t *v)
{
    int64_t n = ferry__ckpt_nc_type_size(v->type);
    for (int d = ferry__ckpt_nc_is_record(nc, v); d < v->ndims; d++) {
        int64_t len = nc->dims[v->dimids[d]].len;
        if (len && n > INT64_MAX / len) return -1;
        n *= len;
    }
    return n;
}

int64_t ferry__ckpt_nc_recsize(const ferry__ckpt_nc_t *nc)
{
    int64_t size = 0;
    for (int i = 0; i < nc->nvars; i++)
        if (ferry__ckpt_nc_is_record(nc, &nc->vars[i])) size += nc->vars[i].vsize;
    return size;
}

long long ferry__ckpt_nc_step(const ferry__ckpt_nc_t *nc, const char *path)
{
    const ferry__ckpt_nc_att_t *att = ferry__ckpt_nc_att(&nc->gatts, "ferry_step");
    if (att) return ferry__ckpt_nc_att_int(att, 0);
    size_t n = strlen(path), k = n >= 3 ? n - 3 : 0;
    if (n < 3 || strcmp(path + k, ".nc") != 0) return -1;
    while (k > 0 && path[k - 1] >= '0' && path[k - 1] <= '9') k--;
    return k > 0 && k < n - 3 && path[k - 1] == '.' ? strtoll(path + k, NULL, 10) : -1;
}

int ferry__ckpt_nc_is_series(const ferry__ckpt_nc_t *nc)
{
    return ferry__ckpt_nc_att(&nc->gatts, "ferry_series") != NULL && nc->nvars >= FERRY__CKPT_REC_DATA;
}

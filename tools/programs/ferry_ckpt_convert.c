/*
 * ferry-ckpt convert: a stacked checkpoint to the steered global image.
 * Every rank reads a slab of each variable (its slowest dimension split
 * evenly) from the stacked file through ferry_ckpt_read_file, then the set
 * writes them steered with the same step and time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt.h"

typedef struct slab {
    MPI_Offset start[FERRY_CKPT_MAX_DIMS], count[FERRY_CKPT_MAX_DIMS];
    void *buf;
} slab_t;

static MPI_Datatype mpi_type(int nctype)
{
    switch (nctype) {
    case NC_BYTE: return MPI_SIGNED_CHAR;
    case NC_SHORT: return MPI_SHORT;
    case NC_INT: return MPI_INT;
    case NC_FLOAT: return MPI_FLOAT;
    case NC_INT64: return MPI_LONG_LONG;
    default: return MPI_DOUBLE;
    }
}

/* Defines (or finds) the dimension of the stacked variable's global dims; fills dimids and shape. */
static int global_dims(ferry_ckpt_t ck, const ferry__ckpt_nc_var_t *v, char names[][64], int *ndefined, int *dimids,
                       MPI_Offset *shape)
{
    char text[1100];
    ferry__ckpt_nc_att_text(&v->atts, "ferry_global_dims", text, sizeof text);
    const ferry__ckpt_nc_att_t *sh = ferry__ckpt_nc_att(&v->atts, "ferry_global_shape");
    int nd = 0;
    for (char *save = NULL, *tok = strtok_r(text, " ", &save); tok && nd < FERRY_CKPT_MAX_DIMS; tok = strtok_r(NULL, " ", &save), nd++) {
        shape[nd] = ferry__ckpt_nc_att_int(sh, nd);
        int id = 0;
        while (id < *ndefined && strcmp(names[id], tok) != 0) id++;
        if (id == *ndefined) {
            snprintf(names[id], 64, "%s", tok);
            if (ferry_ckpt_def_dim(ck, tok, shape[nd], &dimids[nd]) != MPI_SUCCESS) return -1;
            (*ndefined)++;
        }
        dimids[nd] = id;
    }
    return sh && sh->nelems == nd ? nd : -1;
}

static int define(ferry_ckpt_t ck, const ferry__ckpt_nc_t *nc, slab_t *slabs, int *nslabs)
{
    int rank, nprocs, ndefined = 0;
    static char names[64][64];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 0; i < nc->nvars; i++) {
        const ferry__ckpt_nc_var_t *v = &nc->vars[i];
        int dimids[FERRY_CKPT_MAX_DIMS], id, esize = ferry__ckpt_nc_type_size(v->type);
        MPI_Offset shape[FERRY_CKPT_MAX_DIMS];
        if (!ferry__ckpt_nc_att(&v->atts, "ferry_checksum")) continue; /* index variables */
        slab_t *s = &slabs[(*nslabs)++];
        int nd = global_dims(ck, v, names, &ndefined, dimids, shape);
        if (nd < 1) return MPI_ERR_IO;
        size_t elems = 1;
        for (int d = 0; d < nd; d++) {
            s->start[d] = d ? 0 : shape[0] * rank / nprocs;
            s->count[d] = d ? shape[d] : shape[0] * (rank + 1) / nprocs - s->start[0];
            elems *= (size_t)s->count[d];
        }
        s->buf = malloc(elems * (size_t)esize + 1);
        ferry_ckpt_var_t d = {.name = v->name, .type = mpi_type(v->type), .ndims = nd, .dimids = dimids,
                              .start = s->start, .count = s->count};
        int rc = ferry_ckpt_def_var(ck, &d, &id);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}

int ckpt_convert(const char *in, const char *out);
int ckpt_convert(const char *in, const char *out)
{
    ferry__ckpt_nc_t nc;
    unsigned char *region;
    size_t len;
    int rank, rc = ferry__ckpt_read_header(MPI_COMM_WORLD, in, FERRY_CKPT_IO_FERRY, &nc, &region, &len), nslabs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rc) return fprintf(stderr, "ferry-ckpt convert: cannot read %s's header\n", in), 1;
    char strategy[16];
    ferry__ckpt_nc_att_text(&nc.gatts, "ferry_strategy", strategy, sizeof strategy);
    slab_t *slabs = calloc((size_t)nc.nvars + 1, sizeof *slabs);
    void **bufs = calloc((size_t)nc.nvars + 1, sizeof *bufs);
    ferry_ckpt_t ck = NULL;
    ferry_ckpt_info_t info;
    if (strcmp(strategy, "stack") != 0) rc = MPI_ERR_ARG;
    ferry_ckpt_options_t keep_format = {.format = nc.version == 2 ? FERRY_CKPT_CDF2 : FERRY_CKPT_CDF5};
    if (!rc) rc = ferry_ckpt_create(MPI_COMM_WORLD, out, &keep_format, &ck);
    if (!rc) rc = define(ck, &nc, slabs, &nslabs);
    for (int i = 0; i < nslabs; i++) bufs[i] = slabs[i].buf;
    if (!rc) rc = ferry_ckpt_read_file(ck, in, bufs, &info);
    if (!rc) rc = ferry_ckpt_write_file(ck, out, info.step, info.time, bufs);
    if (rc && rank == 0) {
        char msg[MPI_MAX_ERROR_STRING + 1] = "not a stacked checkpoint";
        int n = 0;
        if (rc != MPI_ERR_ARG) ferry_Error_string(rc, msg, &n);
        fprintf(stderr, "ferry-ckpt convert %s: %s\n", in, msg);
    } else if (rank == 0) {
        printf("%s: the global image of %s (step %lld)\n", out, in, info.step);
    }
    for (int i = 0; i < nslabs; i++) free(slabs[i].buf);
    free(slabs);
    free(bufs);
    ferry_ckpt_free(&ck);
    ferry__ckpt_nc_free(&nc);
    ferry__ckpt_region_free(region);
    return rc ? 1 : 0;
}

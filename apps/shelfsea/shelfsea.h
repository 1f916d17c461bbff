/*
 * shelfsea: a POLCOMS-like shelf-sea model, the showcase of ferry_ckpt.
 *
 * A 2-D horizontal grid (nx * ny) with a land mask and nz vertical levels,
 * decomposed by recursive bisection of the wet points (alternately in x and
 * y, each cut balancing the wet points of the two halves; each domain then
 * shrinks to the bounding box of its wet points, so domains are uneven
 * rectangles that leave out land only). Fields temp and salt (nz * ny * nx)
 * and eta (ny * nx) live in local buffers with halos of width 2, advanced
 * by an explicit scheme whose result does not depend on the decomposition
 * (every point's update reads only its neighbours, in a fixed order, and
 * land points stay 0), so a restart on any rank count continues bit for bit.
 */
#ifndef SHELFSEA_H
#define SHELFSEA_H

#include "ferry_ckpt.h"

enum { HALO = 2, NFIELDS = 4 };

typedef struct box {
    long long x0, y0, nx, ny; /* start and size; nx or ny 0: empty */
} box_t;

typedef struct model {
    int nx, ny, nz, rank, nprocs;
    box_t mine, *all;             /* this rank's domain, every rank's */
    double *temp, *salt, *eta;    /* local buffers with halos */
    int *mask;                    /* 1 wet, 0 land, with halos */
    double *scratch;              /* the next temp/salt level */
    long long step;
} model_t;

/* decomp.c */
int shelf_wet(const model_t *m, long long x, long long y);
void shelf_decompose(model_t *m);
/* model.c */
void shelf_init(model_t *m);
void shelf_step(model_t *m);
void shelf_exchange(model_t *m);
void shelf_free(model_t *m);
/* Local buffer sizes (elements) of a 3-D (levels = nz) or 2-D (levels = 1) field. */
long long shelf_local(const model_t *m, int levels);
/* ckpt.c */
typedef struct shelf_ckpt_opts {
    int strategy, independent, io, format;
    const char *base;
    MPI_Info info;
} shelf_ckpt_opts_t;
int shelf_ckpt_open(model_t *m, const shelf_ckpt_opts_t *o, ferry_ckpt_t *ck);
void shelf_ckpt_buffers(model_t *m, void *bufs[NFIELDS]);

#endif

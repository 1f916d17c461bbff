/*
 * The model's checkpoint: temp and salt (level, y, x), eta and the land mask
 * (y, x), each rank's domain with halos of width 2 excluded by ferry_ckpt.
 */
#include <stddef.h>

#include "shelfsea.h"

void shelf_ckpt_buffers(model_t *m, void *bufs[NFIELDS])
{
    bufs[0] = m->temp, bufs[1] = m->salt, bufs[2] = m->eta, bufs[3] = m->mask;
}

int shelf_ckpt_open(model_t *m, const shelf_ckpt_opts_t *o, ferry_ckpt_t *ck)
{
    ferry_ckpt_options_t opt = {.strategy = o->strategy, .independent = o->independent, .io = o->io,
                                .format = o->format, .info = o->info};
    int rc = ferry_ckpt_create(MPI_COMM_WORLD, o->base, &opt, ck), dims[3], id;
    if (rc) return rc;
    ferry_ckpt_def_dim(*ck, "level", m->nz, &dims[0]);
    ferry_ckpt_def_dim(*ck, "y", m->ny, &dims[1]);
    ferry_ckpt_def_dim(*ck, "x", m->nx, &dims[2]);
    MPI_Offset start[3] = {0, m->mine.y0, m->mine.x0}, count[3] = {m->nz, m->mine.ny, m->mine.nx};
    int halo[3] = {0, HALO, HALO};
    static const char *names[NFIELDS] = {"temp", "salt", "eta", "mask"};
    static const char *units[NFIELDS] = {"degC", "psu", "m", "1"};
    for (int f = 0; f < NFIELDS && !rc; f++) {
        int three = f < 2;
        ferry_ckpt_var_t v = {.name = names[f], .type = f == 3 ? MPI_INT : MPI_DOUBLE, .ndims = three ? 3 : 2,
                              .dimids = three ? dims : dims + 1, .start = three ? start : start + 1,
                              .count = three ? count : count + 1, .halo = three ? halo : halo + 1,
                              .mask = f == 3 ? NULL : "mask", .units = units[f]};
        rc = ferry_ckpt_def_var(*ck, &v, &id);
    }
    return rc;
}

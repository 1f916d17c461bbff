/*
 * The model: fields in local buffers with halos, halo exchange between
 * uneven domains, and an explicit step that gives the same bits on any
 * decomposition.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "shelfsea.h"

long long shelf_local(const model_t *m, int levels)
{
    return (long long)levels * (m->mine.ny + 2 * HALO) * (m->mine.nx + 2 * HALO);
}

/* Index of global point (x, y) at level k in a local buffer. */
static long long at(const model_t *m, int k, long long y, long long x)
{
    long long w = m->mine.nx + 2 * HALO, h = m->mine.ny + 2 * HALO;
    return ((long long)k * h + (y - m->mine.y0 + HALO)) * w + (x - m->mine.x0 + HALO);
}

static int inside(const model_t *m, long long x, long long y)
{
    return x >= 0 && y >= 0 && x < m->nx && y < m->ny;
}

void shelf_init(model_t *m)
{
    m->temp = calloc((size_t)shelf_local(m, m->nz), sizeof *m->temp);
    m->salt = calloc((size_t)shelf_local(m, m->nz), sizeof *m->salt);
    m->scratch = calloc((size_t)shelf_local(m, m->nz) * 2 + (size_t)shelf_local(m, 1), sizeof *m->scratch);
    m->eta = calloc((size_t)shelf_local(m, 1), sizeof *m->eta);
    m->mask = calloc((size_t)shelf_local(m, 1), sizeof *m->mask);
    box_t b = m->mine;
    for (long long y = b.y0 - HALO; b.nx && y < b.y0 + b.ny + HALO; y++)
        for (long long x = b.x0 - HALO; x < b.x0 + b.nx + HALO; x++)
            m->mask[at(m, 0, y, x)] = inside(m, x, y) && shelf_wet(m, x, y);
    for (long long y = b.y0; y < b.y0 + b.ny; y++)
        for (long long x = b.x0; x < b.x0 + b.nx; x++) {
            if (!m->mask[at(m, 0, y, x)]) continue;
            m->eta[at(m, 0, y, x)] = 0.1 * sin(x * 0.1 + y * 0.03);
            for (int k = 0; k < m->nz; k++) {
                m->temp[at(m, k, y, x)] = 10.0 + 5.0 * sin(x * 0.07) * cos(y * 0.05) - 0.2 * k;
                m->salt[at(m, k, y, x)] = 35.0 - 0.01 * x + 0.02 * k;
            }
        }
    m->step = 0;
}

/* A neighbour's value, or the point's own where the neighbour is land (no flux through coasts). */
static double nb(const model_t *m, const double *f, int k, long long y, long long x, double own)
{
    return m->mask[at(m, 0, y, x)] ? f[at(m, k, y, x)] : own;
}

/* Diffusion with a 5-point and a wide (+-2) stencil, which needs the width-2 halo. */
static double diffuse(const model_t *m, const double *f, int k, long long y, long long x)
{
    double c = f[at(m, k, y, x)];
    double near = nb(m, f, k, y, x - 1, c) + nb(m, f, k, y, x + 1, c) + nb(m, f, k, y - 1, x, c) + nb(m, f, k, y + 1, x, c);
    double far = nb(m, f, k, y, x - 2, c) + nb(m, f, k, y, x + 2, c) + nb(m, f, k, y - 2, x, c) + nb(m, f, k, y + 2, x, c);
    return c + 0.12 * (near - 4.0 * c) - 0.02 * (far - 4.0 * c);
}

static void update_point(model_t *m, double *nt, double *ns, double *ne, long long y, long long x)
{
    double e = m->eta[at(m, 0, y, x)];
    double slope = nb(m, m->eta, 0, y, x + 1, e) - nb(m, m->eta, 0, y, x - 1, e);
    for (int k = 0; k < m->nz; k++) {
        nt[at(m, k, y, x)] = diffuse(m, m->temp, k, y, x) + 0.05 * slope * (m->nz - k);
        ns[at(m, k, y, x)] = diffuse(m, m->salt, k, y, x) - 0.01 * slope;
    }
    ne[at(m, 0, y, x)] = diffuse(m, m->eta, 0, y, x) + 1e-4 * (m->temp[at(m, 0, y, x)] - 10.0);
}

void shelf_step(model_t *m)
{
    long long n3 = shelf_local(m, m->nz), n2 = shelf_local(m, 1);
    double *nt = m->scratch, *ns = nt + n3, *ne = ns + n3;
    box_t b = m->mine;
    memcpy(nt, m->temp, (size_t)n3 * sizeof *nt);
    memcpy(ns, m->salt, (size_t)n3 * sizeof *ns);
    memcpy(ne, m->eta, (size_t)n2 * sizeof *ne);
    for (long long y = b.y0; y < b.y0 + b.ny; y++)
        for (long long x = b.x0; x < b.x0 + b.nx; x++)
            if (m->mask[at(m, 0, y, x)]) update_point(m, nt, ns, ne, y, x);
    memcpy(m->temp, nt, (size_t)n3 * sizeof *nt);
    memcpy(m->salt, ns, (size_t)n3 * sizeof *ns);
    memcpy(m->eta, ne, (size_t)n2 * sizeof *ne);
    m->step++;
    shelf_exchange(m);
}

/* a intersected with b (empty box when they do not meet). */
static box_t meet(box_t a, box_t b)
{
    long long x0 = a.x0 > b.x0 ? a.x0 : b.x0, y0 = a.y0 > b.y0 ? a.y0 : b.y0;
    long long x1 = a.x0 + a.nx < b.x0 + b.nx ? a.x0 + a.nx : b.x0 + b.nx;
    long long y1 = a.y0 + a.ny < b.y0 + b.ny ? a.y0 + a.ny : b.y0 + b.ny;
    if (x1 <= x0 || y1 <= y0 || !a.nx || !b.nx) return (box_t){0, 0, 0, 0};
    return (box_t){x0, y0, x1 - x0, y1 - y0};
}

static box_t grow(box_t b)
{
    return b.nx ? (box_t){b.x0 - HALO, b.y0 - HALO, b.nx + 2 * HALO, b.ny + 2 * HALO} : b;
}

/* The part r of a local buffer of `levels` levels as a datatype. */
static MPI_Datatype region(const model_t *m, box_t r, int levels)
{
    int sizes[3] = {levels, (int)m->mine.ny + 2 * HALO, (int)m->mine.nx + 2 * HALO};
    int sub[3] = {levels, (int)r.ny, (int)r.nx};
    int start[3] = {0, (int)(r.y0 - m->mine.y0 + HALO), (int)(r.x0 - m->mine.x0 + HALO)};
    MPI_Datatype t;
    MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

static int exchange_with(model_t *m, int r, MPI_Request *reqs)
{
    double *fields[3] = {m->temp, m->salt, m->eta};
    int levels[3] = {m->nz, m->nz, 1}, n = 0;
    box_t in = meet(grow(m->mine), m->all[r]), out = meet(m->mine, grow(m->all[r]));
    for (int f = 0; f < 3; f++) {
        if (in.nx) {
            MPI_Datatype t = region(m, in, levels[f]);
            MPI_Irecv(fields[f], 1, t, r, f, MPI_COMM_WORLD, &reqs[n++]);
            MPI_Type_free(&t);
        }
        if (out.nx) {
            MPI_Datatype t = region(m, out, levels[f]);
            MPI_Isend(fields[f], 1, t, r, f, MPI_COMM_WORLD, &reqs[n++]);
            MPI_Type_free(&t);
        }
    }
    return n;
}

void shelf_exchange(model_t *m)
{
    MPI_Request *reqs = malloc((size_t)m->nprocs * 6 * sizeof *reqs);
    int n = 0;
    for (int r = 0; r < m->nprocs; r++)
        if (r != m->rank) n += exchange_with(m, r, reqs + n);
    for (int i = 0; i < n; i++) MPI_Wait(&reqs[i], MPI_STATUS_IGNORE); /* MPICH's mpi.h makes gcc misjudge Waitall */
    free(reqs);
}

void shelf_free(model_t *m)
{
    free(m->temp), free(m->salt), free(m->eta), free(m->mask), free(m->scratch), free(m->all);
}

/*
 * The land mask and the recursive bisection of wet points (POLCOMS).
 */
#include <math.h>
#include <stdlib.h>

#include "shelfsea.h"

/* A synthetic shelf: land in the east (a coast with bays), an island, a peninsula. */
int shelf_wet(const model_t *m, long long x, long long y)
{
    double fx = (double)x / m->nx, fy = (double)y / m->ny;
    double coast = 0.78 + 0.08 * sin(fy * 9.0) + 0.04 * cos(fy * 23.0);
    double island = (fx - 0.35) * (fx - 0.35) + (fy - 0.6) * (fy - 0.6) * 1.8;
    int peninsula = fy < 0.22 && fx > 0.55 && fx < 0.6 + 0.3 * fy;
    return fx < coast && island > 0.012 && !peninsula;
}

static long long wet_in(const model_t *m, box_t b)
{
    long long n = 0;
    for (long long y = b.y0; y < b.y0 + b.ny; y++)
        for (long long x = b.x0; x < b.x0 + b.nx; x++) n += shelf_wet(m, x, y);
    return n;
}

/* The bounding box of b's wet points (empty when none). */
static box_t shrink(const model_t *m, box_t b)
{
    long long x0 = b.x0 + b.nx, x1 = b.x0 - 1, y0 = b.y0 + b.ny, y1 = b.y0 - 1;
    for (long long y = b.y0; y < b.y0 + b.ny; y++)
        for (long long x = b.x0; x < b.x0 + b.nx; x++)
            if (shelf_wet(m, x, y)) {
                x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1;
                y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1;
            }
    box_t out = {x0, y0, x1 >= x0 ? x1 - x0 + 1 : 0, y1 >= y0 ? y1 - y0 + 1 : 0};
    if (!out.nx || !out.ny) out = (box_t){0, 0, 0, 0};
    return out;
}

/* Splits b for ranks [lo, hi) along x (even depth) or y, balancing wet points. */
static void bisect(const model_t *m, box_t b, int lo, int hi, int depth)
{
    if (hi - lo == 1) {
        m->all[lo] = shrink(m, b);
        return;
    }
    int mid = lo + (hi - lo) / 2, along_x = depth % 2 == 0 ? b.nx >= 2 : b.ny < 2;
    long long total = wet_in(m, b), want = total * (mid - lo) / (hi - lo), got = 0, cut = 0;
    long long len = along_x ? b.nx : b.ny;
    while (cut < len && got < want) {
        box_t line = along_x ? (box_t){b.x0 + cut, b.y0, 1, b.ny} : (box_t){b.x0, b.y0 + cut, b.nx, 1};
        got += wet_in(m, line);
        cut++;
    }
    box_t first = b, second = b;
    if (along_x) first.nx = cut, second.x0 += cut, second.nx -= cut;
    else first.ny = cut, second.y0 += cut, second.ny -= cut;
    bisect(m, first, lo, mid, depth + 1);
    bisect(m, second, mid, hi, depth + 1);
}

void shelf_decompose(model_t *m)
{
    m->all = calloc((size_t)m->nprocs, sizeof *m->all);
    bisect(m, (box_t){0, 0, m->nx, m->ny}, 0, m->nprocs, 0);
    m->mine = m->all[m->rank];
}

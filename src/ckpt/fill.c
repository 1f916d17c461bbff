/*
 * Holes: the points of an image (steered) variable that no rank's block
 * covers (land outside every domain). Without a _FillValue they stay zeros
 * (the file's size is set before any data is written); with one they must
 * hold it, so that netCDF readers (xarray) see missing values there, not 0.
 *
 * Every rank takes an even share of the variable's rows (its last dimension
 * is a row), finds in each row the gaps between the blocks that cross it
 * (the blocks of all ranks are known: defs.c), adds the fill values'
 * checksum to the variable's sum and writes them in one view and one call
 * for all variables. A variable whose blocks' sizes add up to the whole
 * array has no holes (blocks never overlap at a write) and costs nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

#define CKPT_GOLDEN 0x9E3779B97F4A7C15ull

static int has_holes(ferry_ckpt_t ck, const ferry__ckpt_var_t *v)
{
    MPI_Offset covered = 0;
    for (int r = 0; r < ck->nprocs; r++)
        covered += ferry__ckpt_elems(&v->blocks[(size_t)r * 2 * FERRY__CKPT_D + FERRY__CKPT_D]);
    return covered < ferry__ckpt_elems(v->global);
}

static int by_start(const void *a, const void *b)
{
    MPI_Offset x = *(const MPI_Offset *)a, y = *(const MPI_Offset *)b;
    return (x > y) - (x < y);
}

static int add_segment(ferry__ckpt_gaps_t *g, MPI_Offset at, MPI_Offset len)
{
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        MPI_Offset *grown = ferry__realloc(g->seg, (size_t)cap * 2 * sizeof *grown);
        if (!grown) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for the holes of a variable");
        g->seg = grown;
        g->cap = cap;
    }
    g->seg[2 * g->n] = at;
    g->seg[2 * g->n + 1] = len;
    g->n++;
    if (len > g->longest) g->longest = len;
    return 0;
}

/* The gaps of row q (the element index of its first point: q * L) between the blocks that cross it. */
static int row_gaps(ferry_ckpt_t ck, const ferry__ckpt_var_t *v, MPI_Offset q, MPI_Offset *spans, ferry__ckpt_gaps_t *g)
{
    MPI_Offset idx[3] = {q / (v->global[1] * v->global[2]), q / v->global[2] % v->global[1], q % v->global[2]};
    MPI_Offset len = v->global[3], at = 0;
    int n = 0;
    for (int r = 0; r < ck->nprocs; r++) {
        const MPI_Offset *s = &v->blocks[(size_t)r * 2 * FERRY__CKPT_D], *c = s + FERRY__CKPT_D;
        int crosses = c[3] > 0;
        for (int d = 0; d < 3 && crosses; d++) crosses = idx[d] >= s[d] && idx[d] < s[d] + c[d];
        if (crosses) spans[2 * n] = s[3], spans[2 * n + 1] = s[3] + c[3], n++;
    }
    qsort(spans, (size_t)n, 2 * sizeof *spans, by_start);
    for (int k = 0; k <= n; k++) {
        MPI_Offset next = k < n ? spans[2 * k] : len;
        if (next > at) FERRY_TRY(add_segment(g, q * len + at, next - at));
        if (k < n && spans[2 * k + 1] > at) at = spans[2 * k + 1];
    }
    return 0;
}

/* The checksum of len fill values (bits, big-endian as stored) at element indices at, at+1, ...:
 * bits times the sum of (2i + 1) K over them, which is len (2 at + len) K. */
static uint64_t fill_sum(uint64_t bits, MPI_Offset at, MPI_Offset len)
{
    return bits * ((uint64_t)len * (2 * (uint64_t)at + (uint64_t)len)) * CKPT_GOLDEN;
}

static uint64_t be_bits(const unsigned char *p, int esize)
{
    uint64_t bits = 0;
    for (int i = 0; i < esize; i++) bits = bits << 8 | p[i];
    return bits;
}

int ferry__ckpt_holes_find(ferry_ckpt_t ck, ferry__ckpt_holes_t *h, uint64_t *sums)
{
    memset(h, 0, sizeof *h);
    if (ck->strategy != FERRY_CKPT_STEER) return 0;
    h->vars = ferry__calloc((size_t)ck->nvars + 1, sizeof *h->vars);
    MPI_Offset *spans = ferry__malloc((size_t)ck->nprocs * 2 * sizeof *spans);
    int cls = h->vars && spans ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory to find holes");
    for (int i = 0; i < ck->nvars && !cls; i++) {
        const ferry__ckpt_var_t *v = &ck->vars[i];
        const unsigned char *fill = ferry__ckpt_var_fill(v);
        if (!fill || !has_holes(ck, v)) continue;
        h->any = 1;
        MPI_Offset rows = v->global[0] * v->global[1] * v->global[2];
        for (MPI_Offset q = rows * ck->rank / ck->nprocs; q < rows * (ck->rank + 1) / ck->nprocs && !cls; q++)
            cls = row_gaps(ck, v, q, spans, &h->vars[i]);
        uint64_t bits = be_bits(fill, v->esize);
        for (int k = 0; k < h->vars[i].n; k++)
            sums[i] += fill_sum(bits, h->vars[i].seg[2 * k], h->vars[i].seg[2 * k + 1]);
    }
    ferry__free(spans);
    return cls;
}

/* The piece writing v's gaps g from a buffer of fill values (every gap reads it from its start). */
static int gaps_piece(const ferry__ckpt_var_t *v, const ferry__ckpt_gaps_t *g, MPI_Offset begin, void *fills,
                      ferry__ckpt_piece_t *p)
{
    int *lens = ferry__malloc((size_t)g->n * sizeof *lens + 1);
    MPI_Aint *disps = ferry__calloc((size_t)g->n + 1, sizeof *disps);
    if (!lens || !disps) {
        ferry__free(lens), ferry__free(disps);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for %d holes of %s", g->n, v->name);
    }
    MPI_Datatype elem;
    ferry__ckpt_elem_bytes(v, &elem);
    for (int k = 0; k < g->n; k++) lens[k] = (int)g->seg[2 * k + 1];
    MPI_Type_create_hindexed(g->n, lens, disps, v->type, &p->mtype); /* every gap from the buffer's start */
    for (int k = 0; k < g->n; k++) disps[k] = (MPI_Aint)(g->seg[2 * k] * v->esize);
    MPI_Type_create_hindexed(g->n, lens, disps, elem, &p->ftype);
    MPI_Type_commit(&p->mtype);
    MPI_Type_commit(&p->ftype);
    MPI_Type_free(&elem);
    ferry__free(lens), ferry__free(disps);
    p->disp = (MPI_Aint)begin;
    p->addr = fills;
    return 0;
}

/* Fill values for the longest gap of v: native, or big-endian when the backend does not convert. */
static void *fill_buffer(const ferry__ckpt_var_t *v, const ferry__ckpt_gaps_t *g, int big_endian)
{
    unsigned char one[8];
    if (big_endian) memcpy(one, ferry__ckpt_var_fill(v), (size_t)v->esize);
    else ferry__ckpt_var_fill_native(v, one);
    unsigned char *buf = ferry__malloc((size_t)g->longest * (size_t)v->esize + 1);
    for (MPI_Offset i = 0; buf && i < g->longest; i++) memcpy(buf + i * v->esize, one, (size_t)v->esize);
    return buf;
}

int ferry__ckpt_holes_write(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const MPI_Offset *begin,
                            const ferry__ckpt_holes_t *h)
{
    ferry__ckpt_plan_t plan = {0};
    void **fills = ferry__calloc((size_t)ck->nvars + 1, sizeof *fills);
    int cls = fills ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory to write holes");
    for (int i = 0; i < ck->nvars && !cls; i++) {
        if (!h->vars[i].n) continue;
        ferry__ckpt_piece_t p;
        fills[i] = fill_buffer(&ck->vars[i], &h->vars[i], f->swaps);
        cls = fills[i] ? gaps_piece(&ck->vars[i], &h->vars[i], begin[i], fills[i], &p)
                       : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for fill values");
        if (!cls) cls = ferry__ckpt_plan_add(ck, &plan, &p);
    }
    int planned = plan.count;
    if (cls) plan.count = 0; /* every rank still takes part in the collective transfer */
    int run = ferry__ckpt_plan_run(f, &plan, FERRY__CKPT_WRITE | (ck->independent ? 0 : FERRY__CKPT_COLLECTIVE));
    plan.count = planned;
    ferry__ckpt_plan_free(ck, &plan);
    for (int i = 0; fills && i < ck->nvars; i++) ferry__free(fills[i]);
    ferry__free(fills);
    return cls ? cls : run;
}

void ferry__ckpt_holes_free(ferry_ckpt_t ck, ferry__ckpt_holes_t *h)
{
    for (int i = 0; h->vars && i < ck->nvars; i++) ferry__free(h->vars[i].seg);
    ferry__free(h->vars);
    memset(h, 0, sizeof *h);
}

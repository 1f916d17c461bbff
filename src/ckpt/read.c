/*
 * Reading a checkpoint into this rank's blocks, whatever decomposition and
 * rank count wrote it: image files (steer, gather) through the reader's
 * own subarray view; stacked files through the intersections of the
 * reader's block with every writer block, each a subarray of that writer's
 * contiguous stacked block. One view and one call for all variables.
 */
#include <stdio.h>
#include <string.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

/* Writer blocks of a stacked variable, from its index variables. */
typedef struct writers {
    int n;
    MPI_Offset *start, *count, *offset; /* [n][FERRY__CKPT_D], [n][FERRY__CKPT_D], [n] */
} writers_t;

static int64_t be_int(const unsigned char *p, int size)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++) v = v << 8 | p[i];
    return size == 4 ? (int64_t)(int32_t)v : (int64_t)v;
}

/* Index variable <name><suffix> as n * per integers; NULL when absent or outside the region. */
static const unsigned char *index_values(const ferry__ckpt_nc_t *nc, const unsigned char *region, size_t region_len,
                                         const char *name, const char *suffix, int64_t want)
{
    char full[300];
    snprintf(full, sizeof full, "%s%s", name, suffix);
    int i = ferry__ckpt_nc_find_var(nc, full);
    if (i < 0) return NULL;
    const ferry__ckpt_nc_var_t *v = &nc->vars[i];
    int64_t bytes = ferry__ckpt_nc_var_bytes(nc, v);
    if ((v->type != NC_INT && v->type != NC_INT64) || bytes != want * ferry__ckpt_nc_type_size(v->type) ||
        v->begin + bytes > (int64_t)region_len)
        return NULL;
    return region + v->begin;
}

static int load_writers(const ferry__ckpt_nc_t *nc, const unsigned char *region, size_t region_len,
                        const ferry__ckpt_var_t *v, writers_t *w)
{
    int nd = v->ndims, size = nc->version == 5 ? 8 : 4;
    w->n = (int)ferry__ckpt_nc_att_int(ferry__ckpt_nc_att(&nc->gatts, "ferry_nranks"), 0);
    const unsigned char *s = index_values(nc, region, region_len, v->name, "_start", (int64_t)w->n * nd);
    const unsigned char *c = index_values(nc, region, region_len, v->name, "_count", (int64_t)w->n * nd);
    const unsigned char *o = index_values(nc, region, region_len, v->name, "_offset", w->n);
    if (w->n <= 0 || !s || !c || !o)
        return ferry__error_set(MPI_ERR_IO, "ferry_ckpt: stacked variable %s has no valid index variables", v->name);
    w->start = ferry__malloc((size_t)w->n * (2 * FERRY__CKPT_D + 1) * sizeof *w->start);
    if (!w->start) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for %d writer blocks", w->n);
    w->count = w->start + (size_t)w->n * FERRY__CKPT_D;
    w->offset = w->count + (size_t)w->n * FERRY__CKPT_D;
    for (int r = 0; r < w->n; r++) {
        for (int d = 0; d < FERRY__CKPT_D; d++) {
            int k = d - (FERRY__CKPT_D - nd);
            w->start[r * FERRY__CKPT_D + d] = k < 0 ? 0 : be_int(s + ((size_t)r * nd + k) * size, size);
            w->count[r * FERRY__CKPT_D + d] = k < 0 ? 1 : be_int(c + ((size_t)r * nd + k) * size, size);
        }
        w->offset[r] = be_int(o + (size_t)r * size, size);
    }
    return 0;
}

/* The part of v's block inside writer r's block: its start relative to each, and count. */
static int intersect(const ferry__ckpt_var_t *v, const writers_t *w, int r, MPI_Offset in_mine[FERRY__CKPT_D],
                     MPI_Offset in_theirs[FERRY__CKPT_D], MPI_Offset count[FERRY__CKPT_D])
{
    for (int d = 0; d < FERRY__CKPT_D; d++) {
        MPI_Offset lo = v->start[d] > w->start[r * FERRY__CKPT_D + d] ? v->start[d] : w->start[r * FERRY__CKPT_D + d];
        MPI_Offset hi_mine = v->start[d] + v->count[d],
                   hi_theirs = w->start[r * FERRY__CKPT_D + d] + w->count[r * FERRY__CKPT_D + d];
        MPI_Offset hi = hi_mine < hi_theirs ? hi_mine : hi_theirs;
        if (hi <= lo) return 0;
        in_mine[d] = lo - v->start[d];
        in_theirs[d] = lo - w->start[r * FERRY__CKPT_D + d];
        count[d] = hi - lo;
    }
    return 1;
}

static int stack_piece_from(ferry_ckpt_t ck, const ferry__ckpt_var_t *v, void *buf, const writers_t *w, int r,
                            MPI_Offset begin, ferry__ckpt_plan_t *plan)
{
    MPI_Offset mine[FERRY__CKPT_D], theirs[FERRY__CKPT_D], count[FERRY__CKPT_D];
    if (!intersect(v, w, r, mine, theirs, count)) return 0;
    ferry__ckpt_piece_t p = {.disp = (MPI_Aint)(begin + w->offset[r] * v->esize), .addr = buf};
    MPI_Datatype elem;
    ferry__ckpt_elem_bytes(v, &elem);
    int cls = ferry__ckpt_subarray(&w->count[r * FERRY__CKPT_D], count, theirs, elem, &p.ftype);
    MPI_Type_free(&elem);
    if (cls) return cls;
    cls = ferry__ckpt_memtype(v, mine, count, &p.mtype);
    if (cls) {
        MPI_Type_free(&p.ftype);
        return cls;
    }
    return ferry__ckpt_plan_add(ck, plan, &p);
}

/* Whether the file's variable matches the declared one (type and global shape). A mismatch is the
 * declarations' fault, not the file's: MPI_ERR_ARG (no such variable), MPI_ERR_TYPE or MPI_ERR_DIMS. */
static int match_var(const ferry__ckpt_nc_t *nc, const ferry__ckpt_var_t *v, int stacked, const char *path,
                     const ferry__ckpt_nc_var_t **out)
{
    int i = ferry__ckpt_nc_find_var(nc, v->name), ok = i >= 0;
    const ferry__ckpt_nc_var_t *nv = ok ? &nc->vars[i] : NULL;
    if (!ok)
        return ferry__error_set(MPI_ERR_ARG, "ferry_ckpt: %s holds no variable %s, which the set declares", path,
                                v->name);
    if (nv->type != v->nctype)
        return ferry__error_set(MPI_ERR_TYPE, "ferry_ckpt: variable %s is %s in %s, declared %s", v->name,
                                ferry__ckpt_nc_type_name(nv->type), path, ferry__ckpt_nc_type_name(v->nctype));
    const ferry__ckpt_nc_att_t *shape = ferry__ckpt_nc_att(&nv->atts, "ferry_global_shape");
    int rec = ferry__ckpt_nc_is_record(nc, nv); /* a series: time first */
    ok = stacked ? shape && shape->nelems == v->ndims : nv->ndims - rec == v->ndims;
    for (int d = 0; ok && d < v->ndims; d++) {
        int64_t len = stacked ? ferry__ckpt_nc_att_int(shape, d) : nc->dims[nv->dimids[d + rec]].len;
        ok = len == v->global[FERRY__CKPT_D - v->ndims + d];
    }
    if (!ok)
        return ferry__error_set(MPI_ERR_DIMS, "ferry_ckpt: variable %s has another global shape in %s than declared",
                                v->name, path);
    *out = nv;
    return 0;
}

static int is_stacked(const ferry__ckpt_nc_t *nc)
{
    char strategy[16];
    ferry__ckpt_nc_att_text(&nc->gatts, "ferry_strategy", strategy, sizeof strategy);
    return strcmp(strategy, "stack") == 0;
}

int ferry__ckpt_match_decls(ferry_ckpt_t ck, const ferry__ckpt_nc_t *nc, const char *path)
{
    const ferry__ckpt_nc_var_t *nv;
    for (int i = 0; i < ck->nvars; i++) FERRY_TRY(match_var(nc, &ck->vars[i], is_stacked(nc), path, &nv));
    return 0;
}

typedef struct read_ctx {
    const ferry__ckpt_nc_t *nc;
    const unsigned char *region;
    size_t region_len;
    int stacked;
    const char *path;
} read_ctx_t;

static int plan_var(ferry_ckpt_t ck, const read_ctx_t *rc, const ferry__ckpt_var_t *v, void *buf,
                    ferry__ckpt_plan_t *plan)
{
    const ferry__ckpt_nc_var_t *nv = NULL;
    FERRY_TRY(match_var(rc->nc, v, rc->stacked, rc->path, &nv));
    if (!ferry__ckpt_elems(v->count)) return 0;
    if (!buf) return ferry__error_set(MPI_ERR_BUFFER, "ferry_ckpt: no buffer for variable %s", v->name);
    if (!rc->stacked) {
        ferry__ckpt_piece_t p;
        FERRY_TRY(ferry__ckpt_image_piece(v, buf, nv->begin, &p));
        return ferry__ckpt_plan_add(ck, plan, &p);
    }
    writers_t w = {0};
    int cls = load_writers(rc->nc, rc->region, rc->region_len, v, &w);
    for (int r = 0; r < w.n && !cls; r++) cls = stack_piece_from(ck, v, buf, &w, r, nv->begin, plan);
    ferry__free(w.start);
    return cls;
}

/* Before the read (stacked: points no writer owned stay 0, or the _FillValue) or after it (to native order). */
static void pass_blocks(ferry_ckpt_t ck, void *const *bufs, ferry__ckpt_pass_t pass)
{
    for (int i = 0; i < ck->nvars; i++) {
        ferry__ckpt_block_t b = ferry__ckpt_block_of(ck, &ck->vars[i], bufs[i], FERRY_CKPT_STEER);
        unsigned char fill[8];
        if (b.base && pass == FERRY__CKPT_ZERO && ferry__ckpt_var_fill_native(&ck->vars[i], fill))
            ferry__ckpt_walk_fill(&b, fill);
        else if (b.base) ferry__ckpt_walk(&b, pass);
    }
}

int ferry__ckpt_read_data(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc,
                          const unsigned char *region, size_t region_len, void *const *bufs)
{
    read_ctx_t rc = {nc, region, region_len, is_stacked(nc), f->path};
    ferry__ckpt_plan_t plan = {0};
    int cls = 0;
    for (int i = 0; i < ck->nvars && !cls; i++) cls = plan_var(ck, &rc, &ck->vars[i], bufs[i], &plan);
    int planned = plan.count;
    if (cls) plan.count = 0;
    if (!cls && rc.stacked) pass_blocks(ck, bufs, FERRY__CKPT_ZERO);
    int run = ferry__ckpt_plan_run(f, &plan, ck->independent ? 0 : FERRY__CKPT_COLLECTIVE);
    plan.count = planned;
    ferry__ckpt_plan_free(ck, &plan);
    if (!cls && !run && f->swaps) pass_blocks(ck, bufs, FERRY__CKPT_SWAP);
    return cls ? cls : run;
}

/* Rank 0 reads image files whole and scatters them when the set's strategy is gather. */
static int read_scattered(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc, void *const *bufs)
{
    for (int i = 0; i < ck->nvars; i++) {
        int k = ferry__ckpt_nc_find_var(nc, ck->vars[i].name);
        if (k < 0)
            return ferry__error_set(MPI_ERR_ARG, "ferry_ckpt: the checkpoint has no variable %s", ck->vars[i].name);
        FERRY_TRY(ferry__ckpt_scatter_read(ck, f, &ck->vars[i], bufs[i], nc->vars[k].begin));
    }
    return 0;
}

int ferry__ckpt_read_image(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc, void *const *bufs)
{
    int cls = ck->strategy == FERRY_CKPT_GATHER ? read_scattered(ck, f, nc, bufs)
                                                : ferry__ckpt_read_data(ck, f, nc, NULL, 0, bufs);
    return ferry__error_agree(ck->comm, cls, "ferry_ckpt read");
}

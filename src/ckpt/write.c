/*
 * Writing and reading the parallel strategies' data: steer (each block at
 * its place in the global image, a subarray filetype) and stack (each block
 * contiguous at its rank's offset), every variable in one view and one
 * call. Reading an image file is the steer piece again for the reader's
 * block; reading a stacked file takes, for every writer block that
 * intersects the reader's, the intersection as a subarray of the writer's
 * stacked block.
 */
#include <string.h>

#include "base/alloc.h"

#include "ckpt/ckpt_int.h"

/* The piece of v's block in an image file whose data begin at begin. */
int ferry__ckpt_image_piece(const ferry__ckpt_var_t *v, void *buf, MPI_Offset begin, ferry__ckpt_piece_t *p)
{
    static const MPI_Offset zero[FERRY__CKPT_D];
    MPI_Datatype elem;
    ferry__ckpt_elem_bytes(v, &elem);
    int cls = ferry__ckpt_subarray(v->global, v->count, v->start, elem, &p->ftype);
    MPI_Type_free(&elem);
    if (cls) return cls;
    p->disp = (MPI_Aint)begin;
    p->addr = buf;
    cls = ferry__ckpt_memtype(v, zero, v->count, &p->mtype);
    if (cls) MPI_Type_free(&p->ftype);
    return cls;
}

/* The piece of v's block in a stacked file (contiguous at the rank's offset). */
static int stack_piece(ferry_ckpt_t ck, const ferry__ckpt_var_t *v, void *buf, MPI_Offset begin, ferry__ckpt_piece_t *p)
{
    static const MPI_Offset zero[FERRY__CKPT_D];
    MPI_Datatype elem;
    ferry__ckpt_elem_bytes(v, &elem);
    int cls = ferry__ckpt_contiguous(ferry__ckpt_elems(v->count), elem, &p->ftype);
    MPI_Type_free(&elem);
    if (cls) return cls;
    p->disp = (MPI_Aint)(begin + v->offsets[ck->rank] * v->esize);
    p->addr = buf;
    cls = ferry__ckpt_memtype(v, zero, v->count, &p->mtype);
    if (cls) MPI_Type_free(&p->ftype);
    return cls;
}

/* MPI_ERR_BUFFER when a block that is not empty has no buffer (all checked before any is touched). */
static int check_buffers(ferry_ckpt_t ck, void *const *bufs)
{
    for (int i = 0; i < ck->nvars; i++)
        if (ferry__ckpt_elems(ck->vars[i].count) && !bufs[i])
            return ferry__error_set(MPI_ERR_BUFFER, "ferry_ckpt: no buffer for variable %s, whose block is not empty",
                                    ck->vars[i].name);
    return 0;
}

/* The bytes of rank r's blocks of every variable. */
static MPI_Offset rank_bytes(ferry_ckpt_t ck, int r)
{
    MPI_Offset bytes = 0;
    for (int i = 0; i < ck->nvars; i++)
        bytes +=
            ferry__ckpt_elems(&ck->vars[i].blocks[(size_t)r * 2 * FERRY__CKPT_D + FERRY__CKPT_D]) * ck->vars[i].esize;
    return bytes;
}

int ferry__ckpt_stage_fits(ferry_ckpt_t ck)
{
    if (ck->strategy == FERRY_CKPT_GATHER) return 0;
    for (int r = 0; r < ck->nprocs; r++)
        if (rank_bytes(ck, r) > ck->stage_limit) return 0;
    return 1;
}

int ferry__ckpt_stage_blocks(ferry_ckpt_t ck, void *const *bufs, uint64_t *sums)
{
    FERRY_TRY(check_buffers(ck, bufs));
    size_t need = (size_t)rank_bytes(ck, ck->rank);
    unsigned char *at = ferry__ckpt_kept_buffer(ck, need);
    if (!at) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory to stage %zu bytes of blocks", need);
    for (int i = 0; i < ck->nvars; i++) {
        const ferry__ckpt_var_t *v = &ck->vars[i];
        ferry__ckpt_block_t b = ferry__ckpt_block_of(ck, v, bufs[i], ck->strategy);
        sums[i] = ferry__ckpt_walk_pack(&b, at);
        at += ferry__ckpt_elems(v->count) * v->esize;
    }
    return 0;
}

int ferry__ckpt_checksums(ferry_ckpt_t ck, void *const *bufs, uint64_t *sums, int swap)
{
    FERRY_TRY(check_buffers(ck, bufs));
    for (int i = 0; i < ck->nvars; i++) {
        ferry__ckpt_block_t b = ferry__ckpt_block_of(ck, &ck->vars[i], bufs[i], ck->strategy);
        sums[i] = ferry__ckpt_walk(&b, swap ? FERRY__CKPT_SUM_SWAP : FERRY__CKPT_SUM);
    }
    return 0;
}

/* The memory side of a staged piece: v's block, packed, at *at (advanced past it). */
static int staged_memory(const ferry__ckpt_var_t *v, unsigned char **at, ferry__ckpt_piece_t *p)
{
    MPI_Datatype elem;
    ferry__ckpt_elem_bytes(v, &elem);
    MPI_Type_free(&p->mtype);
    int cls = ferry__ckpt_contiguous(ferry__ckpt_elems(v->count), elem, &p->mtype);
    MPI_Type_free(&elem);
    p->addr = *at;
    *at += ferry__ckpt_elems(v->count) * v->esize;
    if (cls) MPI_Type_free(&p->ftype);
    return cls;
}

void ferry__ckpt_kept_free(ferry__ckpt_kept_t *k)
{
    if (!k) return;
    if (k->ftype != MPI_DATATYPE_NULL) MPI_Type_free(&k->ftype);
    if (k->mtype != MPI_DATATYPE_NULL) MPI_Type_free(&k->mtype);
    ferry__free(k->begin);
    ferry__free(k->addr);
    ferry__free(k);
}

/* Where variable i's block comes from in this write: the staging buffer or the user's buffer. */
static void *origin(ferry_ckpt_t ck, const ferry__ckpt_file_t *f, void *const *bufs, int i)
{
    return f->staged ? (void *)ck->stage : bufs[i];
}

/* Whether the kept types describe this write (same offsets and memory; definitions unchanged). */
static int kept_matches(ferry_ckpt_t ck, const ferry__ckpt_file_t *f, const ferry__ckpt_layout_t *layout,
                        void *const *bufs)
{
    const ferry__ckpt_kept_t *k = ck->kept;
    if (!k || !k->valid || k->staged != f->staged) return 0;
    for (int i = 0; i < ck->nvars; i++)
        if (k->begin[i] != layout->begin[i] || k->addr[i] != origin(ck, f, bufs, i)) return 0;
    return 1;
}

/* The plan of this write: every variable's piece, one view and one transfer. */
static int plan_pieces(ferry_ckpt_t ck, const ferry__ckpt_file_t *f, const ferry__ckpt_layout_t *layout,
                       void *const *bufs, ferry__ckpt_plan_t *plan)
{
    unsigned char *staged = ck->stage;
    for (int i = 0; i < ck->nvars; i++) {
        const ferry__ckpt_var_t *v = &ck->vars[i];
        ferry__ckpt_piece_t p;
        if (!ferry__ckpt_elems(v->count)) continue;
        int cls = ck->strategy == FERRY_CKPT_STACK ? stack_piece(ck, v, bufs[i], layout->begin[i], &p)
                                                   : ferry__ckpt_image_piece(v, bufs[i], layout->begin[i], &p);
        if (!cls && f->staged) cls = staged_memory(v, &staged, &p);
        if (!cls) cls = ferry__ckpt_plan_add(ck, plan, &p);
        if (cls) return cls;
    }
    return 0;
}

/* Builds this write's combined types into ck->kept (replacing what it held), with their key. */
static int keep_types(ferry_ckpt_t ck, const ferry__ckpt_file_t *f, const ferry__ckpt_layout_t *layout,
                      void *const *bufs)
{
    ferry__ckpt_kept_free(ck->kept);
    ferry__ckpt_kept_t *k = ck->kept = ferry__calloc(1, sizeof *k);
    if (k) {
        k->ftype = k->mtype = MPI_DATATYPE_NULL;
        k->begin = ferry__malloc((size_t)ck->nvars * sizeof *k->begin + 1);
        k->addr = ferry__malloc((size_t)ck->nvars * sizeof *k->addr + 1);
    }
    if (!k || !k->begin || !k->addr)
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for a transfer plan");
    ferry__ckpt_plan_t plan = {0};
    int cls = plan_pieces(ck, f, layout, bufs, &plan);
    if (!cls && plan.count) cls = ferry__ckpt_plan_types(&plan, &k->ftype, &k->mtype);
    ferry__ckpt_plan_free(ck, &plan);
    for (int i = 0; i < ck->nvars; i++) {
        k->begin[i] = layout->begin[i];
        k->addr[i] = origin(ck, f, bufs, i);
    }
    k->staged = f->staged;
    k->valid = !cls;
    return cls;
}

int ferry__ckpt_write_data(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_layout_t *layout,
                           void *const *bufs)
{
    int cls = kept_matches(ck, f, layout, bufs) ? 0 : keep_types(ck, f, layout, bufs);
    ferry__ckpt_kept_t *k = ck->kept;
    /* Every rank calls set_view and the transfer, even one that failed to plan. */
    int ok = !cls && k;
    int run = ferry__ckpt_plan_move(f, ok ? k->ftype : MPI_DATATYPE_NULL, ok ? k->mtype : MPI_DATATYPE_NULL,
                                    FERRY__CKPT_WRITE | (ck->independent ? 0 : FERRY__CKPT_COLLECTIVE));
    return cls ? cls : run;
}

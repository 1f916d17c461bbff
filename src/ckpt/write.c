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

#include "ckpt/ckpt_int.h"

/* The piece of v's block in an image file whose data begin at begin. */
int ckpt_image_piece(const ckpt_var_t *v, void *buf, MPI_Offset begin, ckpt_piece_t *p)
{
    static const MPI_Offset zero[CKPT_D];
    MPI_Datatype elem;
    ckpt_elem_bytes(v, &elem);
    int cls = ckpt_subarray(v->global, v->count, v->start, elem, &p->ftype);
    MPI_Type_free(&elem);
    if (cls) return cls;
    p->disp = (MPI_Aint)begin;
    p->addr = buf;
    cls = ckpt_memtype(v, zero, v->count, &p->mtype);
    if (cls) MPI_Type_free(&p->ftype);
    return cls;
}

/* The piece of v's block in a stacked file (contiguous at the rank's offset). */
static int stack_piece(ferry_ckpt_t ck, const ckpt_var_t *v, void *buf, MPI_Offset begin, ckpt_piece_t *p)
{
    static const MPI_Offset zero[CKPT_D];
    MPI_Datatype elem;
    ckpt_elem_bytes(v, &elem);
    int cls = ckpt_contiguous(ckpt_elems(v->count), elem, &p->ftype);
    MPI_Type_free(&elem);
    if (cls) return cls;
    p->disp = (MPI_Aint)(begin + v->offsets[ck->rank] * v->esize);
    p->addr = buf;
    cls = ckpt_memtype(v, zero, v->count, &p->mtype);
    if (cls) MPI_Type_free(&p->ftype);
    return cls;
}

int ckpt_checksums(ferry_ckpt_t ck, void *const *bufs, uint64_t *sums, int swap)
{
    for (int i = 0; i < ck->nvars; i++) /* all checked before any block is swapped */
        if (ckpt_elems(ck->vars[i].count) && !bufs[i])
            return ferry__error_set(MPI_ERR_BUFFER, "ferry_ckpt: no buffer for variable %s, whose block is not empty",
                                    ck->vars[i].name);
    for (int i = 0; i < ck->nvars; i++) {
        ckpt_block_t b = ckpt_block_of(ck, &ck->vars[i], bufs[i], ck->strategy);
        sums[i] = ckpt_walk(&b, swap ? CKPT_SUM_SWAP : CKPT_SUM);
    }
    return 0;
}

int ckpt_write_data(ferry_ckpt_t ck, ckpt_file_t *f, const ckpt_layout_t *layout, void *const *bufs)
{
    ckpt_plan_t plan = {0};
    int cls = 0;
    for (int i = 0; i < ck->nvars && !cls; i++) {
        const ckpt_var_t *v = &ck->vars[i];
        ckpt_piece_t p;
        if (!ckpt_elems(v->count)) continue;
        cls = ck->strategy == FERRY_CKPT_STACK ? stack_piece(ck, v, bufs[i], layout->begin[i], &p)
                                               : ckpt_image_piece(v, bufs[i], layout->begin[i], &p);
        if (!cls) cls = ckpt_plan_add(ck, &plan, &p);
    }
    /* Every rank calls set_view and the transfer, even one that failed to plan. */
    int planned = plan.count;
    if (cls) plan.count = 0;
    int run = ckpt_plan_run(f, &plan, CKPT_WRITE | (ck->independent ? 0 : CKPT_COLLECTIVE));
    plan.count = planned;
    ckpt_plan_free(ck, &plan);
    return cls ? cls : run;
}

/*
 * A transfer plan: pieces of file (a filetype at a byte displacement) and
 * memory (a datatype at an address), combined into one struct filetype and
 * one struct memory type so all variables move in one view and one call.
 * Pieces are sorted by file displacement: a filetype must be monotone.
 */
#include <stdlib.h>

#include "base/alloc.h"

#include "ckpt/ckpt_int.h"

int ferry__ckpt_plan_add(ferry_ckpt_t ck, ferry__ckpt_plan_t *plan, const ferry__ckpt_piece_t *piece)
{
    if (plan->count == plan->cap) {
        int cap = plan->cap ? 2 * plan->cap : 8;
        ferry__ckpt_piece_t *grown = ferry__ckpt_alloc(ck, (size_t)cap * sizeof *grown);
        if (!grown) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for a transfer plan");
        for (int i = 0; i < plan->count; i++) grown[i] = plan->pieces[i];
        ferry__ckpt_release(ck, plan->pieces, (size_t)plan->cap * sizeof *grown);
        plan->pieces = grown;
        plan->cap = cap;
    }
    plan->pieces[plan->count++] = *piece;
    return 0;
}

void ferry__ckpt_plan_free(ferry_ckpt_t ck, ferry__ckpt_plan_t *plan)
{
    for (int i = 0; i < plan->count; i++) {
        MPI_Type_free(&plan->pieces[i].ftype);
        MPI_Type_free(&plan->pieces[i].mtype);
    }
    ferry__ckpt_release(ck, plan->pieces, (size_t)plan->cap * sizeof *plan->pieces);
    plan->pieces = NULL;
    plan->count = plan->cap = 0;
}

static int by_disp(const void *a, const void *b)
{
    MPI_Aint x = ((const ferry__ckpt_piece_t *)a)->disp, y = ((const ferry__ckpt_piece_t *)b)->disp;
    return (x > y) - (x < y);
}

/* The struct of every piece's file or memory type (scratch arrays from the caller). */
static void combine(const ferry__ckpt_plan_t *plan, int memory, int *lens, MPI_Aint *disps, MPI_Datatype *types,
                    MPI_Datatype *out)
{
    for (int i = 0; i < plan->count; i++) {
        const ferry__ckpt_piece_t *p = &plan->pieces[i];
        lens[i] = 1;
        types[i] = memory ? p->mtype : p->ftype;
        if (memory) MPI_Get_address(p->addr, &disps[i]);
        else disps[i] = p->disp;
    }
    MPI_Type_create_struct(plan->count, lens, disps, types, out);
    MPI_Type_commit(out);
}

int ferry__ckpt_plan_types(ferry__ckpt_plan_t *plan, MPI_Datatype *ftype, MPI_Datatype *mtype)
{
    qsort(plan->pieces, (size_t)plan->count, sizeof *plan->pieces, by_disp);
    int *lens = ferry__malloc((size_t)plan->count * sizeof *lens + 1);
    MPI_Aint *disps = ferry__malloc((size_t)plan->count * sizeof *disps + 1);
    MPI_Datatype *types = ferry__malloc((size_t)plan->count * sizeof *types + 1);
    int cls = lens && disps && types
                  ? 0
                  : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for a transfer of %d pieces", plan->count);
    if (!cls) {
        combine(plan, 0, lens, disps, types, ftype);
        combine(plan, 1, lens, disps, types, mtype);
    }
    ferry__free(lens), ferry__free(disps), ferry__free(types);
    return cls;
}

int ferry__ckpt_plan_move(ferry__ckpt_file_t *f, MPI_Datatype ftype, MPI_Datatype mtype, int how)
{
    if (ftype == MPI_DATATYPE_NULL) { /* nothing of this rank's: it still joins the collective calls */
        int cls = ferry__ckpt_io_check(f, f->io->set_view(f, MPI_BYTE, f->datarep), "set_view");
        return cls ? cls : ferry__ckpt_io_transfer(f, how, NULL, 0, MPI_BYTE);
    }
    int cls = ferry__ckpt_io_check(f, f->io->set_view(f, ftype, f->datarep), "set_view");
    return cls ? cls : ferry__ckpt_io_transfer(f, how, MPI_BOTTOM, 1, mtype);
}

int ferry__ckpt_plan_run(ferry__ckpt_file_t *f, ferry__ckpt_plan_t *plan, int how)
{
    MPI_Datatype ftype = MPI_DATATYPE_NULL, mtype = MPI_DATATYPE_NULL;
    int cls = plan->count ? ferry__ckpt_plan_types(plan, &ftype, &mtype) : 0;
    int moved = ferry__ckpt_plan_move(f, ftype, mtype, how); /* joined even after a failure: ftype is then null */
    cls = cls ? cls : moved;
    if (ftype != MPI_DATATYPE_NULL) MPI_Type_free(&ftype);
    if (mtype != MPI_DATATYPE_NULL) MPI_Type_free(&mtype);
    return cls;
}

/*
 * A datatype's envelope and contents, in either layout: the classic one
 * (ints, addresses) and the MPI-4 large-count one (every count and
 * displacement of a *_c constructor in counts[], in signature order). The
 * arg_* cursors read arguments in the order of the constructor's signature.
 */
#include "core/core.h"
#include "datarep/datarep_int.h"
#include "error/error.h"

int ferry__dr_predefined(int combiner)
{
    return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
           combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

static int envelope(MPI_Datatype type, ferry__dr_contents_t *c)
{
#if MPI_VERSION >= 4
    if (MPI_Type_get_envelope_c(type, &c->ni, &c->na, &c->nc, &c->nd, &c->combiner) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: MPI_Type_get_envelope_c failed");
#else
    int ni, na, nd;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &c->combiner) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: MPI_Type_get_envelope failed");
    c->ni = ni, c->na = na, c->nc = 0, c->nd = nd;
#endif
#if defined(MPICH)
    if (c->combiner == MPI_COMBINER_HVECTOR_INTEGER) c->combiner = MPI_COMBINER_HVECTOR, c->disp_in_ints = 1;
    if (c->combiner == MPI_COMBINER_HINDEXED_INTEGER) c->combiner = MPI_COMBINER_HINDEXED, c->disp_in_ints = 1;
    if (c->combiner == MPI_COMBINER_STRUCT_INTEGER) c->combiner = MPI_COMBINER_STRUCT, c->disp_in_ints = 1;
#endif
    c->large = c->nc > 0;
    return 0;
}

int ferry__dr_contents_get(MPI_Datatype type, ferry__dr_contents_t *c)
{
    *c = (ferry__dr_contents_t){0};
    FERRY_TRY(envelope(type, c));
    if (c->combiner == MPI_COMBINER_NAMED) return 0;
    c->ints = ferry__malloc((size_t)c->ni * sizeof *c->ints + 1);
    c->aints = ferry__malloc((size_t)c->na * sizeof *c->aints + 1);
    c->counts = ferry__malloc((size_t)c->nc * sizeof *c->counts + 1);
    c->types = ferry__malloc((size_t)c->nd * sizeof *c->types + 1);
    if (!c->ints || !c->aints || !c->counts || !c->types) {
        c->nd = 0; /* nothing fetched: release frees no child */
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory reading a datatype");
    }
#if MPI_VERSION >= 4
    int rc = MPI_Type_get_contents_c(type, c->ni, c->na, c->nc, c->nd, c->ints, c->aints, c->counts, c->types);
#else
    int rc = MPI_Type_get_contents(type, (int)c->ni, (int)c->na, (int)c->nd, c->ints, c->aints, c->types);
#endif
    if (rc != MPI_SUCCESS) {
        c->nd = 0;
        return ferry__error_set(MPI_ERR_TYPE, "ferry: MPI_Type_get_contents failed");
    }
    return 0;
}

void ferry__dr_contents_release(ferry__dr_contents_t *c)
{
    for (MPI_Count i = 0; c->types && i < c->nd; i++) {
        ferry__dr_contents_t e = {0};
        if (envelope(c->types[i], &e) == 0 && !ferry__dr_predefined(e.combiner)) MPI_Type_free(&c->types[i]);
    }
    ferry__free(c->ints);
    ferry__free(c->aints);
    ferry__free(c->counts);
    ferry__free(c->types);
    *c = (ferry__dr_contents_t){0};
}

MPI_Count ferry__dr_arg_int(ferry__dr_contents_t *c)
{
    if (c->ic < c->ni) return c->ints[c->ic++];
    c->overrun = 1;
    return 0;
}

MPI_Count ferry__dr_arg_count(ferry__dr_contents_t *c)
{
    if (!c->large) return ferry__dr_arg_int(c);
    if (c->cc < c->nc) return c->counts[c->cc++];
    c->overrun = 1;
    return 0;
}

MPI_Count ferry__dr_arg_disp(ferry__dr_contents_t *c)
{
    if (c->large || c->disp_in_ints) return ferry__dr_arg_count(c);
    if (c->ac < c->na) return c->aints[c->ac++];
    c->overrun = 1;
    return 0;
}

/*
 * A host datatype's envelope and contents, in either layout: the classic
 * one (ints, addresses) and the MPI-4 large-count one (every count and
 * displacement of a *_c constructor in counts[], in signature order). The
 * argument cursors read arguments in the order of the constructor's
 * signature. The one place that knows the host's envelope calls and
 * combiner aliases; the decoder (decode.c) and the data representations'
 * layouts (src/datarep/) both read datatypes through it.
 */
#include "base/alloc.h"
#include "datatype/datatype.h"
#include "error/error.h"

static int host_error(const char *what)
{
    return ferry__error_set(MPI_ERR_TYPE, "ferry: %s failed while decoding a datatype", what);
}

int ferry__datatype_envelope(MPI_Datatype type, ferry__datatype_contents_t *c)
{
#if MPI_VERSION >= 4
    if (MPI_Type_get_envelope_c(type, &c->ni, &c->na, &c->nc, &c->nd, &c->combiner) != MPI_SUCCESS)
        return host_error("MPI_Type_get_envelope_c");
#else
    int ni, na, nd;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &c->combiner) != MPI_SUCCESS)
        return host_error("MPI_Type_get_envelope");
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

int ferry__datatype_predefined_combiner(int combiner)
{
    return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
           combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

int ferry__datatype_contents(MPI_Datatype type, ferry__datatype_contents_t *c)
{
    c->ints = ferry__malloc((size_t)c->ni * sizeof *c->ints);
    c->aints = ferry__malloc((size_t)c->na * sizeof *c->aints);
    c->counts = ferry__malloc((size_t)c->nc * sizeof *c->counts);
    c->types = ferry__malloc((size_t)c->nd * sizeof *c->types);
    if (!c->ints || !c->aints || !c->counts || !c->types)
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory decoding a datatype");
#if MPI_VERSION >= 4
    if (MPI_Type_get_contents_c(type, c->ni, c->na, c->nc, c->nd, c->ints, c->aints, c->counts, c->types) !=
        MPI_SUCCESS)
        return host_error("MPI_Type_get_contents_c");
#else
    if (MPI_Type_get_contents(type, (int)c->ni, (int)c->na, (int)c->nd, c->ints, c->aints, c->types) != MPI_SUCCESS)
        return host_error("MPI_Type_get_contents");
#endif
    c->have_types = 1;
    return 0;
}

void ferry__datatype_contents_release(ferry__datatype_contents_t *c)
{
    for (MPI_Count i = 0; c->have_types && i < c->nd; i++) {
        ferry__datatype_contents_t e = {0};
        if (ferry__datatype_envelope(c->types[i], &e) == 0 && !ferry__datatype_predefined_combiner(e.combiner))
            MPI_Type_free(&c->types[i]);
    }
    ferry__free(c->ints);
    ferry__free(c->aints);
    ferry__free(c->counts);
    ferry__free(c->types);
    *c = (ferry__datatype_contents_t){0};
}

MPI_Count ferry__datatype_arg_int(ferry__datatype_contents_t *c)
{
    if (c->ic < c->ni) return c->ints[c->ic++];
    c->overrun = 1;
    return 0;
}

MPI_Count ferry__datatype_arg_count(ferry__datatype_contents_t *c)
{
    if (!c->large) return ferry__datatype_arg_int(c);
    if (c->cc < c->nc) return c->counts[c->cc++];
    c->overrun = 1;
    return 0;
}

MPI_Count ferry__datatype_arg_disp(ferry__datatype_contents_t *c)
{
    if (c->large || c->disp_in_ints) return ferry__datatype_arg_count(c);
    if (c->ac < c->na) return c->aints[c->ac++];
    c->overrun = 1;
    return 0;
}

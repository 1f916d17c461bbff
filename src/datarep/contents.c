/*
 * A datatype's envelope and contents, through the datatype module's reader
 * (src/datatype/contents.c), which knows both layouts of the contents.
 */
#include "datarep/datarep_int.h"
#include "error/error.h"

int ferry__dr_contents_get(MPI_Datatype type, ferry__dr_contents_t *c)
{
    *c = (ferry__dr_contents_t){0};
    FERRY_TRY(ferry__datatype_envelope(type, c));
    if (c->combiner == MPI_COMBINER_NAMED) return 0;
    return ferry__datatype_contents(type, c);
}

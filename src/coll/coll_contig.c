/*
 * Collective transfers, for now: each rank's own transfer + one agreement.
 */
#include <string.h>

#include "coll/coll.h"
#include "error/error.h"
#include "indep/indep.h"

/* The only strategy so far: each rank accesses its own contiguous range. */
static void set_strategy(ferry_File fh)
{
    strcpy(fh->stats.strategy, "local-ranges");
}

int ferry__coll_write(ferry_File fh, int local_cls, MPI_Offset skip, const void *buf, MPI_Count count,
                      MPI_Datatype type, MPI_Count *done, const char *what)
{
    *done = 0;
    set_strategy(fh);
    if (local_cls == 0) local_cls = ferry__indep_write(fh, skip, buf, count, type, done);
    return ferry__error_agree(fh->comm, local_cls, what);
}

int ferry__coll_read(ferry_File fh, int local_cls, MPI_Offset skip, void *buf, MPI_Count count,
                     MPI_Datatype type, MPI_Count *done, const char *what)
{
    *done = 0;
    set_strategy(fh);
    if (local_cls == 0) local_cls = ferry__indep_read(fh, skip, buf, count, type, done);
    return ferry__error_agree(fh->comm, local_cls, what);
}

/*
 * Data access at the shared file pointer (MPI-3.1 13.4.4): independent
 * read_shared/write_shared, collective read_ordered/write_ordered,
 * seek_shared and get_position_shared. The pointer itself lives in
 * sharedfp/; the transfers are the ordinary independent and collective
 * ones at the offsets claimed there.
 *
 * Independent calls claim their etypes with one atomic fetch-and-add and
 * then transfer; ordered calls claim every rank's place with one prefix sum
 * and then make one collective transfer. The pointer advances by what the
 * call asked for, also when a read stops short at end of file (as ROMIO
 * does) or the transfer fails: other ranks may already have moved past it.
 */
#include "datarep/datarep.h"
#include "view/view.h"
#include "mpiio/access.h"
#include "mpiio/mpiio.h"
#include "sharedfp/sharedfp.h"

/* The etypes a transfer of req's memory covers, after its argument checks;
 * through an empty view nothing moves, so nothing is claimed. */
static int shared_etypes(const ferry__request_t *req, MPI_Offset *etypes)
{
    const ferry__access_t *call = req->call;
    ferry_File fh = req->fh;
    FERRY_TRY(call->write ? ferry__check_writable(fh, call->name) : ferry__check_readable(fh, call->name));
    FERRY_TRY(ferry__check_buffer(fh, req->count, req->type, call->name));
    MPI_Count size = 0;
    FERRY_TRY(ferry__datarep_size(fh->target.view.rep, req->type, &size));
    MPI_Count moving = ferry__view_is_empty(&fh->target.view) ? 0 : req->count;
    *etypes = moving * size / fh->target.view.etype_size;
    return 0;
}

int ferry__access_shared_offset(ferry__request_t *req)
{
    const ferry__access_t *call = req->call;
    MPI_Offset etypes = 0;
    int cls = req->local_cls ? req->local_cls : shared_etypes(req, &etypes);
    if (call->collective) return ferry__sharedfp_claim_ordered(req->fh, cls, etypes, &req->offset, call->name);
    return cls ? cls : ferry__sharedfp_claim(req->fh, etypes, &req->offset, call->name);
}

int ferry_File_read_shared_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_READ_SHARED, fh, 0, buf, count, datatype), status);
}
int ferry_File_write_shared_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_WRITE_SHARED, fh, 0, buf, count, datatype), status);
}
int ferry_File_read_ordered_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_READ_ORDERED, fh, 0, buf, count, datatype), status);
}
int ferry_File_write_ordered_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                               MPI_Status *status)
{
    return ferry__access(FERRY__REQUEST(FERRY_CALL_WRITE_ORDERED, fh, 0, buf, count, datatype), status);
}
int ferry_File_read_shared(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_read_shared_c(fh, buf, count, datatype, status);
}
int ferry_File_write_shared(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_write_shared_c(fh, buf, count, datatype, status);
}
int ferry_File_read_ordered(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_read_ordered_c(fh, buf, count, datatype, status);
}
int ferry_File_write_ordered(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_write_ordered_c(fh, buf, count, datatype, status);
}

/* What a rank can check without the pointer, which only rank 0 reads: a
 * bad whence or a negative absolute position on any rank fails every rank
 * at the first agreement, naming that rank. */
static int check_seek_arguments(ferry_File fh, MPI_Offset offset, int whence)
{
    if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END)
        return ferry__error_set(MPI_ERR_ARG, "ferry: seek_shared '%s': invalid whence %d", fh->target.filename, whence);
    if (whence == MPI_SEEK_SET && offset < 0)
        return ferry__error_set(MPI_ERR_ARG, "ferry: seek_shared '%s': negative position %lld", fh->target.filename,
                                (long long)offset);
    return 0;
}

/* Collective. The first agreement (with develop mode's check that offset
 * and whence match) brings every rank here, so no access to the pointer is
 * in flight; rank 0 moves it; the second agreement spreads rank 0's outcome
 * (a negative result fails everywhere) before anyone may use it again. */
int ferry_File_seek_shared(ferry_File fh, MPI_Offset offset, int whence)
{
    int cls = ferry__check_file(fh, "seek_shared");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    cls = ferry__check_not_sequential(fh, "seek_shared");
    if (cls == 0) cls = check_seek_arguments(fh, offset, whence);
    cls = ferry__split_misuse(fh, cls, "seek_shared");
    if (fh->develop) {
        ferry__develop_arg_t same[2] = {{"offset", (uint64_t)offset}, {"whence", (uint64_t)(unsigned)whence}};
        cls = ferry__develop_check(fh->target.comm, cls, "seek_shared", same, 2);
    } else {
        cls = ferry__error_agree(fh->target.comm, cls, "seek_shared");
    }
    if (cls) return ferry__error_return(fh, cls);
    int moved = 0;
    if (fh->target.rank == 0) {
        MPI_Offset current = 0, target = 0;
        moved = ferry__sharedfp_get(fh, &current);
        if (moved == 0) moved = ferry__seek_target(fh, current, offset, whence, &target, "seek_shared");
        if (moved == 0) moved = ferry__sharedfp_store(fh, target);
    }
    return ferry__error_return(fh, ferry__error_agree(fh->target.comm, moved, "seek_shared"));
}

int ferry_File_get_position_shared(ferry_File fh, MPI_Offset *offset)
{
    int cls = ferry__check_file(fh, "get_position_shared");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!offset) cls = ferry__error_set(MPI_ERR_ARG, "ferry: get_position_shared: NULL argument");
    if (cls == 0) cls = ferry__sharedfp_get(fh, offset);
    return ferry__error_return(fh, cls);
}

/*
 * File views and the individual file pointer (MPI-3.1 13.3, 13.4.3):
 * the entry points. The view mechanics are in src/view/.
 */
#include <stdint.h>
#include <string.h>

#include "async/async.h"
#include "coll/coll.h"
#include "base/checked.h"
#include "mpiio/mpiio.h"
#include "progress/progress.h"
#include "sharedfp/sharedfp.h"

/* MPI-3.1 13.3: MPI_DISPLACEMENT_CURRENT, and only it, goes with MPI_MODE_SEQUENTIAL. */
static int check_displacement(ferry_File fh, MPI_Offset disp)
{
    int current = disp == MPI_DISPLACEMENT_CURRENT, sequential = (fh->target.amode & MPI_MODE_SEQUENTIAL) != 0;
    if (current && !sequential)
        return ferry__error_set(
            MPI_ERR_ARG, "ferry: set_view '%s': MPI_DISPLACEMENT_CURRENT needs a file opened MPI_MODE_SEQUENTIAL",
            fh->target.filename);
    if (sequential && !current)
        return ferry__error_set(MPI_ERR_ARG,
                                "ferry: set_view '%s': a file opened MPI_MODE_SEQUENTIAL takes displacement "
                                "MPI_DISPLACEMENT_CURRENT",
                                fh->target.filename);
    return 0;
}

/* Collective: MPI_DISPLACEMENT_CURRENT is the file offset of the shared
 * file pointer, read by rank 0 once every rank has arrived. */
static int current_displacement(ferry_File fh, int local_cls, MPI_Offset *disp)
{
    int cls = ferry__error_agree(fh->target.comm, local_cls, "set_view");
    MPI_Offset found[2] = {0, 0}; /* displacement, rank 0's error class */
    if (cls == 0 && fh->target.rank == 0) {
        MPI_Offset position = 0;
        int rc = ferry__sharedfp_get(fh, &position);
        MPI_Offset r = 0;
        if (rc == 0) rc = ferry__check_offset(fh, position, &r, "set_view");
        if (rc == 0) rc = ferry__view_check_reach(&fh->target.view, r, 1, "set_view", fh->target.filename);
        if (rc == 0) rc = ferry__view_file_offset(&fh->target.view, r, &found[0]);
        found[1] = rc;
    }
    *disp = 0;
    if (cls != 0) return cls;
    int rc = ferry__progress_bcast(found, 2, MPI_OFFSET, 0, fh->target.comm);
    if (rc != MPI_SUCCESS)
        return ferry__error_host(rc, "set_view", fh->target.filename, "MPI_Bcast"); /* agreed by the caller */
    if (found[1] != 0) cls = ferry__error_agree(fh->target.comm, fh->target.rank == 0 ? (int)found[1] : 0, "set_view");
    *disp = found[0];
    return cls;
}

int ferry_File_set_view(ferry_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                        const char *datarep, MPI_Info info)
{
    int cls = ferry__check_file(fh, "set_view");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    ferry__async_drain(fh); /* pending nonblocking requests use the old view */
    cls = ferry__split_misuse(fh, check_displacement(fh, disp), "set_view");
    if (fh->target.amode & MPI_MODE_SEQUENTIAL) cls = current_displacement(fh, cls, &disp);
    if (cls == 0) cls = ferry__check_committed(fh, etype, "etype", "set_view");
    if (cls == 0) cls = ferry__check_committed(fh, filetype, "filetype", "set_view");
    ferry__view_t next;
    ferry__view_init(&next);
    /* MPI-3.1 13.3 forbids overlapping etypes and filetypes only where the file can be written. */
    int read_only = (fh->target.amode & MPI_MODE_RDONLY) != 0;
    if (cls == 0 && read_only)
        cls = ferry__view_build_read_only(&next, disp, etype, filetype, datarep, fh->target.filename);
    else if (cls == 0) cls = ferry__view_build(&next, disp, etype, filetype, datarep, fh->target.filename);
    if (fh->develop) {
        /* MPI-3.1 13.3: datarep and the etype's extent must match on every rank. */
        MPI_Count etype_extent = 0;
        if (cls == 0) ferry__datarep_extent(next.rep, etype, &etype_extent);
        ferry__hints_t would_be = fh->target.hints; /* info keys that change the collective path must match too */
        ferry__hints_apply(&would_be, info);
        ferry__develop_arg_t same[3] = {
            {"datarep", datarep ? ferry__develop_hash(datarep, strlen(datarep)) : 0},
            {"etype extent", (uint64_t)etype_extent},
            {"collective hints", ferry__hints_collective_fingerprint(&would_be)},
        };
        cls = ferry__develop_check(fh->target.comm, cls, "set_view", same, 3);
    }
    /* All or nothing: a view that fails on any rank leaves the old view on every rank. */
    cls = ferry__sharedfp_agree_reset(fh, cls, "set_view"); /* the standard resets the shared pointer too */
    if (cls != 0) {
        ferry__view_release(&next);
        return ferry__error_return(fh, cls);
    }
    ferry__view_release(&fh->target.view);
    fh->target.view = next;
    fh->position = 0;
    fh->target.config_epoch++;
    ferry__hints_apply(&fh->target.hints, info);
    ferry__coll_config_changed(&fh->target, info != MPI_INFO_NULL);
    return ferry__error_return(fh, 0);
}

/* A new reference for get_view's caller: MPI-3.1 13.3 returns derived types
 * as new handles the caller frees. */
static int handle_for_caller(MPI_Datatype type, MPI_Datatype *out)
{
    int ni, na, nd, combiner;
    if (MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return MPI_ERR_TYPE;
    if (combiner == MPI_COMBINER_NAMED) {
        *out = type;
        return 0;
    }
    return MPI_Type_dup(type, out) == MPI_SUCCESS ? 0 : MPI_ERR_TYPE;
}

int ferry_File_get_view(ferry_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                        char *datarep)
{
    int cls = ferry__check_file(fh, "get_view");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!disp || !etype || !filetype || !datarep)
        return ferry__error_return(fh, ferry__error_set(MPI_ERR_ARG, "ferry: get_view: NULL argument"));
    if (handle_for_caller(fh->target.view.etype, etype) != 0 ||
        handle_for_caller(fh->target.view.filetype, filetype) != 0)
        return ferry__error_return(fh, ferry__error_set(MPI_ERR_TYPE, "ferry: get_view: cannot duplicate datatypes"));
    *disp = fh->target.view.disp;
    snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", ferry__datarep_name(fh->target.view.rep));
    return MPI_SUCCESS;
}

int ferry__check_offset(ferry_File fh, MPI_Offset offset, MPI_Offset *stream_byte, const char *op)
{
    if (offset < 0) return ferry__error_set(MPI_ERR_ARG, "ferry: %s '%s': negative offset", op, fh->target.filename);
    if (offset > FERRY_OFFSET_MAX / fh->target.view.etype_size)
        return ferry__error_set(MPI_ERR_ARG,
                                "ferry: %s '%s': offset %lld (etypes of %lld bytes) passes the largest "
                                "offset ferry addresses (%lld bytes)",
                                op, fh->target.filename, (long long)offset, (long long)fh->target.view.etype_size,
                                (long long)FERRY_OFFSET_MAX);
    *stream_byte = offset * fh->target.view.etype_size;
    return 0;
}

/* The individual pointer at end of file: etypes of the view below the file
 * size, a partial etype counting as one (as ROMIO does). */
static int end_of_file_position(ferry_File fh, MPI_Offset *position)
{
    MPI_Offset size = 0, below = 0;
    FERRY_TRY(ferry__fs_size(fh->target.fs, &size));
    FERRY_TRY(ferry__view_stream_below(&fh->target.view, size, &below));
    *position = (below + fh->target.view.etype_size - 1) / fh->target.view.etype_size;
    return 0;
}

int ferry__seek_target(ferry_File fh, MPI_Offset current, MPI_Offset offset, int whence, MPI_Offset *target,
                       const char *op)
{
    MPI_Offset base = 0;
    if (whence == MPI_SEEK_CUR) base = current;
    else if (whence == MPI_SEEK_END) FERRY_TRY(end_of_file_position(fh, &base));
    else if (whence != MPI_SEEK_SET)
        return ferry__error_set(MPI_ERR_ARG, "ferry: %s '%s': invalid whence %d", op, fh->target.filename, whence);
    if (offset < -base || (offset > 0 && base > INT64_MAX - offset))
        return ferry__error_set(MPI_ERR_ARG, "ferry: %s '%s': position %lld plus offset %lld is negative or overflows",
                                op, fh->target.filename, (long long)base, (long long)offset);
    *target = base + offset;
    return 0;
}

int ferry_File_seek(ferry_File fh, MPI_Offset offset, int whence)
{
    int cls = ferry__check_file(fh, "seek");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    cls = ferry__check_not_sequential(fh, "seek");
    if (cls == 0) cls = ferry__seek_target(fh, fh->position, offset, whence, &fh->position, "seek");
    return ferry__error_return(fh, cls);
}

int ferry_File_get_position(ferry_File fh, MPI_Offset *offset)
{
    int cls = ferry__check_file(fh, "get_position");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    cls = ferry__check_not_sequential(fh, "get_position");
    if (cls == 0 && !offset) cls = ferry__error_set(MPI_ERR_ARG, "ferry: get_position: NULL argument");
    if (cls == 0) *offset = fh->position;
    return ferry__error_return(fh, cls);
}

int ferry_File_get_byte_offset(ferry_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    int cls = ferry__check_file(fh, "get_byte_offset");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!disp) return ferry__error_return(fh, ferry__error_set(MPI_ERR_ARG, "ferry: get_byte_offset: NULL argument"));
    MPI_Offset r = 0;
    cls = ferry__check_offset(fh, offset, &r, "get_byte_offset");
    if (cls == 0) cls = ferry__view_check_reach(&fh->target.view, r, 1, "get_byte_offset", fh->target.filename);
    if (cls == 0) cls = ferry__view_file_offset(&fh->target.view, r, disp);
    return ferry__error_return(fh, cls);
}

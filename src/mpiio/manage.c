/*
 * File manipulation and queries (MPI-3.1 13.2.4-13.2.8, 13.5.1, 13.6.1, 13.6.3).
 */
#include "async/async.h"
#include "datatype/datatype.h"
#include "coll/coll.h"
#include "mpiio/mpiio.h"

/* Collective size changes: rank 0 acts, every rank agrees. */
typedef int (*size_action_t)(ferry__fs_file_t *file, MPI_Offset size);

static int change_size(ferry_File fh, MPI_Offset size, size_action_t action, const char *op)
{
    int cls = ferry__check_file(fh, op);
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    ferry__async_drain(fh); /* async.h: collectives wait for pending nonblocking requests */
    if (size < 0) cls = ferry__error_set(MPI_ERR_ARG, "ferry: %s '%s': negative size", op, fh->target.filename);
    if (cls == 0) cls = ferry__check_writable(fh, op);
    cls = ferry__split_misuse(fh, cls, op);
    if (fh->develop) {
        ferry__develop_arg_t same_size = {"size", (uint64_t)size};
        cls = ferry__develop_check(fh->target.comm, cls, op, &same_size, 1);
    }
    /* Agree on the arguments first: a call that fails on any rank must not
     * have resized the file on rank 0. */
    cls = ferry__error_agree(fh->target.comm, cls, op);
    if (cls == 0 && fh->target.rank == 0) cls = action(fh->target.fs, size);
    return ferry__error_return(fh, ferry__error_agree(fh->target.comm, cls, op));
}

int ferry_File_set_size(ferry_File fh, MPI_Offset size)
{
    return change_size(fh, size, ferry__fs_resize, "set_size");
}

int ferry_File_preallocate(ferry_File fh, MPI_Offset size)
{
    return change_size(fh, size, ferry__fs_allocate, "preallocate");
}

int ferry_File_get_size(ferry_File fh, MPI_Offset *size)
{
    int cls = ferry__check_file(fh, "get_size");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!size) return ferry__error_return(fh, ferry__error_set(MPI_ERR_ARG, "ferry: get_size: NULL argument"));
    return ferry__error_return(fh, ferry__fs_size(fh->target.fs, size));
}

int ferry_File_get_group(ferry_File fh, MPI_Group *group)
{
    int cls = ferry__check_file(fh, "get_group");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!group) return ferry__error_return(fh, ferry__error_set(MPI_ERR_ARG, "ferry: get_group: NULL argument"));
    return MPI_Comm_group(fh->target.comm, group);
}

int ferry_File_get_amode(ferry_File fh, int *amode)
{
    int cls = ferry__check_file(fh, "get_amode");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!amode) return ferry__error_return(fh, ferry__error_set(MPI_ERR_ARG, "ferry: get_amode: NULL argument"));
    *amode = fh->target.amode;
    return MPI_SUCCESS;
}

int ferry_File_set_info(ferry_File fh, MPI_Info info)
{
    int cls = ferry__check_file(fh, "set_info");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    ferry__async_drain(fh);
    ferry__hints_apply(&fh->target.hints, info);
    fh->target.config_epoch++;
    int develop = fh->target.hints.develop || ferry__develop_from_environment();
    cls = ferry__error_agree_flag(fh->target.comm, ferry__split_misuse(fh, 0, "set_info"), "set_info", &develop);
    if (cls == 0) fh->develop = develop;
    if (cls == 0 && develop) {
        ferry__develop_arg_t same = {"collective hints", ferry__hints_collective_fingerprint(&fh->target.hints)};
        cls = ferry__develop_check(fh->target.comm, 0, "set_info", &same, 1);
    }
    ferry__coll_config_changed(&fh->target, 1);
    return ferry__error_return(fh, cls);
}

int ferry_File_get_info(ferry_File fh, MPI_Info *info_used)
{
    int cls = ferry__check_file(fh, "get_info");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!info_used) return ferry__error_return(fh, ferry__error_set(MPI_ERR_ARG, "ferry: get_info: NULL argument"));
    if (MPI_Info_create(info_used) != MPI_SUCCESS)
        return ferry__error_return(fh, ferry__error_set(MPI_ERR_INFO, "ferry: get_info: cannot create an info"));
    ferry__async_fold_stats(fh);
    fh->stats.coll_view_cache_bytes = ferry__coll_cache_bytes(&fh->target);
    fh->stats.coll_view_recv_bytes = ferry__coll_update_recv_bytes(&fh->target);
    cls = ferry__hints_report(&fh->target.hints, *info_used);
    if (cls == 0) cls = ferry__stats_report_info(&fh->stats, *info_used);
    if (cls == 0) cls = ferry__fs_layout_report(&fh->target.layout, *info_used);
    if (cls) MPI_Info_free(info_used);
    return ferry__error_return(
        fh, cls ? ferry__error_set(cls, "ferry: get_info '%s': cannot fill the info", fh->target.filename) : 0);
}

int ferry_File_sync(ferry_File fh)
{
    int cls = ferry__check_file(fh, "sync");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    ferry__async_drain(fh);
    cls = ferry__split_misuse(fh, ferry__fs_sync(fh->target.fs), "sync");
    return ferry__error_return(fh, ferry__error_agree(fh->target.comm, cls, "sync"));
}

/* Atomic mode locks every transfer's byte range (indep/transfer.c): a file
 * system that refuses locks is found here rather than at the first access. */
static int probe_locks(ferry_File fh)
{
    int mode = fh->target.readable ? FERRY_FS_LOCK_READ : FERRY_FS_LOCK_WRITE;
    int rc = ferry__fs_lock(fh->target.fs, 0, 1, mode);
    if (rc == 0) return ferry__fs_unlock(fh->target.fs, 0, 1);
    if (rc == MPI_ERR_UNSUPPORTED_OPERATION)
        return ferry__error_set(rc,
                                "ferry: set_atomicity '%s': atomic mode needs byte-range locks, which the file "
                                "system refuses",
                                fh->target.filename);
    return rc;
}

int ferry_File_set_atomicity(ferry_File fh, int flag)
{
    int cls = ferry__check_file(fh, "set_atomicity");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    ferry__async_drain(fh);
    cls = ferry__split_misuse(fh, cls, "set_atomicity");
    if (fh->develop) {
        ferry__develop_arg_t same_flag = {"flag", (uint64_t)(flag != 0)};
        cls = ferry__develop_check(fh->target.comm, cls, "set_atomicity", &same_flag, 1);
    }
    if (cls == 0 && flag) cls = probe_locks(fh);
    cls = ferry__error_agree(fh->target.comm, cls, "set_atomicity");
    if (cls == 0) fh->target.atomicity = flag != 0;
    return ferry__error_return(fh, cls);
}

int ferry_File_get_atomicity(ferry_File fh, int *flag)
{
    int cls = ferry__check_file(fh, "get_atomicity");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!flag) return ferry__error_return(fh, ferry__error_set(MPI_ERR_ARG, "ferry: get_atomicity: NULL argument"));
    *flag = fh->target.atomicity;
    return MPI_SUCCESS;
}

int ferry_File_get_type_extent_c(ferry_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    int cls = ferry__check_file(fh, "get_type_extent");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!extent) return ferry__error_return(fh, ferry__error_set(MPI_ERR_ARG, "ferry: get_type_extent: NULL argument"));
    /* The extent in the view's data representation (MPI-3.1 13.5.1). */
    return ferry__error_return(fh, ferry__datarep_extent(fh->target.view.rep, datatype, extent));
}

int ferry_File_get_type_extent(ferry_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Count wide = 0;
    int rc = ferry_File_get_type_extent_c(fh, datatype, extent ? &wide : NULL);
    if (rc == MPI_SUCCESS && extent) *extent = (MPI_Aint)wide;
    return rc;
}

MPI_Fint ferry_File_c2f(ferry_File file)
{
    return ferry__handle_to_fortran(file);
}

ferry_File ferry_File_f2c(MPI_Fint file)
{
    return ferry__handle_from_fortran(file);
}

/*
 * Blocking data access: explicit offsets and the individual file pointer,
 * independent and collective (MPI-3.1 13.4.2, 13.4.3).
 *
 * Every read and write entry point is one line that describes the call to
 * ferry__access(): direction, positioning and coordination.
 */
#include "async/async.h"
#include "coll/coll.h"
#include "indep/indep.h"
#include "mpiio/mpiio.h"
#include "mpiio/access.h"

static int check_access(const ferry__access_t *call, ferry_File fh, MPI_Count count, MPI_Datatype type)
{
    FERRY_TRY(call->write ? ferry__check_writable(fh, call->name) : ferry__check_readable(fh, call->name));
    if (!call->shared) FERRY_TRY(ferry__check_not_sequential(fh, call->name));
    return ferry__check_buffer(fh, count, type, call->name);
}

/* The view may limit where data access can reach (view.h). */
static int check_window(const ferry__access_t *call, ferry_File fh, MPI_Offset skip, MPI_Count count,
                        MPI_Datatype type)
{
    MPI_Count size = 0;
    FERRY_TRY(ferry__datarep_size(fh->view.rep, type, &size));
    return ferry__view_check_access(&fh->view, skip, count * size, call->name, fh->filename);
}

static void count_transfer(ferry__stats_t *stats, int write, MPI_Count bytes)
{
    if (write) {
        stats->write_calls++;
        stats->write_bytes += bytes;
    } else {
        stats->read_calls++;
        stats->read_bytes += bytes;
    }
}

int ferry__access_check(const ferry__access_t *call, ferry_File fh, MPI_Offset offset, MPI_Count count,
                        MPI_Datatype type, MPI_Offset *skip)
{
    FERRY_TRY(check_access(call, fh, count, type));
    FERRY_TRY(ferry__check_offset(fh, call->individual ? fh->position : offset, skip, call->name));
    return check_window(call, fh, *skip, count, type);
}

int ferry__access_transfer(const ferry__access_t *call, ferry_File fh, int local_cls, MPI_Offset offset, void *buf,
                           MPI_Count count, MPI_Datatype type, MPI_Count *done)
{
    *done = 0;
    /* Collectives run in initiation order: the file's pending nonblocking
     * ones first (async.h). */
    if (call->collective) ferry__async_drain(fh);
    MPI_Offset skip = 0;
    if (call->collective) local_cls = ferry__split_misuse(fh, local_cls, call->name);
    if (local_cls == 0) local_cls = ferry__check_memory(fh, buf, count, type, call->name);
    int cls = call->shared ? ferry__access_shared_offset(call, fh, local_cls, count, type, &offset) : local_cls;
    if (cls == 0) cls = ferry__access_check(call, fh, offset, count, type, &skip);
    if (call->collective)
        cls = call->write ? ferry__coll_write(fh, cls, skip, buf, count, type, done, call->name)
                          : ferry__coll_read(fh, cls, skip, buf, count, type, done, call->name);
    else if (cls == 0)
        cls = call->write ? ferry__indep_write(fh, skip, buf, count, type, done)
                          : ferry__indep_read(fh, skip, buf, count, type, done);
    /* A call that failed anywhere leaves every rank's pointer where it was. */
    if (call->individual && cls == 0) fh->position += *done / fh->view.etype_size;
    if (cls == 0) count_transfer(&fh->stats, call->write, *done);
    return cls;
}

int ferry__access(const ferry__access_t *call, ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                  MPI_Datatype type, MPI_Status *status)
{
    int cls = ferry__check_file(fh, call->name);
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    MPI_Count done = 0;
    cls = ferry__access_transfer(call, fh, 0, offset, buf, count, type, &done);
    if (cls == 0) cls = ferry__memory_bytes(fh, type, count, done, &done);
    if (cls == 0) ferry__status_set_bytes(status, done);
    return ferry__error_return(fh, cls);
}

#define ACCESS(name_, write_, individual_, collective_)                                                            \
    static const ferry__access_t name_##_call = {#name_, write_, individual_, collective_, 0};

ACCESS(read_at, 0, 0, 0)
ACCESS(read_at_all, 0, 0, 1)
ACCESS(write_at, 1, 0, 0)
ACCESS(write_at_all, 1, 0, 1)
ACCESS(read, 0, 1, 0)
ACCESS(read_all, 0, 1, 1)
ACCESS(write, 1, 1, 0)
ACCESS(write_all, 1, 1, 1)

int ferry_File_read_at_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Status *status)
{
    return ferry__access(&read_at_call, fh, offset, buf, count, datatype, status);
}
int ferry_File_read_at_all_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status)
{
    return ferry__access(&read_at_all_call, fh, offset, buf, count, datatype, status);
}
int ferry_File_write_at_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    return ferry__access(&write_at_call, fh, offset, (void *)buf, count, datatype, status);
}
int ferry_File_write_at_all_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Status *status)
{
    return ferry__access(&write_at_all_call, fh, offset, (void *)buf, count, datatype, status);
}
int ferry_File_read_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry__access(&read_call, fh, 0, buf, count, datatype, status);
}
int ferry_File_read_all_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry__access(&read_all_call, fh, 0, buf, count, datatype, status);
}
int ferry_File_write_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return ferry__access(&write_call, fh, 0, (void *)buf, count, datatype, status);
}
int ferry_File_write_all_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return ferry__access(&write_all_call, fh, 0, (void *)buf, count, datatype, status);
}

/* The int-count forms are the large-count forms with a smaller count. */
int ferry_File_read_at(ferry_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                       MPI_Status *status)
{
    return ferry_File_read_at_c(fh, offset, buf, count, datatype, status);
}
int ferry_File_read_at_all(ferry_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return ferry_File_read_at_all_c(fh, offset, buf, count, datatype, status);
}
int ferry_File_write_at(ferry_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                        MPI_Status *status)
{
    return ferry_File_write_at_c(fh, offset, buf, count, datatype, status);
}
int ferry_File_write_at_all(ferry_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    return ferry_File_write_at_all_c(fh, offset, buf, count, datatype, status);
}
int ferry_File_read(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_read_c(fh, buf, count, datatype, status);
}
int ferry_File_read_all(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_read_all_c(fh, buf, count, datatype, status);
}
int ferry_File_write(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_write_c(fh, buf, count, datatype, status);
}
int ferry_File_write_all(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return ferry_File_write_all_c(fh, buf, count, datatype, status);
}

/*
 * Entry points whose implementation belongs to a later issue (shared file
 * pointers, ordered and split-collective access, user data
 * representations). Each returns MPI_ERR_UNSUPPORTED_OPERATION
 * through the file's error handler with a message naming the function;
 * none falls back to the host's MPI-IO.
 */
#include "mpiio/mpiio.h"

static int unsupported(ferry_File fh, const char *function)
{
    int cls = ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION, "ferry: MPI_File_%s '%s': not implemented yet", function,
                               fh ? fh->filename : "(no file)");
    return ferry__error_return(fh, cls);
}

int ferry_File_read_shared(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return unsupported(fh, "read_shared");
}

int ferry_File_read_shared_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return unsupported(fh, "read_shared_c");
}

int ferry_File_write_shared(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return unsupported(fh, "write_shared");
}

int ferry_File_write_shared_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return unsupported(fh, "write_shared_c");
}

int ferry_File_iread_shared(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return unsupported(fh, "iread_shared");
}

int ferry_File_iread_shared_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return unsupported(fh, "iread_shared_c");
}

int ferry_File_iwrite_shared(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return unsupported(fh, "iwrite_shared");
}

int ferry_File_iwrite_shared_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return unsupported(fh, "iwrite_shared_c");
}

int ferry_File_read_ordered(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return unsupported(fh, "read_ordered");
}

int ferry_File_read_ordered_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return unsupported(fh, "read_ordered_c");
}

int ferry_File_write_ordered(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return unsupported(fh, "write_ordered");
}

int ferry_File_write_ordered_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status)
{
    return unsupported(fh, "write_ordered_c");
}

int ferry_File_seek_shared(ferry_File fh, MPI_Offset offset, int whence)
{
    return unsupported(fh, "seek_shared");
}

int ferry_File_get_position_shared(ferry_File fh, MPI_Offset *offset)
{
    return unsupported(fh, "get_position_shared");
}

int ferry_File_read_ordered_begin(ferry_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return unsupported(fh, "read_ordered_begin");
}

int ferry_File_read_ordered_begin_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return unsupported(fh, "read_ordered_begin_c");
}

int ferry_File_read_ordered_end(ferry_File fh, void *buf, MPI_Status *status)
{
    return unsupported(fh, "read_ordered_end");
}

int ferry_File_write_ordered_begin(ferry_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    return unsupported(fh, "write_ordered_begin");
}

int ferry_File_write_ordered_begin_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return unsupported(fh, "write_ordered_begin_c");
}

int ferry_File_write_ordered_end(ferry_File fh, const void *buf, MPI_Status *status)
{
    return unsupported(fh, "write_ordered_end");
}

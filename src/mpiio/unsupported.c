/*
 * Entry points whose implementation belongs to a later issue (nonblocking
 * shared-pointer access). Each returns MPI_ERR_UNSUPPORTED_OPERATION
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

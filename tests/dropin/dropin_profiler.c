/*
 * A minimal profiling layer, as tools like Darshan are built: preloaded
 * before libferry-mpiio.so, its MPI_File_* count each call and pass it on
 * through PMPI_File_*. dropin_layers reads the counts with
 * dropin_profiler_calls.
 */
#include <stdatomic.h>
#include <string.h>

#include <mpi.h>

static atomic_llong opens, closes, write_alls, read_at_alls;

long long dropin_profiler_calls(const char *name);

long long dropin_profiler_calls(const char *name)
{
    if (!strcmp(name, "MPI_File_open")) return opens;
    if (!strcmp(name, "MPI_File_close")) return closes;
    if (!strcmp(name, "MPI_File_write_all")) return write_alls;
    if (!strcmp(name, "MPI_File_read_at_all")) return read_at_alls;
    return -1;
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    opens++;
    return PMPI_File_open(comm, filename, amode, info, fh);
}

int MPI_File_close(MPI_File *fh)
{
    closes++;
    return PMPI_File_close(fh);
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    write_alls++;
    return PMPI_File_write_all(fh, buf, count, datatype, status);
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                         MPI_Status *status)
{
    read_at_alls++;
    return PMPI_File_read_at_all(fh, offset, buf, count, datatype, status);
}

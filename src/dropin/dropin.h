/*
 * dropin: libferry-mpiio.so, the MPI_File_* layer.
 *
 * Exports every MPI-3.1 MPI_File_* function (and the MPI-4 *_c forms when
 * the host's mpi.h declares them, i.e. MPI_VERSION >= 4), each forwarding to
 * the ferry_File_* function of the same name, under both its MPI_ and its
 * PMPI_ name (one function, two names). Loaded with LD_PRELOAD, it
 * interposes the host library's MPI-IO, so unmodified programs run on ferry:
 * C and Fortran callers of either name, and a profiling tool preloaded
 * before it (its MPI_File_* calling PMPI_File_*) on top. fortran.c adds the
 * Fortran entry points that need more than a C function (file error
 * handlers, user data representations).
 * A ferry_File and the host's MPI_File are both pointers, so handles cross
 * the boundary by a cast, except the null handle: Open MPI's MPI_FILE_NULL
 * is the address of a host object, ferry's is NULL. Nothing here ever calls
 * the host's MPI-IO.
 */
#ifndef FERRY_DROPIN_H
#define FERRY_DROPIN_H

#include <stddef.h>

#include <mpi.h>

#include "ferry.h"

/* Makes `name` a second name of the function `pname` (its PMPI_ twin). */
#define FERRY_DROPIN_ALIAS(name, pname) extern __typeof__(pname) name __attribute__((alias(#pname)));

static inline ferry_File ferry__dropin_file(MPI_File fh)
{
    return fh == MPI_FILE_NULL ? FERRY_FILE_NULL : (ferry_File)fh;
}

static inline MPI_File ferry__dropin_handle(ferry_File fh)
{
    return fh == FERRY_FILE_NULL ? MPI_FILE_NULL : (MPI_File)fh;
}

#endif

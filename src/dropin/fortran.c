/*
 * Fortran file error handlers.
 *
 * MPI_File_create_errhandler's Fortran bindings give the host a Fortran
 * subroutine, to be called with the file's Fortran handle and the error
 * code, both INTEGERs by reference. Open MPI's bindings (mpif.h, use mpi,
 * use mpi_f08) create it with an internal call (ompi_errhandler_create),
 * not through PMPI_File_create_errhandler, so ferry would never learn of it
 * and would refuse it in set_errhandler; MPICH's pass it on to
 * MPI_File_create_errhandler as if it were a C function, so it would read
 * its INTEGER handle from a C handle's address. The drop-in therefore
 * defines these Fortran entry points itself, under gfortran's names for
 * both bindings (and their pmpi_ twins for Fortran profiling tools): ferry
 * gets call_fortran_handler for every such handler, which finds the
 * subroutine the handler stands for and calls it with MPI_File_c2f of the
 * file.
 */
#include <pthread.h>
#include <stdlib.h>

#include "dropin/dropin.h"

typedef void fortran_file_errhandler(MPI_Fint *file, MPI_Fint *code);

typedef struct fortran_handler {
    MPI_Errhandler handle;
    fortran_file_errhandler *subroutine;
} fortran_handler_t;

/* Entries stay until the process ends: a file keeps its handler after the
 * program frees the handle. Only a handle value the host hands out again
 * for a newer Fortran handler replaces its entry. */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static fortran_handler_t *table;
static size_t table_count, table_capacity;

static fortran_file_errhandler *find_subroutine(MPI_Errhandler handle)
{
    fortran_file_errhandler *subroutine = NULL;
    pthread_mutex_lock(&table_lock);
    for (size_t i = 0; i < table_count && !subroutine; i++)
        if (table[i].handle == handle) subroutine = table[i].subroutine;
    pthread_mutex_unlock(&table_lock);
    return subroutine;
}

/* Returns 0, or MPI_ERR_NO_MEM when the table cannot grow. */
static int remember(MPI_Errhandler handle, fortran_file_errhandler *subroutine)
{
    int cls = 0;
    pthread_mutex_lock(&table_lock);
    size_t i = 0;
    while (i < table_count && table[i].handle != handle) i++;
    if (i == table_count && table_count == table_capacity) {
        size_t grown = table_capacity ? 2 * table_capacity : 8;
        fortran_handler_t *bigger = realloc(table, grown * sizeof *bigger);
        if (bigger) table = bigger, table_capacity = grown;
    }
    if (i < table_capacity) {
        table[i] = (fortran_handler_t){handle, subroutine};
        if (i == table_count) table_count++;
    } else {
        cls = MPI_ERR_NO_MEM;
    }
    pthread_mutex_unlock(&table_lock);
    return cls;
}

/* The C handler ferry holds for every Fortran one (ferry_File_errhandler_function). */
static void call_fortran_handler(ferry_File *file, int *code, ...)
{
    MPI_Errhandler handle;
    if (ferry_File_get_errhandler(*file, &handle) != MPI_SUCCESS) return;
    fortran_file_errhandler *subroutine = find_subroutine(handle);
    MPI_Fint fortran_file = ferry_File_c2f(*file), fortran_code = (MPI_Fint)*code;
    if (subroutine) subroutine(&fortran_file, &fortran_code);
}

/* MPI_FILE_CREATE_ERRHANDLER(FILE_ERRHANDLER_FN, ERRHANDLER, IERROR); in
 * mpi_f08 ERRHANDLER is TYPE(MPI_Errhandler), one INTEGER, and IERROR is
 * optional (NULL when absent). */
void mpi_file_create_errhandler_(fortran_file_errhandler *subroutine, MPI_Fint *errhandler, MPI_Fint *ierror);

void mpi_file_create_errhandler_(fortran_file_errhandler *subroutine, MPI_Fint *errhandler, MPI_Fint *ierror)
{
    MPI_Errhandler handle;
    int rc = ferry_File_create_errhandler(call_fortran_handler, &handle);
    if (rc == MPI_SUCCESS && remember(handle, subroutine) != 0) {
        MPI_Errhandler_free(&handle);
        rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS) *errhandler = MPI_Errhandler_c2f(handle);
    if (ierror) *ierror = (MPI_Fint)rc;
}
FERRY_DROPIN_ALIAS(pmpi_file_create_errhandler_, mpi_file_create_errhandler_)
FERRY_DROPIN_ALIAS(mpi_file_create_errhandler_f08_, mpi_file_create_errhandler_)
FERRY_DROPIN_ALIAS(pmpi_file_create_errhandler_f08_, mpi_file_create_errhandler_)

/*
 * Fortran entry points the hosts' bindings do not serve well on their own:
 * file error handlers and user data representations.
 *
 * Error handlers: MPI_File_create_errhandler's Fortran bindings give the host a Fortran
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
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dropin/dropin.h"

typedef void fortran_file_errhandler(MPI_Fint *file, MPI_Fint *code);

typedef struct fortran_handler {
    MPI_Errhandler handle;
    fortran_file_errhandler *subroutine;
} fortran_handler_t;

/* Entries stay until the process ends: a file keeps its handler after the
 * program frees the handle. Only a handle value the host hands out again
 * for a newer Fortran handler replaces its entry. The lock also guards the
 * list of Fortran data representations below. */
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

/*
 * Fortran user data representations. MPI_REGISTER_DATAREP's conversion and
 * extent functions are Fortran subroutines taking every argument by
 * reference and returning their error in IERROR (mpi_f08's pass the two
 * buffers as TYPE(C_PTR), VALUE: the same pointers). Open MPI's bindings
 * wrap them in C functions; MPICH's hand them to the C registration as if
 * they were C functions, so set_view fails (the extent function reads a
 * datatype handle as an address) and nothing converts. The drop-in
 * registers C adapters instead, on both hosts.
 */
typedef void fortran_conversion(void *userbuf, MPI_Fint *datatype, MPI_Fint *count, void *filebuf,
                                MPI_Offset *position, MPI_Aint *extra_state, MPI_Fint *ierror);
typedef void fortran_extent(MPI_Fint *datatype, MPI_Aint *extent, MPI_Aint *extra_state, MPI_Fint *ierror);

typedef struct fortran_datarep {
    fortran_conversion *read, *write; /* NULL for MPI_CONVERSION_FN_NULL */
    fortran_extent *extent;
    MPI_Aint extra_state;
    struct fortran_datarep *next;
} fortran_datarep_t;

/* One per registration, kept for the life of the process (ferry keeps the
 * representation until MPI_Finalize, and a representation cannot be
 * unregistered). */
static fortran_datarep_t *registered;

static int read_with_fortran(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position,
                             void *extra)
{
    fortran_datarep_t *rep = extra;
    MPI_Fint fortran_type = MPI_Type_c2f(type), fortran_count = count, ierror = MPI_SUCCESS;
    rep->read(userbuf, &fortran_type, &fortran_count, filebuf, &position, &rep->extra_state, &ierror);
    return ierror;
}

static int write_with_fortran(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position,
                              void *extra)
{
    fortran_datarep_t *rep = extra;
    MPI_Fint fortran_type = MPI_Type_c2f(type), fortran_count = count, ierror = MPI_SUCCESS;
    rep->write(userbuf, &fortran_type, &fortran_count, filebuf, &position, &rep->extra_state, &ierror);
    return ierror;
}

static int extent_with_fortran(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    fortran_datarep_t *rep = extra;
    MPI_Fint fortran_type = MPI_Type_c2f(type), ierror = MPI_SUCCESS;
    rep->extent(&fortran_type, extent, &rep->extra_state, &ierror);
    return ierror;
}

/* MPI_CONVERSION_FN_NULL of mpif.h and use mpi (an external procedure) or
 * of mpi_f08 (a module procedure): the same names in both hosts. */
static int is_conversion_fn_null(fortran_conversion *fn)
{
    static const char *const names[] = {"mpi_conversion_fn_null_", "__mpi_f08_callbacks_MOD_mpi_conversion_fn_null"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *symbol = dlsym(RTLD_DEFAULT, names[i]);
        fortran_conversion *null_fn;
        memcpy(&null_fn, &symbol, sizeof null_fn); /* ISO C has no cast from object to function pointers */
        if (symbol && null_fn == fn) return 1;
    }
    return 0;
}

/* A Fortran CHARACTER argument as a C string in name[size]: trailing
 * blanks are not part of it; too long a string is cut to size - 1. */
static void c_string(const char *text, size_t length, char *name, size_t size)
{
    while (length > 0 && text[length - 1] == ' ') length--;
    if (length >= size) length = size - 1;
    memcpy(name, text, length);
    name[length] = '\0';
}

/* Registers rep (owned by the list from then on) as `name`. */
static int register_fortran_datarep(const char *name, fortran_datarep_t *rep)
{
    int rc = ferry_Register_datarep(name, rep->read ? read_with_fortran : MPI_CONVERSION_FN_NULL,
                                    rep->write ? write_with_fortran : MPI_CONVERSION_FN_NULL, extent_with_fortran,
                                    rep);
    if (rc != MPI_SUCCESS) {
        free(rep);
        return rc;
    }
    pthread_mutex_lock(&table_lock);
    rep->next = registered, registered = rep;
    pthread_mutex_unlock(&table_lock);
    return MPI_SUCCESS;
}

/* MPI_REGISTER_DATAREP(DATAREP, READ_CONVERSION_FN, WRITE_CONVERSION_FN,
 * DTYPE_FILE_EXTENT_FN, EXTRA_STATE, IERROR); gfortran passes DATAREP's
 * length last. */
void mpi_register_datarep_(const char *datarep, fortran_conversion *read_fn, fortran_conversion *write_fn,
                           fortran_extent *extent_fn, MPI_Aint *extra_state, MPI_Fint *ierror, size_t datarep_length);

void mpi_register_datarep_(const char *datarep, fortran_conversion *read_fn, fortran_conversion *write_fn,
                           fortran_extent *extent_fn, MPI_Aint *extra_state, MPI_Fint *ierror, size_t datarep_length)
{
    char name[MPI_MAX_DATAREP_STRING + 2]; /* one more than ferry accepts, so a longer name is refused */
    c_string(datarep, datarep_length, name, sizeof name);
    fortran_datarep_t *rep = malloc(sizeof *rep);
    if (rep)
        *rep = (fortran_datarep_t){is_conversion_fn_null(read_fn) ? NULL : read_fn,
                                   is_conversion_fn_null(write_fn) ? NULL : write_fn, extent_fn, *extra_state, NULL};
    int rc = rep ? register_fortran_datarep(name, rep) : MPI_ERR_NO_MEM;
    if (ierror) *ierror = (MPI_Fint)rc;
}
FERRY_DROPIN_ALIAS(pmpi_register_datarep_, mpi_register_datarep_)
FERRY_DROPIN_ALIAS(mpi_register_datarep_f08_, mpi_register_datarep_)
FERRY_DROPIN_ALIAS(pmpi_register_datarep_f08_, mpi_register_datarep_)

/*
 * The error-handler entry points (MPI-3.1 13.7): argument and handle
 * checks, then error/errhandler.c's registry and the file's slot.
 */
#include "core/core.h"
#include "mpiio/mpiio.h"

int ferry_File_create_errhandler(ferry_File_errhandler_function *file_errhandler_fn, MPI_Errhandler *errhandler)
{
    int cls = ferry__core_init();
    if (cls == 0 && (!file_errhandler_fn || !errhandler))
        cls = ferry__error_set(MPI_ERR_ARG, "ferry: File_create_errhandler: NULL argument");
    if (cls == 0) cls = ferry__errhandler_create(file_errhandler_fn, errhandler);
    return ferry__error_return(FERRY_FILE_NULL, cls);
}

/* FERRY_FILE_NULL names the default handler; anything else must be an open file. */
static int check_handle(ferry_File file, const char *op)
{
    int cls = ferry__core_init();
    if (cls == 0 && file != FERRY_FILE_NULL) cls = ferry__handle_check_live(file, op);
    return cls;
}

static ferry__errhandler_slot_t *slot_of(ferry_File file)
{
    return file == FERRY_FILE_NULL ? NULL : &file->errh;
}

int ferry_File_set_errhandler(ferry_File file, MPI_Errhandler errhandler)
{
    int cls = check_handle(file, "File_set_errhandler");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    return ferry__error_return(file, ferry__errhandler_set(slot_of(file), errhandler));
}

int ferry_File_get_errhandler(ferry_File file, MPI_Errhandler *errhandler)
{
    int cls = check_handle(file, "File_get_errhandler");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!errhandler)
        return ferry__error_return(file, ferry__error_set(MPI_ERR_ARG, "ferry: File_get_errhandler: NULL argument"));
    *errhandler = ferry__errhandler_get(slot_of(file));
    return MPI_SUCCESS;
}

int ferry_File_call_errhandler(ferry_File fh, int errorcode)
{
    int cls = check_handle(fh, "File_call_errhandler");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    ferry__errhandler_invoke(slot_of(fh), fh, fh == FERRY_FILE_NULL ? MPI_COMM_WORLD : fh->target.comm, errorcode);
    return MPI_SUCCESS;
}

/*
 * The API exit of calls on a file: error/ knows error handlers but not the
 * file object, so the file's handler slot is looked up here.
 */
#include "core/core.h"

int ferry__error_return(ferry_File fh, int cls)
{
    if (fh == FERRY_FILE_NULL) return ferry__error_return_default(cls);
    if (cls == 0) return MPI_SUCCESS;
    int code = ferry__error_code(cls);
    ferry__errhandler_invoke(&fh->errh, fh, fh->target.comm, code);
    return code;
}

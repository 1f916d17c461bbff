/*
 * error: ferry's one error convention.
 *
 * Internal functions return 0 or a standard MPI error class. The failure
 * site records a message (operation, file, cause) with ferry__error_set();
 * the message lives in thread-local storage until the next error on that
 * thread. At the API boundary ferry__error_return() turns class + message
 * into an error code registered with the host MPI (MPI_Error_class gives
 * the class back, MPI_Error_string the message) and invokes the file's
 * error handler. Collective functions end in ferry__error_agree() so that
 * every rank returns an error when any rank failed.
 */
#ifndef FERRY_ERROR_H
#define FERRY_ERROR_H

#include <stdint.h>

#include "ferry.h"

#if defined(__GNUC__) || defined(__clang__)
#define FERRY_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define FERRY_PRINTF(fmt_index, first_arg)
#endif

/* Records a message for error class `cls` and returns `cls`. */
int ferry__error_set(int cls, const char *fmt, ...) FERRY_PRINTF(2, 3);

/* 0 when a host MPI call returned rc == MPI_SUCCESS; else records
 * "ferry: <op> '<filename>': the host MPI's <call> failed: <host's message>"
 * and returns MPI_ERR_INTERN: a failed host call is an error, never a
 * silent continuation (issue 14). */
int ferry__error_host(int rc, const char *op, const char *filename, const char *call);

/* The message recorded last on this thread ("" if none). Borrowed. */
const char *ferry__error_message(void);

/* Collective over comm: combines every rank's local class in one reduction.
 * Returns local_cls where it is nonzero; where it is zero but another rank
 * failed, returns that rank's class with a message naming the lowest failing
 * rank; 0 when every rank succeeded. `what` names the operation. */
int ferry__error_agree(MPI_Comm comm, int local_cls, const char *what);

/* ferry__error_agree that also ORs *flag (0 or 1) over all ranks, in the
 * same reduction. */
int ferry__error_agree_flag(MPI_Comm comm, int local_cls, const char *what, int *flag);

/* ferry__error_agree that also replaces values[0..n-1] (n <= 4) by their
 * maximum over all ranks, in the same reduction (every rank learns them,
 * also when the call failed). */
int ferry__error_agree_max(MPI_Comm comm, int local_cls, const char *what, int64_t *values, int n);

/* API exit: for cls != 0, registers an error code carrying the recorded
 * message, calls fh's error handler (or the FERRY_FILE_NULL one when fh is
 * FERRY_FILE_NULL) and returns the code; returns MPI_SUCCESS for cls == 0. */
int ferry__error_return(ferry_File fh, int cls);

/* ferry__error_return without an error handler: the code carrying class
 * cls and the recorded message (MPI_SUCCESS for 0), for errors reported
 * through a request's status (async/). */
int ferry__error_code(int cls);

/* A file being opened takes the handler set on FERRY_FILE_NULL (MPI-3.1
 * 13.7) and holds a host reference to it until ferry__errhandler_drop,
 * which the file's release calls. */
void ferry__errhandler_inherit(ferry_File file);
void ferry__errhandler_drop(ferry_File file);

/* Looks up the function behind a user errhandler created with
 * ferry_File_create_errhandler; NULL for predefined handlers. */
ferry_File_errhandler_function *ferry__errhandler_function(MPI_Errhandler eh);

/* Calls the error handler of fh (FERRY_FILE_NULL: the default one) with
 * `code`: returns for MPI_ERRORS_RETURN, aborts for MPI_ERRORS_ARE_FATAL,
 * calls the user function otherwise. */
void ferry__errhandler_invoke(ferry_File fh, int code);

/* Frees the code table and errhandler registry at MPI_Finalize. */
void ferry__error_finalize(void);
void ferry__errhandler_finalize(void);

/* Short name of an error class, "MPI_ERR_IO" etc. */
const char *ferry__error_class_name(int cls);

#define FERRY_TRY(call)                                                                                            \
    do {                                                                                                           \
        int ferry_try_rc_ = (call);                                                                                \
        if (ferry_try_rc_ != 0) return ferry_try_rc_;                                                            \
    } while (0)

#endif

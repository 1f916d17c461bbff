/*
 * error: ferry's one error convention.
 *
 * Internal functions return 0 or a standard MPI error class. The failure
 * site records a message (operation, file, cause) with ferry__error_set();
 * the message lives in thread-local storage until the next error on that
 * thread. At the API boundary ferry__error_return() (core.h: it needs the file
 * object) or ferry__error_return_default() turns class + message
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

/* ferry__error_agree that also replaces values[0..n-1] (n <= 6) by their
 * maximum over all ranks, in the same reduction (every rank learns them,
 * also when the call failed). */
int ferry__error_agree_max(MPI_Comm comm, int local_cls, const char *what, int64_t *values, int n);

/* ferry__error_return (core.h) without an error handler: the code carrying
 * class cls and the recorded message (MPI_SUCCESS for 0), for errors
 * reported through a request's status (async/). */
int ferry__error_code(int cls);

/* API exit of calls that have no file (FERRY_FILE_NULL's handler): for
 * cls != 0 registers the code, calls the default handler, returns the code. */
int ferry__error_return_default(int cls);

/* A file's error handler (MPI-3.1 13.7): the handle, of which the slot
 * holds one host reference, and the function captured when it was set
 * (NULL for the predefined handlers), so freeing the handle later leaves
 * the file's handler working. The file object holds one; in the functions
 * below a NULL slot stands for FERRY_FILE_NULL's default handler. */
typedef struct ferry__errhandler_slot {
    MPI_Errhandler handle; /* MPI_ERRHANDLER_NULL until inherited */
    ferry_File_errhandler_function *fn;
} ferry__errhandler_slot_t;

/* A host handler standing for fn (ferry_File_create_errhandler). Returns 0
 * or an error class with a message. */
int ferry__errhandler_create(ferry_File_errhandler_function *fn, MPI_Errhandler *eh);

/* Sets eh, a predefined or ferry-created file handler, on slot; returns 0
 * or MPI_ERR_ARG with a message. */
int ferry__errhandler_set(ferry__errhandler_slot_t *slot, MPI_Errhandler eh);

/* slot's handle with a new host reference, for the caller to free. */
MPI_Errhandler ferry__errhandler_get(const ferry__errhandler_slot_t *slot);

/* A file being opened takes the default handler (MPI-3.1 13.7) and holds a
 * host reference to it until ferry__errhandler_drop. */
void ferry__errhandler_inherit(ferry__errhandler_slot_t *slot);
void ferry__errhandler_drop(ferry__errhandler_slot_t *slot);

/* Calls slot's handler with `code` for file fh (whose ranks are comm):
 * returns for MPI_ERRORS_RETURN, aborts comm for MPI_ERRORS_ARE_FATAL,
 * calls the user function otherwise. */
void ferry__errhandler_invoke(const ferry__errhandler_slot_t *slot, ferry_File fh, MPI_Comm comm, int code);

/* Short name of an error class, "MPI_ERR_IO" etc. */
const char *ferry__error_class_name(int cls);

#define FERRY_TRY(call)                                                                                            \
    do {                                                                                                           \
        int ferry_try_rc_ = (call);                                                                                \
        if (ferry_try_rc_ != 0) return ferry_try_rc_;                                                            \
    } while (0)

#endif

/*
 * mpiio: the ferry_File_* entry points.
 *
 * Each entry point checks its arguments, calls the module that does the
 * work, and leaves through ferry__error_return() so the file's error handler
 * sees every failure. Collective entry points fold argument errors into
 * the agreement at their end instead of returning early, so no rank is
 * left waiting in a collective that another rank skipped.
 */
#ifndef FERRY_MPIIO_H
#define FERRY_MPIIO_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "error/error.h"

/* Argument checks: each returns 0 or an error class with the message set;
 * `op` names the calling function in messages. */
int ferry__check_file(ferry_File fh, const char *op);
int ferry__check_readable(ferry_File fh, const char *op);
int ferry__check_writable(ferry_File fh, const char *op);
int ferry__check_not_sequential(ferry_File fh, const char *op);
int ferry__check_buffer(ferry_File fh, MPI_Count count, MPI_Datatype type, const char *op);
/* MPI_ERR_TYPE for MPI_DATATYPE_NULL or an uncommitted type; `what` names
 * the argument in the message ("datatype", "etype", "filetype"). */
int ferry__check_committed(ferry_File fh, MPI_Datatype type, const char *what, const char *op);
/* MPI_ERR_BUFFER when (buf, count, type) would touch memory below the lowest
 * address a process can map (a NULL or tiny buffer for data that starts at
 * it); MPI_BOTTOM with absolute addresses passes. One comparison for any
 * ordinary buffer. Leaves count and type errors to ferry__check_buffer. */
int ferry__check_memory(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype type, const char *op);

/* The memory bytes a transfer of (count, type) that moved file_bytes of the
 * view's file stream stands for: what its status reports. They differ only
 * for representations that change sizes (external32's MPI_LONG). */
int ferry__memory_bytes(ferry_File fh, MPI_Datatype type, MPI_Count count, MPI_Count file_bytes, MPI_Count *bytes);

/* Fills status (may be MPI_STATUS_IGNORE) for a transfer of `bytes` memory bytes. */
void ferry__status_set_bytes(MPI_Status *status, MPI_Count bytes);

/* Stream byte of `offset` etypes into the current view, checked for
 * negative values and overflow. */
int ferry__check_offset(ferry_File fh, MPI_Offset offset, MPI_Offset *stream_byte, const char *op);

/* view.c: where a seek from `current` (etypes) by offset with whence
 * (MPI_SEEK_SET/CUR/END) lands; MPI_ERR_ARG when negative or invalid. */
int ferry__seek_target(ferry_File fh, MPI_Offset current, MPI_Offset offset, int whence, MPI_Offset *target,
                       const char *op);

/* split.c: a split collective begin called while another one was active is
 * refused on that rank alone, which then takes no part in any collective
 * (the other ranks did not call it). The next collective call on the file
 * reports it on every rank: each collective entry point passes its local
 * class through this function before its first agreement. Returns
 * local_cls when nonzero, else MPI_ERR_OTHER (message set) when a misuse
 * is pending, else 0; the misuse is reported once. */
int ferry__split_misuse(ferry_File fh, int local_cls, const char *op);

/* develop.c: develop mode. */
typedef struct ferry__develop_arg {
    const char *name;     /* as in the message: "amode" */
    uint64_t fingerprint; /* equal on every rank when the argument is */
} ferry__develop_arg_t;

int ferry__develop_from_environment(void);
uint64_t ferry__develop_hash(const void *bytes, size_t len);
/* Collective over comm: compares every rank's arguments with its left
 * neighbour's and agrees on the outcome together with local_cls (this
 * rank's own error, which takes precedence over a mismatch it sees). */
int ferry__develop_check(MPI_Comm comm, int local_cls, const char *op, const ferry__develop_arg_t *args, int n);

#endif

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

#include "core/core.h"
#include "error/error.h"

/* Argument checks: each returns 0 or an error class with the message set;
 * `op` names the calling function in messages. */
int ferry__check_file(ferry_File fh, const char *op);
int ferry__check_readable(ferry_File fh, const char *op);
int ferry__check_writable(ferry_File fh, const char *op);
int ferry__check_not_sequential(ferry_File fh, const char *op);
int ferry__check_buffer(ferry_File fh, MPI_Count count, MPI_Datatype type, const char *op);

/* Fills status (may be MPI_STATUS_IGNORE) for a transfer of `bytes` bytes. */
void ferry__status_set_bytes(MPI_Status *status, MPI_Count bytes);

/* Stream byte of `offset` etypes into the current view, checked for
 * negative values and overflow. */
int ferry__check_offset(ferry_File fh, MPI_Offset offset, MPI_Offset *stream_byte, const char *op);

#endif

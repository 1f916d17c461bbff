/*
 * trace: per-rank, line-oriented records of errors and file-system calls.
 *
 * Configured from the environment at first use:
 *   FERRY_TRACE=errors   every error any ferry call returns, on every rank
 *   FERRY_TRACE=all      also every file-system call: arguments, result, errno, duration
 *   FERRY_TRACE_DIR=dir  where the files go (default: the current directory),
 *                        one file per process: ferry-trace.<rank>.<pid>.txt
 *   FERRY_TRACE_FROM=n   record only reads and writes that end above byte n
 * A record is one line of tab-separated key=value fields (format in
 * docs/trace.md); ferry-trace (tools/programs/ferry_trace.c) merges a job's files. Zero cost when off:
 * callers test ferry__trace_level() before building a record.
 */
#ifndef FERRY_TRACE_H
#define FERRY_TRACE_H

#include <stddef.h>

#include <mpi.h>

typedef enum { FERRY_TRACE_OFF = 0, FERRY_TRACE_ERRORS = 1, FERRY_TRACE_ALL = 2 } ferry__trace_level_t;

/* The configured level (reads the environment once). */
ferry__trace_level_t ferry__trace_level(void);

/* Records an error returned to the caller. */
void ferry__trace_error(int cls, int code, const char *message);

/* Records one file-system call. path may be NULL (then fd identifies the file). */
void ferry__trace_call(const char *op, int fd, const char *path, MPI_Offset offset, size_t len, long long result,
                       int err, double seconds);

/* True when a transfer [offset, offset + len) passes FERRY_TRACE_FROM. */
int ferry__trace_wants_range(MPI_Offset offset, size_t len);

double ferry__trace_now(void);

/* Closes the trace file (MPI_Finalize hook). */
void ferry__trace_finalize(void);

#endif

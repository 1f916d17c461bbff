/*
 * container_fortran: the C side of the Fortran module ferry_container
 * (ferry_container.f90), the task-local container's API for Fortran.
 *
 * The module declares these functions as BIND(C) interfaces under the C
 * API's names, so a Fortran call lands here directly: buffers arrive as
 * Fortran 2018 C descriptors (TYPE(*), DIMENSION(..): any type, any rank, a
 * scalar or a CHARACTER record), strings as CHARACTER(LEN=*) descriptors,
 * communicators as INTEGER (MPI_Fint) handles, and an absent OPTIONAL
 * argument as NULL.
 *
 * Invariants:
 *   - No copy of data: a buffer is handed to the C call at its own address
 *     with its own byte count (elem_len times every extent). The module
 *     declares buffers CONTIGUOUS, so a strided section reaches here already
 *     packed by the compiler; a descriptor that is not contiguous anyway is
 *     refused with MPI_ERR_BUFFER, never read past.
 *   - Byte counts and positions are 64-bit (INTEGER(C_INT64_T)) both ways.
 *   - Every subroutine ends in finish(): IERROR, when present, receives the
 *     error's MPI class (MPI_SUCCESS, MPI_ERR_ARG, ... as MPI's Fortran
 *     bindings compare them); when absent, an error prints the container's
 *     message and aborts the job (MPI_Abort, or exit without MPI), as MPI's
 *     default handler does for a Fortran caller that asked for no IERROR.
 *   - Strings lose their trailing blanks (Fortran's padding) and gain a NUL;
 *     the copy lives for the call only.
 *   - Stream ids and file indices are 0-based as in C (a stream id is a
 *     rank); the position given to ferry_container_select is 1-based, an
 *     index into the Fortran array of streams named at the mapped open (as
 *     MPI_Waitany's index is in Fortran).
 */
#ifndef FERRY_CONTAINER_FORTRAN_H
#define FERRY_CONTAINER_FORTRAN_H

#include <ISO_Fortran_binding.h>
#include <stdint.h>

#include "ferry_container.h"

/* Where a chunk lies: the module's TYPE(ferry_container_chunk). */
typedef struct ferry_container_f_chunk {
    int file_index;
    MPI_Offset offset; /* in that physical file */
    MPI_Offset used;   /* stream bytes it holds */
} ferry_container_f_chunk_t;

/* The message of the last error on this thread: the shim's own (an
 * argument it could not convert) or the container's. */
FERRY_API const char *ferry_container_f_error_message(void);

FERRY_API void ferry_container_f_open_write(MPI_Fint comm, const CFI_cdesc_t *path, ferry_container_t *container,
                                            const ferry_container_params_t *params, int *ierror);
FERRY_API void ferry_container_f_open_write_modes(MPI_Fint comm, const CFI_cdesc_t *path, ferry_container_t *container,
                                                  const ferry_container_modes_t *modes,
                                                  const ferry_container_params_t *params, int *ierror);
FERRY_API void ferry_container_f_open_read(MPI_Fint comm, const CFI_cdesc_t *path, ferry_container_t *container,
                                           int *ierror);
FERRY_API void ferry_container_f_open_mapped(MPI_Fint comm, const CFI_cdesc_t *path, const CFI_cdesc_t *streams,
                                             ferry_container_t *container, int *ierror);
FERRY_API void ferry_container_f_close(ferry_container_t *container, int *ierror);
FERRY_API void ferry_container_f_write(const ferry_container_t *container, const CFI_cdesc_t *buf, int64_t *bytes_done,
                                       int *ierror);
FERRY_API void ferry_container_f_read(const ferry_container_t *container, const CFI_cdesc_t *buf, int64_t *bytes_done,
                                      int *ierror);
FERRY_API void ferry_container_f_flush(const ferry_container_t *container, int *ierror);
FERRY_API void ferry_container_f_seek(const ferry_container_t *container, int64_t offset, int whence, int *ierror);
FERRY_API void ferry_container_f_tell(const ferry_container_t *container, int64_t *position, int *ierror);
FERRY_API void ferry_container_f_bytes_avail(const ferry_container_t *container, int64_t *bytes, int *ierror);
FERRY_API void ferry_container_f_eof(const ferry_container_t *container, int *flag, int *ierror);
FERRY_API void ferry_container_f_select(const ferry_container_t *container, int position, int *ierror);
FERRY_API void ferry_container_f_info(const ferry_container_t *container, ferry_container_info_t *info, int *ierror);
FERRY_API void ferry_container_f_serial_open(const CFI_cdesc_t *path, ferry_container_set_t *set, const int *flags,
                                             int *ierror);
FERRY_API void ferry_container_f_serial_close(ferry_container_set_t *set, int *ierror);
FERRY_API void ferry_container_f_serial_describe(const ferry_container_set_t *set, int *streams, int *files,
                                                 int *complete, int *ierror);
FERRY_API void ferry_container_f_serial_stream(const ferry_container_set_t *set, int stream,
                                               ferry_container_info_t *info, int *ierror);
FERRY_API void ferry_container_f_serial_file(const ferry_container_set_t *set, int index,
                                             ferry_container_file_info_t *info, int *ierror);
FERRY_API void ferry_container_f_serial_read(const ferry_container_set_t *set, int stream, int64_t position,
                                             const CFI_cdesc_t *buf, int64_t *bytes_done, int *ierror);
FERRY_API void ferry_container_f_serial_chunk(const ferry_container_set_t *set, int stream, int64_t chunk,
                                              ferry_container_f_chunk_t *place, int *ierror);
FERRY_API void ferry_container_f_serial_create(const CFI_cdesc_t *path, const CFI_cdesc_t *chunk_sizes,
                                               ferry_container_set_t *set, const int64_t *block_size,
                                               const int *data_checksums, int *ierror);
FERRY_API void ferry_container_f_serial_write(const ferry_container_set_t *set, int stream, const CFI_cdesc_t *buf,
                                              int *ierror);
FERRY_API void ferry_container_f_verify(const CFI_cdesc_t *path, int64_t *problems, int *incomplete, int *ierror);
FERRY_API void ferry_container_f_recover(const CFI_cdesc_t *path, int64_t *recovered_bytes, int *was_complete,
                                         int *ierror);

#endif

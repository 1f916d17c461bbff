/*
 * The C side of the Fortran module ferry_container: argument conversion
 * around the container's C API (container_fortran.h states the contract and invariants).
 */
#include "container_fortran/container_fortran.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shim's own failures (an argument it cannot convert) have a message
 * here; own_message_valid says whether the last failure on this thread was
 * one of them (else the container's message is the one). */
static _Thread_local char own_message[512];
static _Thread_local int own_message_pending, own_message_valid;

static int own_error(int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(own_message, sizeof own_message, fmt, ap);
    va_end(ap);
    own_message_pending = 1;
    return cls;
}

const char *ferry_container_f_error_message(void)
{
    return own_message_valid ? own_message : ferry_container_error_message();
}

/* The class of code: parallel calls return codes added to a class, serial
 * calls bare classes (and may run without MPI). */
static int class_of(int code)
{
    int initialized = 0, finalized = 0, cls = code;
    if (code == MPI_SUCCESS) return MPI_SUCCESS;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized && MPI_Error_class(code, &cls) != MPI_SUCCESS) cls = code;
    return cls;
}

/* Every entry point's exit: IERROR, or abort when the caller gave none. */
static void finish(int code, int *ierror)
{
    int cls = class_of(code);
    if (cls != MPI_SUCCESS) own_message_valid = own_message_pending;
    own_message_pending = 0;
    if (ierror) {
        *ierror = cls;
        return;
    }
    if (cls == MPI_SUCCESS) return;
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    fprintf(stderr, "ferry_container (Fortran, no IERROR argument given): error class %d: %s\n", cls,
            ferry_container_f_error_message());
    fflush(stderr);
    if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, cls);
    exit(EXIT_FAILURE);
}

/* A NUL-terminated copy of a CHARACTER(LEN=*) argument without its
 * trailing blanks; NULL when out of memory (the caller reports it). */
static char *c_string(const CFI_cdesc_t *text)
{
    size_t len = text->elem_len;
    const char *chars = text->base_addr;
    while (len > 0 && chars[len - 1] == ' ') len--;
    char *copy = malloc(len + 1);
    if (!copy) return NULL;
    if (len > 0) memcpy(copy, chars, len);
    copy[len] = '\0';
    return copy;
}

/* Address and size in bytes of a TYPE(*), DIMENSION(..) argument; nonzero
 * (MPI_ERR_BUFFER) when it is not contiguous. */
static int buffer_of(const char *op, const CFI_cdesc_t *buf, void **base, size_t *bytes)
{
    size_t n = buf->elem_len;
    for (int i = 0; i < buf->rank; i++) n *= (size_t)buf->dim[i].extent;
    *base = buf->base_addr;
    *bytes = n;
    if (buf->rank > 0 && n > 0 && !CFI_is_contiguous(buf))
        return own_error(MPI_ERR_BUFFER, "ferry_container (Fortran): %s: the buffer is not contiguous", op);
    return MPI_SUCCESS;
}

/* A rank-1 integer array of any stride as a contiguous C array of at least
 * one element (a C list of zero names still needs an address). */
static void *packed_list(const CFI_cdesc_t *list, size_t element, size_t *count)
{
    size_t n = list->rank > 0 ? (size_t)list->dim[0].extent : 1;
    char *copy = malloc((n > 0 ? n : 1) * element);
    if (!copy) return NULL;
    ptrdiff_t stride = list->rank > 0 ? list->dim[0].sm : (ptrdiff_t)element;
    for (size_t i = 0; i < n; i++)
        memcpy(copy + i * element, (const char *)list->base_addr + (ptrdiff_t)i * stride, element);
    *count = n;
    return copy;
}

static int out_of_memory(const char *op)
{
    return own_error(MPI_ERR_NO_MEM, "ferry_container (Fortran): %s: out of memory copying an argument", op);
}

/* ---- Parallel API ---- */

/* A rank that could not convert its arguments still takes part in the
 * collective open, with a NULL path that every rank's open refuses
 * together; this rank then reports its own cause. */
void ferry_container_f_open_write(MPI_Fint comm, const CFI_cdesc_t *path, ferry_container_t *container,
                                  const ferry_container_params_t *params, int *ierror)
{
    char *name = c_string(path);
    int own = name ? MPI_SUCCESS : out_of_memory("ferry_container_open_write");
    int code = ferry_container_open_write(MPI_Comm_f2c(comm), name, params, container);
    free(name);
    finish(own ? own : code, ierror);
}

void ferry_container_f_open_write_modes(MPI_Fint comm, const CFI_cdesc_t *path, ferry_container_t *container,
                                        const ferry_container_modes_t *modes, const ferry_container_params_t *params,
                                        int *ierror)
{
    char *name = c_string(path);
    int own = name ? MPI_SUCCESS : out_of_memory("ferry_container_open_write_modes");
    int code = ferry_container_open_write_modes(MPI_Comm_f2c(comm), name, params, modes, container);
    free(name);
    finish(own ? own : code, ierror);
}

void ferry_container_f_open_read(MPI_Fint comm, const CFI_cdesc_t *path, ferry_container_t *container, int *ierror)
{
    char *name = c_string(path);
    int own = name ? MPI_SUCCESS : out_of_memory("ferry_container_open_read");
    int code = ferry_container_open_read(MPI_Comm_f2c(comm), name, container);
    free(name);
    finish(own ? own : code, ierror);
}

void ferry_container_f_open_mapped(MPI_Fint comm, const CFI_cdesc_t *path, const CFI_cdesc_t *streams,
                                   ferry_container_t *container, int *ierror)
{
    size_t count = 0;
    char *name = c_string(path);
    int *ids = packed_list(streams, sizeof(int), &count);
    int own = MPI_SUCCESS;
    if (!name || !ids) own = out_of_memory("ferry_container_open_mapped");
    else if (count > INT32_MAX)
        own = own_error(MPI_ERR_ARG,
                        "ferry_container_open_mapped (Fortran): %zu streams named, more than an int counts", count);
    int code = ferry_container_open_mapped(MPI_Comm_f2c(comm), own ? NULL : name, ids, own ? 0 : (int)count, container);
    free(ids);
    free(name);
    finish(own ? own : code, ierror);
}

void ferry_container_f_close(ferry_container_t *container, int *ierror)
{
    finish(ferry_container_close(container), ierror);
}

/* Moves every byte of buf between it and the selected stream. */
static void transfer(const char *op, int writing, const ferry_container_t *container, const CFI_cdesc_t *buf,
                     int64_t *bytes_done, int *ierror)
{
    void *base;
    size_t bytes, done = 0;
    int code = buffer_of(op, buf, &base, &bytes);
    if (code == MPI_SUCCESS)
        code = writing ? ferry_container_write(*container, base, bytes, &done)
                       : ferry_container_read(*container, base, bytes, &done);
    if (bytes_done) *bytes_done = (int64_t)done;
    finish(code, ierror);
}

void ferry_container_f_write(const ferry_container_t *container, const CFI_cdesc_t *buf, int64_t *bytes_done,
                             int *ierror)
{
    transfer("ferry_container_write", 1, container, buf, bytes_done, ierror);
}

void ferry_container_f_read(const ferry_container_t *container, const CFI_cdesc_t *buf, int64_t *bytes_done,
                            int *ierror)
{
    transfer("ferry_container_read", 0, container, buf, bytes_done, ierror);
}

void ferry_container_f_flush(const ferry_container_t *container, int *ierror)
{
    finish(ferry_container_flush(*container), ierror);
}

void ferry_container_f_seek(const ferry_container_t *container, int64_t offset, int whence, int *ierror)
{
    finish(ferry_container_seek(*container, (MPI_Offset)offset, whence), ierror);
}

void ferry_container_f_tell(const ferry_container_t *container, int64_t *position, int *ierror)
{
    MPI_Offset at = 0;
    int code = ferry_container_tell(*container, &at);
    *position = (int64_t)at;
    finish(code, ierror);
}

void ferry_container_f_bytes_avail(const ferry_container_t *container, int64_t *bytes, int *ierror)
{
    MPI_Offset n = 0;
    int code = ferry_container_bytes_avail(*container, &n);
    *bytes = (int64_t)n;
    finish(code, ierror);
}

void ferry_container_f_eof(const ferry_container_t *container, int *flag, int *ierror)
{
    *flag = 0;
    finish(ferry_container_eof(*container, flag), ierror);
}

void ferry_container_f_select(const ferry_container_t *container, int position, int *ierror)
{
    finish(ferry_container_select(*container, position - 1), ierror);
}

void ferry_container_f_info(const ferry_container_t *container, ferry_container_info_t *info, int *ierror)
{
    finish(ferry_container_info(*container, info), ierror);
}

/* ---- Serial API ---- */

void ferry_container_f_serial_open(const CFI_cdesc_t *path, ferry_container_set_t *set, const int *flags, int *ierror)
{
    char *name = c_string(path);
    int code = name ? ferry_container_serial_open(name, flags ? *flags : 0, set)
                    : out_of_memory("ferry_container_serial_open");
    free(name);
    finish(code, ierror);
}

void ferry_container_f_serial_close(ferry_container_set_t *set, int *ierror)
{
    finish(ferry_container_serial_close(set), ierror);
}

void ferry_container_f_serial_describe(const ferry_container_set_t *set, int *streams, int *files, int *complete,
                                       int *ierror)
{
    *streams = *files = *complete = 0;
    finish(ferry_container_serial_describe(*set, streams, files, complete), ierror);
}

void ferry_container_f_serial_stream(const ferry_container_set_t *set, int stream, ferry_container_info_t *info,
                                     int *ierror)
{
    finish(ferry_container_serial_stream(*set, stream, info), ierror);
}

void ferry_container_f_serial_file(const ferry_container_set_t *set, int index, ferry_container_file_info_t *info,
                                   int *ierror)
{
    finish(ferry_container_serial_file(*set, index, info), ierror);
}

void ferry_container_f_serial_read(const ferry_container_set_t *set, int stream, int64_t position,
                                   const CFI_cdesc_t *buf, int64_t *bytes_done, int *ierror)
{
    void *base;
    size_t bytes, done = 0;
    int code = buffer_of("ferry_container_serial_read", buf, &base, &bytes);
    if (code == MPI_SUCCESS) code = ferry_container_serial_read(*set, stream, (MPI_Offset)position, base, bytes, &done);
    if (bytes_done) *bytes_done = (int64_t)done;
    finish(code, ierror);
}

void ferry_container_f_serial_chunk(const ferry_container_set_t *set, int stream, int64_t chunk,
                                    ferry_container_f_chunk_t *place, int *ierror)
{
    memset(place, 0, sizeof *place);
    finish(
        ferry_container_serial_chunk(*set, stream, (MPI_Offset)chunk, &place->file_index, &place->offset, &place->used),
        ierror);
}

void ferry_container_f_serial_create(const CFI_cdesc_t *path, const CFI_cdesc_t *chunk_sizes,
                                     ferry_container_set_t *set, const int64_t *block_size, const int *data_checksums,
                                     int *ierror)
{
    size_t count = 0;
    char *name = c_string(path);
    MPI_Offset *sizes = packed_list(chunk_sizes, sizeof(MPI_Offset), &count);
    int code = MPI_ERR_ARG;
    if (!name || !sizes) {
        code = out_of_memory("ferry_container_serial_create");
    } else if (count > INT32_MAX) {
        code = own_error(MPI_ERR_ARG, "ferry_container_serial_create (Fortran): %zu streams, more than an int counts",
                         count);
    } else {
        ferry_container_layout_t layout = {(int)count, sizes, block_size ? (MPI_Offset)*block_size : 0,
                                           data_checksums ? *data_checksums : 0};
        code = ferry_container_serial_create(name, &layout, set);
    }
    free(sizes);
    free(name);
    finish(code, ierror);
}

void ferry_container_f_serial_write(const ferry_container_set_t *set, int stream, const CFI_cdesc_t *buf, int *ierror)
{
    void *base;
    size_t bytes;
    int code = buffer_of("ferry_container_serial_write", buf, &base, &bytes);
    if (code == MPI_SUCCESS) code = ferry_container_serial_write(*set, stream, base, bytes);
    finish(code, ierror);
}

void ferry_container_f_verify(const CFI_cdesc_t *path, int64_t *problems, int *incomplete, int *ierror)
{
    ferry_container_check_t check;
    memset(&check, 0, sizeof check);
    char *name = c_string(path);
    int code = name ? ferry_container_verify(name, &check) : out_of_memory("ferry_container_verify");
    free(name);
    if (problems) *problems = (int64_t)check.problems;
    *incomplete = check.incomplete;
    finish(code, ierror);
}

void ferry_container_f_recover(const CFI_cdesc_t *path, int64_t *recovered_bytes, int *was_complete, int *ierror)
{
    MPI_Offset recovered = 0;
    char *name = c_string(path);
    *was_complete = 0;
    int code =
        name ? ferry_container_recover(name, &recovered, was_complete) : out_of_memory("ferry_container_recover");
    free(name);
    if (recovered_bytes) *recovered_bytes = (int64_t)recovered;
    finish(code, ierror);
}

/*
 * A stdio FILE over one stream of a parallel handle (glibc's fopencookie),
 * so code written with fwrite, fprintf and fputs, or fread, fgets and
 * fscanf, moves into a container unchanged; fseek and ftell move the
 * stream's position.
 *
 * A FILE belongs to the stream selected when it was opened, whatever is
 * selected later. stdio buffers what a FILE writes (BUFSIZ) in front of the
 * stream's own buffer, so the handle keeps the list of its FILEs: a
 * container flush first pushes their buffers into the streams, and a
 * container close pushes them and then leaves them attached to nothing
 * (later transfers fail with EBADF, fclose only frees them). Errors set
 * errno (ENOSPC, EDQUOT, EBADF, EINVAL, otherwise EIO) and the FILE's error
 * flag; ferry_container_error_message() gives the container's message.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"

struct ferry__container_cookie {
    ferry_container_t c; /* borrowed; NULL once the container is closed */
    int index;           /* of the stream in c->streams */
    FILE *file;
    int failed;          /* the class of the last failed transfer */
    struct ferry__container_cookie *next; /* in c->cookies */
};
typedef struct ferry__container_cookie cookie_t;

static int errno_of(int cls)
{
    switch (cls) {
    case MPI_ERR_NO_SPACE: return ENOSPC;
    case MPI_ERR_QUOTA: return EDQUOT;
    case MPI_ERR_READ_ONLY:
    case MPI_ERR_ACCESS: return EBADF;
    case MPI_ERR_ARG: return EINVAL;
    default: return EIO;
    }
}

/* A failed transfer: the container's message, errno, and stdio's error flag (by the return value). */
static int failure(cookie_t *k, int cls, const char *what)
{
    k->failed = cls;
    if (k->c) ferry__container_fail(cls, k->c->path, k->c->rank, what);
    errno = errno_of(cls);
    return cls;
}

static int detached(cookie_t *k)
{
    if (k->c) return 0;
    k->failed = ferry__error_set(MPI_ERR_FILE, "ferry container FILE: its container was closed");
    errno = EBADF;
    return 1;
}

static ssize_t cookie_read(void *arg, char *buf, size_t len)
{
    cookie_t *k = arg;
    size_t done = 0;
    if (detached(k)) return -1;
    int cls = ferry__container_stream_read(&k->c->streams[k->index], buf, len, &done);
    if (cls && done == 0) return failure(k, cls, "fread"), -1;
    return (ssize_t)done; /* a failure after some bytes shows at the next read */
}

static ssize_t cookie_write(void *arg, const char *buf, size_t len)
{
    cookie_t *k = arg;
    size_t done = 0;
    if (detached(k)) return 0;
    int cls = ferry__container_write_stream(k->c, &k->c->streams[k->index], buf, len, &done);
    if (cls) failure(k, cls, "fwrite");
    return (ssize_t)done; /* stdio takes fewer bytes than asked as an error */
}

static int cookie_seek(void *arg, off64_t *offset, int whence)
{
    cookie_t *k = arg;
    if (detached(k)) return -1;
    int mpi_whence = whence == SEEK_SET ? MPI_SEEK_SET : whence == SEEK_CUR ? MPI_SEEK_CUR
                   : whence == SEEK_END ? MPI_SEEK_END : -1;
    ferry__container_stream_t *s = &k->c->streams[k->index];
    int cls = ferry__container_seek(k->c, s, (MPI_Offset)*offset, mpi_whence, "fseek");
    if (cls) return k->failed = cls, errno = errno_of(cls), -1;
    *offset = (off64_t)s->position;
    return 0;
}

static int cookie_close(void *arg)
{
    cookie_t *k = arg;
    for (cookie_t **at = k->c ? &k->c->cookies : NULL; at && *at; at = &(*at)->next)
        if (*at == k) {
            *at = k->next;
            break;
        }
    ferry__free(k);
    return 0;
}

/* "r", "w" or "a", each with an optional "b"; 'r', 'w' or 'a' in *kind. */
static int parse_mode(const char *mode, char *kind)
{
    if (!mode || !strchr("rwa", mode[0]) || !mode[0]) return 0;
    *kind = mode[0];
    return strcmp(mode + 1, "") == 0 || strcmp(mode + 1, "b") == 0;
}

static FILE *refuse(ferry_container_t c, int cls, const char *why)
{
    if (c) ferry__error_set(cls, "ferry container '%s' rank %d: ferry_container_fopen: %s", c->path, c->rank, why);
    else ferry__error_set(cls, "ferry_container_fopen: %s", why);
    errno = errno_of(cls);
    return NULL;
}

FILE *ferry_container_fopen(ferry_container_t c, const char *mode)
{
    char kind = 0;
    if (!c) return refuse(c, MPI_ERR_ARG, "NULL container");
    if (!parse_mode(mode, &kind)) return refuse(c, MPI_ERR_ARG, "mode is not \"r\", \"w\" or \"a\" (with \"b\")");
    if (c->nstreams == 0) return refuse(c, MPI_ERR_ARG, "this rank opened no stream");
    if ((kind == 'r') == (c->writing != 0))
        return refuse(c, c->writing ? MPI_ERR_ACCESS : MPI_ERR_READ_ONLY,
                      c->writing ? "opened for writing: mode \"w\" or \"a\"" : "opened for reading: mode \"r\"");
    cookie_t *k = ferry__calloc(1, sizeof *k);
    if (!k) return refuse(c, MPI_ERR_NO_MEM, "out of memory");
    cookie_io_functions_t io = {kind == 'r' ? cookie_read : NULL, kind == 'r' ? NULL : cookie_write, cookie_seek,
                                cookie_close};
    k->c = c;
    k->index = c->current;
    k->file = fopencookie(k, kind == 'r' ? "r" : "w", io);
    if (!k->file) {
        ferry__free(k);
        return refuse(c, MPI_ERR_NO_MEM, "fopencookie failed");
    }
    ferry__container_stream_t *s = &c->streams[k->index];
    if (kind == 'a') ferry__container_move(c, s, s->length);
    k->next = c->cookies;
    c->cookies = k;
    return k->file;
}

int ferry__container_cookies_flush(ferry_container_t c)
{
    int cls = 0;
    for (cookie_t *k = c->cookies; k; k = k->next) {
        k->failed = 0;
        if (fflush(k->file) != 0 && !cls)
            cls = k->failed ? k->failed : ferry__error_set(MPI_ERR_IO, "fflush of a FILE failed");
    }
    return cls;
}

void ferry__container_cookies_orphan(ferry_container_t c)
{
    for (cookie_t *k = c->cookies; k; k = k->next) k->c = NULL;
    c->cookies = NULL;
}

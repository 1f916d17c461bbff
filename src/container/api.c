/*
 * The independent calls of the parallel API: each works on the handle's
 * selected stream alone, with no communication, and names the container,
 * the rank and the cause when it fails.
 */
#include <stdio.h>
#include <string.h>

#include "container/container_int.h"
#include "error/error.h"

/* The selected stream, or NULL with an error recorded. */
static ferry__container_stream_t *selected(ferry_container_t c, const char *what, int *cls)
{
    *cls = 0;
    if (!c) *cls = ferry__error_set(MPI_ERR_ARG, "%s: NULL container", what);
    else if (c->nstreams == 0)
        *cls = ferry__error_set(MPI_ERR_ARG, "ferry container '%s' rank %d: %s: this rank opened no stream", c->path,
                                c->rank, what);
    return *cls ? NULL : &c->streams[c->current];
}

static int failed(ferry_container_t c, int cls, const char *what)
{
    return ferry__container_return(ferry__container_fail(cls, c->path, c->rank, what));
}

static int misuse(ferry_container_t c, const char *what, const char *why)
{
    return ferry__container_return(ferry__error_set(MPI_ERR_ARG, "ferry container '%s' rank %d: %s: %s", c->path,
                                                    c->rank, what, why));
}

int ferry_container_write(ferry_container_t c, const void *buf, size_t len, size_t *done)
{
    int cls;
    size_t ignored;
    ferry__container_stream_t *s = selected(c, "ferry_container_write", &cls);
    if (!s) return ferry__container_return(cls);
    if (!done) done = &ignored;
    *done = 0;
    if (!c->writing)
        return ferry__container_return(ferry__error_set(MPI_ERR_READ_ONLY, "ferry container '%s' rank %d: "
                                                        "ferry_container_write: opened for reading", c->path, c->rank));
    if (!buf && len) return misuse(c, "ferry_container_write", "NULL buffer");
    cls = ferry__container_write_stream(c, s, buf, len, done); /* and its buddy copy */
    return cls ? failed(c, cls, "ferry_container_write") : MPI_SUCCESS;
}

int ferry_container_read(ferry_container_t c, void *buf, size_t len, size_t *done)
{
    int cls;
    size_t ignored;
    ferry__container_stream_t *s = selected(c, "ferry_container_read", &cls);
    if (!s) return ferry__container_return(cls);
    if (!done) done = &ignored;
    *done = 0;
    if (c->writing)
        return ferry__container_return(ferry__error_set(MPI_ERR_ACCESS, "ferry container '%s' rank %d: "
                                                        "ferry_container_read: opened for writing", c->path, c->rank));
    if (!buf && len) return misuse(c, "ferry_container_read", "NULL buffer");
    cls = ferry__container_stream_read(s, buf, len, done);
    return cls ? failed(c, cls, "ferry_container_read") : MPI_SUCCESS;
}

int ferry_container_flush(ferry_container_t c)
{
    int cls;
    ferry__container_stream_t *s = selected(c, "ferry_container_flush", &cls);
    if (!s) return ferry__container_return(cls);
    cls = ferry__container_cookies_flush(c); /* what FILEs buffer first (cookie.c) */
    /* Collective over its collector group in collective mode. */
    int flushed = ferry__container_flush_stream(c, "ferry_container_flush");
    cls = cls ? cls : flushed;
    return cls ? failed(c, cls, "ferry_container_flush") : MPI_SUCCESS;
}

int ferry__container_seek(ferry_container_t c, ferry__container_stream_t *s, MPI_Offset offset, int whence,
                          const char *what)
{
    MPI_Offset base = whence == MPI_SEEK_SET ? 0 : whence == MPI_SEEK_CUR ? (MPI_Offset)s->position
                                                 : (MPI_Offset)s->length;
    const char *why = whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR && whence != MPI_SEEK_END
                          ? "whence is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END"
                      : offset < -base || (offset > 0 && base > INT64_MAX - offset)
                          ? "the position would be negative or beyond 2^63"
                          : NULL;
    if (why) return ferry__error_set(MPI_ERR_ARG, "ferry container '%s' rank %d: %s: %s", c->path, c->rank, what, why);
    int cls = ferry__container_move(c, s, (uint64_t)(base + offset));
    return cls ? ferry__container_fail(cls, c->path, c->rank, what) : 0;
}

int ferry_container_seek(ferry_container_t c, MPI_Offset offset, int whence)
{
    int cls;
    ferry__container_stream_t *s = selected(c, "ferry_container_seek", &cls);
    if (!s) return ferry__container_return(cls);
    return ferry__container_return(ferry__container_seek(c, s, offset, whence, "ferry_container_seek"));
}

int ferry_container_tell(ferry_container_t c, MPI_Offset *position)
{
    int cls;
    ferry__container_stream_t *s = selected(c, "ferry_container_tell", &cls);
    if (!s) return ferry__container_return(cls);
    if (!position) return misuse(c, "ferry_container_tell", "NULL position");
    *position = (MPI_Offset)s->position;
    return MPI_SUCCESS;
}

int ferry_container_bytes_avail(ferry_container_t c, MPI_Offset *bytes)
{
    int cls;
    ferry__container_stream_t *s = selected(c, "ferry_container_bytes_avail", &cls);
    if (!s) return ferry__container_return(cls);
    if (!bytes) return misuse(c, "ferry_container_bytes_avail", "NULL result");
    uint64_t cap = ferry__container_capacity(&s->geo);
    if (c->writing) *bytes = (MPI_Offset)(cap - s->position % cap);
    else *bytes = s->position < s->length ? (MPI_Offset)(s->length - s->position) : 0;
    return MPI_SUCCESS;
}

int ferry_container_eof(ferry_container_t c, int *flag)
{
    int cls;
    ferry__container_stream_t *s = selected(c, "ferry_container_eof", &cls);
    if (!s) return ferry__container_return(cls);
    if (!flag) return misuse(c, "ferry_container_eof", "NULL flag");
    *flag = s->position >= s->length;
    return MPI_SUCCESS;
}

int ferry_container_select(ferry_container_t c, int index)
{
    if (!c) return ferry__container_return(ferry__error_set(MPI_ERR_ARG, "ferry_container_select: NULL container"));
    if (index < 0 || index >= c->nstreams) return misuse(c, "ferry_container_select", "no such stream index");
    c->current = index;
    return MPI_SUCCESS;
}

int ferry_container_info(ferry_container_t c, ferry_container_info_t *info)
{
    int cls;
    ferry__container_stream_t *s = selected(c, "ferry_container_info", &cls);
    if (!s) return ferry__container_return(cls);
    if (!info) return misuse(c, "ferry_container_info", "NULL info");
    memset(info, 0, sizeof *info);
    info->stream = (int)s->stream;
    info->streams = (int)c->stream_count;
    info->files = (int)c->file_count;
    info->file_index = (int)s->file_index;
    info->length = (MPI_Offset)s->length;
    info->chunk_size = (MPI_Offset)s->geo.chunk_size;
    info->chunk_capacity = (MPI_Offset)ferry__container_capacity(&s->geo);
    info->chunks = (MPI_Offset)ferry__container_chunks_for(&s->geo, s->length);
    info->block_size = (MPI_Offset)c->block_size;
    info->data_checksums = s->checksums;
    info->write_failed = s->failed != 0 || s->write_failed;
    info->metadata_calls = c->meta_calls;
    return MPI_SUCCESS;
}

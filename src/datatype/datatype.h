/*
 * datatype: typed memory buffers seen as byte streams.
 *
 * (buf, count, type) is a stream of count * size(type) bytes. Every other
 * module moves bytes between such a stream and contiguous staging memory
 * through ferry__datatype_pack/unpack, which take a window [skip, skip+len)
 * of the stream that may start and end inside an element.
 *
 * This first version delegates to the host's MPI_Pack/MPI_Unpack one
 * element group at a time; the listless engine (issue 3) replaces it
 * behind the same three functions.
 */
#ifndef FERRY_DATATYPE_H
#define FERRY_DATATYPE_H

#include <stdint.h>

#include "ferry.h"

typedef struct ferry__typeinfo {
    MPI_Count size;        /* bytes in one element's stream */
    MPI_Count extent;      /* stride between elements */
    MPI_Count true_lb;     /* first byte touched, relative to buf */
    MPI_Count true_extent; /* bytes spanned by one element */
    int contiguous;        /* one element's stream is bytes [true_lb, true_lb + size) in order */
} ferry__typeinfo_t;

/* Fills *info for a committed datatype. Returns 0 or MPI_ERR_TYPE. */
int ferry__datatype_info(MPI_Datatype type, ferry__typeinfo_t *info);

/* True when count elements form one run of bytes starting at buf + true_lb. */
int ferry__datatype_stream_contiguous(const ferry__typeinfo_t *info, MPI_Count count);

/* Copies stream bytes [skip, skip + len) of (buf, count, type) to dst. */
int ferry__datatype_pack(const void *buf, MPI_Count count, MPI_Datatype type, MPI_Count skip, void *dst,
                         MPI_Count len);

/* Copies len bytes from src into stream bytes [skip, skip + len) of (buf, count, type). */
int ferry__datatype_unpack(const void *src, MPI_Count len, void *buf, MPI_Count count, MPI_Datatype type,
                           MPI_Count skip);

/* buf displaced by delta bytes, without pointer arithmetic on MPI_BOTTOM. */
static inline void *ferry__datatype_at(const void *buf, MPI_Count delta)
{
    return (void *)((uintptr_t)buf + (uintptr_t)(intptr_t)delta);
}

#endif

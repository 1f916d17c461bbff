/*
 * datarep: how a data representation stores typed data in the file
 * (MPI-3.1 13.5): "native", "internal", "external32" and representations
 * registered with ferry_Register_datarep.
 *
 * A representation is used in two places. The file view's filetype and
 * etype are laid out in the representation's sizes (external32 stores
 * MPI_LONG in 4 bytes, MPI_LONG_DOUBLE in 16), so set_view asks for the
 * filetype's file layout once. A transfer converts between the caller's
 * memory stream and the file stream, which may differ in length; windows
 * are counted in file-stream bytes. None of these functions is collective
 * or keeps a caller's buffer beyond a stream's life (see below). Errors: MPI_ERR_UNSUPPORTED_DATAREP,
 * MPI_ERR_CONVERSION, MPI_ERR_TYPE, MPI_ERR_NO_MEM.
 */
#ifndef FERRY_DATAREP_H
#define FERRY_DATAREP_H

#include "ferry.h"

typedef struct ferry__datarep ferry__datarep_t; /* registry entry: borrowed, lives until MPI_Finalize */

/* The representation named `name`, or MPI_ERR_UNSUPPORTED_DATAREP. */
int ferry__datarep_find(const char *name, const ferry__datarep_t **rep);

/* Its name, as given to set_view. */
const char *ferry__datarep_name(const ferry__datarep_t *rep);

/* True when file bytes are memory bytes (native, internal): no conversion,
 * and file layouts are memory layouts. */
int ferry__datarep_is_native(const ferry__datarep_t *rep);

/* Bytes one element of type occupies in the file stream. */
int ferry__datarep_size(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Count *size);

/* MPI_File_get_type_extent: the extent of type in this representation. */
int ferry__datarep_extent(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Count *extent);

/* A committed datatype whose layout is type's layout in this representation
 * (each predefined type replaced by a block of its file size), for the
 * datatype engine to navigate. Owned by the caller: MPI_Type_free it. For
 * native representations it is a duplicate of type. */
int ferry__datarep_file_layout(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Datatype *layout);

/* The memory side of a conversion: the caller's (buf, count, type). */
typedef struct ferry__datarep_memory {
    void *buf; /* const for packing */
    MPI_Count count;
    MPI_Datatype type;
} ferry__datarep_memory_t;

/* A conversion between memory and the file stream of a representation,
 * fed windows of the file stream (in file-stream bytes; windows may cut
 * elements). A transfer opens one for its memory, feeds it its windows and
 * closes it: the memory's signature and external32's staging chunk are
 * built once, and when reads come in ascending windows an element cut
 * between two windows is stored whole once its last bytes arrive (the
 * stream keeps its leading bytes). In any other order a cut element is
 * stored only as far as the window's bytes determine it alone (byte-order
 * and integer-widening conversions: fully; long double, LOGICAL and user
 * conversions: not at all); callers that cannot read in order cut windows
 * with ferry__datarep_item_floor. One thread at a time. */
typedef struct ferry__datarep_stream ferry__datarep_stream_t;
int ferry__datarep_stream_open(const ferry__datarep_t *rep, const ferry__datarep_memory_t *mem,
                               ferry__datarep_stream_t **stream);
void ferry__datarep_stream_close(ferry__datarep_stream_t *stream); /* NULL: nothing */

/* Writes file-stream bytes [skip, skip + len) of the memory to dst.
 * MPI_ERR_CONVERSION when a value in the window does not fit its file size
 * (an MPI_LONG beyond 32 bits in external32) or a user conversion function
 * fails; MPI_ERR_ARG for a window outside the stream. */
int ferry__datarep_stream_pack(ferry__datarep_stream_t *stream, MPI_Count skip, void *dst, MPI_Count len);

/* Stores file-stream bytes [skip, skip + len), given in src, into the memory. */
int ferry__datarep_stream_unpack(ferry__datarep_stream_t *stream, const void *src, MPI_Count len, MPI_Count skip);

/* One window alone (a stream opened, fed once and closed): for native
 * representations ferry__datatype_pack/unpack. */
int ferry__datarep_pack(const ferry__datarep_t *rep, const ferry__datarep_memory_t *mem, MPI_Count skip, void *dst,
                        MPI_Count len);
int ferry__datarep_unpack(const ferry__datarep_t *rep, const void *src, MPI_Count len,
                          const ferry__datarep_memory_t *mem, MPI_Count skip);

/* The largest file-stream position <= pos of (count, type) at which a
 * predefined element starts (pos itself for native representations and at
 * or past the end of the stream): where a read window may end without
 * cutting an element. */
int ferry__datarep_item_floor(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Count count, MPI_Count pos,
                              MPI_Count *floor);

/* Memory-stream bytes of (count, type) that the first file_bytes of its
 * file stream hold whole elements of (file_bytes itself for native
 * representations): what a status reports after a converted transfer
 * moved file_bytes. */
int ferry__datarep_native_bytes(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Count count,
                                MPI_Count file_bytes, MPI_Count *native);

/* Frees registered representations (MPI_Finalize hook). */
void ferry__datarep_finalize(void);

#endif

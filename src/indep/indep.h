/*
 * indep: independent transfers between a typed memory buffer and a window
 * of the file view's data stream.
 *
 * A transfer moves file-stream bytes [skip, skip + count * size) of the
 * view (sizes in the view's data representation). It walks the view's file
 * segments in batches of at most hints.pack_buffer_size stream bytes and
 * serves each batch either by one file-system call per segment ("vectored")
 * or by data sieving (bounded windows read, patched and, for writes,
 * written back under a byte-range lock), whichever the cost model in
 * cost.c finds cheaper. Memory that is one contiguous native run is used in
 * place; other memory is staged through the datatype engine. Not collective.
 */
#ifndef FERRY_INDEP_H
#define FERRY_INDEP_H

#include "core/core.h"

/* Writes count elements of (buf, type) at view stream byte skip. *done:
 * file-stream bytes written. */
int ferry__indep_write(ferry_File fh, MPI_Offset skip, const void *buf, MPI_Count count, MPI_Datatype type,
                       MPI_Count *done);

/* Reads up to count elements; *done (file-stream bytes) falls short only at
 * end of file: it counts the stream bytes before the first byte past the end. */
int ferry__indep_read(ferry_File fh, MPI_Offset skip, void *buf, MPI_Count count, MPI_Datatype type,
                      MPI_Count *done);

#endif

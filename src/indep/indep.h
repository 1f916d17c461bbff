/*
 * indep: independent transfers between a typed memory buffer and the file.
 *
 * The foundation's file side is one contiguous byte range starting at a
 * byte offset. Contiguous memory goes to the file system in one call;
 * noncontiguous memory is staged through a buffer of at most
 * hints.pack_buffer_size bytes. Not collective.
 */
#ifndef FERRY_INDEP_H
#define FERRY_INDEP_H

#include "core/core.h"

/* Writes count elements of type from buf at byte offset. *done: bytes written. */
int ferry__indep_write(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype type,
                       MPI_Count *done);

/* Reads up to count elements; *done < the request only at end of file. */
int ferry__indep_read(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype type,
                      MPI_Count *done);

#endif

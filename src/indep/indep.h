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

#include "request/request.h"

/* Moves req's memory (count elements of type at buf) to or from view stream
 * bytes from req->skip on, in the direction of req->call, counting into
 * req->ctx; adds the file-stream bytes moved to req->done. A read moves
 * less only at end of file: what lies before the first byte past the end. */
int ferry__indep_transfer(ferry__request_t *req);

#endif

/*
 * datatype: typed memory buffers seen as byte streams (the listless engine).
 *
 * (buf, count, type) is a stream of count * size(type) bytes; element i
 * starts at buf + i * extent(type). Other modules move bytes between such a
 * stream and contiguous memory with ferry__datatype_pack/unpack, which copy
 * a window [skip, skip + len) that may start and end inside an element, and
 * locate stream bytes with the navigation calls below. None of them walks
 * block lists: a datatype is decoded once into a small normalized tree,
 * cached on the datatype, and every call costs O(tree depth) plus the bytes
 * it copies or the segments it returns. No function here is collective;
 * none keeps a pointer to a caller's buffer. Errors: MPI_ERR_TYPE for an
 * invalid or unsupported datatype, MPI_ERR_NO_MEM, MPI_ERR_ARG for a window
 * outside the stream or navigation a type does not allow.
 */
#ifndef FERRY_DATATYPE_H
#define FERRY_DATATYPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ferry.h"

typedef struct ferry__typeinfo {
    MPI_Count size;        /* bytes in one element's stream */
    MPI_Count extent;      /* stride between elements */
    MPI_Count true_lb;     /* first byte touched, relative to buf */
    MPI_Count true_extent; /* bytes spanned by one element */
    int contiguous;        /* one element's stream is bytes [true_lb, true_lb + size) in order */
    MPI_Count lb;          /* lower bound (ub = lb + extent) */
    int monotone;          /* over any count, each stream byte lies above the previous one
                            * (what MPI-IO requires of etypes and filetypes) */
    int monotone_element;  /* within one element, each stream byte lies above the previous one
                            * (elements may still overlap: an extent below the span) */
    int nonoverlapping;    /* no byte is touched twice within one element (0: unknown) */
    size_t tree_nodes;     /* decoded tree: nodes and bytes (0 for predefined types) */
    size_t tree_bytes;
} ferry__typeinfo_t;

/* Fills *info for a committed datatype. Returns 0 or MPI_ERR_TYPE. */
int ferry__datatype_info(MPI_Datatype type, ferry__typeinfo_t *info);

/* 1 when type is committed (predefined types always are), 0 when it is not
 * or is not a datatype (MPI_DATATYPE_NULL). Asks the host each time. */
int ferry__datatype_committed(MPI_Datatype type);

/* True when count elements form one run of bytes starting at buf + true_lb. */
int ferry__datatype_stream_contiguous(const ferry__typeinfo_t *info, MPI_Count count);

/* Copies stream bytes [skip, skip + len) of (buf, count, type) to dst. */
int ferry__datatype_pack(const void *buf, MPI_Count count, MPI_Datatype type, MPI_Count skip, void *dst,
                         MPI_Count len);

/* Copies len bytes from src into stream bytes [skip, skip + len) of (buf, count, type). */
int ferry__datatype_unpack(const void *src, MPI_Count len, void *buf, MPI_Count count, MPI_Datatype type,
                           MPI_Count skip);

/* Byte offset from buf of stream byte n of (buf, any count, type). */
int ferry__datatype_offset(MPI_Datatype type, MPI_Count n, MPI_Count *offset);

/* For monotone types: how many stream bytes of (buf, count, type) lie at
 * offsets below `offset` from buf. MPI_ERR_ARG if type is not monotone. */
int ferry__datatype_bytes_below(MPI_Datatype type, MPI_Count count, MPI_Count offset, MPI_Count *n);

/* The seed paper's navigation over the type tiled without end (a file view),
 * for monotone types. ff_size: stream bytes from byte `skip` on that fit
 * below offset(skip) + extent. ff_extent: bytes of memory from stream byte
 * skip's offset to just past byte skip + size - 1 (0 for size 0). */
int ferry__datatype_ff_size(MPI_Datatype type, MPI_Count skip, MPI_Count extent, MPI_Count *size);
int ferry__datatype_ff_extent(MPI_Datatype type, MPI_Count skip, MPI_Count size, MPI_Count *extent);

/* Vectored access: the (offset from buf, length) pieces of a stream window,
 * adjacent pieces merged, a bounded batch per call. */
typedef struct ferry__datatype_segment {
    MPI_Count offset;
    MPI_Count length;
} ferry__datatype_segment_t;

typedef struct ferry__datatype_cursor {
    MPI_Datatype type; /* borrowed: must outlive the cursor */
    MPI_Count pos;     /* next stream byte */
    MPI_Count end;     /* one past the window's last stream byte */
} ferry__datatype_cursor_t;

/* Starts a cursor over stream bytes [skip, skip + len) of (buf, any count, type). */
void ferry__datatype_cursor_init(ferry__datatype_cursor_t *cursor, MPI_Datatype type, MPI_Count skip,
                                 MPI_Count len);

/* Fills up to max segments from the cursor and advances it; *n is 0 when
 * the window is exhausted. */
int ferry__datatype_segments(ferry__datatype_cursor_t *cursor, ferry__datatype_segment_t *segs, int max, int *n);

/* The type's decoded tree as a self-contained blob (serialize.c), and a
 * committed host datatype with the same type map, lb and extent rebuilt
 * from it on any rank. serialize returns *blob owned (ferry__free);
 * deserialize returns *type owned (MPI_Type_free). A block longer than an
 * int or a list of more than INT_MAX entries cannot be rebuilt:
 * MPI_ERR_UNSUPPORTED_OPERATION. */
int ferry__datatype_serialize(MPI_Datatype type, void **blob, size_t *len);
int ferry__datatype_deserialize(const void *blob, size_t len, MPI_Datatype *type);

/* Rewrites a blob so that its type map lies lower by the displacements of
 * its chain of single-child nodes from the root, and returns that shift:
 * blobs of one shape at different places (a subarray's blocks owned by
 * different ranks) become equal. lb and extent stay as they were, so the
 * caller adds the shift where the bytes are placed (a file view's
 * displacement: tiles are placed by the extent alone). No root: 0. */
MPI_Count ferry__datatype_blob_hoist(void *blob, size_t len);

/* The bytes the blob would take in the format that preceded its compact
 * block lists (issue 20), every value a 64-bit word: 16 bytes a block-list
 * entry instead of the 1-4 it mostly takes now. What a rebuilt host datatype's memory
 * grows with (per block, not per serialized byte), for estimates made
 * before rebuilding. Read from the blob's header in O(1), not checked
 * against its body; a blob too short for a header, or whose word is below
 * 32 or above 16 * len (no valid blob's is), gives len. */
size_t ferry__datatype_blob_expanded(const void *blob, size_t len);

/* Copies stream bytes [src_skip, src_skip + len) of (src, any count,
 * src_type) to stream bytes [dst_skip, ...) of (dst, any count, dst_type),
 * piece by piece without staging (copy.c): one cursor step per piece. */
int ferry__datatype_copy(const void *src, MPI_Datatype src_type, MPI_Count src_skip, void *dst,
                         MPI_Datatype dst_type, MPI_Count dst_skip, MPI_Count len);
/* Mean length of the contiguous pieces among the first `probe` stream
 * bytes of type (at most 256 pieces looked at). */
int ferry__datatype_mean_run(MPI_Datatype type, MPI_Count probe, MPI_Count *mean);

/* Prints type's decoded tree (tests and debugging). */
int ferry__datatype_dump(MPI_Datatype type, FILE *out);

/* A host datatype's envelope and contents (contents.c), for code that
 * walks a type's construction: the classic and the MPI-4 large-count
 * layouts behind one set of argument cursors, which read the arguments in
 * the order of the constructor's signature and set `overrun` instead of
 * reading past the end. */
typedef struct ferry__datatype_contents {
    int combiner;
    int large;        /* counts and displacements come from counts[] */
    int disp_in_ints; /* MPICH's MPI-1 Fortran *_INTEGER combiners */
    MPI_Count ni, na, nc, nd;
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    MPI_Datatype *types;
    MPI_Count ic, ac, cc; /* argument cursors */
    int overrun;
    int have_types; /* types[] holds handles to release */
} ferry__datatype_contents_t;

/* Fills the envelope part of a zeroed *c. */
int ferry__datatype_envelope(MPI_Datatype type, ferry__datatype_contents_t *c);
/* Fetches the contents after ferry__datatype_envelope; release in any case. */
int ferry__datatype_contents(MPI_Datatype type, ferry__datatype_contents_t *c);
/* Frees the arrays and the derived child types; leaves *c zeroed. */
void ferry__datatype_contents_release(ferry__datatype_contents_t *c);
/* Named and f90 types: predefined, their contents' copies are not freed. */
int ferry__datatype_predefined_combiner(int combiner);
/* The next int (ndims, order...), count, or byte displacement argument. */
MPI_Count ferry__datatype_arg_int(ferry__datatype_contents_t *c);
MPI_Count ferry__datatype_arg_count(ferry__datatype_contents_t *c);
MPI_Count ferry__datatype_arg_disp(ferry__datatype_contents_t *c);

/* buf displaced by delta bytes, without pointer arithmetic on MPI_BOTTOM. */
static inline void *ferry__datatype_at(const void *buf, MPI_Count delta)
{
    return (void *)((uintptr_t)buf + (uintptr_t)(intptr_t)delta);
}

#endif

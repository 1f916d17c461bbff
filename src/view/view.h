/*
 * view: file views (MPI-3.1 13.3): where the bytes of a rank's data stream
 * live in the file.
 *
 * A view is disp + a filetype tiled without end, in a data representation.
 * The view keeps the filetype laid out in the representation ("layout");
 * the datatype engine navigates it, so mapping a stream position to a file
 * offset, finding the stream bytes below end of file, and producing the file
 * segments of a stream window cost O(tree depth) plus the segments returned,
 * never a list of blocks. Positions here are stream bytes (etype offsets
 * times etype_size). Nothing in this module is collective.
 */
#ifndef FERRY_VIEW_H
#define FERRY_VIEW_H

#include "datarep/datarep.h"
#include "datatype/datatype.h"

typedef struct ferry__view {
    MPI_Offset disp;       /* bytes */
    MPI_Datatype etype;    /* the caller's, for get_view: predefined as is, derived duplicated (owned) */
    MPI_Datatype filetype; /* likewise */
    MPI_Datatype layout;   /* filetype in the representation's layout (owned unless predefined) */
    MPI_Count etype_size;  /* file-stream bytes per etype */
    MPI_Count tile_size;   /* file-stream bytes per filetype; 0: the empty view */
    MPI_Count tile_extent; /* bytes of file per filetype */
    int tiles_overlap;     /* the filetype spans more file than its extent (parallel HDF5 builds such
                            * types: resized members make the lower bound sticky above the first
                            * byte), so its tiles overlap. layout is then the filetype resized to
                            * its span: equal in the first tile, monotone when tiled; data access
                            * must stay in the first tile (ferry__view_check_access) */
    int self_overlapping;  /* the filetype touches some file bytes twice (its runs overlap, or its copies do),
                            * which MPI-3.1 13.3 allows only where the file cannot be written (a view built
                            * by ferry__view_build_read_only): stream order is not file order, so only
                            * file_offset, stream_below and the segment cursor apply, not the buffer
                            * functions, and reads go through mpiio/overlap.c */
    MPI_Count tile_end;    /* relative to disp: the end of the first tile's data (tiles_overlap, self_overlapping) */
    int contiguous;        /* stream byte r is file byte disp + r */
    const ferry__datarep_t *rep;
} ferry__view_t;

/* A view whose filetype has size 0 has no stream bytes: an access through
 * it moves nothing (ROMIO and OMPIO accept such views; HDF5 and PnetCDF set
 * them on ranks with nothing to access). It counts as contiguous. */
static inline int ferry__view_is_empty(const ferry__view_t *view)
{
    return view->tile_size == 0;
}

/* The default view (disp 0, MPI_BYTE, MPI_BYTE, "native") on a view that owns nothing. */
void ferry__view_init(ferry__view_t *view);

/* Frees what the view owns and makes it the default view. */
void ferry__view_release(ferry__view_t *view);

/* Validates and builds a view into *view (which must own nothing) for a
 * file that can be written. On failure returns the class with a message
 * naming `filename`, and *view owns nothing: MPI_ERR_TYPE for a null or
 * undecodable etype or filetype; MPI_ERR_IO for types that break the view
 * rules of MPI-3.1 13.3 (negative or decreasing displacements, overlapping
 * regions, a filetype not made of whole etypes, an empty etype, a
 * filetype extent that is not positive: MPICH's class, see view.c);
 * MPI_ERR_ARG, MPI_ERR_UNSUPPORTED_DATAREP, ... for the other arguments. */
int ferry__view_build(ferry__view_t *view, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, const char *filename);

/* The same for a file that cannot be written (MPI_MODE_RDONLY): etype and
 * filetype may overlap themselves (the view is then self_overlapping). */
int ferry__view_build_read_only(ferry__view_t *view, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                                const char *datarep, const char *filename);

/* Whether stream bytes [skip, skip + len) lie below FERRY_OFFSET_MAX
 * (base/checked.h) in the file: 0, or MPI_ERR_ARG naming the call `op`,
 * the file and the etype offset. Every offset computed for such bytes is
 * then exact. */
int ferry__view_check_reach(const ferry__view_t *view, MPI_Offset skip, MPI_Count len, const char *op,
                            const char *filename);

/* Data access to stream bytes [skip, skip + len) by the call `op`: 0,
 * MPI_ERR_ARG when they do not lie below FERRY_OFFSET_MAX, or
 * MPI_ERR_UNSUPPORTED_OPERATION when the view's tiles overlap and the
 * window leaves the first tile. */
int ferry__view_check_access(const ferry__view_t *view, MPI_Offset skip, MPI_Count len, const char *op,
                             const char *filename);

/* File offset of stream byte r (r >= 0); MPI_ERR_ARG past FERRY_OFFSET_MAX. */
int ferry__view_file_offset(const ferry__view_t *view, MPI_Offset r, MPI_Offset *offset);

/* How many stream bytes lie in file bytes below `end`; for a
 * self_overlapping view, the longest stream prefix that does. */
int ferry__view_stream_below(const ferry__view_t *view, MPI_Offset end, MPI_Offset *bytes);

/* A buffer holding the file bytes from offset `first` on: stream bytes
 * [pos, pos + len) move between it and data (packed back to back),
 * into_buffer 1: data -> buffer. Used by data sieving and by two-phase
 * aggregators, both of whom hold windows of the file. */
int ferry__view_buffer_copy(const ferry__view_t *view, char *buffer, MPI_Offset first, MPI_Offset pos,
                            MPI_Count len, char *data, int into_buffer);

/* Sets to 1 the bytes of that buffer which hold stream bytes [pos, pos + len)
 * (coverage masks). */
int ferry__view_buffer_mark(const ferry__view_t *view, char *buffer, MPI_Offset first, MPI_Offset pos,
                            MPI_Count len);

/* The address in that buffer that file offset disp would have: the view's
 * layout type, from there, places stream bytes at their file offsets. */
char *ferry__view_buffer_origin(const ferry__view_t *view, char *buffer, MPI_Offset first);

/* File segments of stream bytes [skip, skip + len), in stream order, which
 * for a valid view is ascending file order; a bounded batch per call. */
typedef struct ferry__view_cursor {
    const ferry__view_t *view;
    ferry__datatype_cursor_t tiles; /* over the layout, unless the view is contiguous */
    MPI_Offset pos, end;            /* stream bytes, for contiguous views */
} ferry__view_cursor_t;

void ferry__view_cursor_init(ferry__view_cursor_t *cursor, const ferry__view_t *view, MPI_Offset skip,
                             MPI_Offset len);
/* Fills up to max segments (absolute file offsets); *n == 0 at the end. */
int ferry__view_segments(ferry__view_cursor_t *cursor, ferry__datatype_segment_t *segs, int max, int *n);

#endif

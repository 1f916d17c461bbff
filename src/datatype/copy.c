/*
 * Typed to typed: stream bytes copied straight from one typed buffer into
 * another, walking both segment cursors in step. It costs one cursor step
 * per piece on either side, so it beats pack-then-unpack (two copies) only
 * where pieces are long; callers decide with ferry__datatype_mean_run.
 */
#include <string.h>

#include "datatype/datatype.h"
#include "error/error.h"

enum { BATCH = 64 };

typedef struct side {
    ferry__datatype_cursor_t cursor;
    ferry__datatype_segment_t segs[BATCH];
    int n, i;
    MPI_Count used; /* bytes of segs[i] already copied */
} side_t;

/* The current piece of a side, refilled from its cursor when used up. */
static int piece(side_t *s, MPI_Count *offset, MPI_Count *left)
{
    if (s->i == s->n) {
        FERRY_TRY(ferry__datatype_segments(&s->cursor, s->segs, BATCH, &s->n));
        s->i = 0;
        s->used = 0;
        if (s->n == 0) return ferry__error_set(MPI_ERR_INTERN, "ferry: typed copy ran out of segments");
    }
    *offset = s->segs[s->i].offset + s->used;
    *left = s->segs[s->i].length - s->used;
    return 0;
}

static void advance(side_t *s, MPI_Count n)
{
    s->used += n;
    if (s->used == s->segs[s->i].length) {
        s->i++;
        s->used = 0;
    }
}

int ferry__datatype_copy(const void *src, MPI_Datatype src_type, MPI_Count src_skip, void *dst,
                         MPI_Datatype dst_type, MPI_Count dst_skip, MPI_Count len)
{
    side_t from = {.n = 0}, to = {.n = 0};
    ferry__datatype_cursor_init(&from.cursor, src_type, src_skip, len);
    ferry__datatype_cursor_init(&to.cursor, dst_type, dst_skip, len);
    for (MPI_Count done = 0; done < len;) {
        MPI_Count src_at = 0, src_left = 0, dst_at = 0, dst_left = 0;
        FERRY_TRY(piece(&from, &src_at, &src_left));
        FERRY_TRY(piece(&to, &dst_at, &dst_left));
        MPI_Count n = src_left < dst_left ? src_left : dst_left;
        if (n > len - done) n = len - done;
        memcpy(ferry__datatype_at(dst, dst_at), ferry__datatype_at(src, src_at), (size_t)n);
        advance(&from, n);
        advance(&to, n);
        done += n;
    }
    return 0;
}

int ferry__datatype_mean_run(MPI_Datatype type, MPI_Count probe, MPI_Count *mean)
{
    ferry__datatype_cursor_t cursor;
    ferry__datatype_segment_t segs[BATCH];
    ferry__datatype_cursor_init(&cursor, type, 0, probe);
    MPI_Count bytes = 0, pieces = 0;
    for (int n = 1, rounds = 0; n > 0 && rounds < 4; rounds++) {
        FERRY_TRY(ferry__datatype_segments(&cursor, segs, BATCH, &n));
        for (int i = 0; i < n; i++) bytes += segs[i].length;
        pieces += n;
    }
    *mean = pieces ? bytes / pieces : 0;
    return 0;
}

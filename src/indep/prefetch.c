/*
 * Guided prefetching (seed 000, section 3.1.3): a read through a view
 * knows which file ranges it will touch next, so it tells the kernel
 * (posix_fadvise WILLNEED) ahead of time, ferry_prefetch_size stream bytes
 * ahead, merging ranges separated by small holes. It pays where each
 * piece would otherwise wait for the device in turn: pieces read one call
 * each (vectored) that lie farther apart than MERGE_GAP, which the
 * kernel's readahead does not bridge (ferry-bench mar: 64 KiB pieces 448
 * KiB apart, 1.5x). Elsewhere it only costs (issue 31 item 4): a sieved
 * read reads whole windows, each one large read the kernel already serves
 * at full speed, and close pieces merge into one range the kernel's own
 * readahead streams (ferry-bench discontig on disk, 1 KiB blocks at random:
 * 0.69-0.84 of the host with it, 1.00-1.08 without). So a read prefetches
 * when its view is sparse (less than half of each filetype extent is data)
 * and its first round of segments goes vectored with a mean gap of at
 * least MERGE_GAP, or when access_style=random asks for it; never on
 * files in memory (tmpfs), where it has nothing to do.
 * Walking the upcoming segments is bounded (PREFETCH_WALK of them); the
 * rest of the window is announced as one span. With access_style=read_once,
 * ranges that were read are dropped from the page cache (DONTNEED) as the
 * read moves on.
 */
#include "indep/indep_int.h"

enum { MERGE_GAP = 64 << 10, MAX_ADVICE = 64, PREFETCH_WALK = 4096 };

static int worth_prefetching(const ferry__transfer_t *t)
{
    const ferry__view_t *view = &t->file->view;
    int sparse = !view->contiguous && 2 * view->tile_size < view->tile_extent;
    int random = (t->file->hints.access_style & FERRY_ACCESS_RANDOM) != 0;
    return t->file->hints.prefetch_size > 0 && !view->contiguous && !t->file->layout.memory_backed &&
           (sparse || random);
}

/* Whether the read's first round of segments goes vectored with pieces
 * farther apart, on average, than the kernel's readahead bridges. */
static int pieces_far_apart(ferry__transfer_t *t)
{
    ferry__datatype_segment_t segs[FERRY_INDEP_SEGMENTS];
    ferry__view_cursor_t cursor;
    ferry__view_cursor_init(&cursor, &t->file->view, t->req->skip, t->total);
    ferry__round_t round = {segs, 0, NULL, 0};
    if (ferry__view_segments(&cursor, segs, FERRY_INDEP_SEGMENTS, &round.n) != 0 || round.n < 2) return 0;
    for (int i = 0; i < round.n; i++) round.bytes += segs[i].length;
    if (ferry__indep_choose(t, &round) == FERRY_SERVE_SIEVE) return 0;
    MPI_Offset span = segs[round.n - 1].offset + segs[round.n - 1].length - segs[0].offset;
    return (span - round.bytes) / (round.n - 1) >= MERGE_GAP;
}

void ferry__indep_prefetch_decide(ferry__transfer_t *t)
{
    t->prefetch = 0;
    if (t->write || t->total == 0 || !worth_prefetching(t)) return;
    t->prefetch = (t->file->hints.access_style & FERRY_ACCESS_RANDOM) != 0 || pieces_far_apart(t);
}

static void advise(ferry__transfer_t *t, MPI_Offset offset, MPI_Offset len, int advice)
{
    ferry__fs_advise(t->file->fs, offset, len, advice);
    if (advice == FERRY_FS_WILLNEED) t->stats->prefetch_bytes += len;
}

static void advise_ranges(ferry__transfer_t *t, MPI_Offset from, MPI_Offset len, int advice)
{
    ferry__datatype_segment_t segs[FERRY_INDEP_SEGMENTS];
    ferry__view_cursor_t cursor;
    ferry__view_cursor_init(&cursor, &t->file->view, from, len);
    MPI_Offset lo = -1, hi = -1;
    int given = 0, n = 0, walked = 0;
    while (walked < PREFETCH_WALK && ferry__view_segments(&cursor, segs, FERRY_INDEP_SEGMENTS, &n) == 0 && n > 0) {
        walked += n;
        for (int i = 0; i < n; i++) {
            if (lo >= 0 && (segs[i].offset - hi > MERGE_GAP && given < MAX_ADVICE - 1)) {
                advise(t, lo, hi - lo, advice);
                given++;
                lo = -1;
            }
            if (lo < 0) lo = segs[i].offset;
            hi = segs[i].offset + segs[i].length;
        }
    }
    /* Past the walk: the rest of the window as one span. */
    MPI_Offset last = 0;
    if (walked >= PREFETCH_WALK && cursor.tiles.pos < cursor.tiles.end &&
        ferry__view_file_offset(&t->file->view, from + len - 1, &last) == 0)
        hi = last + 1;
    if (lo >= 0) advise(t, lo, hi - lo, advice);
}

void ferry__indep_prefetch(ferry__transfer_t *t, MPI_Offset from, MPI_Offset len)
{
    if (!t->prefetch) return;
    MPI_Offset ahead = t->file->hints.prefetch_size;
    if (len > ahead) len = ahead;
    if (len > 0) advise_ranges(t, from, len, FERRY_FS_WILLNEED);
}

void ferry__indep_release(ferry__transfer_t *t, MPI_Offset from, MPI_Offset len)
{
    if (!t->write && len > 0 && worth_prefetching(t) && (t->file->hints.access_style & FERRY_ACCESS_READ_ONCE))
        advise_ranges(t, from, len, FERRY_FS_DONTNEED);
}

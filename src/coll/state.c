/*
 * The per-file state every rank agrees on before a two-phase call: the
 * view cache (seed 001), the node map and the collective hints.
 *
 * View cache: each rank serializes its view (a few words plus the layout's
 * decoded tree, datatype/serialize.c) and the blobs are allgathered once
 * per view; every rank rebuilds every view as a host datatype, sharing one
 * rebuilt type among consecutive ranks whose blobs are equal (the usual
 * case: one filetype, displacements per rank). A call then exchanges only
 * a few numbers per rank. The exchange happens at the first collective
 * call after set_view or set_info (fh->config_epoch), so files that are
 * never accessed collectively pay nothing, and a view set again unchanged
 * costs one allgather of two words per rank.
 *
 * Hints: rank 0's collective hints are broadcast with the same epoch, so
 * ranks given different hints still take the same collective path.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/coll_int.h"
#include "datarep/datarep.h"
#include "error/error.h"
#include "progress/progress.h"

enum { VIEW_HEADER_WORDS = 4 }; /* disp, tile_size, tile_extent, contiguous */

static void release_views(ferry__coll_state_t *s, int nprocs)
{
    s->covered_from = -1;
    for (int r = 0; s->views && r < nprocs; r++)
        if (s->owns_layout[r]) MPI_Type_free(&s->views[r].layout);
    ferry__free(s->views);
    ferry__free(s->owns_layout);
    s->views = NULL;
    s->owns_layout = NULL;
    s->cache_ok = 0;
    s->cache_bytes = 0;
}

void ferry__coll_release(ferry_File fh)
{
    ferry__coll_state_t *s = fh->coll;
    if (!s) return;
    ferry__coll_shm_release(fh);
    release_views(s, fh->nprocs);
    ferry__free(s->my_blob);
    ferry__free(s->node_of);
    ferry__free(s->local_of);
    ferry__free(s->spread);
    ferry__free(s->aggs);
    ferry__free(s->ranks);
    ferry__free(s->said);
    ferry__scratch_release(&s->window);
    ferry__scratch_release(&s->incoming[0]);
    ferry__scratch_release(&s->incoming[1]);
    ferry__scratch_release(&s->staging2);
    ferry__scratch_release(&s->mask);
    ferry__free(s);
    fh->coll = NULL;
}

int ferry__coll_open(ferry_File fh)
{
    size_t p = (size_t)fh->nprocs;
    ferry__coll_state_t *s = fh->coll = ferry__calloc(1, sizeof *fh->coll);
    if (s) {
        s->node_of = ferry__malloc(p * sizeof *s->node_of);
        s->local_of = ferry__malloc(p * sizeof *s->local_of);
        s->spread = ferry__malloc(p * sizeof *s->spread);
        s->aggs = ferry__malloc(p * sizeof *s->aggs);
        s->ranks = ferry__malloc(p * sizeof *s->ranks);
        s->said = ferry__malloc(p * sizeof *s->said);
    }
    if (!s || !s->node_of || !s->local_of || !s->spread || !s->aggs || !s->ranks || !s->said) {
        ferry__coll_release(fh);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: open '%s': out of memory", fh->filename);
    }
    s->epoch = fh->config_epoch - 1; /* the first collective call agrees */
    s->covered_from = -1;
    return 0;
}

/* FNV-1a of bytes, kept positive (it travels as an MPI_Offset). */
static MPI_Offset hash_bytes(const void *bytes, size_t len)
{
    const unsigned char *p = bytes;
    uint64_t h = 1469598103934665603ull;
    size_t i = 0;
    /* A word at a time: a view of 10^6 blocks is megabytes, hashed at every set_view. */
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211ull;
        h ^= h >> 29;
    }
    for (; i < len; i++) h = (h ^ p[i]) * 1099511628211ull;
    return (MPI_Offset)(h >> 1);
}

/* Collective over comm: the lowest rank of comm on this rank's node (the
 * ranks MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) puts with it), or -1 when
 * the host cannot tell (then every rank treats every rank as its own node:
 * map_nodes). Asked once per file, at its first state update. */
static MPI_Offset node_leader(ferry_File fh, MPI_Comm comm)
{
    MPI_Comm node;
    int rank = fh->rank, lowest = -1;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) != MPI_SUCCESS) return -1;
    if (ferry__progress_allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, node) != MPI_SUCCESS) lowest = -1;
    MPI_Comm_free(&node);
    return lowest;
}

/* From every rank's node leader (what it said): node index (in the order of
 * each node's lowest rank) and rank within the node. The same on every
 * rank: a leader that is not a rank at or below its own (the host could not
 * tell, or a broken host) makes every rank a node of its own everywhere. */
static void map_nodes(ferry__coll_state_t *s, int nprocs)
{
    int trusted = 1;
    for (int r = 0; r < nprocs; r++) trusted &= s->said[r].leader >= 0 && s->said[r].leader <= r;
    int *met = s->spread; /* per leader: its node's ranks met so far; spread is refilled below */
    for (int r = 0; r < nprocs; r++) met[r] = 0;
    s->nodes = 0;
    for (int r = 0; r < nprocs; r++) {
        int leader = trusted ? (int)s->said[r].leader : r;
        if (leader == r) s->node_of[r] = s->nodes++;
        s->node_of[r] = s->node_of[leader];
        s->local_of[r] = met[leader]++;
    }
    ferry__coll_spread_ranks(s, nprocs);
    s->nodes_known = 1;
}

static int agree_hints(ferry_File fh, MPI_Comm comm)
{
    ferry__coll_state_t *s = fh->coll;
    const ferry__hints_t *h = &fh->hints;
    s->hints = (ferry__coll_hints_t){h->cb_buffer_size,
                                     h->cb_nodes,
                                     h->cb_per_node,
                                     h->cb_strategy,
                                     h->cb_write,
                                     h->cb_read,
                                     h->cb_block_size,
                                     h->cb_largeblock,
                                     h->striping_unit,
                                     h->striping_factor,
                                     h->cb_group_size,
                                     h->view_cache_limit,
                                     sysconf(_SC_NPROCESSORS_ONLN),
                                     h->cb_shm};
    int rc = ferry__progress_bcast(&s->hints, (int)(sizeof s->hints / sizeof(MPI_Offset)), MPI_OFFSET, 0, comm);
    return ferry__error_host(rc, "collective", fh->filename, "MPI_Bcast");
}

/* This rank's view as a blob: header words, then the layout's tree. */
static int serialize_view(const ferry__view_t *view, void **blob, size_t *len)
{
    void *tree = NULL;
    size_t tree_len = 0;
    if (!view->contiguous) FERRY_TRY(ferry__datatype_serialize(view->layout, &tree, &tree_len));
    /* Views of one shape at different places (a subarray per rank) send equal trees and different
     * displacements, so the cache rebuilds and counts their shape once. */
    MPI_Offset shift = tree_len ? ferry__datatype_blob_hoist(tree, tree_len) : 0;
    *len = VIEW_HEADER_WORDS * sizeof(int64_t) + tree_len;
    int64_t *words = ferry__malloc(*len);
    if (!words) {
        ferry__free(tree);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory serializing a view");
    }
    words[0] = view->disp + shift;
    words[1] = view->tile_size;
    words[2] = view->tile_extent;
    words[3] = view->contiguous;
    if (tree_len) memcpy(words + VIEW_HEADER_WORDS, tree, tree_len);
    ferry__free(tree);
    *blob = words;
    return 0;
}

/* Rank r's view from its blob; its layout is the previous rank's
 * (`shared`, borrowed) when their trees are equal, else rebuilt (owned). */
static int rebuild_view(const char *blob, size_t len, const ferry__view_t *shared, ferry__view_t *view, int *owns)
{
    int64_t header[VIEW_HEADER_WORDS];
    if (len < sizeof header) return ferry__error_set(MPI_ERR_INTERN, "ferry: a cached view is truncated");
    memcpy(header, blob, sizeof header);
    memset(view, 0, sizeof *view);
    FERRY_TRY(ferry__datarep_find("native", &view->rep));
    view->disp = header[0];
    view->tile_size = header[1];
    view->tile_extent = header[2];
    view->contiguous = (int)header[3];
    view->etype = view->filetype = view->layout = MPI_BYTE;
    view->etype_size = 1;
    *owns = 0;
    if (view->contiguous) return 0;
    if (shared) {
        view->layout = shared->layout;
        return 0;
    }
    FERRY_TRY(ferry__datatype_deserialize(blob + sizeof header, len - sizeof header, &view->layout));
    *owns = 1;
    return 0;
}

/* Whether rank r's layout tree equals rank r - 1's (the usual case: one
 * filetype, per-rank displacements), so one host datatype serves both. */
static int same_tree_as_previous(const ferry__coll_state_t *s, int r, const char *blobs, const int *lens,
                                 const int *offs)
{
    const size_t header = VIEW_HEADER_WORDS * sizeof(int64_t);
    if (r == 0 || s->views[r - 1].contiguous || lens[r] != lens[r - 1] || (size_t)lens[r] <= header) return 0;
    return memcmp(blobs + offs[r] + header, blobs + offs[r - 1] + header, (size_t)lens[r] - header) == 0;
}

/* After the allgather of the blobs: every rank rebuilds every view. */
static int rebuild_all(ferry_File fh, ferry__coll_state_t *s, const char *blobs, const int *lens, const int *offs)
{
    s->views = ferry__calloc((size_t)fh->nprocs, sizeof *s->views);
    s->owns_layout = ferry__calloc((size_t)fh->nprocs, 1);
    if (!s->views || !s->owns_layout) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory caching views");
    for (int r = 0; r < fh->nprocs; r++) {
        const ferry__view_t *shared = same_tree_as_previous(s, r, blobs, lens, offs) ? &s->views[r - 1] : NULL;
        int owns = 0;
        FERRY_TRY(rebuild_view(blobs + offs[r], (size_t)lens[r], shared, &s->views[r], &owns));
        s->owns_layout[r] = (char)owns;
    }
    return 0;
}

enum { PERIOD_CHECK_MAX = 1 << 20 };

/* When every view tiles the file with one period E (filetypes of equal
 * extent, the seed's interleaved vectors), the views cover every byte from
 * the largest displacement D on if they cover [D, D + E): each view repeats
 * with period E. Checked once per view set by marking that period through
 * every view; two-phase writes then need no coverage mask per window
 * (twophase.c). Periods above PERIOD_CHECK_MAX (a subarray's extent is the
 * whole array) stay unknown: the mask decides per window. */
static void find_coverage(ferry__coll_state_t *s, int nprocs)
{
    s->covered_from = -1;
    MPI_Offset period = s->views[0].tile_extent, from = 0;
    for (int r = 0; r < nprocs; r++) {
        const ferry__view_t *v = &s->views[r];
        if (v->contiguous || v->tiles_overlap || v->tile_extent != period || period > PERIOD_CHECK_MAX) return;
        if (v->disp > from) from = v->disp;
    }
    char *mark = ferry__calloc((size_t)period, 1);
    int ok = mark != NULL;
    for (int r = 0; ok && r < nprocs; r++) {
        MPI_Offset s0, s1;
        ok = ferry__view_stream_below(&s->views[r], from, &s0) == 0 &&
             ferry__view_stream_below(&s->views[r], from + period, &s1) == 0 && s1 - s0 <= period &&
             ferry__view_buffer_mark(&s->views[r], mark, from, s0, s1 - s0) == 0;
    }
    if (ok && memchr(mark, 0, (size_t)period) == NULL) s->covered_from = from;
    ferry__free(mark);
}

enum { SAY_WORDS = sizeof(struct ferry__coll_said) / sizeof(MPI_Offset) };

/* Host datatypes rebuilt from serialized trees take about this many bytes
 * per serialized byte (measured: ~16 B per block serialized, ~150 B per
 * block held by Open MPI's type and the engine's decoded tree). */
enum { REBUILD_FACTOR = 10 };

/* The serialized bytes of the distinct trees (each unlike the previous
 * rank's), and of all blobs, from what every rank said: the same on every
 * rank. */
static void said_bytes(const ferry__coll_state_t *s, int nprocs, MPI_Offset *distinct, MPI_Offset *all)
{
    *distinct = *all = 0;
    for (int r = 0; r < nprocs; r++) {
        const struct ferry__coll_said *said = &s->said[r];
        int unlike = r == 0 || said->tree != s->said[r - 1].tree || said->blob_len != s->said[r - 1].blob_len;
        *distinct += unlike ? said->blob_len : 0;
        *all += said->blob_len;
    }
}

/* What the cache holds once built: every rank's view, and each distinct tree rebuilt; *peak adds
 * every blob, which building it holds at once. */
static MPI_Offset cache_held(const ferry__coll_state_t *s, int nprocs, MPI_Offset *peak)
{
    MPI_Offset distinct, all;
    said_bytes(s, nprocs, &distinct, &all);
    MPI_Offset held = (MPI_Offset)nprocs * (MPI_Offset)sizeof(ferry__view_t) + REBUILD_FACTOR * distinct;
    *peak = held + all;
    return held;
}

/* Collective: every rank's blob into every rank's cache (cache_ok: here).
 * 0, or the class of a failed host collective. */
static int share_blobs(ferry_File fh, MPI_Comm comm, const void *blob, size_t len)
{
    ferry__coll_state_t *s = fh->coll;
    int *lens = ferry__malloc((size_t)fh->nprocs * sizeof *lens);
    int *offs = ferry__malloc((size_t)fh->nprocs * sizeof *offs);
    long long total = 0;
    for (int r = 0; lens && offs && r < fh->nprocs; r++) {
        offs[r] = (int)total;
        lens[r] = (int)s->said[r].blob_len;
        total += lens[r];
    }
    char *blobs = lens && offs && total <= (1LL << 30) ? ferry__malloc((size_t)total) : NULL;
    int ok = blobs != NULL, all_ok = 0;
    int cls = ferry__error_host(ferry__progress_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm), "collective",
                                fh->filename, "MPI_Allreduce");
    if (cls == 0 && all_ok)
        cls = ferry__error_host(ferry__progress_allgatherv(blob, (int)len, MPI_BYTE, blobs, lens, offs, MPI_BYTE, comm),
                                "collective", fh->filename, "MPI_Allgatherv");
    if (cls == 0 && all_ok) {
        s->cache_ok = rebuild_all(fh, s, blobs, lens, offs) == 0;
        if (s->cache_ok) find_coverage(s, fh->nprocs);
        MPI_Offset peak;
        if (s->cache_ok) s->cache_bytes = cache_held(s, fh->nprocs, &peak);
    }
    if (!s->cache_ok) release_views(s, fh->nprocs);
    ferry__free(blobs);
    ferry__free(lens);
    ferry__free(offs);
    return cls;
}

/* Collective: what every rank says into s->said; then, in any[], whether
 * some rank has no view blob, changed its view, or was given hints. */
static int exchange_said(ferry_File fh, MPI_Comm comm, const struct ferry__coll_said *mine,
                         struct ferry__coll_said *any)
{
    ferry__coll_state_t *s = fh->coll;
    FERRY_TRY(
        ferry__error_host(ferry__progress_allgather(mine, SAY_WORDS, MPI_OFFSET, s->said, SAY_WORDS, MPI_OFFSET, comm),
                          "collective", fh->filename, "MPI_Allgather"));
    *any = (struct ferry__coll_said){0};
    for (int r = 0; r < fh->nprocs; r++) {
        any->blob_len |= s->said[r].blob_len < 0;
        any->changed |= s->said[r].changed;
        any->hints |= s->said[r].hints;
    }
    return 0;
}

int ferry__coll_state_update(ferry_File fh, MPI_Comm comm, int hints_changed)
{
    ferry__coll_state_t *s = fh->coll;
    void *blob = NULL;
    size_t len = 0;
    int local = serialize_view(&fh->view, &blob, &len) == 0 && len <= (1u << 30);
    int changed = !s->cache_ok || !s->my_blob || len != s->my_blob_len || memcmp(blob, s->my_blob, len) != 0;
    const size_t header = VIEW_HEADER_WORDS * sizeof(int64_t);
    struct ferry__coll_said mine = {local ? (MPI_Offset)len : -1, changed, s->nodes_known ? 0 : node_leader(fh, comm),
                                    hints_changed || !s->hints_known,
                                    local && len > header ? hash_bytes((char *)blob + header, len - header) : 0},
                            any;
    int cls = exchange_said(fh, comm, &mine, &any);
    if (cls) {
        ferry__free(blob);
        release_views(s, fh->nprocs); /* the epoch stays behind: the next collective call tries again */
        return cls;
    }
    if (any.hints) cls = agree_hints(fh, comm);
    s->hints_known = cls == 0;
    MPI_Offset peak = 0;
    cache_held(s, fh->nprocs, &peak);
    int too_large = cls == 0 && !any.blob_len && peak > s->hints.view_cache_limit;
    if (any.blob_len || cls || too_large) release_views(s, fh->nprocs);
    else if (any.changed) {
        release_views(s, fh->nprocs);
        cls = share_blobs(fh, comm, blob, len);
    }
    s->cache_too_large = too_large;
    if (!s->nodes_known) map_nodes(s, fh->nprocs);
    ferry__free(s->my_blob);
    s->my_blob = local ? blob : NULL;
    s->my_blob_len = local ? len : 0;
    if (!local) ferry__free(blob);
    if (cls == 0) s->epoch = fh->config_epoch; /* else the next collective call tries again */
    return cls;
}

long long ferry__coll_cache_bytes(ferry_File fh)
{
    return fh->coll ? (long long)fh->coll->cache_bytes : 0;
}

int ferry__coll_config_changed(ferry_File fh, int hints_changed)
{
    return fh->nprocs > 1 ? ferry__coll_state_update(fh, fh->comm, hints_changed) : 0;
}

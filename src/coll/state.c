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
#include <string.h>

#include "coll/coll_int.h"
#include "datarep/datarep.h"
#include "error/error.h"

enum { VIEW_HEADER_WORDS = 4 }; /* disp, tile_size, tile_extent, contiguous */

static void release_views(ferry__coll_state_t *s, int nprocs)
{
    for (int r = 0; s->views && r < nprocs; r++)
        if (s->owns_layout[r]) MPI_Type_free(&s->views[r].layout);
    ferry__free(s->views);
    ferry__free(s->owns_layout);
    s->views = NULL;
    s->owns_layout = NULL;
    s->cache_ok = 0;
}

void ferry__coll_release(ferry_File fh)
{
    ferry__coll_state_t *s = fh->coll;
    if (!s) return;
    release_views(s, fh->nprocs);
    ferry__free(s->my_blob);
    ferry__free(s->node_of);
    ferry__free(s->local_of);
    ferry__free(s->spread);
    ferry__free(s->aggs);
    ferry__free(s->ranks);
    ferry__scratch_release(&s->window);
    ferry__scratch_release(&s->incoming);
    ferry__scratch_release(&s->mask);
    ferry__free(s);
    fh->coll = NULL;
}

/* Collective: node index and rank within the node of every rank. */
static int discover_nodes(ferry_File fh, ferry__coll_state_t *s)
{
    MPI_Comm node;
    int local = 0, leader = fh->rank;
    if (MPI_Comm_split_type(fh->comm, MPI_COMM_TYPE_SHARED, fh->rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &local);
        MPI_Bcast(&leader, 1, MPI_INT, 0, node);
        MPI_Comm_free(&node);
    }
    int mine[2] = {leader, local};
    int *all = ferry__malloc(2 * (size_t)fh->nprocs * sizeof *all);
    size_t p = (size_t)fh->nprocs;
    s->node_of = ferry__malloc(p * sizeof *s->node_of);
    s->local_of = ferry__malloc(p * sizeof *s->local_of);
    s->spread = ferry__malloc(p * sizeof *s->spread);
    s->aggs = ferry__malloc(p * sizeof *s->aggs);
    s->ranks = ferry__malloc(p * sizeof *s->ranks);
    int ok = all && s->node_of && s->local_of && s->spread && s->aggs && s->ranks, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, fh->comm);
    if (!all_ok) {
        ferry__free(all);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory for the node map", fh->filename);
    }
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, fh->comm);
    /* Leaders are the lowest rank of their node; nodes are numbered in leader order. */
    int *index_of_leader = s->node_of; /* reused: filled in rank order before it is read */
    s->nodes = 0;
    for (int r = 0; r < fh->nprocs; r++) {
        if (all[2 * r] == r) index_of_leader[r] = s->nodes++;
        s->local_of[r] = all[2 * r + 1];
    }
    for (int r = 0; r < fh->nprocs; r++) s->node_of[r] = index_of_leader[all[2 * r]];
    ferry__free(all);
    ferry__coll_spread_ranks(s, fh->nprocs);
    return 0;
}

static void agree_hints(ferry_File fh, ferry__coll_state_t *s)
{
    const ferry__hints_t *h = &fh->hints;
    s->hints = (ferry__coll_hints_t){h->cb_buffer_size, h->cb_nodes,       h->cb_per_node,   h->cb_strategy,
                                     h->cb_write,       h->cb_read,        h->cb_block_size, h->cb_largeblock,
                                     h->striping_unit,  h->striping_factor, h->cb_group_size};
    MPI_Bcast(&s->hints, (int)(sizeof s->hints / sizeof(MPI_Offset)), MPI_OFFSET, 0, fh->comm);
}

/* This rank's view as a blob: header words, then the layout's tree. */
static int serialize_view(const ferry__view_t *view, void **blob, size_t *len)
{
    void *tree = NULL;
    size_t tree_len = 0;
    if (!view->contiguous) FERRY_TRY(ferry__datatype_serialize(view->layout, &tree, &tree_len));
    *len = VIEW_HEADER_WORDS * sizeof(int64_t) + tree_len;
    int64_t *words = ferry__malloc(*len);
    if (!words) {
        ferry__free(tree);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory serializing a view");
    }
    words[0] = view->disp;
    words[1] = view->tile_size;
    words[2] = view->tile_extent;
    words[3] = view->contiguous;
    if (tree_len) memcpy(words + VIEW_HEADER_WORDS, tree, tree_len);
    ferry__free(tree);
    *blob = words;
    return 0;
}

static int rebuild_view(const char *blob, size_t len, ferry__view_t *view, int *owns)
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
    FERRY_TRY(ferry__datatype_deserialize(blob + sizeof header, len - sizeof header, &view->layout));
    *owns = 1;
    return 0;
}

/* After the allgather of the blobs: every rank rebuilds every view. */
static int rebuild_all(ferry_File fh, ferry__coll_state_t *s, const char *blobs, const int *lens, const int *offs)
{
    s->views = ferry__calloc((size_t)fh->nprocs, sizeof *s->views);
    s->owns_layout = ferry__calloc((size_t)fh->nprocs, 1);
    if (!s->views || !s->owns_layout) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory caching views");
    for (int r = 0; r < fh->nprocs; r++) {
        const char *blob = blobs + offs[r];
        int owns = 0;
        FERRY_TRY(rebuild_view(blob, (size_t)lens[r], &s->views[r], &owns));
        s->owns_layout[r] = (char)owns;
        if (owns && r > 0 && lens[r] == lens[r - 1] &&
            memcmp(blob + VIEW_HEADER_WORDS * 8, blobs + offs[r - 1] + VIEW_HEADER_WORDS * 8,
                   (size_t)lens[r] - VIEW_HEADER_WORDS * 8) == 0 &&
            !s->views[r - 1].contiguous) {
            MPI_Type_free(&s->views[r].layout); /* the same layout as the previous rank's: share it */
            s->views[r].layout = s->views[r - 1].layout;
            s->owns_layout[r] = 0;
        }
    }
    return 0;
}

/* Collective: sets s->cache_ok to whether every rank holds every view. */
static void exchange_views(ferry_File fh, ferry__coll_state_t *s)
{
    void *blob = NULL;
    size_t len = 0;
    int local = serialize_view(&fh->view, &blob, &len) == 0 && len <= (1u << 30);
    int changed = !s->cache_ok || !s->my_blob || len != s->my_blob_len || memcmp(blob, s->my_blob, len) != 0;
    int mine[2] = {local ? (int)len : -1, changed}, any[2] = {0, 0};
    int *lens = ferry__malloc(2 * (size_t)fh->nprocs * sizeof *lens);
    int *offs = ferry__malloc((size_t)fh->nprocs * sizeof *offs);
    int have = lens && offs, everyone_has = 0;
    MPI_Allreduce(&have, &everyone_has, 1, MPI_INT, MPI_MIN, fh->comm);
    if (everyone_has) MPI_Allgather(mine, 2, MPI_INT, lens, 2, MPI_INT, fh->comm);
    long long total = 0;
    for (int r = 0; everyone_has && r < fh->nprocs; r++) {
        any[0] |= lens[2 * r] < 0;
        any[1] |= lens[2 * r + 1];
        offs[r] = (int)total;
        lens[r] = lens[2 * r]; /* compacted in place: entry r is read before it is overwritten */
        total += lens[r] > 0 ? lens[r] : 0;
    }
    if (!everyone_has || any[0] || total > (1LL << 30)) {
        release_views(s, fh->nprocs);
    } else if (any[1]) {
        release_views(s, fh->nprocs);
        char *blobs = ferry__malloc((size_t)total);
        int ok = blobs != NULL, all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, fh->comm);
        if (all_ok) {
            MPI_Allgatherv(blob, (int)len, MPI_BYTE, blobs, lens, offs, MPI_BYTE, fh->comm);
            ok = rebuild_all(fh, s, blobs, lens, offs) == 0;
            MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, fh->comm);
        }
        if (all_ok) s->cache_ok = 1;
        else release_views(s, fh->nprocs);
        ferry__free(blobs);
    }
    ferry__free(s->my_blob);
    s->my_blob = local ? blob : NULL;
    s->my_blob_len = local ? len : 0;
    if (!local) ferry__free(blob);
    ferry__free(lens);
    ferry__free(offs);
}

int ferry__coll_state_update(ferry_File fh)
{
    int fresh = fh->coll == NULL;
    if (fresh) fh->coll = ferry__calloc(1, sizeof *fh->coll);
    int ok = fh->coll != NULL, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, fh->comm);
    if (!all_ok) {
        ferry__coll_release(fh);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: collective '%s': out of memory", fh->filename);
    }
    ferry__coll_state_t *s = fh->coll;
    if (fresh) {
        int rc = discover_nodes(fh, s);
        if (rc != 0) {
            ferry__coll_release(fh);
            return rc;
        }
        s->epoch = fh->config_epoch - 1; /* anything but the current epoch */
    }
    if (s->epoch == fh->config_epoch) return 0;
    agree_hints(fh, s);
    exchange_views(fh, s);
    s->epoch = fh->config_epoch;
    return 0;
}

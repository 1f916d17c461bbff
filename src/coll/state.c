/*
 * The per-file state every rank agrees on before a two-phase call: the
 * view cache (seed 001), the node map and the collective hints.
 *
 * View cache: each rank serializes its view (a few words plus the layout's
 * decoded tree, datatype/serialize.c, with single-chain displacements
 * hoisted into the view's) and says the blob's length and a hash of its
 * shape (all but the displacement). Views equal up to displacement are one
 * shape: only its first rank (its leader) sends the blob, every other rank
 * only its displacement, so a view change receives 48 B per rank plus each
 * shape once. Every rank rebuilds each distinct shape once as a host
 * datatype and keeps per rank only its shape and displacement (16 bytes),
 * so the cache holds O(shapes + 16 B x P). A rank whose blob differs from
 * its leader's (a hash collision) keeps no cache and says so at its calls.
 * A call then exchanges only a few numbers per rank. The update happens at
 * the first collective call after set_view or set_info (file->config_epoch
 * moved; again at the next one when a host collective failed), never at
 * set_view itself, so views only accessed independently (HDF5 sets one per
 * dataset access) cost no exchange; a view set again unchanged costs one
 * allgather of the five words ranks say.
 *
 * Hints: rank 0's collective hints are broadcast with the same epoch, so
 * ranks given different hints still take the same collective path.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/keyed.h"
#include "coll/coll_int.h"
#include "datarep/datarep.h"
#include "error/error.h"
#include "progress/progress.h"

enum { VIEW_HEADER_WORDS = 4 }; /* disp, tile_size, tile_extent, contiguous */

static void release_views(ferry__coll_state_t *s)
{
    s->covered_from = -1;
    for (int i = 0; i < s->nshapes; i++)
        if (!s->shapes[i].view.contiguous) MPI_Type_free(&s->shapes[i].view.layout);
    ferry__free(s->shapes);
    ferry__free(s->placed);
    s->shapes = NULL;
    s->placed = NULL;
    s->nshapes = 0;
    s->cache_ok = 0;
    s->cache_bytes = 0;
}

void ferry__coll_release(ferry__coll_state_t **state)
{
    ferry__coll_state_t *s = *state;
    if (!s) return;
    ferry__coll_shm_release(s);
    release_views(s);
    ferry__free(s->my_blob);
    ferry__free(s->node_of);
    ferry__free(s->local_of);
    ferry__free(s->spread);
    ferry__free(s->room);
    ferry__scratch_release(&s->window);
    ferry__scratch_release(&s->incoming[0]);
    ferry__scratch_release(&s->incoming[1]);
    ferry__scratch_release(&s->staging2);
    ferry__scratch_release(&s->mask);
    ferry__free(s);
    *state = NULL;
}

/* Ranks' shapes found by hashing (shape_index_t below): open addressing
 * over at least 2 * nprocs slots. */
static size_t index_slots(int nprocs)
{
    size_t n = 16;
    while (n < 2 * (size_t)nprocs) n <<= 1;
    return n;
}

/* The room's layouts (coll_int.h), cut one array after the other from
 * base, each aligned for its type; base NULL only measures. */
typedef struct room_cut {
    char *base;
    size_t used;
} room_cut_t;

static void *cut(room_cut_t *c, size_t count, size_t size, size_t align)
{
    c->used = (c->used + align - 1) / align * align;
    void *at = c->base ? c->base + c->used : NULL;
    c->used += count * size;
    return at;
}

/* Sets up both layouts over base (NULL: sets nothing usable); returns the
 * room's bytes, the larger layout's. */
static size_t room_lay_out(ferry__coll_update_room_t *u, ferry__coll_call_room_t *c, char *base, int nprocs)
{
    size_t p = (size_t)nprocs;
    room_cut_t a = {base, 0}, b = {base, 0};
    u->said = cut(&a, p, sizeof *u->said, _Alignof(struct ferry__coll_said));
    u->node_keys = cut(&a, p, sizeof *u->node_keys, _Alignof(ferry__keyed_rank_t));
    u->spread_keys = cut(&a, p, sizeof *u->spread_keys, _Alignof(ferry__keyed_rank_t));
    u->leader = cut(&a, p, sizeof *u->leader, _Alignof(int));
    u->shape_slots = cut(&a, index_slots(nprocs), sizeof *u->shape_slots, _Alignof(int));
    c->ranks = cut(&b, p, sizeof *c->ranks, _Alignof(ferry__coll_rank_t));
    c->los = cut(&b, p, sizeof *c->los, _Alignof(MPI_Offset));
    c->his = cut(&b, p, sizeof *c->his, _Alignof(MPI_Offset));
    c->node_sum = cut(&b, p, sizeof *c->node_sum, _Alignof(double));
    c->node_longest = cut(&b, p, sizeof *c->node_longest, _Alignof(double));
    c->node_ranks = cut(&b, p, sizeof *c->node_ranks, _Alignof(double));
    c->aggs = cut(&b, p, sizeof *c->aggs, _Alignof(int));
    return a.used > b.used ? a.used : b.used;
}

static size_t room_bytes(int nprocs)
{
    ferry__coll_update_room_t u;
    ferry__coll_call_room_t c;
    return room_lay_out(&u, &c, NULL, nprocs);
}

int ferry__coll_open(const ferry__target_t *file, ferry__coll_state_t **state)
{
    size_t p = (size_t)file->nprocs;
    ferry__coll_state_t *s = *state = ferry__calloc(1, sizeof **state);
    if (s) {
        s->node_of = ferry__malloc(p * sizeof *s->node_of);
        s->local_of = ferry__malloc(p * sizeof *s->local_of);
        s->spread = ferry__malloc(p * sizeof *s->spread);
        s->room = ferry__malloc(room_bytes(file->nprocs));
    }
    if (!s || !s->node_of || !s->local_of || !s->spread || !s->room) {
        ferry__coll_release(state);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: open '%s': out of memory", file->filename);
    }
    room_lay_out(&s->in_update, &s->in_call, s->room, file->nprocs);
    s->epoch = file->config_epoch - 1; /* the first collective call agrees */
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

/* This rank's node, as a key ranks say (a hash of MPI_Get_processor_name:
 * the name ROMIO groups ranks by), or 0 when the host cannot tell. Local:
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) and an allreduce on its
 * communicator, which this replaced, cost 72-84 ms at a file's first
 * set_view on MPICH with 4 ranks on 2 cores (the host polls inside them),
 * four times ROMIO's whole set_view; the key travels in the words every
 * rank says anyway. (shipping.c's node-shared slabs still ask the host
 * which ranks share memory.) */
static MPI_Offset node_key(void)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    if (MPI_Get_processor_name(name, &len) != MPI_SUCCESS || len <= 0) return 0;
    MPI_Offset key = hash_bytes(name, (size_t)len);
    return key ? key : 1;
}

/* Every rank's node leader (the lowest rank saying its key; itself when it
 * said 0) and rank within its node, from the ranks sorted by node key: a
 * node's ranks are one run there, lowest first. */
static void find_leaders(ferry__coll_state_t *s, int nprocs)
{
    const ferry__coll_update_room_t *u = &s->in_update;
    ferry__keyed_rank_t *sorted = u->node_keys;
    for (int r = 0; r < nprocs; r++) sorted[r] = (ferry__keyed_rank_t){u->said[r].node, r};
    qsort(sorted, (size_t)nprocs, sizeof *sorted, ferry__keyed_rank_order);
    s->most_per_node = 0;
    for (int i = 0, first = 0; i < nprocs; i++) {
        if (i == 0 || sorted[i].key != sorted[i - 1].key || sorted[i].key == 0) first = i;
        int r = (int)sorted[i].rank;
        u->leader[r] = (int)sorted[first].rank;
        s->local_of[r] = i - first;
        if (i - first >= s->most_per_node) s->most_per_node = i - first + 1;
    }
}

/* From every rank's node key (what it said): node index (in the order of
 * each node's lowest rank) and rank within the node. The same on every
 * rank. */
void ferry__coll_map_nodes(ferry__coll_state_t *s, int nprocs)
{
    const int *leader = s->in_update.leader;
    find_leaders(s, nprocs);
    s->nodes = 0;
    for (int r = 0; r < nprocs; r++) /* a leader comes before its node's other ranks */
        s->node_of[r] = leader[r] == r ? s->nodes++ : s->node_of[leader[r]];
    ferry__coll_spread_ranks(s, nprocs);
    s->nodes_known = 1;
}

/* The machine's online CPUs, asked once per process: glibc's sysconf opens
 * and reads /sys/devices/system/cpu/online every time (about 6 us here), and
 * a file whose every collective call moves nothing or goes early stays due
 * for its state update, so its every call takes its own hints again. */
static long online_cpus(void)
{
    static atomic_long cpus; /* 0 until asked; every thread asking computes the same value */
    long n = cpus;
    if (n == 0) cpus = n = sysconf(_SC_NPROCESSORS_ONLN);
    return n;
}

void ferry__coll_own_hints(const ferry__target_t *file)
{
    ferry__coll_state_t *s = file->coll;
    const ferry__hints_t *h = &file->hints;
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
                                     online_cpus(),
                                     h->cb_shm};
}

static int agree_hints(const ferry__target_t *file, MPI_Comm comm)
{
    ferry__coll_state_t *s = file->coll;
    ferry__coll_own_hints(file);
    int rc = ferry__progress_bcast(&s->hints, (int)(sizeof s->hints / sizeof(MPI_Offset)), MPI_OFFSET, 0, comm);
    s->update_recv_bytes += file->rank == 0 ? 0 : (MPI_Offset)sizeof s->hints;
    return ferry__error_host(rc, "collective", file->filename, "MPI_Bcast");
}

/* This rank's view as a blob: header words, then the layout's tree. */
int ferry__coll_serialize_view(const ferry__view_t *view, ferry__coll_blob_t *blob)
{
    void *tree = NULL;
    size_t tree_len = 0;
    if (!view->contiguous) FERRY_TRY(ferry__datatype_serialize(view->layout, &tree, &tree_len));
    /* Views of one shape at different places (a subarray per rank) send equal trees and different
     * displacements, so the cache rebuilds and counts their shape once. */
    MPI_Offset shift = tree_len ? ferry__datatype_blob_hoist(tree, tree_len) : 0;
    size_t header = VIEW_HEADER_WORDS * sizeof(int64_t);
    blob->len = header + tree_len;
    int64_t *words = ferry__malloc(blob->len);
    if (!words) {
        ferry__free(tree);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory serializing a view");
    }
    words[0] = view->disp + shift;
    words[1] = view->tile_size;
    words[2] = view->tile_extent;
    words[3] = view->contiguous;
    if (tree_len) memcpy(words + VIEW_HEADER_WORDS, tree, tree_len);
    blob->hash = hash_bytes(words + 1, blob->len - sizeof *words); /* the shape: all but the displacement */
    blob->expanded = (MPI_Offset)(header + (tree_len ? ferry__datatype_blob_expanded(tree, tree_len) : 0));
    ferry__free(tree);
    blob->bytes = words;
    return 0;
}

/* A shape from a blob: its view at displacement 0, the layout rebuilt
 * from the tree as a host datatype. */
static int rebuild_shape(const char *blob, size_t len, ferry__view_t *view)
{
    int64_t header[VIEW_HEADER_WORDS];
    if (len < sizeof header) return ferry__error_set(MPI_ERR_INTERN, "ferry: a cached view is truncated");
    memcpy(header, blob, sizeof header);
    memset(view, 0, sizeof *view);
    FERRY_TRY(ferry__datarep_find("native", &view->rep));
    view->tile_size = header[1];
    view->tile_extent = header[2];
    view->contiguous = (int)header[3];
    view->etype = view->filetype = view->layout = MPI_BYTE;
    view->etype_size = 1;
    if (view->contiguous) return 0;
    return ferry__datatype_deserialize(blob + sizeof header, len - sizeof header, &view->layout);
}

/* Ranks' shapes found by hashing: open addressing over the room's
 * shape_slots (index_slots, allocated with the state so that no rank's
 * estimate can fail alone), each empty (0) or 1 + the first rank seen with
 * a shape. */
typedef struct shape_index {
    int *slots;
    size_t mask;
    int (*same)(const void *arg, int a, int b); /* ranks a and b have equal shapes */
    const void *arg;
} shape_index_t;

static void index_open(shape_index_t *ix, const ferry__coll_state_t *s, int nprocs)
{
    ix->slots = s->in_update.shape_slots;
    ix->mask = index_slots(nprocs) - 1;
    memset(ix->slots, 0, index_slots(nprocs) * sizeof *ix->slots);
}

/* The first rank with rank r's shape, r itself when none came before it (then recorded). */
static int index_first(shape_index_t *ix, MPI_Offset key, int r)
{
    size_t i = (size_t)key & ix->mask;
    while (ix->slots[i] && !ix->same(ix->arg, ix->slots[i] - 1, r)) i = (i + 1) & ix->mask;
    if (!ix->slots[i]) ix->slots[i] = r + 1;
    return ix->slots[i] - 1;
}

/* A shape's key: its hash and its blob's length, as the rank said them. */
static MPI_Offset shape_key(const struct ferry__coll_said *said)
{
    uint64_t h = (uint64_t)said->tree ^ (uint64_t)said->blob_len * 0x9e3779b97f4a7c15ull;
    return (MPI_Offset)(h ^ h >> 31);
}

/* Ranks that said equal shapes: the same hash of their blob past the
 * displacement, and the same length. Every rank decides alike from what
 * ranks said; a rank whose shape only collided with its leader's finds out
 * when it compares the leader's blob with its own (share_blobs). */
static int same_said_shape(const void *arg, int a, int b)
{
    const struct ferry__coll_said *said = arg;
    return said[a].tree == said[b].tree && said[a].blob_len == said[b].blob_len;
}

/* Rank r's shape's leader: the first rank that said it. */
static int shape_leader(shape_index_t *ix, const ferry__coll_state_t *s, int r)
{
    return index_first(ix, shape_key(&s->in_update.said[r]), r);
}

/* What a rank contributes to the gather: its whole blob when it leads its
 * shape, else only its displacement (the blob's first word). */
static int gathered_len(const struct ferry__coll_said *said, int leads)
{
    return leads ? (int)said->blob_len : (int)sizeof(int64_t);
}

MPI_Offset ferry__coll_gather_plan(const ferry__coll_state_t *s, int nprocs, int *lens, int *offs)
{
    shape_index_t ix = {.same = same_said_shape, .arg = s->in_update.said};
    index_open(&ix, s, nprocs);
    MPI_Offset total = 0;
    for (int r = 0; r < nprocs; r++) {
        int len = gathered_len(&s->in_update.said[r], shape_leader(&ix, s, r) == r);
        if (lens) lens[r] = len, offs[r] = (int)total;
        total += len;
    }
    return total;
}

/* The gathered pieces of one state update. */
typedef struct blob_set {
    const char *bytes;
    const int *lens, *offs;
} blob_set_t;

/* Rank r's place: its displacement, and its leader's shape, rebuilt from
 * the leader's blob when r leads. */
static int place_rank(ferry__coll_state_t *s, shape_index_t *ix, const blob_set_t *set, int r, int *room)
{
    if (set->lens[r] < (int)sizeof(int64_t))
        return ferry__error_set(MPI_ERR_INTERN, "ferry: a cached view is truncated");
    memcpy(&s->placed[r].disp, set->bytes + set->offs[r], sizeof(int64_t));
    int leader = shape_leader(ix, s, r);
    if (leader != r) {
        s->placed[r].shape = s->placed[leader].shape;
        return 0;
    }
    if (s->nshapes == *room) {
        ferry__coll_shape_t *more = ferry__realloc(s->shapes, 2 * (size_t)*room * sizeof *more);
        if (!more) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory caching views");
        s->shapes = more;
        *room *= 2;
    }
    ferry__coll_shape_t *shape = &s->shapes[s->nshapes];
    FERRY_TRY(rebuild_shape(set->bytes + set->offs[r], (size_t)set->lens[r], &shape->view));
    shape->leader = r;
    s->placed[r].shape = s->nshapes++;
    return 0;
}

enum { PERIOD_CHECK_MAX = 1 << 20 };

/* When every view tiles the file with one period E (filetypes of equal
 * extent, the seed's interleaved vectors), the views cover every byte from
 * the largest displacement D on if they cover [D, D + E): each view repeats
 * with period E. Checked once per view set by marking that period through
 * every view; two-phase writes then need no coverage mask per window
 * (twophase_file.c). Periods above PERIOD_CHECK_MAX (a subarray's extent is the
 * whole array) stay unknown: the mask decides per window. */
static void find_coverage(ferry__coll_state_t *s, int nprocs)
{
    s->covered_from = -1;
    MPI_Offset period = s->shapes[s->placed[0].shape].view.tile_extent, from = 0;
    for (int r = 0; r < nprocs; r++) {
        const ferry__view_t *v = &s->shapes[s->placed[r].shape].view;
        if (v->contiguous || v->tiles_overlap || v->tile_extent != period || period > PERIOD_CHECK_MAX) return;
        if (s->placed[r].disp > from) from = s->placed[r].disp;
    }
    char *mark = ferry__calloc((size_t)period, 1);
    int ok = mark != NULL;
    for (int r = 0; ok && r < nprocs; r++) {
        ferry__view_t view = ferry__coll_view(s, r);
        MPI_Offset s0, s1;
        ok = ferry__view_stream_below(&view, from, &s0) == 0 &&
             ferry__view_stream_below(&view, from + period, &s1) == 0 && s1 - s0 <= period &&
             ferry__view_buffer_mark(&view, mark, from, s0, s1 - s0) == 0;
    }
    if (ok && memchr(mark, 0, (size_t)period) == NULL) s->covered_from = from;
    ferry__free(mark);
}

int ferry__coll_cache_build(ferry__coll_state_t *s, int nprocs, const char *blobs, const int *lens, const int *offs)
{
    blob_set_t set = {blobs, lens, offs};
    shape_index_t ix = {.same = same_said_shape, .arg = s->in_update.said};
    int room = 4, rc = 0;
    index_open(&ix, s, nprocs);
    s->placed = ferry__malloc((size_t)nprocs * sizeof *s->placed);
    s->shapes = ferry__malloc((size_t)room * sizeof *s->shapes);
    if (!s->placed || !s->shapes) rc = ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory caching views");
    for (int r = 0; rc == 0 && r < nprocs; r++) rc = place_rank(s, &ix, &set, r, &room);
    if (rc == 0) find_coverage(s, nprocs);
    return rc;
}

enum { SAY_WORDS = sizeof(struct ferry__coll_said) / sizeof(MPI_Offset) };

/* Host datatypes rebuilt from serialized trees take about this many bytes
 * per byte of the tree in the word format (measured: 16 B per block there,
 * ~150 B per block held by Open MPI's type and the engine's decoded tree).
 * Blobs carry block lists compactly (about 2 B per block); what ranks say
 * as `expanded` is the word format's size, so the estimate is unchanged. */
enum { REBUILD_FACTOR = 10 };

/* The distinct shapes' bytes in the word format, the gather's bytes, and the
 * distinct shapes, from what every rank said: the same on every rank. */
static void said_bytes(const ferry__coll_state_t *s, int nprocs, MPI_Offset *distinct, MPI_Offset *gathered,
                       int *shapes)
{
    shape_index_t ix = {.same = same_said_shape, .arg = s->in_update.said};
    *distinct = *gathered = *shapes = 0;
    index_open(&ix, s, nprocs);
    for (int r = 0; r < nprocs; r++) {
        int leads = shape_leader(&ix, s, r) == r;
        *distinct += leads ? s->in_update.said[r].expanded : 0;
        *shapes += leads;
        *gathered += gathered_len(&s->in_update.said[r], leads);
    }
}

MPI_Offset ferry__coll_cache_held(const ferry__coll_state_t *s, int nprocs, MPI_Offset *peak)
{
    MPI_Offset distinct, gathered;
    int shapes;
    said_bytes(s, nprocs, &distinct, &gathered, &shapes);
    MPI_Offset held = (MPI_Offset)nprocs * (MPI_Offset)sizeof(ferry__coll_placed_t) +
                      shapes * (MPI_Offset)sizeof(ferry__coll_shape_t) + REBUILD_FACTOR * distinct;
    *peak = held + gathered + (MPI_Offset)(2 * sizeof(int)) * nprocs; /* the gather and its lengths */
    return held;
}

/* Whether my shape's leader sent what I would have: equal said words can
 * come from different blobs (a hash collision), caught here. */
static int leader_matches(const ferry__coll_state_t *s, const blob_set_t *set, int me, const void *blob, size_t len)
{
    int leader = s->shapes[s->placed[me].shape].leader;
    size_t skip = sizeof(int64_t); /* the displacement */
    return leader == me || ((size_t)set->lens[leader] == len &&
                            memcmp(set->bytes + set->offs[leader] + skip, (const char *)blob + skip, len - skip) == 0);
}

/* Collective: every shape's blob once, from its leader, and every other
 * rank's displacement, into every rank's cache (cache_ok: here), whose
 * estimated bytes are `held` (ferry__coll_cache_held, computed for the
 * bound already). A rank whose shape only collided with its leader's
 * keeps no cache and says so at its calls (coll.c: cached), so nobody
 * uses the wrong view. 0, or the class of a failed host collective. */
static int share_blobs(const ferry__target_t *file, MPI_Comm comm, const void *blob, size_t len, MPI_Offset held)
{
    ferry__coll_state_t *s = file->coll;
    int *lens = ferry__malloc((size_t)file->nprocs * sizeof *lens);
    int *offs = ferry__malloc((size_t)file->nprocs * sizeof *offs);
    MPI_Offset total = lens && offs ? ferry__coll_gather_plan(s, file->nprocs, lens, offs) : 0;
    char *blobs = lens && offs && total <= (1LL << 30) ? ferry__malloc((size_t)total) : NULL;
    int ok = blobs != NULL, all_ok = 0;
    int cls = ferry__error_host(ferry__progress_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm), "collective",
                                file->filename, "MPI_Allreduce");
    s->update_recv_bytes += (MPI_Offset)sizeof all_ok;
    if (cls == 0 && all_ok) {
        int mine = lens[file->rank];
        cls = ferry__error_host(ferry__progress_allgatherv(blob, mine, MPI_BYTE, blobs, lens, offs, MPI_BYTE, comm),
                                "collective", file->filename, "MPI_Allgatherv");
        s->update_recv_bytes += total;
    }
    if (cls == 0 && all_ok) {
        blob_set_t set = {blobs, lens, offs};
        s->cache_ok = ferry__coll_cache_build(s, file->nprocs, blobs, lens, offs) == 0 &&
                      leader_matches(s, &set, file->rank, blob, len);
        if (s->cache_ok) s->cache_bytes = held;
    }
    if (!s->cache_ok) release_views(s);
    ferry__free(blobs);
    ferry__free(lens);
    ferry__free(offs);
    return cls;
}

/* Whether some rank has no view blob, changed its view, or was given hints. */
typedef struct said_any {
    int no_blob, changed, hints;
} said_any_t;

/* Collective: what every rank says into s->in_update.said; then, in any[], whether
 * some rank has no view blob, changed its view, or was given hints. */
static int exchange_said(const ferry__target_t *file, MPI_Comm comm, const struct ferry__coll_said *mine,
                         said_any_t *any)
{
    ferry__coll_state_t *s = file->coll;
    FERRY_TRY(ferry__error_host(
        ferry__progress_allgather(mine, SAY_WORDS, MPI_OFFSET, s->in_update.said, SAY_WORDS, MPI_OFFSET, comm),
        "collective", file->filename, "MPI_Allgather"));
    s->update_recv_bytes = (MPI_Offset)sizeof *s->in_update.said * file->nprocs;
    *any = (said_any_t){0};
    for (int r = 0; r < file->nprocs; r++) {
        any->no_blob |= s->in_update.said[r].blob_len < 0;
        any->changed |= (s->in_update.said[r].flags & FERRY_COLL_SAID_CHANGED) != 0;
        any->hints |= (s->in_update.said[r].flags & FERRY_COLL_SAID_HINTS) != 0;
    }
    return 0;
}

/* This rank's part of a state update. */
typedef struct update {
    ferry__coll_blob_t blob; /* its serialized view */
    int local;               /* it has a blob (at most 1 GiB) */
    struct ferry__coll_said mine;
    said_any_t any;
} update_t;

static void describe_update(const ferry__target_t *file, int hints_changed, update_t *u)
{
    ferry__coll_state_t *s = file->coll;
    const ferry__coll_blob_t *b = &u->blob;
    u->local = ferry__coll_serialize_view(&file->view, &u->blob) == 0 && b->len <= (1u << 30);
    int changed = !s->cache_ok || !s->my_blob || b->len != s->my_blob_len || memcmp(b->bytes, s->my_blob, b->len) != 0;
    int hints = hints_changed || !s->hints_known;
    MPI_Offset flags = (changed ? FERRY_COLL_SAID_CHANGED : 0) | (hints ? FERRY_COLL_SAID_HINTS : 0);
    u->mine = (struct ferry__coll_said){u->local ? (MPI_Offset)b->len : -1, flags, s->nodes_known ? 0 : node_key(),
                                        u->local ? b->hash : 0, u->local ? b->expanded : 0};
}

/* Keeps this rank's blob to notice an unchanged view next time. */
static void finish_update(ferry__coll_state_t *s, update_t *u)
{
    ferry__free(s->my_blob);
    s->my_blob = u->local ? u->blob.bytes : NULL;
    s->my_blob_len = u->local ? u->blob.len : 0;
    if (!u->local) ferry__free(u->blob.bytes);
}

int ferry__coll_state_update(const ferry__target_t *file, MPI_Comm comm, int hints_changed)
{
    ferry__coll_state_t *s = file->coll;
    update_t u = {0};
    describe_update(file, hints_changed, &u);
    int cls = exchange_said(file, comm, &u.mine, &u.any);
    if (cls) {
        u.local = 0;
        finish_update(s, &u);
        release_views(s); /* the epoch stays behind: the next collective call tries again */
        return cls;
    }
    if (u.any.hints) cls = agree_hints(file, comm);
    s->hints_known = cls == 0;
    MPI_Offset peak = 0, held = 0;
    if (!u.any.no_blob) held = ferry__coll_cache_held(s, file->nprocs, &peak);
    int too_large = cls == 0 && !u.any.no_blob && peak > s->hints.view_cache_limit;
    if (u.any.no_blob || cls || too_large) release_views(s);
    else if (u.any.changed) {
        release_views(s);
        cls = share_blobs(file, comm, u.blob.bytes, u.blob.len, held);
    }
    s->cache_too_large = too_large;
    if (!s->nodes_known) ferry__coll_map_nodes(s, file->nprocs);
    finish_update(s, &u);
    if (cls == 0) s->epoch = file->config_epoch, s->hints_pending = 0; /* else the next collective call tries again */
    return cls;
}

MPI_Offset ferry__coll_state_bytes(const ferry__coll_state_t *s, int nprocs)
{
    MPI_Offset node_map = 3 * (MPI_Offset)sizeof(int) * nprocs; /* node_of, local_of, spread */
    return (MPI_Offset)sizeof *s + node_map + (MPI_Offset)room_bytes(nprocs) + s->cache_bytes;
}

long long ferry__coll_cache_bytes(const ferry__target_t *file)
{
    return file->coll ? (long long)file->coll->cache_bytes : 0;
}

long long ferry__coll_update_recv_bytes(const ferry__target_t *file)
{
    return file->coll ? (long long)file->coll->update_recv_bytes : 0;
}

void ferry__coll_config_changed(const ferry__target_t *file, int hints_changed)
{
    if (file->coll)
        file->coll->hints_pending |= hints_changed; /* the target's config_epoch moved: the next call updates */
}

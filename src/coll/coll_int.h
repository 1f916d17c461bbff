/*
 * Shared by the coll module's files only.
 *
 * Per file, state.c keeps what every rank agrees on: the view cache
 * (every rank's view as one of the distinct shapes, rebuilt as host
 * datatypes, at its displacement; exchanged at the first collective call
 * after a view changes), the nodes, and rank 0's collective hints, beside
 * one room of per-rank scratch that a state update and a call each lay out
 * their own way (ferry__coll_update_room_t, ferry__coll_call_room_t). A
 * call then goes through four stages:
 *   inputs      coll.c: one allreduce for regular calls (every rank's file
 *               range then from the cache), else one allgather of a few
 *               numbers per rank (error class, stream start and length,
 *               file range);
 *   strategy    choose.c, from those globally known inputs only, so every
 *               rank takes the same path;
 *   domains     domains.c: aggregators and their file domains, cut into
 *               windows;
 *   steps       two-phase (twophase_int.h): ship data to (or from)
 *               aggregators, who access the file one window at a time;
 *               twophase.c plans the steps and runs the call,
 *               twophase_file.c reads and writes an aggregator's window
 *               (holes, locks, patched writes), twophase_transport.c moves
 *               the bytes: messages, or the node-shared slabs of shipping.c
 *               (ferry_cb_shm) with their handshakes.
 * model.c runs the stages' local steps for P virtual ranks in one process
 * (the scaling model, ferry-bench scale): no stage may need a message to
 * plan, only to learn what other ranks said.
 */
#ifndef FERRY_COLL_INT_H
#define FERRY_COLL_INT_H

#include "base/keyed.h"
#include "coll/coll.h"
#include "datatype/datatype.h"
#include "view/view.h"

/* The cost model's file-system costs: the layout's (fs.h: a local file
 * system's kernel call and copy, or a network client's round trips), these
 * where the layout has none (the scaling model's targets, which name no file system). */
static const double FERRY_COLL_CALL = 3.0e-6;
static const double FERRY_COLL_BYTE = 0.1e-9;
/* Seconds per two-phase step: its messages and their waits (choose.c, coll.c's early rule). */
static const double FERRY_COLL_STEP = 20e-6;
static inline double ferry__coll_call_cost(const ferry__fs_layout_t *l)
{
    return l->call_seconds > 0 ? l->call_seconds : FERRY_COLL_CALL;
}
static inline double ferry__coll_byte_cost(const ferry__fs_layout_t *l)
{
    return l->byte_seconds > 0 ? l->byte_seconds : FERRY_COLL_BYTE;
}

/* What each rank brings to one call, known to every rank after the allgather. */
typedef struct ferry__coll_rank {
    MPI_Offset cls;   /* argument or set-up failure on that rank, 0 if none */
    MPI_Offset skip;  /* first view stream byte */
    MPI_Offset bytes; /* stream bytes it moves */
    MPI_Offset lo;    /* file bytes [lo, hi) span its data; lo == hi when bytes == 0 */
    MPI_Offset hi;
    MPI_Offset cached; /* that rank holds every rank's view (the view cache is usable) */
} ferry__coll_rank_t;
enum { FERRY_COLL_RANK_WORDS = 6 };

/* coll.c: a call's summary, what one allreduce (MAX, as MPI_INT64_T) of
 * every rank's words tells every rank: whether some rank failed, and
 * whether the call is regular (every rank with bytes the same stream start,
 * every rank the same length, every rank's view cache usable). The scaling
 * model reduces its virtual ranks' words through the same two functions. */
enum { FERRY_COLL_SUMMARY_WORDS = 6 };
void ferry__coll_summary_of(const ferry__coll_rank_t *me, MPI_Offset words[FERRY_COLL_SUMMARY_WORDS]);
int ferry__coll_summary_regular(const MPI_Offset all[FERRY_COLL_SUMMARY_WORDS]);

/* The collective hints in force, rank 0's (agreed in state.c), and rank
 * 0's core count, so that every rank's cost model sees the same machine. */
typedef struct ferry__coll_hints {
    MPI_Offset buffer_size, nodes, per_node, strategy, cb_write, cb_read, block_size, largeblock, striping_unit,
        striping_factor, group_size, view_cache_limit, cores, shm;
} ferry__coll_hints_t;

/* coll.c: rank->lo and ->hi from rank->skip and ->bytes through view (both
 * 0 when it moves no bytes); 0 or the class of an offset past the view's
 * reach. */
int ferry__coll_file_range(const ferry__view_t *view, ferry__coll_rank_t *rank);

/* state.c: what each rank tells the others at a state update. */
enum {
    FERRY_COLL_SAID_CHANGED = 1, /* its view differs from the one cached */
    FERRY_COLL_SAID_HINTS = 2    /* it was given hints, or the hints were never agreed */
};
struct ferry__coll_said {
    MPI_Offset blob_len; /* its serialized view's bytes, -1 when it has none */
    MPI_Offset flags;    /* FERRY_COLL_SAID_* */
    MPI_Offset node;     /* until the nodes are known: a key of its node (its processor name's hash; 0 unknown) */
    MPI_Offset tree;     /* a hash of its view's blob but the displacement: ranks that say equal hashes and
                          * lengths have one shape, whose blob only the first of them (its leader) sends */
    MPI_Offset expanded; /* its blob's bytes in the word format (block lists at 16 B per block, not
                          * compact): what rebuilding it costs scales with these (the cache's estimate) */
};

/* state.c: one rank's view serialized (ferry__coll_serialize_view). */
typedef struct ferry__coll_blob {
    void *bytes; /* header words (displacement first), then the layout's tree (datatype/serialize.c) */
    size_t len;
    MPI_Offset hash;     /* of the bytes past the displacement: the shape */
    MPI_Offset expanded; /* as ferry__coll_said.expanded */
} ferry__coll_blob_t;

/* state.c: one distinct view shape (views equal up to displacement) and
 * where each rank's view places it. Rank r's view is shapes[placed[r].shape]
 * at displacement placed[r].disp: per rank 16 bytes, per shape one view. */
typedef struct ferry__coll_shape {
    ferry__view_t view; /* disp 0; its layout owned unless contiguous */
    int leader;         /* the rank whose blob it was rebuilt from */
} ferry__coll_shape_t;
typedef struct ferry__coll_placed {
    MPI_Offset disp;
    MPI_Offset shape;
} ferry__coll_placed_t;

/* The state's room: per-rank scratch that belongs to one step at a time.
 * It is allocated with the state (ferry__coll_open), never later, so that
 * no step of a state update or a call can fail on one rank alone (an
 * allocation failing mid-call on one rank would break the agreed error),
 * and it is as large as the larger of its two layouts, not their sum, so
 * the state stays O(P) words (at 10^5 ranks every byte per rank counts:
 * docs/scale.md). state.c (room_lay_out) sets both layouts up in one place.
 * They never overlap in time: a state update runs only inside a call's
 * inputs step (coll.c), before the call fills its own layout, and nothing
 * in either layout is read after its step ends (the update's results are
 * in node_of, local_of, spread and the view cache; a call's are its
 * outcome). */
typedef struct ferry__coll_update_room {
    struct ferry__coll_said *said;    /* nprocs: what each rank said */
    int *shape_slots;                 /* the index that finds equal shapes (state.c: index_slots) */
    ferry__keyed_rank_t *node_keys;   /* nprocs: ranks sorted by the node key they said */
    int *leader;                      /* nprocs: each rank's node leader (the lowest rank of its node) */
    ferry__keyed_rank_t *spread_keys; /* nprocs: ranks sorted by rank within their node, then node */
} ferry__coll_update_room_t;
typedef struct ferry__coll_call_room {
    ferry__coll_rank_t *ranks;                    /* nprocs: the call's inputs */
    MPI_Offset *los, *his;                        /* nprocs each: ranges' starts and ends, sorted (choose.c) */
    double *node_sum, *node_longest, *node_ranks; /* one per node (nprocs at most): choose.c's costs */
    int *aggs;                                    /* nprocs: the call's aggregators (ferry__domains_t.aggs) */
} ferry__coll_call_room_t;

typedef struct ferry__coll_state ferry__coll_state_t;
struct ferry__coll_state {
    unsigned epoch;             /* file->config_epoch the cache below was agreed for */
    int cache_ok;               /* this rank holds every rank's view (shapes, placed) */
    atomic_llong cache_bytes;   /* estimated memory of the cached views (0: none); read by get_info at any time */
    atomic_llong update_recv_bytes; /* what this rank received at the last state update; likewise */
    int cache_too_large;        /* views over hints.view_cache_limit: not cached, on every rank alike */
    int nodes_known, hints_known;
    int hints_pending;           /* this rank was given hints since the last state update */
    ferry__coll_shape_t *shapes; /* nshapes distinct shapes */
    int nshapes;
    ferry__coll_placed_t *placed; /* nprocs entries */
    MPI_Offset covered_from;      /* every file byte from here on lies in some rank's view, -1 unknown */
    void *my_blob;              /* this rank's serialized view, to notice an unchanged view */
    size_t my_blob_len;
    ferry__coll_hints_t hints;
    int nodes;                  /* distinct nodes */
    /* Per rank, kept from the state update that maps the nodes for the file's life. */
    int *node_of, *local_of;    /* node index, rank within the node */
    int *spread;                /* all ranks: first of every node, then second of every node... */
    int most_per_node;          /* ranks on the most crowded node */
    void *room;                 /* the room's bytes (state.c: room_bytes) */
    ferry__coll_update_room_t in_update; /* the room during a state update */
    ferry__coll_call_room_t in_call;     /* the room during a call */
    /* Buffers kept between calls: an aggregator's window and coverage mask,
     * two steps' incoming bytes, a sender's second step of staged bytes
     * (the first is the context's staging, req->ctx->staging). */
    ferry__scratch_slot_t window, mask, incoming[2], staging2;
    struct ferry__coll_shm *shm; /* the node-shared window (shipping.c), joined at the first call that uses it */
};

/* state.c: collective over comm (the file's, or a background request's);
 * brings file->coll up to date with the view and hints when set_view or
 * set_info changed them since (file->config_epoch). 0, or MPI_ERR_INTERN when
 * a host collective failed (the state then stays out of date, so the next
 * collective call updates it again). */
int ferry__coll_state_update(const ferry__target_t *file, MPI_Comm comm, int hints_changed);

/* coll.c: a regular call's inputs (every rank moves me's stream window),
 * every rank's file range from the cached views into file->coll->in_call.ranks:
 * every rank computes the same. A rank whose range cannot be computed
 * fails the call here, on every rank alike (me->cls). */
void ferry__coll_fill_regular(const ferry__target_t *file, ferry__coll_rank_t *me);

/* coll.c: whether a rank's part moves before the call's first collective
 * (one contiguous range, long enough that shipping could at most halve its
 * cost, or filling cb_buffer_size): the call then needs only that
 * collective when every rank's does. The model (model.c) applies the same
 * rule. */
int ferry__coll_goes_early(const ferry__target_t *file, int write, const ferry__coll_rank_t *me);
#define FERRY_COLL_NOTHING_LEFT "independent (nothing to ship: contiguous ranges moved early, or no data)"

/* The steps of a state update that involve no other rank: a view as the
 * blob every rank caches and its tree's hash, which ranks say (0 or an
 * error class); this rank's collective hints into s->hints; the node map
 * (node_of, local_of, spread) from the node keys ranks said. */
int ferry__coll_serialize_view(const ferry__view_t *view, ferry__coll_blob_t *blob);
void ferry__coll_own_hints(const ferry__target_t *file);
void ferry__coll_map_nodes(ferry__coll_state_t *s, int nprocs);
/* What the state holds per file on this rank: its per-rank arrays, its room and the view cache. */
MPI_Offset ferry__coll_state_bytes(const ferry__coll_state_t *s, int nprocs);
/* state.c, the view cache's local steps (the scaling model runs them for
 * virtual ranks too), from what ranks said (s->in_update.said): the cache's
 * estimated bytes once built (*peak: while building); build it from every
 * rank's blob (blob r at blobs + offs[r], lens[r] bytes). */
MPI_Offset ferry__coll_cache_held(const ferry__coll_state_t *s, int nprocs, MPI_Offset *peak);
int ferry__coll_cache_build(ferry__coll_state_t *s, int nprocs, const char *blobs, const int *lens, const int *offs);
/* The gather of a state update, from what ranks said:
 * rank r contributes lens[r] bytes at offs[r] (both may be NULL), its whole
 * blob when it leads its shape, else its blob's first word (the
 * displacement). Returns the bytes gathered. */
MPI_Offset ferry__coll_gather_plan(const ferry__coll_state_t *s, int nprocs, int *lens, int *offs);

/* Rank r's cached view (only while s->cache_ok): its shape at its displacement. */
static inline ferry__view_t ferry__coll_view(const ferry__coll_state_t *s, int r)
{
    ferry__view_t view = s->shapes[s->placed[r].shape].view;
    view.disp = s->placed[r].disp;
    return view;
}

/* The file domains of one call. */
typedef enum { FERRY_DOMAIN_EVEN, FERRY_DOMAIN_CYCLIC, FERRY_DOMAIN_STRIPES } ferry__domain_kind_t;

typedef struct ferry__domains {
    ferry__domain_kind_t kind;
    int naggs;
    const int *aggs;        /* naggs ranks, spread over nodes (in the call's room, ferry__coll_call_room_t) */
    MPI_Offset lo, hi;      /* the bytes the call touches */
    MPI_Offset origin;      /* block b is [origin + b * block, + block) */
    MPI_Offset block;
    MPI_Offset window;      /* bytes per window at most */
    MPI_Offset targets;     /* stripes: storage targets, group: targets per aggregator */
    MPI_Offset group;
    MPI_Offset steps;       /* windows of the busiest aggregator */
} ferry__domains_t;

/* A cursor over one aggregator's windows, in ascending file order. */
typedef struct ferry__window_cursor {
    MPI_Offset next;        /* first file byte not yet handed out */
} ferry__window_cursor_t;

/* domains.c: arithmetic only, never fails. */
void ferry__coll_domains_plan(const ferry__target_t *file, const ferry__coll_rank_t *ranks, int kind,
                              ferry__domains_t *d);
/* Statistics: when this rank aggregates in d, counts into stats the call
 * and the distinct storage targets (stripe index mod stripe count, by the
 * striping hints or the file system's layout) its windows touch. */
void ferry__coll_count_targets(const ferry__target_t *file, const ferry__domains_t *d, ferry__stats_t *stats);
/* Fills s->spread from the node map (once per file, in the state update that maps the nodes). */
void ferry__coll_spread_ranks(ferry__coll_state_t *s, int nprocs);
/* The next window [*wlo, *whi) of aggregator index a; 0 when none is left. */
int ferry__coll_next_window(const ferry__domains_t *d, int a, ferry__window_cursor_t *c, MPI_Offset *wlo,
                            MPI_Offset *whi);

/* twophase_file.c: writes that end before a collective's closing agreement: when this rank's
 * part of the call is at least ferry_write_behind bytes, start the writeback
 * of [offset, offset + len) now (fs advise WRITEBACK). Independent writers
 * reach their fsync at their own pace, each overlapping the others'
 * writing; the agreement lines collective writers up, so without this every
 * page of the call would wait for the first fsync. */
void ferry__coll_write_behind(const ferry__request_t *req, MPI_Offset offset, MPI_Offset len, MPI_Offset call_bytes);

/* choose.c: the strategy of one call from globally known inputs: 1 for
 * two-phase, with *d the call's domains; 0 for independent. Says which and
 * why in req->ctx->stats->strategy. */
int ferry__coll_choose(const ferry__request_t *req, const ferry__coll_rank_t *ranks, ferry__domains_t *d);

/* twophase.c: the steps of one call (collective); adds this rank's bytes to req->done. */
typedef struct ferry__coll_call {
    ferry__request_t *req;
    const ferry__coll_rank_t *ranks;
    const ferry__domains_t *domains;
} ferry__coll_call_t;
int ferry__coll_two_phase(const ferry__coll_call_t *call);

/* twophase.c, for the scaling model: what one call would hold on this
 * rank (file->rank), planned as the call does before any message. */
typedef struct ferry__coll_buffers ferry__coll_buffers_t; /* coll.h: staging (outgoing bytes, two steps;
                                                           * 0 from contiguous memory), incoming (an aggregator's,
                                                           * two steps), window, per_call (the steps' bookkeeping) */
int ferry__coll_plan_buffers(const ferry__coll_call_t *call, ferry__coll_buffers_t *plan);

/* Stream bytes of rank r's data inside file bytes [wlo, whi): [*s0, *s1). */
int ferry__coll_share(const ferry__view_t *view, const ferry__coll_rank_t *rank, MPI_Offset wlo, MPI_Offset whi,
                      MPI_Offset *s0, MPI_Offset *s1);

/* shipping.c: two-phase shipping through node-shared memory. Every rank of
 * the file's communicator holds a slab in one window per node
 * (MPI_Win_allocate_shared): two step slots of at least a third of
 * cb_buffer_size each, where the ranks of its node put (writes) or take
 * (reads) the bytes of its window while it aggregates. Files on
 * MPI_COMM_WORLD's ranks share one window, kept until MPI_Finalize; a file
 * on other ranks has its own, freed at close. */
typedef struct ferry__coll_shm ferry__coll_shm_t;

/* Collective over file->comm (every rank of a two-phase call, whatever its
 * own state) at the file's first call that wants a window, local after
 * that: the window this call may ship through, held by this rank's call
 * until ferry__coll_shm_detach, or NULL for messages (ferry_cb_shm other
 * than enable, a background call on another communicator, no window, or a
 * window another thread's call holds: the call's agreement then keeps
 * messages on every rank). The first call makes the window, or joins the
 * shared one, on every rank alike (agreed there, once): its slots as large
 * as ferry__coll_shm_slot_want. */
ferry__coll_shm_t *ferry__coll_shm_attach(const ferry__target_t *file, MPI_Comm comm, MPI_Offset window);
/* Not collective: gives the window back at the end of the call (NULL: no-op). */
void ferry__coll_shm_detach(ferry__coll_shm_t *m);
/* Not collective: whether a call on comm would ask for the window (the hint, the communicator). */
int ferry__coll_shm_wanted(const ferry__target_t *file, MPI_Comm comm);
/* Bytes per slot a call on the file whose windows hold `window` bytes wants
 * (the same on every rank): `window`, at least a third of cb_buffer_size. */
MPI_Offset ferry__coll_shm_slot_want(const ferry__target_t *file, MPI_Offset window);
/* Collective over comm (the file's), every rank's call holding m and
 * having agreed to: makes m's window again with `slot`-byte slots. 1 when
 * every rank has it (agreed); else m is unusable from then on, for every
 * file that shares it. */
int ferry__coll_shm_grow(ferry__coll_shm_t *m, MPI_Comm comm, MPI_Offset slot);
/* Collective over the file's ranks (close): frees the file's own window
 * (a shared one stays for the next file). */
void ferry__coll_shm_release(ferry__coll_state_t *s);
/* Windows this process has made (tests: a shared window is made once). */
long long ferry__coll_shm_windows_made(void);
/* Step slot `slot` (0 or 1) of file rank r's slab, NULL when r is not on my node. */
char *ferry__coll_shm_slot(const ferry__coll_shm_t *m, int r, int slot);
/* Bytes per step slot. */
MPI_Offset ferry__coll_shm_slot_bytes(const ferry__coll_shm_t *m);
/* Orders this rank's loads and stores to the window against the other
 * ranks' (MPI_Win_sync): after bytes are put, before telling; after being
 * told, before taking. */
void ferry__coll_shm_fence(const ferry__coll_shm_t *m);

#endif

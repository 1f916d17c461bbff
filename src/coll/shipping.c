/*
 * Two-phase shipping through node-shared memory (issue 20 item 6).
 *
 * Between a sender and an aggregator on one node, a message copies every
 * byte twice more than it needs to (into the host's shared cells and out of
 * them) and costs the host's matching and polling on top. Instead, every
 * rank of the file's communicator owns a slab in one window per node
 * (MPI_Win_allocate_shared on the ranks MPI_Comm_split_type puts together):
 * two step slots of at least a third of cb_buffer_size each, the same share
 * of the aggregator's memory as the two steps' incoming buffers. While a
 * rank aggregates, the ranks of its node pack their bytes straight into its
 * slot (writes) or unpack straight from it (reads); twophase_transport.c says when,
 * with a go/done handshake of small messages per step.
 *
 * Making the window costs tens of milliseconds on some hosts (MPICH
 * oversubscribed: MPI_Comm_split_type and MPI_Win_allocate_shared
 * busy-poll), far more than a small call, so files share it: every file
 * whose communicator has MPI_COMM_WORLD's ranks in its order (sharedfp's
 * pool_home: a library such as HDF5 opens each file on a fresh duplicate)
 * uses one window, made at the first two-phase call that wants it and kept
 * until MPI_Finalize. A file on any other communicator makes a window of
 * its own at its first such call and frees it at close: coll/ sees only
 * the file's private duplicate, never the communicator the user opened it
 * on, so it cannot learn when that one is freed.
 *
 * Invariants. Every rank takes the same path: a file joins the shared
 * window only when every rank proposes to (one allreduce at its first call
 * that wants it), and a window is shared only when every rank could
 * register it (agreed in the allreduce that says whether every rank made
 * it); else the file ships by messages, or its window is its own on every
 * rank. A call ships through the window only while it holds it (`busy`,
 * taken without waiting): two files used at once by two threads never
 * share slots, the second call's agreement (twophase.c) keeps messages on
 * every rank. The slot size changes only while every rank's call holds
 * the window (ferry__coll_shm_grow, agreed), so every rank sees the same.
 * No MPI call is made under `lock`.
 */
#include <pthread.h>

#include "base/process.h"
#include "coll/coll_int.h"
#include "error/error.h"
#include "progress/progress.h"

struct ferry__coll_shm {
    MPI_Comm node;   /* the making file communicator's ranks on my node */
    MPI_Win win;     /* MPI_WIN_NULL when the host could not make it */
    MPI_Offset slot; /* bytes per step slot of every slab */
    char **slabs;    /* per node rank: its slab, mapped here */
    int *node_rank;  /* per file rank: its rank in node, -1 on another node (the same for every file
                      * of a shared window: their ranks are MPI_COMM_WORLD's, in its order) */
    int usable;      /* every rank made its window (agreed at each making; under lock) */
    int shared;      /* MPI_COMM_WORLD's ranks' window, kept until finalize; else its file's */
    int busy;        /* a call of this rank ships through it (under lock) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ferry__coll_shm_t *world; /* the shared window, once made */
static int world_pending;        /* a file is making it (no other may) */
static int hooked;               /* the finalize hook is registered */
static int finalized;
static long long windows_made; /* by this process, shared or not (tests see reuse) */

/* Which file ranks share my node, and where they are in it. */
static int map_node(const ferry__target_t *file, ferry__coll_shm_t *m)
{
    int local = 0;
    MPI_Group file_group, node_group;
    MPI_Comm_size(m->node, &local);
    m->node_rank = ferry__malloc((size_t)file->nprocs * sizeof *m->node_rank);
    m->slabs = ferry__calloc((size_t)local, sizeof *m->slabs);
    int *in_node = ferry__malloc((size_t)local * sizeof *in_node),
        *in_file = ferry__malloc((size_t)local * sizeof *in_file);
    int ok = m->node_rank && m->slabs && in_node && in_file;
    if (ok) {
        MPI_Comm_group(file->comm, &file_group);
        MPI_Comm_group(m->node, &node_group);
        for (int j = 0; j < local; j++) in_node[j] = j;
        ok = MPI_Group_translate_ranks(node_group, local, in_node, file_group, in_file) == MPI_SUCCESS;
        MPI_Group_free(&file_group);
        MPI_Group_free(&node_group);
    }
    for (int r = 0; ok && r < file->nprocs; r++) m->node_rank[r] = -1;
    for (int j = 0; ok && j < local; j++) ok = in_file[j] >= 0 && in_file[j] < file->nprocs;
    for (int j = 0; ok && j < local; j++) m->node_rank[in_file[j]] = j;
    ferry__free(in_node);
    ferry__free(in_file);
    return ok;
}

/* Collective over m->node: my slab, and every node rank's mapped here. */
static int make_window(ferry__coll_shm_t *m, MPI_Offset slot)
{
    MPI_Info info;
    char *mine = NULL;
    m->slot = slot;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true"); /* each slab on its owner's pages */
    ferry__progress_line_up(m->node);
    int rc = MPI_Win_allocate_shared((MPI_Aint)(2 * slot), 1, info, m->node, &mine, &m->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        m->win = MPI_WIN_NULL;
        return 0;
    }
    pthread_mutex_lock(&lock);
    windows_made++;
    pthread_mutex_unlock(&lock);
    MPI_Win_set_errhandler(m->win, MPI_ERRORS_RETURN);
    int local = 0, ok = 1;
    MPI_Comm_size(m->node, &local);
    for (int j = 0; ok && j < local; j++) {
        MPI_Aint size = 0;
        int unit = 0;
        ok = MPI_Win_shared_query(m->win, j, &size, &unit, &m->slabs[j]) == MPI_SUCCESS && size >= 2 * slot;
    }
    /* One passive epoch for the window's life: MPI_Win_sync needs one. */
    return ok && MPI_Win_lock_all(MPI_MODE_NOCHECK, m->win) == MPI_SUCCESS;
}

/* Collective over m->node (assumed made, or not, on every rank alike). */
static void free_window(ferry__coll_shm_t *m)
{
    if (m->win == MPI_WIN_NULL) return;
    MPI_Win_unlock_all(m->win);
    ferry__progress_line_up(m->node);
    MPI_Win_free(&m->win);
}

static void destroy(ferry__coll_shm_t *m)
{
    free_window(m);
    if (m->node != MPI_COMM_NULL) MPI_Comm_free(&m->node);
    ferry__free(m->slabs);
    ferry__free(m->node_rank);
    ferry__free(m);
}

/* At MPI_Finalize, after the files left open were closed: the shared window. */
static void finalize_world(void)
{
    pthread_mutex_lock(&lock);
    ferry__coll_shm_t *m = world;
    world = NULL;
    finalized = 1;
    pthread_mutex_unlock(&lock);
    if (m) destroy(m);
}

/* Under lock: whether the window being made may become the shared one (none
 * is, none is being made, and finalize will free it); reserves that. */
static int reserve_world_locked(void)
{
    if (world || world_pending || finalized) return 0;
    if (!hooked && ferry__process_at_finalize(finalize_world) != 0) return 0;
    hooked = 1;
    world_pending = 1;
    return 1;
}

/* The slot a call on the file wants: its file windows (the same on every rank)
 * fill at most one per step, unless views overlap; at least a third of
 * cb_buffer_size, or the file system's block when that is larger (domains.c). */
MPI_Offset ferry__coll_shm_slot_want(const ferry__target_t *file, MPI_Offset window)
{
    MPI_Offset third = file->coll->hints.buffer_size / 3, slot = window > third ? window : third;
    return slot > 0 ? slot : 1;
}

/* Collective over file->comm: the node communicator, its window, whether
 * every rank has both, and (when `for_world`) whether every rank keeps it
 * as the shared window. */
static void make(const ferry__target_t *file, ferry__coll_shm_t *m, MPI_Offset window, int for_world)
{
    m->node = MPI_COMM_NULL;
    m->win = MPI_WIN_NULL;
    ferry__progress_line_up(file->comm);
    int ok = MPI_Comm_split_type(file->comm, MPI_COMM_TYPE_SHARED, file->rank, MPI_INFO_NULL, &m->node) == MPI_SUCCESS;
    if (ok) MPI_Comm_set_errhandler(m->node, MPI_ERRORS_RETURN);
    int mapped = ok && map_node(file, m);
    if (ok) ok = make_window(m, ferry__coll_shm_slot_want(file, window)) && mapped; /* the node's collective */
    pthread_mutex_lock(&lock);
    int reserved = for_world && reserve_world_locked();
    pthread_mutex_unlock(&lock);
    int mine[2] = {ok, reserved}, everyone[2] = {0, 0};
    if (ferry__progress_allreduce(mine, everyone, 2, MPI_INT, MPI_MIN, file->comm) != MPI_SUCCESS)
        everyone[0] = everyone[1] = 0;
    pthread_mutex_lock(&lock);
    m->usable = everyone[0];
    m->shared = everyone[1];
    if (reserved) world_pending = 0;
    if (m->shared) world = m; /* kept even when unusable: no later file tries again */
    pthread_mutex_unlock(&lock);
}

/* What a file whose ranks could not agree on a window uses: none. */
static ferry__coll_shm_t unavailable = {.node = MPI_COMM_NULL, .win = MPI_WIN_NULL};

/* Collective over file->comm, at the file's first call that wants a window:
 * the shared one when every rank has it, a new one when no rank has (shared
 * if every rank can keep it), else none. */
static ferry__coll_shm_t *join(const ferry__target_t *file, MPI_Offset window)
{
    enum { NO_MEMORY = -1, MAKE = 0, HAVE_WORLD = 1 };
    int for_world = ferry__process_world_ranks(file->comm);
    pthread_mutex_lock(&lock);
    int have = for_world && world != NULL;
    pthread_mutex_unlock(&lock);
    /* Before the node's collectives: a rank without the state could not free the window. */
    ferry__coll_shm_t *m = have ? NULL : ferry__calloc(1, sizeof *m);
    int mine = have ? HAVE_WORLD : m ? MAKE : NO_MEMORY;
    int range[2] = {mine, -mine}, agreed[2];
    if (ferry__progress_allreduce(range, agreed, 2, MPI_INT, MPI_MAX, file->comm) != MPI_SUCCESS)
        agreed[0] = agreed[1] = NO_MEMORY;
    int largest = agreed[0], smallest = -agreed[1];
    if (largest != smallest || largest == NO_MEMORY) { /* threads that raced on the shared one, or no memory */
        ferry__free(m);
        return &unavailable;
    }
    if (largest == HAVE_WORLD) {
        pthread_mutex_lock(&lock);
        m = world; /* only finalize takes it away */
        pthread_mutex_unlock(&lock);
        return m;
    }
    make(file, m, window, for_world);
    return m;
}

int ferry__coll_shm_wanted(const ferry__target_t *file, MPI_Comm comm)
{
    /* auto keeps messages: measured no faster on MPICH (docs/benchmarks-coll.md). */
    return file->coll->hints.shm == FERRY_HINT_ENABLE && comm == file->comm;
}

ferry__coll_shm_t *ferry__coll_shm_attach(const ferry__target_t *file, MPI_Comm comm, MPI_Offset window)
{
    ferry__coll_state_t *s = file->coll;
    if (!ferry__coll_shm_wanted(file, comm)) return NULL;
    if (!s->shm) s->shm = join(file, window);
    ferry__coll_shm_t *m = s->shm;
    pthread_mutex_lock(&lock);
    int mine = m->usable && !m->busy; /* busy: another thread's call; never wait for it */
    if (mine) m->busy = 1;
    pthread_mutex_unlock(&lock);
    return mine ? m : NULL;
}

void ferry__coll_shm_detach(ferry__coll_shm_t *m)
{
    if (!m) return;
    pthread_mutex_lock(&lock);
    m->busy = 0;
    pthread_mutex_unlock(&lock);
}

int ferry__coll_shm_grow(ferry__coll_shm_t *m, MPI_Comm comm, MPI_Offset slot)
{
    free_window(m);
    int ok = make_window(m, slot), everyone = 0;
    if (ferry__progress_allreduce(&ok, &everyone, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) everyone = 0;
    pthread_mutex_lock(&lock);
    m->usable = everyone; /* unusable from now on for every file that shares it */
    pthread_mutex_unlock(&lock);
    return everyone;
}

void ferry__coll_shm_release(ferry__coll_state_t *s)
{
    ferry__coll_shm_t *m = s->shm;
    if (!m) return;
    if (m != &unavailable && !m->shared) destroy(m);
    s->shm = NULL;
}

long long ferry__coll_shm_windows_made(void)
{
    pthread_mutex_lock(&lock);
    long long n = windows_made;
    pthread_mutex_unlock(&lock);
    return n;
}

char *ferry__coll_shm_slot(const ferry__coll_shm_t *m, int r, int slot)
{
    int j = m->node_rank[r];
    return j < 0 ? NULL : m->slabs[j] + (MPI_Offset)slot * m->slot;
}

MPI_Offset ferry__coll_shm_slot_bytes(const ferry__coll_shm_t *m)
{
    return m->slot;
}

void ferry__coll_shm_fence(const ferry__coll_shm_t *m)
{
    MPI_Win_sync(m->win);
}

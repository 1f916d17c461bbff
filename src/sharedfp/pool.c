/*
 * Pools of shared-pointer slots, one per communicator files are opened on
 * (see sharedfp.h), and the making and freeing of every pointer.
 *
 * Invariants: a pool's bitmap changes on every rank in the same order,
 * because opens and closes on its communicator are collective; a reserved
 * slot is used only when every rank proposed the same one (open's first
 * agreement), so ranks whose bitmaps went apart (two threads opening and
 * closing on one communicator in different orders on different ranks) cost
 * the file a window of its own, never two files one slot. A slot is given
 * back at close before close's agreement, which no rank leaves before every
 * rank has stopped accessing it: the next open writes it only after that.
 * `files` counts a pool's reservations; its MPI objects are freed when that
 * is 0 and its home communicator is gone (the attribute's delete
 * callback, or the last close after it), or at MPI_Finalize. The registry
 * (`pools`, under `lock`) maps the attribute's value, an id never reused,
 * to the pool, so an attribute deleted after finalize freed its pool (the
 * host deletes MPI_COMM_WORLD's late) finds nothing. No MPI call that can
 * run a callback is made under `lock`.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/process.h"
#include "error/error.h"
#include "progress/progress.h"
#include "sharedfp/sharedfp_int.h"

/* What a rank proposes when it has no slot to offer. */
enum { PROPOSE_NEW_POOL = -1, PROPOSE_OWN_WINDOW = -2, PROPOSE_NO_WINDOW = -3 };
enum { SLOT_WORDS = SHAREDFP_POOL_SLOTS / 64 };

typedef struct ferry__sharedfp_pool {
    int64_t id;                /* the attribute's value on its home communicator */
    MPI_Comm comm;             /* private duplicate of the user's communicator: the window's */
    MPI_Win win;               /* SHAREDFP_POOL_SLOTS pointers; MPI_WIN_NULL when the host cannot */
    uint64_t used[SLOT_WORDS]; /* bit s % 64 of word s / 64: slot s is reserved */
    int files;                 /* reservations: slots proposed or in use (windowless: files) */
    int orphan;                /* the user freed the communicator: free the pool at its last close */
    struct ferry__sharedfp_pool *next;
} pool_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pool_t *pools; /* in creation order, which finalize frees them in (the same on every rank) */
static int keyval = MPI_KEYVAL_INVALID;
static int finalized;
static int64_t last_id;

static pool_t *find(int64_t id)
{
    pool_t *p = pools;
    while (p && p->id != id) p = p->next;
    return p;
}

static void unlink_pool(pool_t *p)
{
    pool_t **at = &pools;
    while (*at && *at != p) at = &(*at)->next;
    if (*at) *at = p->next;
}

/* Collective over the pool's communicator, for an unlinked pool. */
static void destroy(pool_t *p)
{
    ferry__sharedfp_window_free(p->comm, &p->win);
    if (p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
    ferry__free(p);
}

/* Under lock: drops one reservation; returns the pool when it must go now. */
static pool_t *release_locked(pool_t *p, int64_t slot)
{
    if (slot >= 0) p->used[slot / 64] &= ~(UINT64_C(1) << (slot % 64));
    p->files--;
    if (!p->orphan || p->files > 0) return NULL;
    unlink_pool(p);
    return p;
}

/* Collective when it frees the pool (its last reservation after the user
 * freed its communicator). */
static void release(pool_t *p, int64_t slot)
{
    pthread_mutex_lock(&lock);
    pool_t *gone = release_locked(p, slot);
    pthread_mutex_unlock(&lock);
    if (gone) destroy(gone);
}

/* The attribute's delete callback: MPI_Comm_free of the user's
 * communicator (collective, so the pool's free is too) or MPI_Finalize. */
static int forget_communicator(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm, (void)key, (void)extra;
    pthread_mutex_lock(&lock);
    pool_t *p = find((int64_t)(intptr_t)value), *gone = NULL;
    if (p) {
        p->orphan = 1;
        if (p->files == 0) unlink_pool(gone = p);
    }
    pthread_mutex_unlock(&lock);
    if (gone) destroy(gone);
    return MPI_SUCCESS;
}

/* At MPI_Finalize, after the files left open were closed: every pool. */
static void finalize_pools(void)
{
    pthread_mutex_lock(&lock);
    pool_t *list = pools;
    pools = NULL;
    finalized = 1;
    pthread_mutex_unlock(&lock);
    while (list) {
        pool_t *next = list->next;
        destroy(list);
        list = next;
    }
    if (keyval != MPI_KEYVAL_INVALID) MPI_Comm_free_keyval(&keyval);
}

/* Under lock: the keyval (and the finalize hook) on first use; 0 if none. */
static int have_keyval(void)
{
    if (keyval != MPI_KEYVAL_INVALID) return 1;
    if (finalized || ferry__process_at_finalize(finalize_pools) != 0) return 0;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, forget_communicator, &keyval, NULL) == MPI_SUCCESS) return 1;
    keyval = MPI_KEYVAL_INVALID;
    finalized = 1; /* the hook is registered: never register it again */
    return 0;
}

/* Under lock: this rank's proposal from the communicator's pool, reserving it. */
static int64_t reserve_locked(pool_t *p)
{
    if (p->win == MPI_WIN_NULL) {
        p->files++;
        return PROPOSE_NO_WINDOW;
    }
    for (int64_t s = 0; s < SHAREDFP_POOL_SLOTS; s++) {
        if (p->used[s / 64] & (UINT64_C(1) << (s % 64))) continue;
        p->used[s / 64] |= UINT64_C(1) << (s % 64);
        p->files++;
        return s;
    }
    return PROPOSE_OWN_WINDOW; /* full: no reservation */
}

/* The communicator a pool for files of user_comm hangs on: MPI_COMM_WORLD
 * for every communicator with its ranks in its order (a library such as
 * HDF5 opens each file on a fresh duplicate, which would otherwise make a
 * pool per file), else user_comm itself. Local: every rank decides alike. */
static MPI_Comm pool_home(MPI_Comm user_comm)
{
    return ferry__process_world_ranks(user_comm) ? MPI_COMM_WORLD : user_comm;
}

/* Under lock: the proposal for plan->home; plan->pool set when it holds a
 * reservation or is a new pool to make. */
static int64_t propose_locked(ferry__sharedfp_plan_t *plan)
{
    if (!have_keyval()) return PROPOSE_OWN_WINDOW;
    void *value = NULL;
    int found = 0;
    if (MPI_Comm_get_attr(plan->home, keyval, &value, &found) != MPI_SUCCESS) return PROPOSE_OWN_WINDOW;
    if (found) {
        pool_t *p = find((int64_t)(intptr_t)value);
        int64_t proposal = p ? reserve_locked(p) : PROPOSE_OWN_WINDOW;
        if (proposal != PROPOSE_OWN_WINDOW) plan->pool = p;
        return proposal;
    }
    plan->pool = ferry__calloc(1, sizeof *plan->pool); /* made, if every rank agrees, by create */
    if (!plan->pool) return PROPOSE_OWN_WINDOW;
    plan->pool->comm = MPI_COMM_NULL;
    plan->pool->win = MPI_WIN_NULL;
    return PROPOSE_NEW_POOL;
}

int ferry__sharedfp_propose(MPI_Comm user_comm, const char *filename, ferry__sharedfp_plan_t *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->user_comm = user_comm;
    plan->home = pool_home(user_comm);
    plan->proposal = PROPOSE_OWN_WINDOW;
    plan->made = ferry__calloc(1, sizeof *plan->made);
    if (!plan->made) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: open '%s': out of memory", filename);
    plan->made->win = MPI_WIN_NULL;
    plan->made->slot = -1;
    pthread_mutex_lock(&lock);
    plan->proposal = propose_locked(plan);
    pthread_mutex_unlock(&lock);
    plan->range[0] = plan->proposal;
    plan->range[1] = ~plan->proposal;
    return 0;
}

/* Gives back what the proposal reserved (the pool to make is dropped). */
static void drop_proposal(ferry__sharedfp_plan_t *plan)
{
    if (plan->proposal == PROPOSE_NEW_POOL) ferry__free(plan->pool);
    else if (plan->pool) release(plan->pool, plan->proposal); /* not the last: the home communicator lives */
    plan->pool = NULL;
    plan->proposal = PROPOSE_OWN_WINDOW;
}

void ferry__sharedfp_withdraw(ferry__sharedfp_plan_t *plan)
{
    drop_proposal(plan);
    ferry__free(plan->made);
    plan->made = NULL;
}

/* Collective: makes the pool every rank proposed to make, registers it,
 * caches it on its home communicator and reserves its first slot. The
 * window's communicator duplicates the user's (never MPI_COMM_WORLD, on
 * which another thread of the user may be in a collective). */
static int make_pool(ferry__sharedfp_plan_t *plan)
{
    pool_t *p = plan->pool;
    int cls = 0;
    /* A host that cannot duplicate (assumed alike on every rank) gets a windowless pool. */
    if (ferry__progress_comm_dup(plan->user_comm, &p->comm) != MPI_SUCCESS) p->comm = MPI_COMM_NULL;
    else cls = ferry__sharedfp_window_create(p->comm, SHAREDFP_POOL_SLOTS, &p->win);
    pthread_mutex_lock(&lock);
    p->id = ++last_id;
    p->next = NULL;
    pool_t **tail = &pools;
    while (*tail) tail = &(*tail)->next;
    *tail = p;
    plan->proposal = reserve_locked(p);
    pthread_mutex_unlock(&lock);
    MPI_Comm_set_attr(plan->home, keyval, (void *)(intptr_t)p->id);
    return cls;
}

/* Rank POINTER_RANK sets the file's pointer to `initial`. */
static int set_initial(const ferry__sharedfp_t *f, MPI_Comm comm, MPI_Offset initial)
{
    int rank, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &rank);
    if (f->win == MPI_WIN_NULL || rank != POINTER_RANK) return 0;
    rc = MPI_Accumulate(&initial, 1, MPI_OFFSET, POINTER_RANK, f->slot, 1, MPI_OFFSET, MPI_REPLACE, f->win);
    if (rc == MPI_SUCCESS) rc = MPI_Win_flush(POINTER_RANK, f->win);
    if (rc != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_INTERN, "ferry: open: cannot initialize the shared file pointer");
    return 0;
}

int ferry__sharedfp_create(ferry__sharedfp_plan_t *plan, MPI_Comm comm, MPI_Offset initial, ferry__sharedfp_t **sfp)
{
    ferry__sharedfp_t *f = plan->made;
    plan->made = NULL;
    int64_t largest = plan->range[0], smallest = ~plan->range[1];
    int cls = 0;
    if (largest != smallest || largest == PROPOSE_OWN_WINDOW) {
        drop_proposal(plan); /* a full pool, or ranks that disagree: every rank sees the same range */
        f->slot = 0;
        cls = ferry__sharedfp_window_create(comm, 1, &f->win);
    } else {
        if (largest == PROPOSE_NEW_POOL) cls = make_pool(plan);
        f->pool = plan->pool; /* the reservation passes to the file */
        f->slot = plan->proposal >= 0 ? plan->proposal : -1;
        f->win = f->slot >= 0 ? f->pool->win : MPI_WIN_NULL;
    }
    plan->pool = NULL;
    if (cls == 0) cls = set_initial(f, comm, initial);
    *sfp = f;
    return cls;
}

void ferry__sharedfp_free(MPI_Comm comm, ferry__sharedfp_t **sfp)
{
    ferry__sharedfp_t *f = *sfp;
    if (!f) return;
    if (f->pool) release(f->pool, f->slot);
    else ferry__sharedfp_window_free(comm, &f->win);
    ferry__free(f);
    *sfp = NULL;
}

/*
 * Two-phase shipping through node-shared memory (issue 20 item 6).
 *
 * Between a sender and an aggregator on one node, a message copies every
 * byte twice more than it needs to (into the host's shared cells and out of
 * them) and costs the host's matching and polling on top. Instead, every
 * rank of the file's communicator owns a slab in one window per node
 * (MPI_Win_allocate_shared on the ranks MPI_Comm_split_type puts together):
 * two step slots of a third of cb_buffer_size each, the same share of the
 * aggregator's memory as the two steps' incoming buffers. While a rank
 * aggregates, the ranks of its node pack their bytes straight into its
 * slot (writes) or unpack straight from it (reads); twophase.c says when,
 * with a go/done handshake of small messages per step.
 *
 * The window is made at the first two-phase call that wants it, on every
 * rank alike: the hint is rank 0's (state.c; only ferry_cb_shm=enable
 * wants it, auto keeps messages for now), a call wants it when it runs on
 * the file's own communicator (background calls run on their lane's
 * communicator and keep messages), and one allreduce then agrees whether
 * every rank got its window. Where one did not, no call of the file uses
 * it. It lives until close.
 */
#include "coll/coll_int.h"
#include "error/error.h"
#include "progress/progress.h"

struct ferry__coll_shm {
    MPI_Comm node;   /* the file communicator's ranks on my node */
    MPI_Win win;     /* MPI_WIN_NULL when the host could not make it */
    MPI_Offset slot; /* bytes per step slot of every slab */
    char **slabs;    /* per node rank: its slab, mapped here */
    int *node_rank;  /* per file rank: its rank in node, -1 on another node */
    int usable;      /* every rank of the file made its window (agreed) */
};

/* Which file ranks share my node, and where they are in it. */
static int map_node(ferry_File fh, ferry__coll_shm_t *m)
{
    int local = 0;
    MPI_Group file_group, node_group;
    MPI_Comm_size(m->node, &local);
    m->node_rank = ferry__malloc((size_t)fh->nprocs * sizeof *m->node_rank);
    m->slabs = ferry__calloc((size_t)local, sizeof *m->slabs);
    int *in_node = ferry__malloc((size_t)local * sizeof *in_node),
        *in_file = ferry__malloc((size_t)local * sizeof *in_file);
    int ok = m->node_rank && m->slabs && in_node && in_file;
    if (ok) {
        MPI_Comm_group(fh->comm, &file_group);
        MPI_Comm_group(m->node, &node_group);
        for (int j = 0; j < local; j++) in_node[j] = j;
        ok = MPI_Group_translate_ranks(node_group, local, in_node, file_group, in_file) == MPI_SUCCESS;
        MPI_Group_free(&file_group);
        MPI_Group_free(&node_group);
    }
    for (int r = 0; ok && r < fh->nprocs; r++) m->node_rank[r] = -1;
    for (int j = 0; ok && j < local; j++) ok = in_file[j] >= 0 && in_file[j] < fh->nprocs;
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

/* Collective over fh->comm: the node communicator, its window, and whether
 * every rank of the file has both. */
static void make(ferry_File fh, ferry__coll_shm_t *m, MPI_Offset window)
{
    /* A step's bytes for one aggregator fill at most its window (unless views overlap): a third of
     * cb_buffer_size, or the file system's block when that is larger (domains.c). */
    MPI_Offset third = fh->coll->hints.buffer_size / 3, slot = window > third ? window : third;
    m->node = MPI_COMM_NULL;
    m->win = MPI_WIN_NULL;
    ferry__progress_line_up(fh->comm);
    int ok = MPI_Comm_split_type(fh->comm, MPI_COMM_TYPE_SHARED, fh->rank, MPI_INFO_NULL, &m->node) == MPI_SUCCESS;
    if (ok) MPI_Comm_set_errhandler(m->node, MPI_ERRORS_RETURN);
    int mapped = ok && map_node(fh, m);
    if (ok) ok = make_window(m, slot > 0 ? slot : 1) && mapped; /* collective over the node whatever I mapped */
    int everyone = 0;
    if (ferry__progress_allreduce(&ok, &everyone, 1, MPI_INT, MPI_MIN, fh->comm) != MPI_SUCCESS) everyone = 0;
    m->usable = everyone;
}

/* What a file whose ranks could not all hold the window's state uses: no window. */
static ferry__coll_shm_t unavailable = {.node = MPI_COMM_NULL, .win = MPI_WIN_NULL};

int ferry__coll_shm_wanted(ferry_File fh, MPI_Comm comm)
{
    /* auto keeps messages: measured no faster on MPICH (docs/benchmarks-coll.md). */
    return fh->coll->hints.shm == FERRY_HINT_ENABLE && comm == fh->comm;
}

ferry__coll_shm_t *ferry__coll_shm_attach(ferry_File fh, MPI_Comm comm, MPI_Offset window)
{
    ferry__coll_state_t *s = fh->coll;
    if (!ferry__coll_shm_wanted(fh, comm)) return NULL;
    if (!s->shm) {
        ferry__coll_shm_t *m = ferry__calloc(1, sizeof *m);
        int mine = m != NULL, everyone = 0;
        /* Before the node's collectives: a rank without the state could not free the window at close. */
        if (ferry__progress_allreduce(&mine, &everyone, 1, MPI_INT, MPI_MIN, fh->comm) != MPI_SUCCESS) everyone = 0;
        if (everyone) make(fh, m, window);
        else ferry__free(m);
        s->shm = everyone ? m : &unavailable;
    }
    return s->shm->usable ? s->shm : NULL;
}

void ferry__coll_shm_release(ferry_File fh)
{
    ferry__coll_shm_t *m = fh->coll ? fh->coll->shm : NULL;
    if (!m || m == &unavailable) return;
    if (m->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(m->win);
        ferry__progress_line_up(m->node);
        MPI_Win_free(&m->win);
    }
    if (m->node != MPI_COMM_NULL) MPI_Comm_free(&m->node);
    ferry__free(m->slabs);
    ferry__free(m->node_rank);
    ferry__free(m);
    fh->coll->shm = NULL;
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

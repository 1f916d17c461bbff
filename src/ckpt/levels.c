/*
 * Multi-level checkpoints (docs/checkpoint.md "Multi-level checkpoints"):
 * the node map, the level-1 write with its partner copy (level 2), the
 * node-local files' pruning, and the restart's levels 1 and 2 for one step.
 *
 * The node map comes from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED); the
 * test hook FERRY_CKPT_NODE_SIZE=k (the same on every rank) instead puts
 * ranks [k*n, k*n + k) on node n, so one machine can play several nodes. Rank
 * r's copy goes to the rank of the same local index (modulo that node's
 * size) on node (n + 1) mod N.
 *
 * Called by commit.c (the write) and restart.c (one step's levels 1 and 2);
 * calls down into levels_io.c, drain.c, steps.c and the progress layer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"
#include "progress/progress.h"

/* The test hook FERRY_CKPT_NODE_SIZE: k consecutive ranks per node (0: the real nodes). */
static int fake_node_size(void)
{
    const char *fake = getenv("FERRY_CKPT_NODE_SIZE");
    return fake ? atoi(fake) : 0;
}

/* Collective: the ranks of the set on this rank's node. */
static int split_node(ferry_ckpt_t ck, MPI_Comm *node)
{
    ferry__progress_line_up(ck->comm); /* MPI_Comm_split_type has no nonblocking form */
    int rc = MPI_Comm_split_type(ck->comm, MPI_COMM_TYPE_SHARED, ck->rank, MPI_INFO_NULL, node);
    return rc == MPI_SUCCESS ? 0 : ferry__error_host(rc, "ferry_ckpt_create", ck->base, "MPI_Comm_split_type");
}

/* Collective: this rank's node identity (the lowest rank of its node) and index on it. */
static int node_identity(ferry_ckpt_t ck, int mine[2])
{
    int k = fake_node_size();
    if (k > 0) {
        mine[0] = ck->rank / k * k, mine[1] = ck->rank % k;
        return 0;
    }
    MPI_Comm node = MPI_COMM_NULL;
    int rc = split_node(ck, &node);
    if (rc) return rc;
    mine[0] = ck->rank;
    MPI_Comm_rank(node, &mine[1]);
    rc = ferry__progress_bcast(&mine[0], 1, MPI_INT, 0, node);
    MPI_Comm_free(&node);
    return rc == MPI_SUCCESS ? 0 : ferry__error_host(rc, "ferry_ckpt_create", ck->base, "MPI_Bcast");
}

int ferry__ckpt_find_one_node(ferry_ckpt_t ck)
{
    int k = fake_node_size(), size = 0;
    if (k > 0) {
        ck->one_node = k >= ck->nprocs;
        return 0;
    }
    MPI_Comm node = MPI_COMM_NULL;
    int rc = split_node(ck, &node);
    if (rc) return rc;
    MPI_Comm_size(node, &size);
    MPI_Comm_free(&node);
    ck->one_node = size == ck->nprocs; /* on one node every rank's node holds them all; else none's does */
    return 0;
}

/* From every rank's (identity, index) pairs: node numbers in rank order and each rank's holder. */
static int partner_map(ferry_ckpt_t ck, const int *pairs)
{
    ferry__ckpt_levels_t *lv = ck->levels;
    int n = ck->nprocs, *number = ferry__malloc((size_t)n * sizeof *number * 3 + 1);
    lv->holder = ferry__malloc((size_t)n * sizeof *lv->holder + 1);
    if (!number || !lv->holder) {
        ferry__free(number);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_create: no memory for the node map");
    }
    int *size = number + n, *first = number + 2 * n; /* per node: its rank count, its ranks' start */
    lv->nodes = 0;
    for (int r = 0; r < n; r++) number[r] = pairs[2 * r] == r ? lv->nodes++ : -1;
    for (int m = 0; m < lv->nodes; m++) size[m] = 0;
    for (int r = 0; r < n; r++) size[number[pairs[2 * r]]]++;
    for (int m = 0, at = 0; m < lv->nodes; at += size[m++]) first[m] = at;
    int *order = ferry__malloc((size_t)n * sizeof *order + 1), *fill = ferry__calloc((size_t)lv->nodes + 1, sizeof *fill);
    for (int r = 0; order && fill && r < n; r++) {
        int m = number[pairs[2 * r]];
        order[first[m] + fill[m]++] = r; /* a node's ranks by local index (split_type keyed by rank) */
    }
    for (int r = 0; order && fill && r < n; r++) {
        int m = number[pairs[2 * r]], next = (m + 1) % lv->nodes;
        lv->holder[r] = lv->nodes < 2 ? -1 : order[first[next] + pairs[2 * r + 1] % size[next]];
    }
    lv->node = number[pairs[2 * ck->rank]];
    int cls = order && fill ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_create: no memory for the node map");
    ferry__free(order);
    ferry__free(fill);
    ferry__free(number);
    return cls;
}

/* Local: the directory with "%n" replaced by this rank's node number, and the set's base name. */
static int local_names(ferry_ckpt_t ck, const char *dir)
{
    ferry__ckpt_levels_t *lv = ck->levels;
    const char *at = strstr(dir, "%n"), *slash = strrchr(ck->base, '/');
    size_t n = strlen(dir) + 24;
    lv->dir = ferry__malloc(n);
    lv->name = ferry__strdup(slash ? slash + 1 : ck->base);
    if (!lv->dir || !lv->name) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_create: no memory");
    if (at) snprintf(lv->dir, n, "%.*s%d%s", (int)(at - dir), dir, lv->node, at + 2);
    else snprintf(lv->dir, n, "%s", dir);
    if (access(lv->dir, W_OK | X_OK) != 0)
        return ferry__error_set(MPI_ERR_NO_SUCH_FILE, "ferry_ckpt_create: node-local directory %s is not writable",
                                lv->dir);
    return 0;
}

int ferry__ckpt_levels_setup(ferry_ckpt_t ck, const ferry_ckpt_options_t *opt)
{
    if (!opt || !opt->local_dir) return 0;
    ck->levels = ferry__calloc(1, sizeof *ck->levels);
    int mine[2] = {0, 0}, *pairs = ferry__malloc((size_t)ck->nprocs * 2 * sizeof *pairs);
    int cls = ck->levels && pairs ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_create: no memory");
    if (!cls && ck->series)
        cls = ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_create: a series set has no multi-level checkpoints");
    if (!cls) cls = node_identity(ck, mine);
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt_create");
    int rc = cls ? MPI_SUCCESS : ferry__progress_allgather(mine, 2, MPI_INT, pairs, 2, MPI_INT, ck->comm);
    if (!cls && rc != MPI_SUCCESS) cls = ferry__error_host(rc, "ferry_ckpt_create", ck->base, "MPI_Allgather");
    if (!cls) cls = partner_map(ck, pairs);
    ferry__free(pairs);
    if (!cls) {
        ck->levels->partner = opt->partner != 0;
        ck->levels->drain = opt->drain != 0;
        cls = local_names(ck, opt->local_dir);
    }
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt_create");
    if (!cls && ck->rank == 0 && ck->levels->partner && ck->levels->nodes < 2)
        fprintf(stderr, "ferry_ckpt: %s: one node only: no partner copies (level 2 skipped)\n", ck->base);
    return cls;
}

void ferry__ckpt_levels_free(ferry_ckpt_t ck)
{
    ferry__ckpt_levels_t *lv = ck->levels;
    if (!lv) return;
    ferry__ckpt_drain_free(ck);
    ferry__ckpt_release(ck, lv->image, lv->image_cap);
    ferry__free(lv->holder);
    ferry__free(lv->dir);
    ferry__free(lv->name);
    ferry__free(lv);
    ck->levels = NULL;
}

/* One message of an exchange: len bytes at p to or from peer, of rank owner's image. */
typedef struct l1_msg {
    int peer, owner;
    unsigned char *p;
    size_t len;
} l1_msg_t;

enum { L1_TAG = 7300, L1_CHUNK = 1 << 30 };

/* Collective over the ranks involved: every send and receive, in chunks below 2^31 bytes. */
static int exchange(ferry_ckpt_t ck, l1_msg_t *msgs, int nsend, int nrecv)
{
    int total = 0;
    for (int i = 0; i < nsend + nrecv; i++) total += (int)((msgs[i].len + L1_CHUNK - 1) / L1_CHUNK);
    MPI_Request *req = ferry__malloc((size_t)total * sizeof *req + 1);
    if (!req) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for %d messages", total);
    int k = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < nsend + nrecv && rc == MPI_SUCCESS; i++)
        for (size_t off = 0, c = 0; off < msgs[i].len && rc == MPI_SUCCESS; off += L1_CHUNK, c++) {
            int n = (int)(msgs[i].len - off < L1_CHUNK ? msgs[i].len - off : L1_CHUNK);
            rc = i < nsend ? MPI_Isend(msgs[i].p + off, n, MPI_BYTE, msgs[i].peer, L1_TAG + (int)c, ck->comm, &req[k])
                           : MPI_Irecv(msgs[i].p + off, n, MPI_BYTE, msgs[i].peer, L1_TAG + (int)c, ck->comm, &req[k]);
            if (rc == MPI_SUCCESS) k++;
        }
    int waited = ferry__progress_waitall(k, req, MPI_STATUSES_IGNORE);
    ferry__free(req);
    if (rc == MPI_SUCCESS) rc = waited;
    return rc == MPI_SUCCESS ? 0 : ferry__error_host(rc, "ferry_ckpt", ck->base, "MPI_Isend/MPI_Irecv");
}

/* The messages of a partner exchange for every rank r with wanted[r]: between r and its holder,
 * sent by the holder (holder_sends: a restart) or by r (a write); sends first, buffers allocated
 * (r's own image is ck->levels->image). */
static int plan_exchange(ferry_ckpt_t ck, const int *wanted, int holder_sends, l1_msg_t **out, int *nsend, int *nrecv)
{
    ferry__ckpt_levels_t *lv = ck->levels;
    int n = 0;
    l1_msg_t *m = *out = ferry__calloc((size_t)ck->nprocs * 2 + 1, sizeof *m);
    *nsend = *nrecv = 0;
    if (!m) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory");
    for (int pass = 0; pass < 2; pass++) {
        for (int r = 0; r < ck->nprocs; r++) {
            int sender = holder_sends ? lv->holder[r] : r, receiver = holder_sends ? r : lv->holder[r];
            if (!wanted[r] || lv->holder[r] < 0 || (pass == 0 ? sender : receiver) != ck->rank) continue;
            m[n] = (l1_msg_t){.peer = pass == 0 ? receiver : sender, .owner = r, .len = ferry__ckpt_l1_size(ck, r)};
            m[n].p = r == ck->rank ? lv->image : ferry__calloc(1, m[n].len);
            if (!m[n++].p) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for a partner copy");
        }
        if (pass == 0) *nsend = n;
    }
    *nrecv = n - *nsend;
    return 0;
}

static void free_exchange(ferry_ckpt_t ck, l1_msg_t *m)
{
    for (int i = 0; m && m[i].p; i++)
        if (m[i].p != ck->levels->image) ferry__free(m[i].p);
    ferry__free(m);
}

/* Collective: every rank's image to its holder, stored there as a partner copy; agreed. */
static int partner_copy(ferry_ckpt_t ck, long long step)
{
    int *all = ferry__malloc((size_t)ck->nprocs * sizeof *all + 1), nsend = 0, nrecv = 0;
    l1_msg_t *m = NULL;
    for (int r = 0; all && r < ck->nprocs; r++) all[r] = 1;
    int cls = all ? plan_exchange(ck, all, 0, &m, &nsend, &nrecv) : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt");
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt_write");
    if (!cls) cls = exchange(ck, m, nsend, nrecv);
    for (int i = nsend; !cls && i < nsend + nrecv; i++) {
        char path[4200];
        cls = ferry__ckpt_l1_path(ck, step, m[i].owner, 1, path, sizeof path);
        if (!cls) cls = ferry__ckpt_l1_store(path, m[i].p, m[i].len);
    }
    free_exchange(ck, m);
    ferry__free(all);
    return ferry__error_agree(ck->comm, cls, "ferry_ckpt_write");
}

/* Local: removes the files of one suffix above step and all but the newest keep of the others. */
static void prune_suffix(ferry_ckpt_t ck, long long step, int r, int partner_copy)
{
    char base[4200], suffix[64], path[4200];
    long long *steps = NULL;
    snprintf(base, sizeof base, "%s/%s", ck->levels->dir, ck->levels->name);
    snprintf(suffix, sizeof suffix, ".r%d%s", r, partner_copy ? ".partner" : "");
    int n = ferry__ckpt_list_steps(base, suffix, &steps), kept = 0;
    for (int i = 0; i < n; i++) {
        int keep = steps[i] == step || (steps[i] < step && kept < ck->keep);
        if (steps[i] <= step) kept++;
        if (!keep && ferry__ckpt_l1_path(ck, steps[i], r, partner_copy, path, sizeof path) == 0 && unlink(path) != 0)
            fprintf(stderr, "ferry_ckpt: cannot remove the node-local file %s\n", path);
    }
    ferry__free(steps);
}

static void prune_local(ferry_ckpt_t ck, long long step)
{
    prune_suffix(ck, step, ck->rank, 0);
    for (int r = 0; r < ck->nprocs; r++)
        if (ck->levels->holder[r] == ck->rank) prune_suffix(ck, step, r, 1);
}

int ferry__ckpt_levels_write(ferry_ckpt_t ck, long long step, double time, void *const *bufs)
{
    ferry__ckpt_levels_t *lv = ck->levels;
    char path[4200];
    int cls = ferry__ckpt_drain_finish(ck); /* the image is about to be replaced */
    if (cls && ck->rank == 0)
        fprintf(stderr, "ferry_ckpt_write: the previous drain failed (that step stays at levels 1-2): %s\n",
                ferry__error_message());
    cls = ferry__ckpt_check_overlaps(ck, "ferry_ckpt_write");
    if (!cls) cls = ferry__ckpt_l1_path(ck, step, ck->rank, 0, path, sizeof path);
    if (!cls) cls = ferry__ckpt_l1_pack(ck, step, time, bufs);
    if (!cls) cls = ferry__ckpt_l1_store(path, lv->image, lv->image_len);
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt_write");
    if (!cls && lv->partner && lv->nodes > 1) cls = partner_copy(ck, step);
    if (cls) { /* a step not written everywhere is not left half there */
        if (ferry__ckpt_l1_path(ck, step, ck->rank, 0, path, sizeof path) == 0) unlink(path);
        return cls;
    }
    prune_local(ck, step);
    return lv->drain ? ferry__ckpt_drain_start(ck, step, time) : 0;
}

/* Local: the newest step below bound among the files of one suffix, or -1. */
static long long newest_of(ferry_ckpt_t ck, int r, int partner_copy, long long bound)
{
    char base[4200], suffix[64];
    long long *steps = NULL, best = -1;
    snprintf(base, sizeof base, "%s/%s", ck->levels->dir, ck->levels->name);
    snprintf(suffix, sizeof suffix, ".r%d%s", r, partner_copy ? ".partner" : "");
    int n = ferry__ckpt_list_steps(base, suffix, &steps);
    for (int i = 0; i < n && best < 0; i++)
        if (steps[i] < bound) best = steps[i]; /* newest first */
    ferry__free(steps);
    return best;
}

long long ferry__ckpt_levels_newest(ferry_ckpt_t ck, long long bound)
{
    long long best = newest_of(ck, ck->rank, 0, bound);
    for (int r = 0; r < ck->nprocs; r++)
        if (ck->levels->holder[r] == ck->rank) {
            long long held = newest_of(ck, r, 1, bound);
            if (held > best) best = held;
        }
    return best;
}

/* Local: room for this rank's image of the current definitions. */
static int image_room(ferry_ckpt_t ck)
{
    ferry__ckpt_levels_t *lv = ck->levels;
    size_t need = ferry__ckpt_l1_size(ck, ck->rank);
    if (need <= lv->image_cap) return 0;
    ferry__ckpt_release(ck, lv->image, lv->image_cap);
    lv->image_cap = 0;
    if (!(lv->image = ferry__ckpt_alloc(ck, need)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_restart: no memory for a %zu-byte level-1 image", need);
    lv->image_cap = need;
    return 0;
}

/* Local: this rank's own level-1 file of step into bufs. */
static int read_own(ferry_ckpt_t ck, long long step, void *const *bufs)
{
    char path[4200];
    size_t len = ferry__ckpt_l1_size(ck, ck->rank);
    FERRY_TRY(image_room(ck));
    FERRY_TRY(ferry__ckpt_l1_path(ck, step, ck->rank, 0, path, sizeof path));
    FERRY_TRY(ferry__ckpt_l1_load(path, ck->levels->image, len));
    int cls = ferry__ckpt_l1_unpack(ck, ck->levels->image, len, step, bufs);
    char why[600];
    snprintf(why, sizeof why, "%s", cls ? ferry__error_message() : "");
    return cls ? ferry__error_set(cls, "%s: %s", path, why) : 0;
}

/* Collective: whether some rank's part failed (cls, local; not an error of the call); the lowest
 * failing rank says why on stderr. */
static int some_failed(ferry_ckpt_t ck, int cls, long long step, int level)
{
    int64_t lowest = cls ? ck->nprocs - ck->rank : 0;
    char why[512];
    snprintf(why, sizeof why, "%s", cls ? ferry__error_message() : "");
    if (ferry__error_agree_max(ck->comm, 0, "ferry_ckpt_restart", &lowest, 1)) return 1;
    if (cls && ck->nprocs - lowest == ck->rank)
        fprintf(stderr, "ferry_ckpt: restart: step %lld is not whole at level %d (rank %d: %s)\n", step, level,
                ck->rank, why);
    return lowest != 0;
}

/* Collective: the ranks whose own file failed (failed) take their holder's copy; agreed outcome. */
static int read_partner(ferry_ckpt_t ck, long long step, int failed, void *const *bufs)
{
    int *need = ferry__malloc((size_t)ck->nprocs * sizeof *need + 1), nsend = 0, nrecv = 0;
    l1_msg_t *m = NULL;
    int cls = need ? image_room(ck) : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_restart: no memory");
    int rc = cls ? MPI_SUCCESS : ferry__progress_allgather(&failed, 1, MPI_INT, need, 1, MPI_INT, ck->comm);
    if (!cls && rc != MPI_SUCCESS) cls = ferry__error_host(rc, "ferry_ckpt_restart", ck->base, "MPI_Allgather");
    if (!cls) cls = plan_exchange(ck, need, 1, &m, &nsend, &nrecv);
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt_restart");
    for (int i = 0; !cls && i < nsend; i++) { /* a missing copy is sent as zeros: its header fails */
        char path[4200];
        if (ferry__ckpt_l1_path(ck, step, m[i].owner, 1, path, sizeof path) == 0 &&
            ferry__ckpt_l1_load(path, m[i].p, m[i].len) != 0)
            memset(m[i].p, 0, m[i].len);
    }
    if (!cls) cls = ferry__error_agree(ck->comm, exchange(ck, m, nsend, nrecv), "ferry_ckpt_restart");
    int local = 0;
    if (!cls && failed && nrecv != 1)
        local = ferry__error_set(MPI_ERR_NO_SUCH_FILE, "no partner copy (one node)");
    else if (!cls && failed)
        local = ferry__ckpt_l1_unpack(ck, m[nsend].p, m[nsend].len, step, bufs);
    char why[600];
    snprintf(why, sizeof why, "%s", local ? ferry__error_message() : "");
    if (local) local = ferry__error_set(local, "partner copy from rank %d: %s", ck->levels->holder[ck->rank], why);
    free_exchange(ck, m);
    ferry__free(need);
    return cls ? cls : some_failed(ck, local, step, 2) ? MPI_ERR_NO_SUCH_FILE : 0;
}

int ferry__ckpt_levels_read(ferry_ckpt_t ck, long long step, void *const *bufs, int *level, ferry_ckpt_info_t *info)
{
    int own = read_own(ck, step, bufs);
    int failed = some_failed(ck, own, step, 1);
    *level = failed ? 2 : 1;
    if (failed && (!ck->levels->partner || ck->levels->nodes < 2)) return MPI_ERR_NO_SUCH_FILE;
    int cls = failed ? read_partner(ck, step, own != 0, bufs) : 0;
    if (!cls && info) {
        info->step = step;
        info->time = ck->levels->time;
        info->writer_ranks = ck->nprocs;
        info->strategy = ck->strategy;
        info->level = *level;
        ferry__ckpt_l1_path(ck, step, ck->rank, own != 0, info->path, sizeof info->path);
    }
    return cls;
}

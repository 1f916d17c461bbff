/*
 * The reference strategy (POLCOMS's original): rank 0 assembles each global
 * array from every rank's block (a subarray receive type per rank, so no
 * rank packs), checksums and swaps it, and writes it; reading, rank 0 reads
 * each global array and sends every rank its block. Rank 0 holds one global
 * array at a time: the largest variable is its memory cost (reported by
 * ferry_ckpt_peak_memory); writing, that array stays in the set from one
 * checkpoint to the next while it is within ferry_ckpt_stage_limit.
 * Transfers are one write_at_all (collective; the other ranks write
 * nothing) or rank 0's write_at (independent), in pieces of at most 1 GiB.
 */
#include <string.h>

#include "ckpt/ckpt_int.h"
#include "progress/progress.h"

enum { GATHER_TAG = 1717, PIECE = 1 << 30 };

static MPI_Offset global_bytes(const ferry__ckpt_var_t *v)
{
    return ferry__ckpt_elems(v->global) * v->esize;
}

/* One variable's messages between rank 0's global array and the ranks' blocks. */
typedef struct exchange {
    ferry_ckpt_t ck;
    const ferry__ckpt_var_t *v;
    const char *path, *op; /* for messages */
    MPI_Request *reqs;     /* [nprocs + 1] */
    int n;                 /* requests started */
} exchange_t;

/* Starts one message (a receive when recv); 0, or the host's failure as a class naming the call. */
static int post(exchange_t *x, void *buf, MPI_Datatype type, int peer, int recv)
{
    MPI_Request *req = &x->reqs[x->n];
    int rc = recv ? MPI_Irecv(buf, 1, type, peer, GATHER_TAG, x->ck->comm, req)
                  : MPI_Isend(buf, 1, type, peer, GATHER_TAG, x->ck->comm, req);
    x->n += rc == MPI_SUCCESS;
    return ferry__error_host(rc, x->op, x->path, recv ? "MPI_Irecv" : "MPI_Isend");
}

/* Rank 0: starts the receive (to_root) or the send of rank r's block in the global array g. */
static int post_root(exchange_t *x, unsigned char *g, int r, int to_root)
{
    const MPI_Offset *start = &x->v->blocks[r * 2 * FERRY__CKPT_D], *count = start + FERRY__CKPT_D;
    if (!ferry__ckpt_elems(count)) return 0;
    MPI_Datatype t;
    FERRY_TRY(ferry__ckpt_subarray(x->v->global, count, start, x->v->type, &t));
    int cls = post(x, g, t, r, to_root);
    MPI_Type_free(&t);
    return cls;
}

/* Moves every block to (write) or from (read) rank 0's global array g; this rank's outcome (the
 * callers agree on it). */
static int exchange(ferry_ckpt_t ck, const char *path, const ferry__ckpt_var_t *v, void *buf, unsigned char *g,
                    int to_root)
{
    static const MPI_Offset zero[FERRY__CKPT_D];
    size_t bytes = (size_t)(ck->nprocs + 1) * sizeof(MPI_Request);
    exchange_t x = {
        ck, v, path, to_root ? "ferry_ckpt gather" : "ferry_ckpt read-scatter", ferry__ckpt_alloc(ck, bytes), 0};
    if (!x.reqs) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for %d requests", ck->nprocs);
    int cls = 0;
    for (int r = 0; ck->rank == 0 && r < ck->nprocs && !cls; r++) cls = post_root(&x, g, r, to_root);
    MPI_Datatype mine;
    if (!cls && ferry__ckpt_elems(v->count) && !(cls = ferry__ckpt_memtype(v, zero, v->count, &mine))) {
        cls = post(&x, buf, mine, 0, !to_root);
        MPI_Type_free(&mine);
    }
    int rc = ferry__progress_waitall(x.n, x.reqs, MPI_STATUSES_IGNORE);
    if (!cls) cls = ferry__error_host(rc, x.op, path, "MPI_Waitall");
    ferry__ckpt_release(ck, x.reqs, bytes);
    return cls;
}

/* The whole global array as one block (checksum and swap on rank 0). */
static ferry__ckpt_block_t global_block(const ferry__ckpt_var_t *v, unsigned char *g)
{
    ferry__ckpt_block_t b = {.base = g, .esize = v->esize};
    for (int d = FERRY__CKPT_D - 1; d >= 0; d--) {
        b.count[d] = v->global[d];
        b.mem_stride[d] = d == FERRY__CKPT_D - 1 ? 1 : b.mem_stride[d + 1] * v->global[d + 1];
        b.file_stride[d] = b.mem_stride[d];
    }
    return b;
}

/* Rank 0's global array to or from the file at begin, in pieces; every rank takes part when collective. */
static int root_transfer(ferry_ckpt_t ck, ferry__ckpt_file_t *f, unsigned char *g, MPI_Offset bytes, MPI_Offset begin,
                         int write)
{
    for (MPI_Offset at = 0; at < bytes; at += PIECE) {
        int n = bytes - at < PIECE ? (int)(bytes - at) : PIECE;
        if (ck->rank != 0 && ck->independent) break;
        int cls = ferry__ckpt_io_transfer_at(
            f, (write ? FERRY__CKPT_WRITE : 0) | (ck->independent ? 0 : FERRY__CKPT_COLLECTIVE), begin + at,
            ck->rank == 0 ? g + at : NULL, ck->rank == 0 ? n : 0, MPI_BYTE);
        if (cls) return cls;
    }
    return 0;
}

/* The bytes of the largest global array: rank 0 keeps a buffer of that size in the set (the one steer
 * and stack stage in) while it is at most the stage limit, else 0 (an array allocated per variable). */
static MPI_Offset kept_root_bytes(ferry_ckpt_t ck)
{
    MPI_Offset most = 0;
    for (int i = 0; i < ck->nvars; i++)
        if (global_bytes(&ck->vars[i]) > most) most = global_bytes(&ck->vars[i]);
    return most <= ck->stage_limit ? most : 0;
}

/* Rank 0's global array of v (bytes + 1 allocated: never 0): the set's kept buffer when kept, else its
 * own allocation. Kept, it is resident at every write; allocated and freed per checkpoint, it is
 * faulted in again (a fault per 4 KiB) whenever the allocator gave it back to the system in between,
 * as glibc does when other large frees trim the heap (the host MPI-IO's collective buffers):
 * docs/checkpoint.md, "Page faults, not instructions". */
static unsigned char *root_array(ferry_ckpt_t ck, MPI_Offset bytes, MPI_Offset kept)
{
    return kept ? ferry__ckpt_kept_buffer(ck, (size_t)kept + 1) : ferry__ckpt_alloc(ck, (size_t)bytes + 1);
}

static void root_array_done(ferry_ckpt_t ck, unsigned char *g, MPI_Offset bytes, MPI_Offset kept)
{
    if (!kept) ferry__ckpt_release(ck, g, (size_t)bytes + 1);
}

static int gather_var(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_var_t *v, void *buf, MPI_Offset begin,
                      uint64_t *sum)
{
    MPI_Offset bytes = global_bytes(v), kept = kept_root_bytes(ck);
    unsigned char *g = ck->rank == 0 ? root_array(ck, bytes, kept) : NULL;
    int cls = ck->rank == 0 && !g
                  ? ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: gather: no memory for the %lld bytes of %s",
                                     (long long)bytes, v->name)
                  : 0;
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt gather");
    if (cls) { /* another rank's failure, or the agreement's own: rank 0's own array goes too */
        root_array_done(ck, g, bytes, kept);
        return cls;
    }
    unsigned char fill[8];
    if (g) memset(g, 0, (size_t)bytes); /* points no rank owns are zeros in the file, or the _FillValue */
    if (g && ferry__ckpt_var_fill_native(v, fill))
        for (MPI_Offset at = 0; at < bytes; at += v->esize) memcpy(g + at, fill, (size_t)v->esize);
    cls = ferry__error_agree(ck->comm, exchange(ck, f->path, v, buf, g, 1), "ferry_ckpt gather");
    if (g && !cls) {
        ferry__ckpt_block_t b = global_block(v, g);
        *sum = ferry__ckpt_walk(&b, FERRY__CKPT_SUM_SWAP);
    }
    if (!cls) cls = root_transfer(ck, f, g, bytes, begin, 1);
    root_array_done(ck, g, bytes, kept);
    return cls;
}

int ferry__ckpt_gather_write(ferry_ckpt_t ck, ferry__ckpt_file_t *f, ferry__ckpt_layout_t *layout, void *const *bufs,
                             uint64_t *sums)
{
    for (int i = 0; i < ck->nvars; i++) FERRY_TRY(gather_var(ck, f, &ck->vars[i], bufs[i], layout->begin[i], &sums[i]));
    return 0;
}

int ferry__ckpt_scatter_read(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_var_t *v, void *buf,
                             MPI_Offset begin)
{
    MPI_Offset bytes = global_bytes(v);
    unsigned char *g = ck->rank == 0 ? ferry__ckpt_alloc(ck, (size_t)bytes + 1) : NULL;
    int cls = ck->rank == 0 && !g
                  ? ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: read-scatter: no memory for the %lld bytes of %s",
                                     (long long)bytes, v->name)
                  : 0;
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt read-scatter");
    if (!cls) cls = ferry__error_agree(ck->comm, root_transfer(ck, f, g, bytes, begin, 0), "ferry_ckpt read-scatter");
    if (!cls && g) {
        ferry__ckpt_block_t b = global_block(v, g);
        ferry__ckpt_walk(&b, FERRY__CKPT_SWAP);
    }
    if (!cls) cls = exchange(ck, f->path, v, buf, g, 0);
    ferry__ckpt_release(ck, g, (size_t)bytes + 1);
    return cls;
}

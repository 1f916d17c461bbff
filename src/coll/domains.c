/*
 * Aggregators and file domains (docs/coll.md).
 *
 * The bytes a call touches, [lo, hi), are cut into blocks; block b is
 * [origin + b * block, origin + (b + 1) * block) and has one owner among
 * the aggregators:
 *
 *   even     one block per aggregator: the range split in equal pieces
 *            aligned to the file-system block;
 *   cyclic   blocks of IBM_io_buffer_size (whole file-system blocks, 16 by
 *            default) dealt round-robin (data shipping, seed 000);
 *   stripes  the file's stripes (striping_unit); stripe b lives on storage
 *            target b mod striping_factor, and aggregator a owns the
 *            stripes of targets a*k .. a*k+k-1 (k = ferry_cb_group_size),
 *            so each aggregator talks to k targets only (Y-Lib, seed 002).
 *
 * Each aggregator serves its blocks in ascending order, one window of at
 * most `window` bytes of consecutive owned blocks per step. Everything
 * here is arithmetic on globally agreed numbers, so every rank computes
 * the same windows without communicating. It cannot overflow: every rank's
 * range lies below FERRY_OFFSET_MAX (2^61, checked where the call began:
 * view.h), and rounding up to blocks adds at most the hints' bounds
 * (striping_unit 2^32 times striping_factor 2^16, or the aggregators
 * times a file-system block); only the sum of the ranks' bytes, which
 * overlapping memory types can make larger than any file, saturates.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_int.h"
#include "base/checked.h"
#include "error/error.h"

static MPI_Offset round_up(MPI_Offset x, MPI_Offset unit)
{
    return (x + unit - 1) / unit * unit;
}

/* The file system's preferred transfer unit, which domains align to. */
static MPI_Offset fs_block_of(const ferry__target_t *file)
{
    return file->layout.block_size > 0 ? file->layout.block_size : 4096;
}

/* The stripe layout collective calls assume: the striping hints, else the file system's. */
static void stripes_of(const ferry__target_t *file, MPI_Offset *unit, MPI_Offset *count)
{
    const ferry__coll_hints_t *h = &file->coll->hints;
    *unit = h->striping_unit > 0 ? h->striping_unit
                                 : (file->layout.stripe_size > 0 ? file->layout.stripe_size : fs_block_of(file));
    *count =
        h->striping_factor > 0 ? h->striping_factor : (file->layout.stripe_count > 0 ? file->layout.stripe_count : 1);
}

static int owner(const ferry__domains_t *d, MPI_Offset b)
{
    switch (d->kind) {
    case FERRY_DOMAIN_EVEN:
        return b < d->naggs ? (int)b : -1;
    case FERRY_DOMAIN_CYCLIC:
        return (int)(b % d->naggs);
    case FERRY_DOMAIN_STRIPES:
        return (int)((b % d->targets) / d->group % d->naggs);
    }
    return -1;
}

/* The first block >= b that aggregator a owns, or -1. */
static MPI_Offset next_owned(const ferry__domains_t *d, int a, MPI_Offset b)
{
    switch (d->kind) {
    case FERRY_DOMAIN_EVEN:
        return b <= a ? a : -1;
    case FERRY_DOMAIN_CYCLIC:
        return b + ((a - b % d->naggs) + d->naggs) % d->naggs;
    case FERRY_DOMAIN_STRIPES:
        for (MPI_Offset i = 0; i < d->targets; i++)
            if (owner(d, b + i) == a) return b + i;
        return -1;
    }
    return -1;
}

int ferry__coll_next_window(const ferry__domains_t *d, int a, ferry__window_cursor_t *c, MPI_Offset *wlo,
                            MPI_Offset *whi)
{
    MPI_Offset x = c->next > d->lo ? c->next : d->lo;
    if (x >= d->hi) return 0;
    MPI_Offset b = (x - d->origin) / d->block;
    if (owner(d, b) != a) {
        if ((b = next_owned(d, a, b)) < 0) return 0;
        MPI_Offset start = d->origin + b * d->block;
        x = start > x ? start : x;
        if (x >= d->hi) return 0;
    }
    MPI_Offset end = x, limit = x + d->window < d->hi ? x + d->window : d->hi;
    while (end < limit && owner(d, (end - d->origin) / d->block) == a) {
        MPI_Offset block_end = d->origin + ((end - d->origin) / d->block + 1) * d->block;
        end = block_end < limit ? block_end : limit;
    }
    *wlo = x;
    *whi = c->next = end;
    return 1;
}

/* Aggregators are spread over nodes: the first rank of every node, then
 * the second of every node, and so on. Each rank's key is its place in
 * that order (rank within its node, then node), one per rank. */
void ferry__coll_spread_ranks(ferry__coll_state_t *s, int nprocs)
{
    ferry__keyed_rank_t *sorted = s->in_update.spread_keys;
    for (int r = 0; r < nprocs; r++)
        sorted[r] = (ferry__keyed_rank_t){(int64_t)s->local_of[r] * s->nodes + s->node_of[r], r};
    qsort(sorted, (size_t)nprocs, sizeof *sorted, ferry__keyed_rank_order);
    for (int i = 0; i < nprocs; i++) s->spread[i] = (int)sorted[i].rank;
}

static void pick_aggregators(const ferry__target_t *file, MPI_Offset want, ferry__domains_t *d)
{
    ferry__coll_state_t *s = file->coll;
    int *aggs = s->in_call.aggs, n = 0;
    for (int i = 0; i < file->nprocs && n < want; i++) {
        int r = s->spread[i];
        if (s->hints.per_node == 0 || s->local_of[r] < s->hints.per_node) aggs[n++] = r;
    }
    d->naggs = n > 0 ? n : 1;
    if (n == 0) aggs[0] = s->spread[0];
    d->aggs = aggs;
}

/* The default rule: on every node, one aggregator per window's worth (a
 * third of cb_buffer_size) of the call's bytes per node, at least one; the
 * node's ranks bound it (pick_aggregators). Small calls use one aggregator
 * per node; large ones spread the unpacking and the file-system calls over
 * every rank (measured on 2 cores: 4 aggregators for 4 ranks beat 2). */
static MPI_Offset default_aggregators(const ferry__coll_state_t *s, MPI_Offset total)
{
    MPI_Offset window = s->hints.buffer_size / 3 > 0 ? s->hints.buffer_size / 3 : 1;
    MPI_Offset per_node = (total / s->nodes + window - 1) / window;
    if (per_node < 1) per_node = 1;
    return per_node * s->nodes;
}

static void shape(const ferry__target_t *file, int kind, MPI_Offset total, ferry__domains_t *d, MPI_Offset *want)
{
    const ferry__coll_hints_t *h = &file->coll->hints;
    MPI_Offset fs_block = fs_block_of(file);
    /* cb_buffer_size holds a window and two steps of incoming data (twophase.c). */
    MPI_Offset third = h->buffer_size / 3 > fs_block ? h->buffer_size / 3 : fs_block;
    *want = h->nodes > 0 ? h->nodes : default_aggregators(file->coll, total);
    d->kind = kind;
    d->window = third;
    d->targets = d->group = 1;
    if (kind == FERRY_DOMAIN_CYCLIC) {
        d->block = h->block_size > 0 ? round_up(h->block_size, fs_block) : 16 * fs_block;
        d->window = d->block < third ? d->block : third;
    } else if (kind == FERRY_DOMAIN_STRIPES) {
        stripes_of(file, &d->block, &d->targets);
        d->group = h->group_size < d->targets ? h->group_size : d->targets;
        MPI_Offset groups = (d->targets + d->group - 1) / d->group;
        if (h->nodes <= 0 || h->nodes > groups) *want = groups;
    }
}

void ferry__coll_domains_plan(const ferry__target_t *file, const ferry__coll_rank_t *ranks, int kind,
                              ferry__domains_t *d)
{
    memset(d, 0, sizeof *d);
    MPI_Offset total = 0, want = 1;
    d->lo = INT64_MAX;
    for (int r = 0; r < file->nprocs; r++) {
        if (ranks[r].bytes == 0) continue;
        if (ferry__offset_add(total, ranks[r].bytes, &total)) total = FERRY_OFFSET_MAX;
        if (ranks[r].lo < d->lo) d->lo = ranks[r].lo;
        if (ranks[r].hi > d->hi) d->hi = ranks[r].hi;
    }
    if (total == 0) d->lo = d->hi = 0;
    shape(file, kind, total, d, &want);
    pick_aggregators(file, want, d);
    if (kind == FERRY_DOMAIN_EVEN) {
        MPI_Offset fs_block = fs_block_of(file);
        d->origin = d->lo / fs_block * fs_block;
        MPI_Offset per = (d->hi - d->origin + d->naggs - 1) / d->naggs;
        d->block = per > 0 ? round_up(per, fs_block) : fs_block;
    }
    for (int a = 0; a < d->naggs; a++) {
        ferry__window_cursor_t c = {0};
        MPI_Offset wlo, whi, n = 0;
        while (ferry__coll_next_window(d, a, &c, &wlo, &whi)) n++;
        if (n > d->steps) d->steps = n;
    }
}

/* Marks the targets of stripes [first, last] in seen; returns how many were new. */
static MPI_Offset mark_targets(unsigned char *seen, MPI_Offset count, MPI_Offset first, MPI_Offset last)
{
    MPI_Offset added = 0;
    for (MPI_Offset s = first; s <= last && s < first + count; s++) {
        MPI_Offset t = s % count;
        added += !(seen[t / 8] & (1u << (t % 8)));
        seen[t / 8] |= (unsigned char)(1u << (t % 8));
    }
    return added;
}

void ferry__coll_count_targets(const ferry__target_t *file, const ferry__domains_t *d, ferry__stats_t *stats)
{
    int a = 0;
    while (a < d->naggs && d->aggs[a] != file->rank) a++;
    if (a == d->naggs) return;
    MPI_Offset unit, count, touched = 0, wlo, whi;
    stripes_of(file, &unit, &count);
    unsigned char *seen = ferry__calloc((size_t)(count + 7) / 8, 1);
    if (!seen) return; /* statistics only: nothing to fail */
    ferry__window_cursor_t c = {0};
    while (touched < count && ferry__coll_next_window(d, a, &c, &wlo, &whi))
        touched += mark_targets(seen, count, wlo / unit, (whi - 1) / unit);
    ferry__free(seen);
    stats->coll_aggregator_calls++;
    stats->coll_targets += touched;
}

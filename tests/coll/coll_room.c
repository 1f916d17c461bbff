/*
 * The collective state's node map and room (src/coll/state.c, coll_int.h),
 * on one rank with virtual ranks, as the scaling model runs them.
 *
 * Node map: from the node keys ranks said (0: the rank cannot tell, a node
 * of its own), node_of, local_of, spread, nodes and most_per_node against a
 * reference written from their definitions (a node's leader is its lowest
 * rank; nodes are numbered in their leaders' order; a rank's place in its
 * node counts the lower ranks there; spread is every node's first rank,
 * then every node's second...), for several key patterns and sizes.
 *
 * Room: each layout's arrays lie in the room, aligned for their type, and
 * overlap no other array of the same layout; the state's bytes grow by 104
 * per rank (node map 12, the call's layout 92: docs/scale.md).
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>

#include "coll/coll_int.h"
#include "ferry_test.h"

enum { PATTERNS = 5, BYTES_PER_RANK = 104 };

/* Rank r's node key in pattern k (nodes of ranks dealt round-robin, in
 * blocks, random, with keys 0 among them, all on one node). */
static int64_t key_of(int k, int r, int nprocs)
{
    switch (k) {
    case 0: return r % 3 + 1;
    case 1: return 1000 - r / 4;
    case 2: return (int64_t)((ft_seed + (uint64_t)r * 0x9e3779b97f4a7c15ull) >> 40) % 5 + 1;
    case 3: return r % 4 == 1 ? 0 : (r * 7 % nprocs) % 6 + 1;
    default: return 42;
    }
}

static int leader_of(const int64_t *key, int r)
{
    for (int q = 0; q < r; q++)
        if (key[r] != 0 && key[q] == key[r]) return q;
    return r;
}

/* The reference map; returns the number of nodes. */
static int reference_map(const int64_t *key, int nprocs, int *node, int *local, int *most)
{
    int nodes = 0;
    *most = 0;
    for (int r = 0; r < nprocs; r++) {
        int l = leader_of(key, r);
        node[r] = l == r ? nodes++ : node[l];
        local[r] = 0;
        for (int q = 0; q < r; q++) local[r] += leader_of(key, q) == l;
        if (local[r] + 1 > *most) *most = local[r] + 1;
    }
    return nodes;
}

static void check_map(int k, int nprocs)
{
    ferry__target_t f = {.nprocs = nprocs, .filename = "(coll_room)"};
    FT_OK(ferry__coll_open(&f, &f.coll));
    ferry__coll_state_t *s = f.coll;
    int64_t *key = malloc((size_t)nprocs * sizeof *key);
    int *node = malloc((size_t)nprocs * sizeof *node), *local = malloc((size_t)nprocs * sizeof *local), most = 0;
    int *at = malloc((size_t)nprocs * (size_t)nprocs * sizeof *at); /* node * nprocs + local -> rank, -1 none */
    for (size_t j = 0; j < (size_t)nprocs * (size_t)nprocs; j++) at[j] = -1;
    for (int r = 0; r < nprocs; r++) s->in_update.said[r].node = key[r] = key_of(k, r, nprocs);
    ferry__coll_map_nodes(s, nprocs);
    int nodes = reference_map(key, nprocs, node, local, &most);
    FT_EQ(s->nodes, nodes);
    FT_EQ(s->most_per_node, most);
    for (int r = 0; r < nprocs; r++) {
        FT_EQ(s->node_of[r], node[r]);
        FT_EQ(s->local_of[r], local[r]);
        at[(size_t)node[r] * (size_t)nprocs + (size_t)local[r]] = r;
    }
    int i = 0;
    for (int l = 0; l < most; l++)
        for (int n = 0; n < nodes; n++) {
            int r = at[(size_t)n * (size_t)nprocs + (size_t)l];
            if (r >= 0) FT_EQ(s->spread[i++], r);
        }
    FT_EQ(i, nprocs);
    ferry__coll_release(&f.coll);
    free(key);
    free(node);
    free(local);
    free(at);
}

/* An array of count * size bytes at p, inside [lo, hi) and aligned to align. */
typedef struct span {
    const char *at;
    size_t bytes;
} span_t;

static span_t span_in(const void *p, size_t count, size_t size, size_t align, const char *lo, const char *hi)
{
    span_t sp = {p, count * size};
    FT_CHECK((uintptr_t)p % align == 0);
    FT_CHECK(sp.at >= lo && sp.at + sp.bytes <= hi);
    return sp;
}

static void check_disjoint(const span_t *spans, int n)
{
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            FT_CHECK(spans[a].at + spans[a].bytes <= spans[b].at || spans[b].at + spans[b].bytes <= spans[a].at);
}

static void check_room(int nprocs)
{
    ferry__target_t f = {.nprocs = nprocs, .filename = "(coll_room)"};
    FT_OK(ferry__coll_open(&f, &f.coll));
    const ferry__coll_state_t *s = f.coll;
    size_t p = (size_t)nprocs, slots = 16;
    while (slots < 2 * p) slots <<= 1;
    MPI_Offset room = ferry__coll_state_bytes(s, nprocs) - (MPI_Offset)sizeof *s - 3 * (MPI_Offset)sizeof(int) * nprocs;
    const char *lo = s->room, *hi = lo + room;
    const ferry__coll_update_room_t *u = &s->in_update;
    const ferry__coll_call_room_t *c = &s->in_call;
    span_t update[] = {span_in(u->said, p, sizeof *u->said, alignof(struct ferry__coll_said), lo, hi),
                       span_in(u->shape_slots, slots, sizeof(int), alignof(int), lo, hi),
                       span_in(u->node_keys, p, sizeof *u->node_keys, alignof(ferry__keyed_rank_t), lo, hi),
                       span_in(u->leader, p, sizeof(int), alignof(int), lo, hi),
                       span_in(u->spread_keys, p, sizeof *u->spread_keys, alignof(ferry__keyed_rank_t), lo, hi)};
    span_t call[] = {span_in(c->ranks, p, sizeof *c->ranks, alignof(ferry__coll_rank_t), lo, hi),
                     span_in(c->los, p, sizeof(MPI_Offset), alignof(MPI_Offset), lo, hi),
                     span_in(c->his, p, sizeof(MPI_Offset), alignof(MPI_Offset), lo, hi),
                     span_in(c->node_sum, p, sizeof(double), alignof(double), lo, hi),
                     span_in(c->node_longest, p, sizeof(double), alignof(double), lo, hi),
                     span_in(c->node_ranks, p, sizeof(double), alignof(double), lo, hi),
                     span_in(c->aggs, p, sizeof(int), alignof(int), lo, hi)};
    check_disjoint(update, (int)(sizeof update / sizeof *update));
    check_disjoint(call, (int)(sizeof call / sizeof *call));
    ferry__coll_release(&f.coll);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    static const int sizes[] = {1, 2, 7, 64, 1000};
    for (int k = 0; k < PATTERNS; k++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) check_map(k, sizes[i]);
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) check_room(sizes[i]);
    /* Per rank, at scale: the node map and the larger of the room's layouts. */
    ferry__target_t f = {.nprocs = 2, .filename = "(coll_room)"};
    FT_OK(ferry__coll_open(&f, &f.coll));
    FT_EQ(ferry__coll_state_bytes(f.coll, 1 << 17) - ferry__coll_state_bytes(f.coll, 1 << 16),
          (MPI_Offset)BYTES_PER_RANK << 16);
    ferry__coll_release(&f.coll);
    return ft_finish();
}

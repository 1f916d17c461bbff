/*
 * Ranks grouped by a 64-bit key they said (a leaf header: includes no other
 * ferry header): sorted by key, then rank, each group starts with its
 * lowest rank. coll/ groups ranks into nodes this way, container/ ranks
 * into one file per node.
 */
#ifndef FERRY_KEYED_H
#define FERRY_KEYED_H

#include <stdint.h>

typedef struct ferry__keyed_rank {
    int64_t key;
    int64_t rank;
} ferry__keyed_rank_t;

/* qsort's order: by key, then by rank. */
static inline int ferry__keyed_rank_order(const void *a, const void *b)
{
    const ferry__keyed_rank_t *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

#endif

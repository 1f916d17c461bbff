/*
 * The I/O differential harness: one seeded random sequence of MPI-IO
 * operations run through ferry (file A) and through the host MPI's own
 * MPI_File_* (file B), each result compared with the other and with a byte
 * model of the file (the judge where the two disagree).
 *
 * Every rank generates the same sequence from the seed, so every rank
 * knows every rank's operation and the model covers the whole file.
 * Independent operations run on one rank per step; collective steps give
 * each rank its own arguments, with writes kept disjoint. Every step ends
 * in a barrier, so on one node the result of each step is determined.
 *
 * Compared after every step: return class, MPI_Get_count and
 * MPI_Get_elements_x of the status, the whole read buffer (stream bytes
 * read, and every byte the memory datatype skips), the individual file
 * pointer, get_byte_offset of it, and get_size; after the last step, both
 * files byte for byte with the model.
 *
 * A mismatch prints the seed, the step, the three answers and the sequence
 * so far, then aborts.
 */
#ifndef FERRY_ORACLE_DIFF_H
#define FERRY_ORACLE_DIFF_H

#include <stdint.h>

#include "ferry.h"

/* A memory datatype with its stream map: stream byte k of one element is
 * memory byte map[k] from the element's start (element i starts at
 * i * extent). Built from a description, not from MPI_Pack. */
typedef struct od_type {
    MPI_Datatype type; /* committed; owned unless predefined */
    MPI_Count size, lb, extent;
    MPI_Count *map; /* size entries, owned */
    int negative_lb_inside; /* this type or a component was resized to a negative lower bound */
    char desc[200];
} od_type_t;

/* A random memory type, at most `depth` constructors deep (0: predefined),
 * using contiguous, vector, hvector, indexed (blocks out of order),
 * struct and resized (negative lb) over BYTE, SHORT, INT, DOUBLE. */
void od_type_random(od_type_t *t, uint64_t *state, int depth);
/* Predefined type `type` as an od_type_t. */
void od_type_named(od_type_t *t, MPI_Datatype type);
void od_type_free(od_type_t *t);
/* Memory span of (count, t): bytes [*lo, *hi) relative to buf. */
void od_type_span(const od_type_t *t, MPI_Count count, MPI_Count *lo, MPI_Count *hi);
/* Memory offset (relative to buf) of stream byte s of (count, t). */
static inline MPI_Count od_type_byte(const od_type_t *t, MPI_Count s)
{
    return (s / t->size) * t->extent + t->map[s % t->size];
}

/* The first n stream bytes of (count, t) at buf, gathered into stream. */
static inline void od_type_gather(const od_type_t *t, const unsigned char *buf, MPI_Count n, unsigned char *stream)
{
    for (MPI_Count s = 0; s < n; s++) stream[s] = buf[od_type_byte(t, s)];
}

/* Whether the host MPI is Open MPI (OMPIO) rather than MPICH (ROMIO). */
int od_host_is_open_mpi(void);
/* ROMIO mishandles memory types with a negative lower bound, their own or
 * a component's: wrong file bytes, a segfault in write_at_all, or an
 * endless loop in it (tests/coll/coll_random with FERRY_TEST_SEED=27293571130
 * on 4 ranks and 13724998909 on 3). Such a host gets the same stream
 * through MPI_BYTE instead. */
static inline int od_host_needs_bytes(const od_type_t *t)
{
    return (t->lb < 0 || t->negative_lb_inside) && !od_host_is_open_mpi();
}

typedef struct od_options {
    uint64_t seed;
    int steps;          /* operations in the sequence */
    int host;           /* 0: ferry against the model only */
    const char *dir;    /* scratch directory shared by all ranks */
    int verbose;        /* print every step on rank 0 */
    int check_files;    /* compare the files with the model after every step (slow) */
    int sync_writes;    /* sync-barrier-sync after every write step: what MPI-3.1 13.6.1 needs before other
                           ranks read the bytes, and what a client with a page cache of its own needs too
                           (the model is sequentially consistent, tools/cluster's clients are not) */
} od_options_t;

/* Collective over MPI_COMM_WORLD: runs one sequence; returns 0, or aborts the
 * job with the report on a mismatch. */
int od_run(const od_options_t *opt);

#endif

/*
 * hints: every MPI_Info hint ferry understands, from one table.
 *
 * hints_table.c lists each hint's name, type, default, bounds and consumer.
 * Parsing, validation, the get_info report and docs/hints.md (printed by
 * `ferry-bench hints`) all derive from that table. A value that fails
 * validation is rejected: the previous value stays in force and the
 * rejection is reported by get_info under "ferry_hints_rejected" until a
 * later valid value of that key replaces it. Keys ferry does not know have
 * no effect (MPI-3.1 13.2.8); get_info echoes them with the value last
 * given, as ROMIO echoes the hints it knows (romio_no_indep_rw, ...), and
 * names them under "ferry_hints_ignored".
 */
#ifndef FERRY_HINTS_H
#define FERRY_HINTS_H

#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

enum { FERRY_HINTS_REJECTED_MAX = 512, FERRY_HINTS_ECHOED_MAX = 4096 };

/* romio_ds_read / romio_ds_write */
typedef enum { FERRY_HINT_AUTOMATIC = 0, FERRY_HINT_ENABLE = 1, FERRY_HINT_DISABLE = 2 } ferry__hint_switch_t;

/* access_style words, as a bit set */
enum {
    FERRY_ACCESS_READ_ONCE = 1 << 0,
    FERRY_ACCESS_WRITE_ONCE = 1 << 1,
    FERRY_ACCESS_READ_MOSTLY = 1 << 2,
    FERRY_ACCESS_WRITE_MOSTLY = 1 << 3,
    FERRY_ACCESS_SEQUENTIAL = 1 << 4,
    FERRY_ACCESS_REVERSE_SEQUENTIAL = 1 << 5,
    FERRY_ACCESS_RANDOM = 1 << 6,
};

/* ferry_cb_strategy: how collective calls split the file among aggregators (coll/). */
typedef enum {
    FERRY_CB_AUTO = 0,
    FERRY_CB_EVEN = 1,
    FERRY_CB_BLOCK_CYCLIC = 2,
    FERRY_CB_STRIPE_GROUP = 3,
    FERRY_CB_INDEPENDENT = 4,
} ferry__cb_strategy_t;

typedef struct ferry__hints {
    MPI_Offset pack_buffer_size; /* bytes staged per chunk for noncontiguous memory */
    MPI_Offset ind_rd_buffer_size; /* data sieving read window */
    MPI_Offset ind_wr_buffer_size; /* data sieving write window */
    MPI_Offset prefetch_size;      /* bytes of future reads announced to the kernel ahead of time */
    MPI_Offset write_behind;       /* collective writes of this many bytes start their writeback early */
    int ds_read;                   /* ferry__hint_switch_t */
    int ds_write;                  /* ferry__hint_switch_t */
    int access_style;              /* FERRY_ACCESS_* bits */
    int develop;                   /* ferry_develop: 1 checks collective arguments (mpiio/develop.c) */
    /* Collective buffering (coll/): agreed over ranks, rank 0's values win. */
    MPI_Offset cb_buffer_size;     /* bytes per aggregator: window + incoming data */
    MPI_Offset cb_nodes;           /* aggregators; 0: coll/'s default rule */
    int cb_per_node;               /* cb_config_list "*:N": at most N aggregators per node; 0: "*:*" */
    int cb_strategy;               /* ferry__cb_strategy_t */
    int cb_write, cb_read;         /* romio_cb_write / romio_cb_read: ferry__hint_switch_t */
    MPI_Offset cb_block_size;      /* IBM_io_buffer_size: block_cyclic block; 0: 16 file-system blocks */
    int cb_largeblock;             /* IBM_largeblock_io=true: no data shipping */
    MPI_Offset striping_unit;      /* stripe layout for stripe_group; 0: the file system's */
    MPI_Offset striping_factor;
    MPI_Offset cb_group_size;      /* storage targets per aggregator in stripe_group */
    MPI_Offset view_cache_limit;   /* bytes a rank may spend on coll/'s view cache */
    int cb_shm; /* ferry_cb_shm: two-phase shipping through node-shared memory, ferry__hint_switch_t */
    /* Values refused, one "key=value (reason)" line per key ('\n'-terminated);
     * get_info joins them with "; ". */
    char rejected[FERRY_HINTS_REJECTED_MAX];
    /* Keys ferry does not act on and their values, as "key\0value\0" pairs
     * in the order given; echoed_used bytes are in use. */
    char echoed[FERRY_HINTS_ECHOED_MAX];
    int echoed_used;
    uint64_t given; /* a bit per hint of the table that a program, hints file or set_info gave */
} ferry__hints_t;

void ferry__hints_defaults(ferry__hints_t *hints);

/* The defaults that differ on a network file system's client (a round trip
 * per call, and collective steps that cross nodes): cb_buffer_size 16 MiB
 * instead of 1 MiB (the windows of two-phase I/O; on tools/cluster's
 * GlusterFS, BTIO's write_all ran 2.5x faster with it), unless it was given. */
void ferry__hints_fit_network(ferry__hints_t *hints);

/* Applies the keys of info (may be MPI_INFO_NULL) on top of *hints: known
 * keys set their hint, unknown ones are kept for the echo. Never fails: bad
 * values are recorded in hints->rejected, where earlier rejections of other
 * keys stay. */
void ferry__hints_apply(ferry__hints_t *hints, MPI_Info info);

/* Applies the system hints files named by the environment variables
 * ROMIO_HINTS (sites' existing ROMIO files) and FERRY_HINTS, each of
 * "key value" lines and '#' comments, if set. Within a file the first line
 * of a key wins (as ROMIO reads its file); FERRY_HINTS wins a key both files
 * set. Called before the user's hints so that those win (ROMIO too lets the
 * program override its file). An unreadable file is noted in rejected. */
void ferry__hints_apply_system(ferry__hints_t *hints);

/* A fingerprint of the hints that change the collective path (cb_*,
 * romio_cb_*, IBM_*, striping_*, ferry_cb_*): develop mode compares it
 * across ranks. */
uint64_t ferry__hints_collective_fingerprint(const ferry__hints_t *hints);

/* Writes every hint's effective value into info (a fresh MPI_Info), the
 * echoed keys, and the notes ferry_hints_rejected and ferry_hints_ignored. */
int ferry__hints_report(const ferry__hints_t *hints, MPI_Info info);

/* Prints the hint table as a Markdown table. */
void ferry__hints_print_table(FILE *out);

#endif

/* shelfsea's run options and the checkpoint-time table (table.c). */
#ifndef SHELFSEA_TABLE_H
#define SHELFSEA_TABLE_H

#include "shelfsea.h"

typedef struct run_opts {
    long long steps, every;
    shelf_ckpt_opts_t ck;
    const char *final, *table_dir, *json, *compare_dir;
    int reps, restart;
} run_opts_t;

/* Collective: times reps checkpoints of the model's state for every
 * strategy x collective/independent x ferry/host MPI-IO, prints the table
 * (the slowest rank's median seconds) and appends it to r->json. */
int shelf_table(model_t *m, const run_opts_t *r);

/* Collective: steer against gather (collective, ferry's MPI-IO) and the zeroed options' choice,
 * alternating checkpoint by checkpoint (the order rotating) so a loaded machine slows all alike;
 * prints each one's median and the ratio steer / gather (issue 30: which default wins where). */
int shelf_compare(model_t *m, const run_opts_t *r);

#endif

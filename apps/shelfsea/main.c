/*
 * shelfsea [options]: run the model with checkpoints, restart it, or time
 * its checkpoint (the paper's table).
 *
 *   --nx 251 --ny 206 --nz 20   the grid (default: POLCOMS's MRCS shelf)
 *   --steps S                   run until step S (default 20)
 *   --every N                   checkpoint every N steps into --base
 *   --base DIR/NAME             the checkpoint set (default /tmp/shelfsea)
 *   --strategy steer|stack|gather|auto, --independent, --io ferry|host, --cdf2
 *   --restart                   start from the newest valid checkpoint
 *   --final PATH                write the final state (steered) to PATH
 *   --table DIR                 time every strategy x transfers x MPI-IO on
 *                               checkpoints in DIR, print the table
 *   --compare DIR               steer against gather (collective, ferry's MPI-IO),
 *                               alternating checkpoint by checkpoint in DIR
 *   --reps R                    checkpoints per configuration (default 3)
 *   --json FILE                 append the table as one JSON line
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shelfsea.h"
#include "table.h"

static const char *strategy_names[] = {"steer", "stack", "gather", "auto"};

static int parse_strategy(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, strategy_names[i]) == 0) return i;
    return -1;
}

static int parse(int argc, char **argv, model_t *m, run_opts_t *r)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int used = 1;
        if (strcmp(a, "--nx") == 0 && v) m->nx = atoi(v);
        else if (strcmp(a, "--ny") == 0 && v) m->ny = atoi(v);
        else if (strcmp(a, "--nz") == 0 && v) m->nz = atoi(v);
        else if (strcmp(a, "--steps") == 0 && v) r->steps = atoll(v);
        else if (strcmp(a, "--every") == 0 && v) r->every = atoll(v);
        else if (strcmp(a, "--base") == 0 && v) r->ck.base = v;
        else if (strcmp(a, "--strategy") == 0 && v) r->ck.strategy = parse_strategy(v);
        else if (strcmp(a, "--io") == 0 && v) r->ck.io = strcmp(v, "host") == 0 ? FERRY_CKPT_IO_HOST : FERRY_CKPT_IO_FERRY;
        else if (strcmp(a, "--final") == 0 && v) r->final = v;
        else if (strcmp(a, "--table") == 0 && v) r->table_dir = v;
        else if (strcmp(a, "--compare") == 0 && v) r->compare_dir = v;
        else if (strcmp(a, "--reps") == 0 && v) r->reps = atoi(v);
        else if (strcmp(a, "--json") == 0 && v) r->json = v;
        else used = 0;
        if (used) i++;
        else if (strcmp(a, "--independent") == 0) r->ck.independent = 1;
        else if (strcmp(a, "--cdf2") == 0) r->ck.format = FERRY_CKPT_CDF2;
        else if (strcmp(a, "--restart") == 0) r->restart = 1;
        else return fprintf(stderr, "shelfsea: unknown option %s\n", a), 2;
    }
    return m->nx > 0 && m->ny > 0 && m->nz > 0 && r->ck.strategy >= 0 && r->reps > 0 ? 0 : 2;
}

static int fail(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING + 1];
    int len;
    ferry_Error_string(rc, msg, &len);
    fprintf(stderr, "shelfsea: %s: %s\n", what, msg);
    return 1;
}

/* The model from step 0 or from the newest checkpoint. */
static int start(model_t *m, const run_opts_t *r, ferry_ckpt_t ck)
{
    shelf_init(m);
    shelf_exchange(m);
    if (!r->restart) return 0;
    void *bufs[NFIELDS];
    ferry_ckpt_info_t info;
    shelf_ckpt_buffers(m, bufs);
    int rc = ferry_ckpt_restart(ck, bufs, &info);
    if (rc) return fail("restart", rc);
    m->step = info.step;
    shelf_exchange(m);
    if (m->rank == 0) printf("shelfsea: restarted at step %lld from %s (written by %d ranks, %s)\n", info.step, info.path,
                             info.writer_ranks, strategy_names[info.strategy]);
    return 0;
}

static int run(model_t *m, const run_opts_t *r)
{
    ferry_ckpt_t ck;
    void *bufs[NFIELDS];
    int rc = shelf_ckpt_open(m, &r->ck, &ck);
    if (rc) return fail("checkpoint set", rc);
    if ((rc = start(m, r, ck))) return rc;
    shelf_ckpt_buffers(m, bufs);
    while (m->step < r->steps) {
        shelf_step(m);
        if (r->every > 0 && m->step % r->every == 0) {
            double t0 = MPI_Wtime();
            if ((rc = ferry_ckpt_write(ck, m->step, m->step * 60.0, bufs))) return fail("checkpoint", rc);
            if (m->rank == 0) printf("shelfsea: step %lld: checkpoint in %.3f s\n", m->step, MPI_Wtime() - t0);
        }
    }
    if (r->final && (rc = ferry_ckpt_write_file(ck, r->final, m->step, m->step * 60.0, bufs))) return fail("final", rc);
    ferry_ckpt_free(&ck);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    model_t m = {.nx = 251, .ny = 206, .nz = 20};
    run_opts_t r = {.steps = 20, .reps = 3, .ck = {.base = "/tmp/shelfsea"}};
    MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m.nprocs);
    int rc = parse(argc, argv, &m, &r);
    if (rc && m.rank == 0) fprintf(stderr, "usage: see the comment at the top of apps/shelfsea/main.c\n");
    if (!rc) {
        shelf_decompose(&m);
        rc = r.table_dir ? shelf_table(&m, &r) : r.compare_dir ? shelf_compare(&m, &r) : run(&m, &r);
        shelf_free(&m);
    }
    MPI_Finalize();
    return rc;
}

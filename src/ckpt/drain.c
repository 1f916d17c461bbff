/*
 * Multi-level checkpoints, level 3: the drain. The level-1 image of the
 * last write (levels.c) is written as the set's ordinary netCDF checkpoint
 * by a shadow set: the same dimensions, variables and attributes without
 * halos, whose buffers are the image's packed blocks, through the ordinary
 * ferry_ckpt_write (its transaction, commit and pruning unchanged).
 *
 * At MPI_THREAD_MULTIPLE the shadow write runs on a thread of its own (the
 * shadow set has its own communicator) while the application computes; the
 * next write, restart, ferry_ckpt_drain_wait or ferry_ckpt_free joins it.
 * Below that level a thread may not call MPI, so the drain is deferred to
 * the next ferry_ckpt_drain_wait or write and nothing overlaps.
 *
 * Test hooks: FERRY_CKPT_DRAIN_FAIL=1 fails every drain before it writes
 * (as a killed drain: no shared file); FERRY_CKPT_DRAIN_DELAY=<ms> sleeps
 * before the shadow write, so a test can kill the job while it drains.
 *
 * Called by levels.c and restart.c; calls the public write (commit.c) on
 * the shadow set, never on the set itself.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

typedef struct ferry__ckpt_drain {
    ferry_ckpt_t shadow;
    long long version; /* the set's defs_version the shadow was built for */
    void **bufs;       /* [nvars] into the image's data */
    long long step;
    double time;
    int pending, threaded, cls;
    char message[1024];
    pthread_t thread;
} ferry__ckpt_drain_t;

/* The class of a code a public call returned. */
static int class_of(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    return cls;
}

/* Collective: a shadow set of ck's definitions without halos. */
static int build_shadow(ferry_ckpt_t ck, ferry_ckpt_t *out)
{
    ferry_ckpt_options_t o = {.strategy = ck->strategy, .independent = ck->independent, .format = ck->format,
                              .io = ck->io_kind, .info = ck->info};
    int rc = ferry_ckpt_create(ck->comm, ck->base, &o, out), id;
    if (rc != MPI_SUCCESS) return class_of(rc);
    ferry_ckpt_t s = *out;
    for (int d = 0; d < ck->ndims && rc == MPI_SUCCESS; d++)
        rc = ferry_ckpt_def_dim(s, ck->dims[d].name, ck->dims[d].len, &id);
    for (int i = 0; i < ck->nvars && rc == MPI_SUCCESS; i++) {
        const ferry__ckpt_var_t *v = &ck->vars[i];
        ferry_ckpt_var_t d = {.name = v->name, .type = v->type, .ndims = v->ndims, .dimids = v->dimids,
                              .mask = v->mask};
        MPI_Offset start[FERRY__CKPT_D], count[FERRY__CKPT_D];
        memcpy(start, v->start + FERRY__CKPT_D - v->ndims, (size_t)v->ndims * sizeof *start);
        memcpy(count, v->count + FERRY__CKPT_D - v->ndims, (size_t)v->ndims * sizeof *count);
        d.start = start, d.count = count;
        rc = ferry_ckpt_def_var(s, &d, &id);
        if (rc == MPI_SUCCESS && ferry__ckpt_copy_atts(&v->atts, &s->vars[i].atts)) rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS && ferry__ckpt_copy_atts(&ck->gatts, &s->gatts)) rc = MPI_ERR_NO_MEM;
    s->keep = ck->keep, s->align = ck->align, s->stage_limit = ck->stage_limit;
    char why[600];
    snprintf(why, sizeof why, "%s", rc == MPI_SUCCESS ? "" : ferry__error_message());
    return rc == MPI_SUCCESS ? 0 : ferry__error_set(class_of(rc), "ferry_ckpt: the drain's set: %s", why);
}

/* The shadow write, on the drain thread or at once. */
static void *drain_run(void *arg)
{
    ferry__ckpt_drain_t *d = arg;
    const char *delay = getenv("FERRY_CKPT_DRAIN_DELAY"), *fail = getenv("FERRY_CKPT_DRAIN_FAIL");
    if (delay && atol(delay) > 0) {
        struct timespec ts = {atol(delay) / 1000, atol(delay) % 1000 * 1000000L};
        nanosleep(&ts, NULL);
    }
    int rc = fail && atoi(fail) ? ferry__error_code(ferry__error_set(MPI_ERR_IO, "ferry_ckpt: drain failed (test hook)"))
                                : ferry_ckpt_write(d->shadow, d->step, d->time, d->bufs);
    d->cls = class_of(rc);
    snprintf(d->message, sizeof d->message, "%s", d->cls ? ferry__error_message() : "");
    return NULL;
}

/* Collective: the drain state with a shadow set of the current definitions. */
static int drain_ready(ferry_ckpt_t ck)
{
    ferry__ckpt_levels_t *lv = ck->levels;
    ferry__ckpt_drain_t *d = lv->drain_state;
    if (!d && !(d = lv->drain_state = ferry__calloc(1, sizeof *d)))
        return ferry__error_agree(ck->comm, ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory"), "ferry_ckpt");
    if (d->shadow && d->version == ck->defs_version) return 0;
    ferry_ckpt_free(&d->shadow);
    ferry__free(d->bufs);
    d->bufs = ferry__calloc((size_t)ck->nvars + 1, sizeof *d->bufs);
    int cls = d->bufs ? build_shadow(ck, &d->shadow) : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory");
    cls = ferry__error_agree(ck->comm, cls, "ferry_ckpt_write (drain)");
    if (cls) ferry_ckpt_free(&d->shadow);
    d->version = ck->defs_version;
    return cls;
}

static int thread_multiple(void)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    return provided == MPI_THREAD_MULTIPLE;
}

int ferry__ckpt_drain_start(ferry_ckpt_t ck, long long step, double time)
{
    FERRY_TRY(drain_ready(ck));
    ferry__ckpt_levels_t *lv = ck->levels;
    ferry__ckpt_drain_t *d = lv->drain_state;
    unsigned char *data = lv->image + (lv->image_len - (size_t)((ferry__ckpt_l1_head_t *)(void *)lv->image)->data_bytes);
    for (int i = 0; i < ck->nvars; i++) {
        d->bufs[i] = ferry__ckpt_elems(ck->vars[i].count) ? data : NULL;
        data += ferry__ckpt_elems(ck->vars[i].count) * ck->vars[i].esize;
    }
    d->step = step, d->time = time, d->cls = 0, d->pending = 1;
    d->threaded = thread_multiple() && pthread_create(&d->thread, NULL, drain_run, d) == 0;
    return 0; /* every rank decides alike: the thread level is the job's, pthread_create fails only without memory */
}

int ferry__ckpt_drain_finish(ferry_ckpt_t ck)
{
    ferry__ckpt_drain_t *d = ck->levels ? ck->levels->drain_state : NULL;
    if (!d || !d->pending) return 0;
    if (d->threaded) pthread_join(d->thread, NULL);
    else drain_run(d);
    d->pending = d->threaded = 0;
    return d->cls ? ferry__error_set(d->cls, "%s (the drain of step %lld)", d->message, d->step) : 0;
}

void ferry__ckpt_drain_free(ferry_ckpt_t ck)
{
    ferry__ckpt_drain_t *d = ck->levels->drain_state;
    if (!d) return;
    if (d->pending && d->threaded) pthread_join(d->thread, NULL);
    else if (d->pending && ck->rank == 0)
        fprintf(stderr, "ferry_ckpt_free: %s: the drain of step %lld never ran (no ferry_ckpt_drain_wait): it stays "
                        "at the node-local levels\n", ck->base, d->step);
    ferry_ckpt_free(&d->shadow);
    ferry__free(d->bufs);
    ferry__free(d);
    ck->levels->drain_state = NULL;
}

int ferry_ckpt_drain_wait(ferry_ckpt_t ck)
{
    if (!ck) return ferry__error_code(ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_drain_wait: a NULL set"));
    return ferry__error_code(ferry__ckpt_drain_finish(ck));
}

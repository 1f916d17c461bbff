/*
 * The scaling model (issue 20 item 8): ferry's own planning code run for
 * P virtual ranks in one process, with no messages, so that what a rank
 * holds and exchanges at 10^5 ranks can be read off here and checked
 * against real runs at small P (bench/bench_scale.c).
 *
 * One target (request/request.h: the file as the data path sees it) stands
 * for every rank's file: its collective state is the
 * one a real rank builds, from the very blobs and words the real ranks
 * would exchange (each virtual rank's view serialized by the same code).
 * The model then runs, as rank `as_rank`, the steps a collective call
 * runs after its exchanges: the cache's estimate and build, the node map,
 * the call's inputs (a regular call from the cached views, as coll.c
 * does), the strategy, the file domains and the buffer plan. The
 * messages' sizes are the ones coll.c and state.c send; the collectives
 * themselves are not modelled (their time is the host's).
 */
#include <string.h>
#include <time.h>

#include "coll/coll_int.h"
#include "error/error.h"

/* This process's CPU seconds: planning time without the machine's other load. */
static double cpu_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Every virtual rank's blob, in rank order. */
typedef struct blobs {
    char *bytes;
    int *lens, *offs;
    size_t used, room;
} blobs_t;

static int blobs_add(blobs_t *b, const void *blob, size_t len, int r)
{
    if (b->used + len > b->room) {
        size_t room = b->room ? 2 * b->room : 1 << 16;
        while (room < b->used + len) room *= 2;
        char *more = ferry__realloc(b->bytes, room);
        if (!more || room > (1u << 30)) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: model: blobs over 1 GiB");
        b->bytes = more;
        b->room = room;
    }
    memcpy(b->bytes + b->used, blob, len);
    b->offs[r] = (int)b->used;
    b->lens[r] = (int)len;
    b->used += len;
    return 0;
}

/* What virtual rank r says (into the update's room) and brings to the
 * call (into inputs[r]), as describe_me (coll.c) computes it. */
static int describe_rank(ferry__coll_model_t *m, const ferry__target_t *f, blobs_t *b, ferry__coll_rank_t *inputs,
                         int r)
{
    ferry__coll_model_rank_t mr = {.skip = 0};
    ferry__view_init(&mr.view);
    FERRY_TRY(m->rank_of(m->arg, r, &mr));
    ferry__coll_blob_t blob = {0};
    int rc = ferry__coll_serialize_view(&mr.view, &blob);
    if (rc == 0) rc = blobs_add(b, blob.bytes, blob.len, r);
    ferry__coll_rank_t *rank = &inputs[r];
    *rank = (ferry__coll_rank_t){.skip = mr.skip, .bytes = mr.bytes, .cached = 1};
    if (rc == 0) rc = ferry__coll_file_range(&mr.view, rank);
    f->coll->in_update.said[r] =
        (struct ferry__coll_said){(MPI_Offset)blob.len, FERRY_COLL_SAID_CHANGED | FERRY_COLL_SAID_HINTS,
                                  r / m->per_node + 1, blob.hash, blob.expanded};
    ferry__free(blob.bytes);
    ferry__view_release(&mr.view);
    return rc;
}

/* The state update's gather as the real ranks send it (state.c's plan):
 * each shape's blob once, every other rank's displacement; built into the
 * cache. Returns the bytes gathered in *gathered. */
static int gather_and_build(const ferry__target_t *f, int nprocs, const blobs_t *all, MPI_Offset *gathered)
{
    blobs_t g = {0};
    g.lens = ferry__malloc((size_t)nprocs * sizeof *g.lens);
    g.offs = ferry__malloc((size_t)nprocs * sizeof *g.offs);
    int rc = g.lens && g.offs ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry: model: out of memory");
    if (rc == 0) *gathered = ferry__coll_gather_plan(f->coll, nprocs, g.lens, g.offs);
    for (int r = 0; rc == 0 && r < nprocs; r++) rc = blobs_add(&g, all->bytes + all->offs[r], (size_t)g.lens[r], r);
    if (rc == 0) rc = ferry__coll_cache_build(f->coll, nprocs, g.bytes, g.lens, g.offs);
    ferry__free(g.bytes);
    ferry__free(g.lens);
    ferry__free(g.offs);
    return rc;
}

/* The received bytes of the update (state.c): what ranks said, rank 0's
 * hints (never agreed before), and unless the views pass the bound, the
 * allocation agreement and the gather. */
static MPI_Offset update_received(const ferry__coll_model_t *m, const ferry__target_t *f, MPI_Offset gathered)
{
    MPI_Offset said = (MPI_Offset)m->nprocs * (MPI_Offset)sizeof(struct ferry__coll_said);
    MPI_Offset hints = m->as_rank == 0 ? 0 : (MPI_Offset)sizeof f->coll->hints;
    return said + hints + (m->out.too_large ? 0 : (MPI_Offset)sizeof(int) + gathered);
}

/* The state update from what the virtual ranks say, then their inputs
 * into the call's room: the update's own room is free only then (coll_int.h). */
static int describe_ranks(ferry__coll_model_t *m, const ferry__target_t *f)
{
    blobs_t b = {0};
    b.lens = ferry__malloc((size_t)m->nprocs * sizeof *b.lens);
    b.offs = ferry__malloc((size_t)m->nprocs * sizeof *b.offs);
    ferry__coll_rank_t *inputs = ferry__malloc((size_t)m->nprocs * sizeof *inputs);
    int rc = b.lens && b.offs && inputs ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry: model: out of memory");
    for (int r = 0; rc == 0 && r < m->nprocs; r++) rc = describe_rank(m, f, &b, inputs, r);
    if (rc == 0) ferry__coll_map_nodes(f->coll, m->nprocs);
    double start = cpu_clock();
    MPI_Offset peak = 0, gathered = 0;
    if (rc == 0) m->out.cache_bytes = ferry__coll_cache_held(f->coll, m->nprocs, &peak);
    m->out.cache_peak = peak;
    m->out.too_large = peak > f->coll->hints.view_cache_limit;
    if (rc == 0 && !m->out.too_large) rc = gather_and_build(f, m->nprocs, &b, &gathered);
    f->coll->cache_ok = rc == 0 && !m->out.too_large;
    f->coll->cache_too_large = m->out.too_large;
    f->coll->cache_bytes = f->coll->cache_ok ? m->out.cache_bytes : 0;
    m->out.update_seconds = cpu_clock() - start;
    m->out.update_recv_bytes = update_received(m, f, gathered);
    m->out.shapes = f->coll->nshapes;
    if (rc == 0) memcpy(f->coll->in_call.ranks, inputs, (size_t)m->nprocs * sizeof *inputs);
    ferry__free(inputs);
    ferry__free(b.bytes);
    ferry__free(b.lens);
    ferry__free(b.offs);
    return rc;
}

/* The call's summary as the allreduce gives it (coll.c's words, reduced by MAX here). */
static int summary_regular(const ferry__coll_state_t *s, int nprocs)
{
    MPI_Offset all[FERRY_COLL_SUMMARY_WORDS], words[FERRY_COLL_SUMMARY_WORDS];
    for (int r = 0; r < nprocs; r++) {
        ferry__coll_rank_t rank = s->in_call.ranks[r];
        rank.cached = s->cache_ok;
        ferry__coll_summary_of(&rank, words);
        for (int w = 0; w < FERRY_COLL_SUMMARY_WORDS; w++) all[w] = r == 0 || words[w] > all[w] ? words[w] : all[w];
    }
    return ferry__coll_summary_regular(all);
}

/* Ranks whose part moves before the summary (coll.c's rule) have nothing
 * left in it; 1 when no rank has. */
static int move_early(ferry__coll_model_t *m, const ferry__target_t *f)
{
    int left = 0;
    for (int r = 0; r < m->nprocs; r++) {
        ferry__coll_rank_t *rank = &f->coll->in_call.ranks[r];
        if (ferry__coll_goes_early(f, m->write, rank)) rank->bytes = rank->lo = rank->hi = 0;
        left |= rank->bytes > 0;
    }
    return !left;
}

enum { SUMMARY = FERRY_COLL_SUMMARY_WORDS * 8, AGREEMENT = 16, WORDS = (int)sizeof(ferry__coll_rank_t) };

/* The call is its file's first collective (bench_scale: open, set_view,
 * write_all), so the state update waits for a first summary (coll.c's
 * update_when_needed): 1 when every rank's part went early before it, on
 * its size alone (no node map yet). Then the update never happens. */
static int early_before_update(ferry__coll_model_t *m, const ferry__target_t *f)
{
    ferry__coll_state_t *s = f->coll;
    int most_per_node = s->most_per_node, left = 0;
    s->most_per_node = 0;
    for (int r = 0; r < m->nprocs && !left; r++) {
        ferry__coll_rank_t rank = s->in_call.ranks[r];
        left = rank.bytes > 0 && !ferry__coll_goes_early(f, m->write, &rank);
    }
    s->most_per_node = most_per_node;
    if (left) return 0;
    m->out.cache_bytes = m->out.cache_peak = m->out.update_recv_bytes = 0;
    m->out.meta_sent = m->out.meta_recv = SUMMARY;
    snprintf(m->out.strategy, sizeof m->out.strategy, "%s", FERRY_COLL_NOTHING_LEFT);
    return 1;
}

/* The call's inputs as every rank learns them: a regular call's from the
 * cached views, filled from the first rank with bytes (every rank's window).
 * *done: every part moved early, the call ends after its summary (the
 * second: the first one came before the update). */
static int call_inputs(ferry__coll_model_t *m, const ferry__target_t *f, int *done)
{
    ferry__coll_state_t *s = f->coll;
    *done = move_early(m, f);
    m->out.regular = summary_regular(s, m->nprocs);
    int agreement = *done ? 0 : AGREEMENT;
    m->out.meta_sent = 2 * SUMMARY + agreement + (m->out.regular ? 0 : WORDS);
    m->out.meta_recv = 2 * SUMMARY + agreement + (m->out.regular ? 0 : (MPI_Offset)WORDS * m->nprocs);
    if (*done) snprintf(m->out.strategy, sizeof m->out.strategy, "%s", FERRY_COLL_NOTHING_LEFT);
    const ferry__coll_rank_t *first = NULL;
    for (int r = 0; !first && r < m->nprocs; r++) first = s->in_call.ranks[r].bytes > 0 ? &s->in_call.ranks[r] : NULL;
    if (!m->out.regular || !first) return 0;
    ferry__coll_rank_t me = *first; /* every rank's window, as the summary tells it */
    ferry__coll_fill_regular(f, &me);
    return (int)me.cls;
}

/* Strategy, domains and, for two-phase calls, rank as_rank's buffers. */
static int plan_call(ferry__coll_model_t *m, const ferry__target_t *f)
{
    static char memory; /* contiguous memory: the plan never reads it */
    ferry__stats_t stats = {0};
    ferry__scratch_slot_t staging = {0}, sieve = {0};
    ferry__context_t ctx = {.comm = f->comm, .stats = &stats, .staging = &staging, .sieve = &sieve};
    ferry__access_t access = {.name = m->write ? "write_all" : "read_all", .write = m->write, .collective = 1};
    const ferry__coll_rank_t *mine = &f->coll->in_call.ranks[m->as_rank];
    ferry__request_t req = {.target = f,
                            .call = &access,
                            .buf = &memory,
                            .count = mine->bytes,
                            .type = MPI_BYTE,
                            .skip = mine->skip,
                            .ctx = &ctx};
    ferry__domains_t d;
    int two_phase = ferry__coll_choose(&req, f->coll->in_call.ranks, &d), rc = 0;
    snprintf(m->out.strategy, sizeof m->out.strategy, "%s", stats.strategy);
    m->out.naggs = two_phase ? d.naggs : 0;
    m->out.steps = two_phase ? d.steps : 0;
    if (two_phase)
        rc = ferry__coll_plan_buffers(&(ferry__coll_call_t){&req, f->coll->in_call.ranks, &d}, &m->out.buffers);
    m->out.meta_sent += two_phase ? (MPI_Offset)sizeof(int) : 0; /* the set-up agreement */
    m->out.meta_recv += two_phase ? (MPI_Offset)sizeof(int) : 0;
    ferry__scratch_release(&staging);
    ferry__scratch_release(&sieve);
    return rc;
}

int ferry__coll_model_run(ferry__coll_model_t *m)
{
    memset(&m->out, 0, sizeof m->out);
    atomic_int locks_refused = 0;
    ferry__target_t f = {.comm = MPI_COMM_NULL, /* no message is sent */
                         .rank = m->as_rank,
                         .nprocs = m->nprocs,
                         .filename = "(model)",
                         .readable = 1,
                         .layout = m->layout,
                         .hints = m->hints,
                         .locks_refused = &locks_refused};
    ferry__view_init(&f.view);
    int rc = ferry__coll_open(&f, &f.coll);
    if (rc == 0) {
        ferry__coll_own_hints(&f);
        f.coll->hints.cores = m->cores;
        rc = describe_ranks(m, &f);
        m->out.state_bytes = ferry__coll_state_bytes(f.coll, m->nprocs);
    }
    double start = cpu_clock();
    int done = rc == 0 && early_before_update(m, &f);
    if (rc == 0 && !done) rc = call_inputs(m, &f, &done);
    if (rc == 0 && !done) rc = plan_call(m, &f);
    m->out.call_seconds = cpu_clock() - start;
    ferry__coll_release(&f.coll);
    return rc;
}

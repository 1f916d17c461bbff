/*
 * The strategy of one collective call, decided from inputs every rank
 * holds (the call's allgather and the agreed hints), so every rank takes
 * the same path. The rules, in order (docs/coll.md):
 *
 *   independent  one rank; atomic mode (each rank's access is locked
 *                whole); a converting data representation; a view that
 *                could not be cached; romio_cb_write/read=disable;
 *                IBM_largeblock_io=true; ferry_cb_strategy=independent;
 *   the hint     ferry_cb_strategy = even | block_cyclic | stripe_group;
 *   auto         the cheaper of the two estimates below; two-phase then
 *                uses stripe_group when the file is striped over several
 *                targets, even otherwise.
 *
 * CALL and BYTE are the file system's (its layout: a local kernel call and
 * copy, or a network client's round trip and transfer, fs.h).
 *
 *   independent = the slowest node, whose ranks share its cores (rank 0's
 *                 count), each rank costing: contiguous data: CALL + bytes
 *                 * BYTE; otherwise data sieving over its span, twice the
 *                 bytes for writes (read, write back), times the ranks whose
 *                 ranges overlap it for writes (their window locks serialize)
 *   two-phase   = total / aggregators * SHIP + extent / aggregators * BYTE
 *                 (twice for writes with holes) + steps * STEP (coll_int.h)
 *
 * The choice and its reason land in the call's statistics (strategy:
 * get_info's ferry_stats_strategy, FERRY_STATS).
 */
#include <stdio.h>
#include <stdlib.h>

#include "coll/coll_int.h"
#include "datarep/datarep.h"

static const double SHIP = 0.6e-9;  /* seconds per byte packed, sent and unpacked */

static void say(const ferry__request_t *req, const char *what, const char *why)
{
    ferry__stats_t *stats = req->ctx->stats;
    snprintf(stats->strategy, sizeof stats->strategy, "%s (%s)", what, why);
}

/* Every rank's file range, sorted by start and by end, to count the ranks
 * whose ranges overlap one in O(log P) (the write cost's lock queue), and
 * per node its ranks' summed and longest cost: in the call's room
 * (coll_int.h), 40 bytes per rank. */
typedef struct cost_room {
    MPI_Offset *los, *his; /* ranks with data: n each */
    int n;
    double *node_sum, *node_longest, *node_ranks; /* per node */
} cost_room_t;

static int by_offset(const void *a, const void *b)
{
    MPI_Offset x = *(const MPI_Offset *)a, y = *(const MPI_Offset *)b;
    return (x > y) - (x < y);
}

static void cost_room_fill(const ferry__target_t *file, const ferry__coll_rank_t *ranks, cost_room_t *room)
{
    const ferry__coll_call_room_t *c = &file->coll->in_call;
    *room = (cost_room_t){c->los, c->his, 0, c->node_sum, c->node_longest, c->node_ranks};
    for (int r = 0; r < file->nprocs; r++) {
        if (ranks[r].bytes == 0) continue;
        room->los[room->n] = ranks[r].lo;
        room->his[room->n++] = ranks[r].hi;
    }
    qsort(room->los, (size_t)room->n, sizeof *room->los, by_offset);
    qsort(room->his, (size_t)room->n, sizeof *room->his, by_offset);
}

/* How many of the sorted values lie below x (below_or_at: at or below). */
static int count_below(const MPI_Offset *sorted, int n, MPI_Offset x, int below_or_at)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (sorted[mid] < x || (below_or_at && sorted[mid] == x)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* One rank's independent access. */
static double rank_cost(const ferry__target_t *file, int write, const ferry__coll_rank_t *me, const cost_room_t *room)
{
    MPI_Offset window = write ? file->hints.ind_wr_buffer_size : file->hints.ind_rd_buffer_size;
    double span = (double)(me->hi - me->lo), call = ferry__coll_call_cost(&file->layout);
    double byte = ferry__coll_byte_cost(&file->layout);
    if (me->bytes == me->hi - me->lo) return call + span * byte;
    double cost = (span / (double)window + 1) * call + span * byte * (write ? 2 : 1);
    /* Ranges that start below my end, less those that end at or below my start (nonempty ranges). */
    int overlapping = count_below(room->los, room->n, me->hi, 0) - count_below(room->his, room->n, me->lo, 1);
    return write ? cost * overlapping : cost;
}

/* The slowest node: its ranks' costs shared among its cores. */
static double independent_cost(const ferry__target_t *file, int write, const ferry__coll_rank_t *ranks)
{
    const ferry__coll_state_t *s = file->coll;
    cost_room_t room;
    cost_room_fill(file, ranks, &room);
    for (int node = 0; node < s->nodes; node++)
        room.node_sum[node] = room.node_longest[node] = room.node_ranks[node] = 0;
    for (int r = 0; r < file->nprocs; r++) {
        if (ranks[r].bytes == 0) continue;
        int node = s->node_of[r];
        double c = rank_cost(file, write, &ranks[r], &room);
        room.node_sum[node] += c;
        room.node_longest[node] = c > room.node_longest[node] ? c : room.node_longest[node];
        room.node_ranks[node]++;
    }
    double worst = 0;
    for (int node = 0; node < s->nodes; node++) {
        double here = room.node_ranks[node];
        double cores = s->hints.cores > 0 && s->hints.cores < here ? (double)s->hints.cores : here;
        double t = here > 0 ? room.node_sum[node] / cores : 0;
        t = t > room.node_longest[node] ? t : room.node_longest[node];
        worst = t > worst ? t : worst;
    }
    return worst;
}

static double two_phase_cost(const ferry__target_t *file, int write, const ferry__coll_rank_t *ranks,
                             const ferry__domains_t *d)
{
    double total = 0, extent = (double)(d->hi - d->lo), naggs = d->naggs;
    for (int r = 0; r < file->nprocs; r++) total += (double)ranks[r].bytes;
    double io = extent / naggs * ferry__coll_byte_cost(&file->layout) * (write && total < extent ? 2 : 1);
    return total / naggs * SHIP + io + (double)d->steps * FERRY_COLL_STEP;
}

static int auto_kind(const ferry__target_t *file)
{
    const ferry__coll_hints_t *h = &file->coll->hints;
    MPI_Offset targets = h->striping_factor > 0 ? h->striping_factor : file->layout.stripe_count;
    return targets > 1 ? FERRY_DOMAIN_STRIPES : FERRY_DOMAIN_EVEN;
}

/* A reason to stay independent whatever the hints say, or NULL. */
static const char *must_be_independent(const ferry__target_t *file, int write, const ferry__coll_rank_t *ranks)
{
    int cached = 1;
    for (int r = 0; r < file->nprocs; r++) cached &= ranks[r].cached != 0;
    const ferry__coll_hints_t *h = &file->coll->hints;
    if (file->nprocs == 1) return "one rank";
    if (file->atomicity) return "atomic mode";
    if (!ferry__datarep_is_native(file->view.rep)) return "converting data representation";
    if (file->coll->cache_too_large) return "views over ferry_view_cache_limit";
    if (!cached) return "a view could not be cached";
    if ((write ? h->cb_write : h->cb_read) == FERRY_HINT_DISABLE) return write ? "romio_cb_write" : "romio_cb_read";
    if (h->largeblock) return "IBM_largeblock_io";
    if (h->strategy == FERRY_CB_INDEPENDENT) return "ferry_cb_strategy";
    return NULL;
}

int ferry__coll_choose(const ferry__request_t *req, const ferry__coll_rank_t *ranks, ferry__domains_t *d)
{
    const ferry__target_t *file = req->target;
    int write = req->call->write;
    static const int hinted[] = {[FERRY_CB_EVEN] = FERRY_DOMAIN_EVEN,
                                 [FERRY_CB_BLOCK_CYCLIC] = FERRY_DOMAIN_CYCLIC,
                                 [FERRY_CB_STRIPE_GROUP] = FERRY_DOMAIN_STRIPES};
    static const char *names[] = {"two-phase even", "two-phase block_cyclic", "two-phase stripe_group"};
    const ferry__coll_hints_t *h = &file->coll->hints;
    const char *why = must_be_independent(file, write, ranks);
    if (why) {
        say(req, "independent", why);
        return 0;
    }
    int kind = h->strategy != FERRY_CB_AUTO ? hinted[h->strategy] : auto_kind(file);
    ferry__coll_domains_plan(file, ranks, kind, d);
    if (h->strategy != FERRY_CB_AUTO) {
        say(req, names[kind], "ferry_cb_strategy");
        return 1;
    }
    if ((write ? h->cb_write : h->cb_read) == FERRY_HINT_ENABLE) {
        say(req, names[kind], write ? "romio_cb_write" : "romio_cb_read");
        return 1;
    }
    double alone = independent_cost(file, write, ranks), shipped = two_phase_cost(file, write, ranks, d);
    int two_phase = shipped < alone;
    char why_text[40];
    snprintf(why_text, sizeof why_text, "cost %.2g s vs %.2g s", two_phase ? shipped : alone,
             two_phase ? alone : shipped);
    say(req, two_phase ? names[kind] : "independent", why_text);
    return two_phase;
}

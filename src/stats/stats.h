/*
 * stats: per-file counters of what the caller asked for and what ferry did.
 *
 * Every open file counts, always (a few additions per file-system call):
 * the bytes and calls the caller's reads and writes asked for, the bytes,
 * calls and time of the file-system traffic that served them, the bytes
 * data sieving moved beyond what was asked, the time spent exchanging data
 * between ranks, and the collective strategy used last. get_info reports
 * this rank's counters under ferry_stats_* keys; with FERRY_STATS=1 close
 * prints one summary per file summed over ranks (FERRY_STATS=json:<path>
 * appends it to <path> as one JSON object per line instead).
 */
#ifndef FERRY_STATS_H
#define FERRY_STATS_H

#include <time.h>

#include <mpi.h>

typedef struct ferry__stats {
    long long read_calls, read_bytes;   /* as asked by the caller's MPI-IO calls */
    long long write_calls, write_bytes;
    long long fs_read_calls, fs_read_bytes; /* file-system traffic */
    long long fs_write_calls, fs_write_bytes;
    long long sieve_extra_bytes; /* moved by data sieving beyond what was asked */
    long long prefetch_bytes;    /* announced to the kernel ahead of reads (guided prefetching) */
    long long writeback_bytes;   /* whose writeback a collective write started early (ferry_write_behind) */
    long long coll_calls;        /* collective transfers */
    long long coll_regular_calls; /* of them, regular: every rank the same stream window, inputs from one
                                   * allreduce instead of an allgather (coll/coll.c) */
    long long coll_early_bytes;  /* of them, moved by this rank before the call's inputs (coll.c: early ranks) */
    long long coll_meta_bytes;   /* bytes this rank sent in them besides data: call inputs, the two-phase
                                  * set-up agreement, the final agreement (the view cache's exchange,
                                  * before the first call after set_view, counts apart) */
    long long coll_meta_recv_bytes;  /* bytes this rank received in them besides data: every rank's call inputs
                                      * (the O(P) term), the two-phase set-up and final agreements */
    long long coll_view_cache_bytes; /* estimated memory of the views this rank holds cached for them: a level
                                      * reported by get_info and FERRY_STATS, not a count */
    long long coll_view_recv_bytes;  /* bytes this rank received at the last update of the views and hints
                                      * (the first collective call after set_view or set_info): what every rank
                                      * said, rank 0's hints, each distinct view shape once and every other
                                      * rank's displacement (coll/state.c): a level, like the cache's */
    long long coll_shm_bytes;        /* of this rank's stream bytes in them, those that went through an aggregator's
                                      * node-shared window instead of messages (ferry_cb_shm) */
    long long coll_aggregator_calls; /* two-phase calls in which this rank was an aggregator */
    long long coll_targets;      /* distinct storage targets (stripe index mod stripe count) its windows
                                  * touched, summed over those calls: divided by coll_aggregator_calls,
                                  * the targets per aggregator per call (Y-Lib, seed 002) */
    double fs_seconds;           /* in file-system calls */
    double exchange_seconds;     /* moving data between ranks */
    char strategy[96];           /* collective strategy used last and why, "" if none */
} ferry__stats_t;

static inline double ferry__stats_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Counts one file-system transfer of `bytes` that started at `start`. stats may be NULL. */
static inline void ferry__stats_fs_transfer(ferry__stats_t *stats, int write, long long bytes, double start)
{
    if (!stats) return;
    stats->fs_seconds += ferry__stats_clock() - start;
    if (write) {
        stats->fs_write_calls++;
        stats->fs_write_bytes += bytes;
    } else {
        stats->fs_read_calls++;
        stats->fs_read_bytes += bytes;
    }
}

/* Writes this rank's counters into info under ferry_stats_* keys. */
int ferry__stats_report_info(const ferry__stats_t *stats, MPI_Info info);

/* Adds every counter and time of from to to; from's strategy, if any, becomes to's. */
void ferry__stats_add(ferry__stats_t *to, const ferry__stats_t *from);

/* Collective over comm: with FERRY_STATS set, sums every rank's counters
 * and has rank 0 print (or append as JSON) one summary for the file. */
void ferry__stats_summarize(const ferry__stats_t *stats, MPI_Comm comm, const char *filename);

#endif

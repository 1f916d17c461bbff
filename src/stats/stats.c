/*
 * Reporting the per-file counters: get_info keys and the close summary.
 */
#include "stats/stats.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SUM_TIMES = 2 };

static pthread_once_t configure_once = PTHREAD_ONCE_INIT;
static const char *stats_setting; /* FERRY_STATS: NULL, "1" or "json:<path>" */

static void configure(void)
{
    const char *v = getenv("FERRY_STATS");
    if (v && *v && strcmp(v, "0") != 0) stats_setting = v;
}

/* Every counter, once: reports, sums over ranks and ferry__stats_add walk it. */
static const struct {
    const char *key;
    size_t offset;
} counter_table[] = {
#define COUNTER(name) {#name, offsetof(ferry__stats_t, name)}
    COUNTER(read_calls),           COUNTER(read_bytes),
    COUNTER(write_calls),          COUNTER(write_bytes),
    COUNTER(fs_read_calls),        COUNTER(fs_read_bytes),
    COUNTER(fs_write_calls),       COUNTER(fs_write_bytes),
    COUNTER(sieve_extra_bytes),    COUNTER(prefetch_bytes),
    COUNTER(writeback_bytes),      COUNTER(coll_calls),
    COUNTER(coll_early_bytes),     COUNTER(coll_meta_bytes),
    COUNTER(coll_meta_recv_bytes), COUNTER(coll_aggregator_calls),
    COUNTER(coll_targets),         COUNTER(coll_view_cache_bytes),
    COUNTER(coll_regular_calls),   COUNTER(coll_shm_bytes),
    COUNTER(coll_view_recv_bytes),
#undef COUNTER
};
enum { SUM_COUNTERS = sizeof counter_table / sizeof counter_table[0] };

static long long counter_of(const ferry__stats_t *s, int i)
{
    return *(const long long *)((const char *)s + counter_table[i].offset);
}

static void counters_of(const ferry__stats_t *s, long long out[SUM_COUNTERS])
{
    for (int i = 0; i < SUM_COUNTERS; i++) out[i] = counter_of(s, i);
}

void ferry__stats_add(ferry__stats_t *to, const ferry__stats_t *from)
{
    for (int i = 0; i < SUM_COUNTERS; i++)
        *(long long *)((char *)to + counter_table[i].offset) += counter_of(from, i);
    to->fs_seconds += from->fs_seconds;
    to->exchange_seconds += from->exchange_seconds;
    if (from->strategy[0]) memcpy(to->strategy, from->strategy, sizeof to->strategy);
}

int ferry__stats_report_info(const ferry__stats_t *stats, MPI_Info info)
{
    long long counters[SUM_COUNTERS];
    counters_of(stats, counters);
    char key[64], value[64];
    for (int i = 0; i < SUM_COUNTERS; i++) {
        snprintf(key, sizeof key, "ferry_stats_%s", counter_table[i].key);
        snprintf(value, sizeof value, "%lld", counters[i]);
        if (MPI_Info_set(info, key, value) != MPI_SUCCESS) return MPI_ERR_INFO;
    }
    snprintf(value, sizeof value, "%.6f", stats->fs_seconds);
    if (MPI_Info_set(info, "ferry_stats_fs_seconds", value) != MPI_SUCCESS) return MPI_ERR_INFO;
    snprintf(value, sizeof value, "%.6f", stats->exchange_seconds);
    if (MPI_Info_set(info, "ferry_stats_exchange_seconds", value) != MPI_SUCCESS) return MPI_ERR_INFO;
    if (MPI_Info_set(info, "ferry_stats_strategy", stats->strategy[0] ? (char *)stats->strategy : "none") !=
        MPI_SUCCESS)
        return MPI_ERR_INFO;
    return 0;
}

static void print_text(FILE *out, const char *filename, int ranks, const long long *c, const double *t,
                       const char *strategy)
{
    fprintf(out,
            "ferry stats '%s' (%d ranks): read %lld B in %lld calls, wrote %lld B in %lld calls; "
            "file system: read %lld B in %lld calls, wrote %lld B in %lld calls, %.6f s (sum over ranks); "
            "sieving extra %lld B; prefetched %lld B; exchange %.6f s; collective strategy %s\n",
            filename, ranks, c[1], c[0], c[3], c[2], c[5], c[4], c[7], c[6], t[0], c[8], c[9], t[1],
            strategy[0] ? strategy : "none");
}

static void print_json(FILE *out, const char *filename, int ranks, const long long *c, const double *t,
                       const char *strategy)
{
    fprintf(out, "{\"file\":\"");
    for (const char *p = filename; *p; p++) fprintf(out, (*p == '"' || *p == '\\') ? "\\%c" : "%c", *p);
    fprintf(out, "\",\"ranks\":%d", ranks);
    for (int i = 0; i < SUM_COUNTERS; i++) fprintf(out, ",\"%s\":%lld", counter_table[i].key, c[i]);
    fprintf(out, ",\"fs_seconds\":%.6f,\"exchange_seconds\":%.6f,\"strategy\":\"%s\"}\n", t[0], t[1],
            strategy[0] ? strategy : "none");
}

void ferry__stats_summarize(const ferry__stats_t *stats, MPI_Comm comm, const char *filename)
{
    pthread_once(&configure_once, configure);
    if (!stats_setting) return;
    long long counters[SUM_COUNTERS], sums[SUM_COUNTERS];
    double times[SUM_TIMES] = {stats->fs_seconds, stats->exchange_seconds}, time_sums[SUM_TIMES];
    counters_of(stats, counters);
    MPI_Reduce(counters, sums, SUM_COUNTERS, MPI_LONG_LONG, MPI_SUM, 0, comm);
    MPI_Reduce(times, time_sums, SUM_TIMES, MPI_DOUBLE, MPI_SUM, 0, comm);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank != 0) return;
    if (strncmp(stats_setting, "json:", 5) == 0) {
        FILE *out = fopen(stats_setting + 5, "a");
        if (!out) {
            perror(stats_setting + 5);
            return;
        }
        print_json(out, filename, size, sums, time_sums, stats->strategy);
        fclose(out);
    } else {
        print_text(stderr, filename, size, sums, time_sums, stats->strategy);
    }
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "progress/progress.h"

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_barrier(void)
{
    ferry__progress_barrier(MPI_COMM_WORLD);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

long long bench_parse_size(const char *text)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || v < 0) return -1;
    switch (*end) {
    case 'k': case 'K': return v << 10;
    case 'm': case 'M': return v << 20;
    case 'g': case 'G': return v << 30;
    case '\0': return v;
    default: return -1;
    }
}

const char *bench_make_dir(const char *base, const char *tag)
{
    static char dir[512];
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        snprintf(dir, sizeof dir, "%s/ferry-bench-%s-XXXXXX", base, tag);
        if (!mkdtemp(dir)) {
            perror(dir);
            dir[0] = '\0';
        }
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    return dir[0] ? dir : NULL;
}

void bench_remove_dir(const char *dir)
{
    int rank;
    bench_barrier();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0 && dir) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "ferry-bench: could not remove %s\n", dir);
    }
}

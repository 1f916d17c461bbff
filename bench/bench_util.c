#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "progress/progress.h"

long long bench_info_number(MPI_Info info, const char *key, long long missing)
{
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_Info_get(info, (char *)key, MPI_MAX_INFO_VAL, value, &flag);
    return flag ? atoll(value) : missing;
}

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

unsigned long long bench_random(unsigned long long *state)
{
    unsigned long long x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 2685821657736338717ULL;
}

uint32_t bench_word_at(long long offset)
{
    return (uint32_t)((unsigned long long)(offset / 4) * 2654435761u + 1u);
}

void bench_shuffle(int *values, long long n, unsigned long long seed)
{
    unsigned long long state = seed ? seed : 1;
    for (long long i = n - 1; i > 0; i--) {
        long long j = (long long)(bench_random(&state) % (unsigned long long)(i + 1));
        int t = values[i];
        values[i] = values[j];
        values[j] = t;
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

int bench_host_wrong_ok(void)
{
    const char *v = getenv("FERRY_BENCH_HOST_WRONG_OK");
    return v && strcmp(v, "1") == 0;
}

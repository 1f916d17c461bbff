/*
 * ferry-bench: each workload runs ferry side by side with the host MPI's own
 * MPI-IO (and plain POSIX where that makes sense) in one run and prints the
 * ratios, so a noisy shared machine slows all contenders alike.
 */
#ifndef FERRY_BENCH_H
#define FERRY_BENCH_H

#include <stddef.h>

#include "ferry.h"

/* A workload: main() has initialized MPI; argv[0] is the workload name. */
typedef int (*bench_workload_fn)(int argc, char **argv);

int ferry_bench_contig(int argc, char **argv);
int ferry_bench_hints(int argc, char **argv);
int ferry_bench_types(int argc, char **argv);

/* Helpers (bench_util.c). */
double bench_now(void);
/* Median of n values (sorts them). */
double bench_median(double *values, int n);
/* Parses "256m", "1g", "4096" into bytes; -1 on error. */
long long bench_parse_size(const char *text);
/* A fresh directory under base (collective; rank 0 creates). Static storage. */
const char *bench_make_dir(const char *base, const char *tag);
void bench_remove_dir(const char *dir);

#endif

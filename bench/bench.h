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

int ferry_bench_btio(int argc, char **argv);
int ferry_bench_contig(int argc, char **argv);
int ferry_bench_container(int argc, char **argv); /* bench_container.c, issue 16 */
int ferry_bench_hints(int argc, char **argv);
int ferry_bench_noncontig(int argc, char **argv);
int ferry_bench_overlap(int argc, char **argv);
int ferry_bench_discontig(int argc, char **argv);
int ferry_bench_types(int argc, char **argv);

/* Helpers (bench_util.c). */
double bench_now(void);
/* MPI_Barrier on MPI_COMM_WORLD, polling and yielding when the node is
 * oversubscribed (src/progress): every contender's timed region starts and
 * ends with it, and a busy-polling barrier would steal the CPU from the
 * ranks still working and quantize times to scheduler slices. */
void bench_barrier(void);
/* Median of n values (sorts them). */
double bench_median(double *values, int n);
/* Parses "256m", "1g", "4096" into bytes; -1 on error. */
long long bench_parse_size(const char *text);
/* A fresh directory under base (collective; rank 0 creates). Static storage. */
const char *bench_make_dir(const char *base, const char *tag);
void bench_remove_dir(const char *dir);

/* One timed access through ferry or the host MPI-IO (bench_noncontig.c). */
typedef struct bench_access {
    const char *path;
    MPI_Info info; /* hints at open (borrowed), or MPI_INFO_NULL */
    MPI_Offset disp;
    MPI_Datatype etype, filetype;
    void *buf;
    int count;
    MPI_Datatype memtype;
    int collective;
    int wronly; /* writes open MPI_MODE_WRONLY instead of MPI_MODE_RDWR */
} bench_access_t;

typedef struct bench_outcome {
    double seconds;          /* open to close, the slowest rank (from a barrier) */
    double call_seconds;     /* the write or read call alone, the slowest rank */
    long long fs_calls;      /* ferry only: file-system reads + writes, summed over ranks */
    long long sieve_extra;   /* ferry only: bytes sieving moved beyond the data, summed over ranks */
    long long meta_bytes;    /* ferry only: collective metadata besides data (coll_meta_bytes), summed over ranks */
    int failed;              /* on any rank (errors were printed) */
} bench_outcome_t;

/* Collective: opens a->path (write: create, read-write or write-only), sets the view,
 * writes (then syncs) or reads with the individual file pointer, reads
 * ferry's statistics and closes. Times the whole (from a barrier) and the
 * write or read call alone: on a loaded machine MPICH's busy-polling
 * collectives can cost tens of milliseconds each, which would swamp the
 * data path in open, set_view, sync and close. */
void bench_access_run(const bench_access_t *a, int ferry, int write, bench_outcome_t *out);
/* A new info object (free with MPI_Info_free) from "key=value key=value". */
MPI_Info bench_info_from(const char *hints);
/* Collective: drops path's cached pages (posix_fadvise DONTNEED on rank 0). */
void bench_drop_pages(const char *path);

#endif

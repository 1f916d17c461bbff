/*
 * ferry-bench: each workload runs ferry side by side with the host MPI's own
 * MPI-IO (and plain POSIX where that makes sense) in one run and prints the
 * ratios, so a noisy shared machine slows all contenders alike.
 */
#ifndef FERRY_BENCH_H
#define FERRY_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "cli/cli.h"
#include "ferry.h"

/* A workload: main() has initialized MPI; argv[0] is the workload name.
 * Returns the exit status (0 ok, 1 failed, 2 bad usage). */
typedef int (*bench_workload_fn)(int argc, char **argv);

/* ---- command line, progress and results shared by every workload (bench_cli.c, bench_report.c) ----
 *
 * A workload's configuration struct starts with a bench_common_t; its
 * options are one cli_option_t table (tools/cli/cli.h) naming fields of that
 * struct, and bench_shared_options (--reps, --json) are added to it. Its
 * function begins with
 *     my_config_t cfg;
 *     int rc = bench_parse(&my_spec, argc, argv, &cfg);
 *     if (rc != CLI_RUN) return rc;
 * and ends with `return bench_finish(&cfg.common, failed);`. In between it
 * calls bench_progress once per repetition and records each table line it
 * prints as a bench_row (the JSON results). A workload still parsing argv
 * by hand keeps working (its line in ferry_bench.c simply has no spec);
 * adopting the table takes the three steps above plus `&my_spec` as the
 * fourth field of that line (docs/report.md). */

enum { BENCH_MAX_REPS = 32, BENCH_MAX_CONTENDERS = 32 };

typedef struct bench_report bench_report_t;

typedef struct bench_host {
    char name[32];      /* "Open MPI", "MPICH" */
    char version[32];   /* "4.1.4" */
    char io[16];        /* the MPI-IO component serving MPI_File_*: "ompio" or "romio" */
    char library[256];  /* MPI_Get_library_version, first line */
} bench_host_t;

typedef struct bench_common {
    const char *dir;  /* --dir, in workloads that write files (BENCH_OPTION_DIR) */
    int reps;         /* --reps: repetitions, medians reported */
    const char *json; /* --json FILE: also write the results there (docs/report.md) */
    /* Set by bench_parse: */
    const cli_spec_t *spec;
    const void *config; /* the whole configuration: its options become the JSON parameters */
    int argc;
    char **argv;
    int rank, nprocs;
    double started;
    bench_host_t host;
    bench_report_t *report; /* rows recorded for --json (rank 0), else NULL */
} bench_common_t;

extern const cli_option_t bench_shared_options[];

/* --dir, pointing at the common part of config type T. */
#define BENCH_OPTION_DIR(T)                                                                                    \
    {"dir", 0, CLI_TEXT, offsetof(T, common.dir), 0, 0, NULL, "directory the benchmark's files are made in"}

/* Collective: parses argv into config (whose first member is a
 * bench_common_t) and, to run, announces on stderr what runs (rank 0).
 * Returns CLI_RUN or the exit status (help printed: 0; refused: 2). */
int bench_parse(const cli_spec_t *spec, int argc, char **argv, void *config);
/* bench_report.c, from bench_parse: rank 0 with --json starts recording rows. */
void bench_report_begin(bench_common_t *c);
/* Rank 0: a line on stderr that repetition rep (from 0) of `what` is done. */
void bench_progress(const bench_common_t *c, const char *what, int rep);
/* Collective: writes the JSON (--json), frees the rows; returns the exit status for `failed`. */
int bench_finish(bench_common_t *c, int failed);

/* One result line: per contender one figure in `unit` ("MiB/s", "GB/s",
 * "fraction": higher is better; "s", "ms", "ns": lower is better), from the
 * table `table` of the text output. NULL unless rank 0 records JSON; every
 * setter ignores a NULL row. Owned by the report. */
typedef struct bench_row bench_row_t;
bench_row_t *bench_row(bench_common_t *c, const char *table, const char *label, const char *op, const char *unit);
void bench_row_value(bench_row_t *row, const char *contender, double value);
/* A number that qualifies the row (counters, the block size of the case...). */
void bench_row_extra(bench_row_t *row, const char *key, double value);

/* The workloads and their option tables. */
int ferry_bench_btio(int argc, char **argv);
int ferry_bench_calls(int argc, char **argv);
int ferry_bench_ckpt(int argc, char **argv);
int ferry_bench_contig(int argc, char **argv);
int ferry_bench_container(int argc, char **argv);
int ferry_bench_discontig(int argc, char **argv);
int ferry_bench_hints(int argc, char **argv);
int ferry_bench_mar(int argc, char **argv);
int ferry_bench_noncontig(int argc, char **argv);
int ferry_bench_open(int argc, char **argv);
int ferry_bench_overlap(int argc, char **argv);
int ferry_bench_partition(int argc, char **argv);
int ferry_bench_scale(int argc, char **argv);
int ferry_bench_tune(int argc, char **argv);
int ferry_bench_types(int argc, char **argv);
int ferry_bench_views(int argc, char **argv);
int ferry_bench_ylib(int argc, char **argv);
extern const cli_spec_t bench_btio_spec, bench_ckpt_spec, bench_container_spec, bench_contig_spec, bench_discontig_spec,
    bench_hints_spec, bench_calls_spec, bench_mar_spec, bench_noncontig_spec, bench_open_spec, bench_overlap_spec, bench_partition_spec,
    bench_scale_spec, bench_tune_spec, bench_types_spec, bench_views_spec, bench_ylib_spec;

/* Helpers (bench_util.c). */
double bench_now(void);

/* A number an info holds under key (ferry's statistics: ferry_stats_*), or `missing`. */
long long bench_info_number(MPI_Info info, const char *key, long long missing);
/* MPI_Barrier on MPI_COMM_WORLD, polling and yielding when the node is
 * oversubscribed (src/progress): every contender's timed region starts and
 * ends with it, and a busy-polling barrier would steal the CPU from the
 * ranks still working and quantize times to scheduler slices. */
void bench_barrier(void);
/* Median of n values (sorts them). */
double bench_median(double *values, int n);
/* xorshift64*: the next pseudo-random number of *state (nonzero). */
unsigned long long bench_random(unsigned long long *state);
/* Shuffles values[0..n) (Fisher-Yates, seeded). */
void bench_shuffle(int *values, long long n, unsigned long long seed);
/* The 32-bit word a benchmark file holds at `offset` (a multiple of 4): files
 * whose content depends on the offset alone are checked without knowing who wrote what. */
uint32_t bench_word_at(long long offset);
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
    long long agg_calls;     /* ferry only: two-phase calls times their aggregators (coll_aggregator_calls), summed */
    long long agg_targets;   /* ferry only: storage targets the aggregators touched (coll_targets), summed */
    double targets_max;      /* ferry only: the most targets per call any one aggregator touched */
    double
        exchange_seconds; /* ferry only: time moving data between ranks (ferry_stats_exchange_seconds), slowest rank */
    long long shm_bytes;  /* ferry only: bytes shipped through node-shared memory (coll_shm_bytes), summed */
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
/* FERRY_BENCH_HOST_WRONG_OK=1 (tools/ferry-report on the cluster, whose caching clients make the host
 * MPI-IOs' read-modify-writes lose bytes): a host that leaves wrong bytes is marked, not a failed run. */
int bench_host_wrong_ok(void);

#endif

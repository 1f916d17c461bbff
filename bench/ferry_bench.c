/*
 * ferry-bench <workload> [options]: the benchmark driver.
 *
 * Help and unknown workloads are answered before MPI starts, so
 * `ferry-bench --help` works without mpiexec; under mpiexec only the
 * launcher's rank 0 prints them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* A workload's line: name, function, summary; then its option table, if it
 * has one (a workload parsing argv by hand leaves it out, see bench.h). */
static const struct {
    const char *name;
    bench_workload_fn run;
    const char *summary; /* NULL: the spec's */
    const cli_spec_t *spec;
} workloads[] = {
    {"btio", ferry_bench_btio, NULL, &bench_btio_spec},
    {"calls", ferry_bench_calls, NULL, &bench_calls_spec},
    {"ckpt", ferry_bench_ckpt, NULL, &bench_ckpt_spec},
    {"container", ferry_bench_container, NULL, &bench_container_spec},
    {"contig", ferry_bench_contig, NULL, &bench_contig_spec},
    {"discontig", ferry_bench_discontig, NULL, &bench_discontig_spec},
    {"hints", ferry_bench_hints, NULL, &bench_hints_spec},
    {"mar", ferry_bench_mar, NULL, &bench_mar_spec},
    {"noncontig", ferry_bench_noncontig, NULL, &bench_noncontig_spec},
    {"open", ferry_bench_open, NULL, &bench_open_spec},
    {"overlap", ferry_bench_overlap, NULL, &bench_overlap_spec},
    {"partition", ferry_bench_partition, NULL, &bench_partition_spec},
    {"scale", ferry_bench_scale, NULL, &bench_scale_spec},
    {"tune", ferry_bench_tune, NULL, &bench_tune_spec},
    {"types", ferry_bench_types, NULL, &bench_types_spec},
    {"views", ferry_bench_views, NULL, &bench_views_spec},
    {"ylib", ferry_bench_ylib, NULL, &bench_ylib_spec},
};
enum { WORKLOADS = sizeof workloads / sizeof workloads[0] };

static const char *summary_of(int i)
{
    return workloads[i].summary ? workloads[i].summary : workloads[i].spec->summary;
}

static void usage(FILE *out, int with_options)
{
    fprintf(out, "usage: mpiexec -n <ranks> ferry-bench <workload> [options]\n"
                 "       ferry-bench --help | ferry-bench <workload> --help\n"
                 "Runs ferry side by side with the host MPI's own MPI-IO in one run and prints the ratios.\n"
                 "workloads:\n");
    for (int i = 0; i < WORKLOADS; i++) fprintf(out, "  %-10s %s\n", workloads[i].name, summary_of(i));
    for (int i = 0; with_options && i < WORKLOADS; i++) {
        fprintf(out, "\n");
        if (workloads[i].spec) cli_print_help(workloads[i].spec, out);
        else fprintf(out, "%s: see ferry-bench %s --help\n", workloads[i].name, workloads[i].name);
    }
}

static int find_workload(const char *name)
{
    for (int i = 0; i < WORKLOADS; i++)
        if (strcmp(workloads[i].name, name) == 0) return i;
    return -1;
}

static int asks_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

/* What can be answered without MPI: an exit status, or -1 to run workload *w. */
static int answer_early(int argc, char **argv, int *w)
{
    FILE *out = cli_launcher_rank() == 0 ? stdout : NULL, *err = cli_launcher_rank() == 0 ? stderr : NULL;
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        if (out) usage(out, 1);
        return 0;
    }
    if (argc < 2 || (*w = find_workload(argv[1])) < 0) {
        if (err && argc >= 2) fprintf(err, "ferry-bench: unknown workload '%s'\n", argv[1]);
        if (err) usage(err, 0);
        return 2;
    }
    if (workloads[*w].spec && asks_help(argc - 1, argv + 1)) {
        if (out) cli_print_help(workloads[*w].spec, out);
        return 0;
    }
    return -1;
}

int main(int argc, char **argv)
{
    int w = -1, rc = answer_early(argc, argv, &w);
    if (rc >= 0) return rc;
    /* Background I/O needs MPI_THREAD_MULTIPLE; the other workloads run
     * without it, as most applications do. */
    int provided;
    if (strcmp(argv[1], "overlap") == 0) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else MPI_Init(&argc, &argv);
    rc = workloads[w].run(argc - 1, argv + 1);
    MPI_Finalize();
    return rc;
}

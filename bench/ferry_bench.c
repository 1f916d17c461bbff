/*
 * ferry-bench <workload> [options]: the benchmark driver.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static const struct {
    const char *name;
    bench_workload_fn run;
    const char *summary;
} workloads[] = {
    {"btio", ferry_bench_btio, "BTIO-like 3-D array of 5 doubles per point, subarray views, write_all then read_all (host MPI-IO, ferry)"},
    {"container", ferry_bench_container, "N task-local files vs one ferry container (vs SIONlib when built with it): create, write, read"},
    {"contig", ferry_bench_contig, "each rank writes then reads its own contiguous block (POSIX, host MPI-IO, ferry)"},
    {"discontig", ferry_bench_discontig, "1 KiB blocks at random places through an indexed view, prefetching (host MPI-IO, ferry)"},
    {"hints", ferry_bench_hints, "print ferry's hint table (Markdown)"},
    {"overlap", ferry_bench_overlap, "iwrite + compute + wait against write then compute (host MPI-IO, ferry; MPI_THREAD_MULTIPLE)"},
    {"noncontig", ferry_bench_noncontig, "seed 001's vector views, c-c/nc-c/c-nc/nc-nc, write then read (host MPI-IO, ferry)"},
    {"types", ferry_bench_types, "datatype engine vs host MPI_Pack/MPI_Unpack and memcpy"},
};

static void usage(void)
{
    fprintf(stderr, "usage: mpiexec -n <ranks> ferry-bench <workload> [options]\nworkloads:\n");
    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++)
        fprintf(stderr, "  %-8s %s\n", workloads[i].name, workloads[i].summary);
}

int main(int argc, char **argv)
{
    /* Background I/O needs MPI_THREAD_MULTIPLE; the other workloads run
     * without it, as most applications do. */
    int provided;
    if (argc >= 2 && strcmp(argv[1], "overlap") == 0) MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else MPI_Init(&argc, &argv);
    int rc = 2;
    if (argc < 2) {
        usage();
    } else {
        size_t i = 0;
        while (i < sizeof workloads / sizeof workloads[0] && strcmp(workloads[i].name, argv[1]) != 0) i++;
        if (i < sizeof workloads / sizeof workloads[0])
            rc = workloads[i].run(argc - 1, argv + 1);
        else
            usage();
    }
    MPI_Finalize();
    return rc;
}

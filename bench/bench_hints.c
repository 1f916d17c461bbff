/* ferry-bench hints: prints the hint table that docs/hints.md is made from. */
#include <stdio.h>

#include "bench.h"
#include "hints/hints.h"

int ferry_bench_hints(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) ferry__hints_print_table(stdout);
    return 0;
}

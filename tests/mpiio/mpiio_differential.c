/*
 * The differential test (issue 2, item 5): seeded random sequences of
 * MPI-IO operations run through ferry and through the host's MPI-IO, each
 * compared with the other and with the byte model of tests/oracle.
 *
 * Environment:
 *   FERRY_DIFF_SEED=<n>    run this one seed (replay a failure)
 *   FERRY_DIFF_SEEDS=<n>   run n seeds derived from FERRY_TEST_SEED (default:
 *                          the fixed seeds 1..4, so CI is reproducible)
 *   FERRY_DIFF_STEPS=<n>   operations per sequence (default 120)
 *   FERRY_DIFF_HOST=0      ferry against the model only
 *   FERRY_DIFF_VERBOSE=1   print each sequence as it runs
 *   FERRY_DIFF_CHECK_FILES=1  compare the files after every step (finds the step that broke one)
 */
#include <stdlib.h>

#include "ferry_test.h"
#include "oracle_diff.h"

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 0) : fallback;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    od_options_t opt = {
        .steps = (int)env_long("FERRY_DIFF_STEPS", 120),
        .host = (int)env_long("FERRY_DIFF_HOST", 1),
        .dir = ft_scratch_dir(),
        .verbose = (int)env_long("FERRY_DIFF_VERBOSE", 0),
        .check_files = (int)env_long("FERRY_DIFF_CHECK_FILES", 0),
        .sync_writes = (int)env_long("FERRY_DIFF_SYNC", 0),
    };
    const char *one = getenv("FERRY_DIFF_SEED");
    long n = env_long("FERRY_DIFF_SEEDS", 0);
    int seeds = one ? 1 : n > 0 ? (int)n : 4;
    for (int i = 0; i < seeds; i++) {
        opt.seed = one ? strtoull(one, NULL, 0) : n > 0 ? ft_seed * 7919u + (uint64_t)i : (uint64_t)i + 1;
        if (ft_rank == 0) printf("mpiio_differential: seed %llu, %d steps, %s\n", (unsigned long long)opt.seed,
                                 opt.steps, opt.host ? "ferry vs host vs model" : "ferry vs model");
        od_run(&opt);
    }
    return ft_finish();
}

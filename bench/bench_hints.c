/* ferry-bench hints: prints the hint table that docs/hints.md is made from. */
#include <stdio.h>

#include "bench.h"
#include "hints/hints.h"

typedef struct hints_config {
    bench_common_t common;
} hints_config_t;

static const hints_config_t hints_defaults = {.common = {.reps = 1}};

static const cli_option_t no_options[] = {{NULL, 0, 0, 0, 0, 0, NULL, NULL}};

const cli_spec_t bench_hints_spec = {
    "ferry-bench hints", "ferry-bench hints", "print ferry's hint table (Markdown, the table of docs/hints.md)",
    no_options, NULL, sizeof(hints_config_t), &hints_defaults, NULL, 0};

int ferry_bench_hints(int argc, char **argv)
{
    hints_config_t cfg;
    int rc = bench_parse(&bench_hints_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    if (cfg.common.rank == 0) ferry__hints_print_table(stdout);
    return bench_finish(&cfg.common, 0);
}

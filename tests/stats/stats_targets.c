/*
 * The storage targets each aggregator touches per two-phase call
 * (ferry_stats_coll_targets over ferry_stats_coll_aggregator_calls), on a
 * layout the striping hints pretend: 64 KiB stripes over 4 targets, each
 * rank writing 16 KiB blocks interleaved with the other ranks' (Y-Lib's
 * strided pattern, seed 002). Summed over ranks: stripe_group with k = 1
 * has 4 aggregators of 1 target each, k = 2 has 2 of 2; even with 2
 * aggregators gives each half the file, all 4 targets; block_cyclic with 2
 * aggregators and stripe-sized blocks deals each the stripes of 2 targets.
 * The data must read back whatever the strategy.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

enum { BLOCK = 16 << 10, BLOCKS = 16, STRIPE = 64 << 10, TARGETS = 4 };

typedef struct expectation {
    const char *hints; /* key=value pairs, ';'-separated */
    long long aggregator_calls, targets; /* summed over ranks */
} expectation_t;

static MPI_Info info_of(const char *hints)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "65536");
    MPI_Info_set(info, "striping_factor", "4");
    char copy[256];
    snprintf(copy, sizeof copy, "%s", hints);
    for (char *save = NULL, *kv = strtok_r(copy, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        *eq = '\0';
        MPI_Info_set(info, kv, eq + 1);
    }
    return info;
}

static long long summed(ferry_File fh, const char *key)
{
    long long mine = ft_info_number(fh, key), sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

static void check(const expectation_t *e, MPI_Datatype filetype, char *data, char *back)
{
    MPI_Info info = info_of(e->hints);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("striped"), MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    FT_OK(ferry_File_set_view(fh, (MPI_Offset)ft_rank * BLOCK, MPI_BYTE, filetype, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_write_all(fh, data, BLOCK * BLOCKS, MPI_BYTE, MPI_STATUS_IGNORE));
    long long calls = summed(fh, "ferry_stats_coll_aggregator_calls"), targets = summed(fh, "ferry_stats_coll_targets");
    if (calls != e->aggregator_calls || targets != e->targets)
        ft_fail(__FILE__, __LINE__, "%s: %lld aggregator calls touching %lld targets, expected %lld and %lld",
                e->hints, calls, targets, e->aggregator_calls, e->targets);
    memset(back, 0, BLOCK * BLOCKS);
    FT_OK(ferry_File_read_at_all(fh, 0, back, BLOCK * BLOCKS, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(back, data, BLOCK * BLOCKS);
    FT_OK(ferry_File_close(&fh));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    FT_EQ(ft_size, TARGETS);
    static const expectation_t cases[] = {
        {"ferry_cb_strategy=stripe_group;ferry_cb_group_size=1", 4, 4},
        {"ferry_cb_strategy=stripe_group;ferry_cb_group_size=2", 2, 4},
        {"ferry_cb_strategy=even;cb_nodes=2", 2, 8},
        {"ferry_cb_strategy=block_cyclic;cb_nodes=2;IBM_io_buffer_size=65536", 2, 4},
        {"ferry_cb_strategy=independent", 0, 0},
    };
    MPI_Datatype filetype;
    MPI_Type_vector(BLOCKS, BLOCK, BLOCK * ft_size, MPI_BYTE, &filetype);
    MPI_Type_commit(&filetype);
    char *data = malloc(BLOCK * BLOCKS), *back = malloc(BLOCK * BLOCKS);
    FT_CHECK(data && back);
    ft_fill(data, BLOCK * BLOCKS, ft_seed + (uint64_t)ft_rank);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check(&cases[i], filetype, data, back);
    MPI_Type_free(&filetype);
    free(data);
    free(back);
    return ft_finish();
}

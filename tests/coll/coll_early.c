/*
 * Early ranks (src/coll/coll.c): a rank whose collective access is one
 * contiguous file range of at least cb_buffer_size bytes transfers before
 * the call's inputs are gathered. Checked: the bytes (file against a model,
 * reads against the data, status counts), that a call where every rank went
 * early costs one allgather and no agreement (ferry_stats_coll_meta_bytes),
 * that ranks going early mix with ranks that ship through two-phase in one
 * call, that hints asking for two-phase turn it off, and short reads at the
 * end of file. The error paths are in coll_fault.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

enum { BUFFER = 64 << 10, BIG = 2 * BUFFER + 40, RANK_WORDS_BYTES = 48 };
/* The mixed case runs with the default cb_buffer_size (1 MiB), where the
 * small blocks' volume makes two-phase the cheaper path for them. */
enum { BIG_DEFAULT = (1 << 20) + 40, SMALL = 8, ROUNDS = 1 << 16 };

static ferry_File open_with(const char *path, const char *strategy)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (strcmp(strategy ? strategy : "", "default") == 0) strategy = NULL;
    else MPI_Info_set(info, "cb_buffer_size", "65536");
    if (strategy) MPI_Info_set(info, "ferry_cb_strategy", (char *)strategy);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    return fh;
}

static void expect_strategy(ferry_File fh, const char *prefix)
{
    const char *got = ft_info_string(fh, "ferry_stats_strategy");
    if (strncmp(got, prefix, strlen(prefix)) != 0)
        ft_fail(__FILE__, __LINE__, "strategy '%s', expected '%s...'", got, prefix);
}

static void expect_count(const MPI_Status *status, MPI_Count want)
{
    MPI_Count got = -1;
    MPI_Get_elements_x(status, MPI_BYTE, &got);
    FT_EQ(got, want);
}

/* Every rank a contiguous BIG range: one allgather per call, bytes exact. */
static void test_all_early(void)
{
    const char *path = ft_path("all_early");
    char *out = malloc(BIG), *in = malloc(BIG);
    ft_fill(out, BIG, ft_seed + (uint64_t)ft_rank);
    ferry_File fh = open_with(path, NULL);
    long long meta = ft_info_number(fh, "ferry_stats_coll_meta_bytes");
    MPI_Status status;
    FT_OK(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * BIG, out, BIG, MPI_BYTE, &status));
    expect_count(&status, BIG);
    expect_strategy(fh, "independent (nothing to ship");
    FT_EQ(ft_info_number(fh, "ferry_stats_coll_early_bytes"), BIG);
    FT_EQ(ft_info_number(fh, "ferry_stats_coll_meta_bytes") - meta, RANK_WORDS_BYTES);
    FT_OK(ferry_File_read_at_all(fh, (MPI_Offset)ft_rank * BIG, in, BIG, MPI_BYTE, &status));
    expect_count(&status, BIG);
    FT_EQ_MEM(in, out, BIG);
    /* Another rank's range, read through the file: the write was complete on every rank when the call returned. */
    int next = (ft_rank + 1) % ft_size;
    FT_OK(ferry_File_read_at_all(fh, (MPI_Offset)next * BIG, in, BIG, MPI_BYTE, &status));
    ft_fill(out, BIG, ft_seed + (uint64_t)next);
    FT_EQ_MEM(in, out, BIG);
    FT_OK(ferry_File_close(&fh));
    free(out);
    free(in);
}

/* Rank 0 writes a contiguous BIG_DEFAULT range and goes early; the others write
 * interleaved SMALL blocks after it through a vector view (two-phase), over
 * old bytes whose holes must survive. */
static void test_early_beside_two_phase(void)
{
    const char *path = ft_path("mixed");
    MPI_Offset region = (MPI_Offset)ROUNDS * ft_size * SMALL, size = BIG_DEFAULT + region;
    unsigned char *model = malloc((size_t)size), *file = malloc((size_t)size), *mine = malloc(BIG_DEFAULT);
    ft_fill(model, (size_t)size, ft_seed ^ 0xa5);
    ferry_File fh = open_with(path, "default");
    if (ft_rank == 0) FT_OK(ferry_File_write_at(fh, 0, model, (int)size, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_sync(fh));
    /* Ranks 1..P-1 own block r-1 of every round of ft_size blocks; the last block of a round stays a hole. */
    MPI_Datatype vec, tile;
    MPI_Type_vector(ROUNDS, SMALL, ft_size * SMALL, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)ROUNDS * ft_size * SMALL, &tile);
    MPI_Type_commit(&tile);
    if (ft_rank > 0) FT_OK(ferry_File_set_view(fh, BIG_DEFAULT + (MPI_Offset)(ft_rank - 1) * SMALL, MPI_BYTE, tile, "native",
                                               MPI_INFO_NULL));
    else FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    int count = ft_rank == 0 ? BIG_DEFAULT : ROUNDS * SMALL;
    ft_fill(mine, (size_t)count, ft_seed + 77 + (uint64_t)ft_rank);
    MPI_Status status;
    FT_OK(ferry_File_write_all(fh, mine, count, MPI_BYTE, &status));
    expect_count(&status, count);
    expect_strategy(fh, "two-phase"); /* for the small blocks; rank 0's went before */
    FT_EQ(ft_info_number(fh, "ferry_stats_coll_early_bytes"), ft_rank == 0 ? BIG_DEFAULT : 0);
    for (int r = 0; r < ft_size; r++) {
        unsigned char *data = malloc(BIG_DEFAULT);
        ft_fill(data, r == 0 ? BIG_DEFAULT : ROUNDS * SMALL, ft_seed + 77 + (uint64_t)r);
        if (r == 0) memcpy(model, data, BIG_DEFAULT);
        for (int k = 0; r > 0 && k < ROUNDS; k++)
            memcpy(model + BIG_DEFAULT + ((MPI_Offset)k * ft_size + r - 1) * SMALL, data + k * SMALL, SMALL);
        free(data);
    }
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_read_at(fh, 0, file, (int)size, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(file, model, size);
    MPI_Type_free(&vec);
    MPI_Type_free(&tile);
    FT_OK(ferry_File_close(&fh));
    free(model);
    free(file);
    free(mine);
}

/* Hints that ask for two-phase: nobody goes early, the bytes are the same. */
static void test_hint_keeps_two_phase(void)
{
    const char *path = ft_path("hinted");
    char *out = malloc(BIG), *in = malloc(BIG);
    ft_fill(out, BIG, ft_seed * 3 + (uint64_t)ft_rank);
    ferry_File fh = open_with(path, "even");
    FT_OK(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * BIG, out, BIG, MPI_BYTE, MPI_STATUS_IGNORE));
    expect_strategy(fh, "two-phase even");
    FT_EQ(ft_info_number(fh, "ferry_stats_coll_early_bytes"), 0);
    FT_OK(ferry_File_read_at_all(fh, (MPI_Offset)ft_rank * BIG, in, BIG, MPI_BYTE, MPI_STATUS_IGNORE));
    expect_strategy(fh, "two-phase even");
    FT_EQ_MEM(in, out, BIG);
    FT_OK(ferry_File_close(&fh));
    free(out);
    free(in);
}

/* Early reads that reach past the end of file return what is there; a
 * call without data on any rank needs no agreement either. */
static void test_short_reads_and_no_data(void)
{
    const char *path = ft_path("short");
    MPI_Offset size = (MPI_Offset)ft_size * BIG - BIG / 2; /* the last rank's range is half there */
    char *out = malloc((size_t)size), *in = malloc(BIG);
    ft_fill(out, (size_t)size, ft_seed ^ 0x77);
    ferry_File fh = open_with(path, NULL);
    if (ft_rank == 0) FT_OK(ferry_File_write_at(fh, 0, out, (int)size, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_sync(fh));
    MPI_Status status;
    FT_OK(ferry_File_read_at_all(fh, (MPI_Offset)ft_rank * BIG, in, BIG, MPI_BYTE, &status));
    MPI_Count want = ft_rank == ft_size - 1 ? BIG / 2 : BIG;
    expect_count(&status, want);
    FT_EQ_MEM(in, out + (size_t)ft_rank * BIG, want);
    long long meta = ft_info_number(fh, "ferry_stats_coll_meta_bytes");
    FT_OK(ferry_File_write_at_all(fh, 0, out, 0, MPI_BYTE, &status));
    expect_count(&status, 0);
    expect_strategy(fh, "independent (nothing to ship");
    FT_EQ(ft_info_number(fh, "ferry_stats_coll_meta_bytes") - meta, RANK_WORDS_BYTES);
    FT_OK(ferry_File_close(&fh));
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    test_all_early();
    test_early_beside_two_phase();
    test_hint_keeps_two_phase();
    test_short_reads_and_no_data();
    return ft_finish();
}

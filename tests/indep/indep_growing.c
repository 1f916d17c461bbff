/*
 * Read-modify-writes at a file's growing end (issue 27): every round the
 * file is cut to nothing and all ranks write their interleaved 8-byte
 * blocks through small sieving windows at once, so each window's read may
 * end where the file did a moment ago. On a network client that may be
 * where the client last heard the file ended, not where the server's file
 * ends: on tools/cluster's GlusterFS clients a window read short there
 * wrote zeros over a megabyte of another node's blocks (one run in three
 * of `ferry-bench noncontig --mode independent --blocklen 2`). Each rank
 * then reads its blocks back through the view after sync-barrier-sync:
 * every byte, and the full count.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

enum { BLOCK = 8, BLOCKS = 8192, ROUNDS = 12 };

static void check_round(ferry_File fh, const char *mine, int round)
{
    char *back = malloc(BLOCK * BLOCKS);
    MPI_Status status;
    int count = -1;
    FT_OK(ferry_File_read_at(fh, 0, back, BLOCK * BLOCKS, MPI_BYTE, &status));
    MPI_Get_count(&status, MPI_BYTE, &count);
    if (count != BLOCK * BLOCKS)
        ft_fail(__FILE__, __LINE__, "round %d: rank %d read %d of its %d bytes", round, ft_rank, count, BLOCK * BLOCKS);
    for (int k = 0; k < BLOCKS; k++)
        if (memcmp(back + BLOCK * k, mine + BLOCK * k, BLOCK) != 0)
            ft_fail(__FILE__, __LINE__, "round %d: rank %d's block %d (file offset %lld) lost its update", round,
                    ft_rank, k, (long long)BLOCK * (ft_rank + (long long)k * ft_size));
    free(back);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    MPI_Datatype view = ft_interleaved_view(BLOCK);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "enable");
    MPI_Info_set(info, "ind_wr_buffer_size", "4096");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("growing"), MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    FT_OK(ferry_File_set_view(fh, (MPI_Offset)BLOCK * ft_rank, MPI_BYTE, view, "native", info));
    char *mine = malloc(BLOCK * BLOCKS);
    for (int round = 0; round < ROUNDS; round++) {
        FT_OK(ferry_File_set_size(fh, 0));
        ft_fill(mine, BLOCK * BLOCKS, ft_seed + (uint64_t)(round * 1000 + ft_rank));
        FT_OK(ferry_File_write_at(fh, 0, mine, BLOCK * BLOCKS, MPI_BYTE, MPI_STATUS_IGNORE));
        FT_OK(ferry_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        FT_OK(ferry_File_sync(fh));
        check_round(fh, mine, round);
    }
    if (ft_size > 1) FT_CHECK(ft_info_number(fh, "ferry_stats_sieve_extra_bytes") > 0); /* it really sieved */
    FT_OK(ferry_File_close(&fh));
    free(mine);
    MPI_Info_free(&info);
    MPI_Type_free(&view);
    return ft_finish();
}

/*
 * Issue 14: a background request counts into a context of its own, which
 * async/ folds into the file on the application thread; nothing counts into
 * the file object from a worker. While many independent and collective
 * requests run in the background, the application thread does blocking
 * writes and reads on the same file; afterwards every counter is exact
 * (calls, bytes asked for, bytes that reached the file system, collective
 * calls), and the bytes are right. Before, the file-system layer counted
 * into the file's own counters from the workers, racing with the
 * application thread's counts. Run with argv[1] = "multiple" (background)
 * and "single" (requests complete at initiation).
 */
#include <stdlib.h>

#include "async_common.h"

enum { ROUNDS = 20, NREQ = 8, BLOCK = 512, SLOTS = 2 * NREQ + 1 };

/* This rank's block i of round t: disjoint everywhere. The collective
 * blocks (i = 2 * NREQ) of one round lie side by side after all the
 * others, so an aggregator's window has no holes to read. */
static MPI_Offset block_at(int t, int i)
{
    if (i == 2 * NREQ) return ((MPI_Offset)ROUNDS * ft_size * SLOTS + (MPI_Offset)t * ft_size + ft_rank) * BLOCK;
    return (((MPI_Offset)t * ft_size + ft_rank) * SLOTS + i) * BLOCK;
}

/* One round: NREQ background writes, one background collective write, and
 * meanwhile NREQ blocking writes and one blocking read. */
static void round_of(ferry_File fh, int t, unsigned char *data, unsigned char *back)
{
    MPI_Request req[NREQ + 1];
    for (int i = 0; i < NREQ; i++)
        FT_OK(ferry_File_iwrite_at(fh, block_at(t, i), data + (size_t)i * BLOCK, BLOCK, MPI_BYTE, &req[i]));
    FT_OK(ferry_File_iwrite_at_all(fh, block_at(t, 2 * NREQ), data + (size_t)(2 * NREQ) * BLOCK, BLOCK, MPI_BYTE,
                                   &req[NREQ]));
    for (int i = NREQ; i < 2 * NREQ; i++)
        FT_OK(ferry_File_write_at(fh, block_at(t, i), data + (size_t)i * BLOCK, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_read_at(fh, block_at(t, NREQ), back, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(back, data + (size_t)NREQ * BLOCK, BLOCK);
    MPI_Status statuses[NREQ + 1]; /* not MPI_STATUSES_IGNORE: GCC 12 warns on MPICH's declaration */
    FT_OK(MPI_Waitall(NREQ + 1, req, statuses));
}

int main(int argc, char **argv)
{
    int background = 0;
    if (!at_start(&argc, &argv, &background)) return ft_finish();
    unsigned char *data = malloc((size_t)SLOTS * BLOCK), *back = malloc(BLOCK);
    FT_CHECK(data && back);
    ft_fill(data, (size_t)SLOTS * BLOCK, ft_seed + (uint64_t)ft_rank);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("stats"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    for (int t = 0; t < ROUNDS; t++) round_of(fh, t, data, back);
    const long long writes = ROUNDS * (2 * NREQ + 1), reads = ROUNDS;
    FT_EQ(ft_info_number(fh, "ferry_stats_write_calls"), writes);
    FT_EQ(ft_info_number(fh, "ferry_stats_write_bytes"), writes * BLOCK);
    FT_EQ(ft_info_number(fh, "ferry_stats_read_calls"), reads);
    FT_EQ(ft_info_number(fh, "ferry_stats_read_bytes"), reads * BLOCK);
    FT_EQ(ft_info_number(fh, "ferry_stats_coll_calls"), ROUNDS);
    /* Contiguous blocks: one file-system call each, exactly the bytes (the
     * collective ones go early or through an aggregator: bytes still equal). */
    FT_EQ(ft_info_number(fh, "ferry_stats_fs_write_bytes"), writes * BLOCK);
    FT_EQ(ft_info_number(fh, "ferry_stats_fs_read_bytes"), reads * BLOCK);
    FT_EQ(ft_info_number(fh, "ferry_stats_fs_read_calls"), reads);
    /* Every block of every round on this rank, as written. */
    for (int t = 0; t < ROUNDS; t++)
        for (int i = 0; i < SLOTS; i++) {
            FT_OK(ferry_File_read_at(fh, block_at(t, i), back, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
            FT_EQ_MEM(back, data + (size_t)i * BLOCK, BLOCK);
        }
    FT_OK(ferry_File_close(&fh));
    free(data);
    free(back);
    return ft_finish();
}

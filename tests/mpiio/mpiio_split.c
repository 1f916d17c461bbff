/*
 * Split collectives (MPI-3.1 13.4.5): begin/end pairs of every kind move
 * the right bytes and fill the status at end; independent I/O may run
 * between begin and end; a second begin while one is active fails at once
 * on the rank that called it, and the next collective fails on every rank
 * naming that rank (no hang when only one rank broke the rule); an end
 * without its begin, of another kind, or with another buffer fails.
 */
#include <string.h>

#include "ferry_test.h"

enum { N = 256 };

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    char out[N], in[N], other[N];
    ft_fill(out, N, ft_seed + (uint64_t)ft_rank);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("split"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Status status;
    int count = -1;

    FT_OK(ferry_File_write_at_all_begin(fh, (MPI_Offset)ft_rank * N, out, N, MPI_BYTE));
    FT_OK(ferry_File_write_at(fh, (MPI_Offset)(ft_size + ft_rank) * N, out, N, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_write_at_all_end(fh, out, &status));
    MPI_Get_count(&status, MPI_BYTE, &count);
    FT_EQ(count, N);

    FT_OK(ferry_File_read_at_all_begin(fh, (MPI_Offset)ft_rank * N, in, N / 4, MPI_INT));
    FT_OK(ferry_File_read_at_all_end(fh, in, &status));
    MPI_Get_count(&status, MPI_INT, &count);
    FT_EQ(count, N / 4);
    FT_EQ_MEM(in, out, N);

    FT_OK(ferry_File_seek(fh, (MPI_Offset)(ft_size + ft_rank) * N, MPI_SEEK_SET));
    FT_OK(ferry_File_read_all_begin(fh, in, N, MPI_BYTE));
    FT_OK(ferry_File_read_all_end(fh, in, &status));
    FT_EQ_MEM(in, out, N);
    MPI_Offset position = -1;
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, (MPI_Offset)(ft_size + ft_rank + 1) * N);

    FT_OK(ferry_File_seek(fh, (MPI_Offset)(2 * ft_size + ft_rank) * N, MPI_SEEK_SET));
    FT_OK(ferry_File_write_all_begin(fh, out, N, MPI_BYTE));
    /* A second split collective while one is active fails at once on the
     * rank that calls it (here every rank), without taking part in anything. */
    FT_FAILS(MPI_ERR_OTHER, ferry_File_read_all_begin(fh, in, N, MPI_BYTE));
    /* Ends that do not match. */
    FT_FAILS(MPI_ERR_OTHER, ferry_File_read_all_end(fh, in, &status));
    FT_FAILS(MPI_ERR_BUFFER, ferry_File_write_all_end(fh, other, &status));
    FT_OK(ferry_File_write_all_end(fh, out, &status));
    FT_FAILS(MPI_ERR_OTHER, ferry_File_write_all_end(fh, out, &status));
    /* The next collective reports the misuse on every rank, once. */
    FT_FAILS_NAMING(MPI_ERR_OTHER, "read_all_begin", ferry_File_read_at_all_begin(fh, 0, in, N, MPI_BYTE));
    FT_FAILS(MPI_ERR_OTHER, ferry_File_read_at_all_end(fh, in, &status));
    FT_OK(ferry_File_read_at_all_begin(fh, (MPI_Offset)ft_rank * N, in, N, MPI_BYTE));
    FT_OK(ferry_File_read_at_all_end(fh, in, &status));
    /* Only the last rank breaks the rule: it fails at once; the others never
     * hear of its second begin until their next collective, which fails on
     * every rank naming it; nobody hangs, and the collective after that works. */
    FT_OK(ferry_File_read_at_all_begin(fh, (MPI_Offset)ft_rank * N, in, N, MPI_BYTE));
    if (ft_rank == ft_size - 1) FT_FAILS(MPI_ERR_OTHER, ferry_File_write_at_all_begin(fh, 0, out, N, MPI_BYTE));
    FT_OK(ferry_File_read_at_all_end(fh, in, &status));
    FT_EQ_MEM(in, out, N);
    char rank_named[32];
    snprintf(rank_named, sizeof rank_named, "rank %d", ft_size - 1);
    FT_FAILS_NAMING(MPI_ERR_OTHER, ft_rank == ft_size - 1 ? "write_at_all_begin" : rank_named,
                    ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * N, out, N, MPI_BYTE, &status));
    FT_OK(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * N, out, N, MPI_BYTE, &status));
    FT_OK(ferry_File_close(&fh));
    return ft_finish();
}

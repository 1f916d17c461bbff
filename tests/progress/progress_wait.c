/*
 * progress_wait [yield|block|auto]: every wrapper of src/progress gives the
 * host call's result in the mode FERRY_WAIT selects, and `auto` yields on
 * every rank wherever the host is not Open MPI (which yields by itself,
 * when mpirun knows it oversubscribes). A whole file round trip runs in the
 * mode too.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"
#include "progress/progress.h"

static int expected_yields(const char *mode)
{
    if (strcmp(mode, "yield") == 0) return 1;
    if (strcmp(mode, "block") == 0) return 0;
#ifdef OMPI_MAJOR_VERSION
    return 0; /* Open MPI yields by itself when oversubscribed */
#else
    return 1;
#endif
}

static void check_collectives(MPI_Comm comm)
{
    int rank = ft_rank, size = ft_size;
    long long mine = rank + 1, sum = 0, prefix = 0;
    FT_EQ(ferry__progress_allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, comm), MPI_SUCCESS);
    FT_EQ(sum, (long long)size * (size + 1) / 2);
    FT_EQ(ferry__progress_scan(&mine, &prefix, 1, MPI_LONG_LONG, MPI_SUM, comm), MPI_SUCCESS);
    FT_EQ(prefix, (long long)(rank + 1) * (rank + 2) / 2);

    long long *all = calloc((size_t)size, sizeof *all);
    FT_EQ(ferry__progress_allgather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, comm), MPI_SUCCESS);
    for (int r = 0; r < size; r++) FT_EQ(all[r], r + 1);

    /* rank r contributes r + 1 bytes of value r */
    int *counts = calloc((size_t)size, sizeof *counts), *displs = calloc((size_t)size, sizeof *displs);
    int total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r + 1;
        displs[r] = total;
        total += r + 1;
    }
    char *gathered = calloc((size_t)total, 1), mine_bytes[64];
    memset(mine_bytes, rank, sizeof mine_bytes);
    FT_EQ(ferry__progress_allgatherv(mine_bytes, rank + 1, MPI_CHAR, gathered, counts, displs, MPI_CHAR, comm),
          MPI_SUCCESS);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++) FT_EQ(gathered[displs[r] + i], r);

    long long from_last = rank == size - 1 ? 4242 : -1;
    FT_EQ(ferry__progress_bcast(&from_last, 1, MPI_LONG_LONG, size - 1, comm), MPI_SUCCESS);
    FT_EQ(from_last, 4242);
    FT_EQ(ferry__progress_barrier(comm), MPI_SUCCESS);
    free(all);
    free(counts);
    free(displs);
    free(gathered);
}

/* A ring: every rank sends its rank to the next and receives the previous one's. */
static void check_waitall(MPI_Comm comm)
{
    int right = (ft_rank + 1) % ft_size, left = (ft_rank + ft_size - 1) % ft_size, got = -1;
    MPI_Request reqs[2];
    MPI_Status statuses[2];
    MPI_Irecv(&got, 1, MPI_INT, left, 7, comm, &reqs[0]);
    MPI_Isend(&ft_rank, 1, MPI_INT, right, 7, comm, &reqs[1]);
    FT_EQ(ferry__progress_waitall(2, reqs, statuses), MPI_SUCCESS);
    FT_EQ(got, left);
    FT_EQ(statuses[0].MPI_SOURCE, left);
}

static void check_file_round_trip(void)
{
    ferry_File fh;
    const char *path = ft_path("progress_wait.dat");
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int out[16], in[16];
    for (int i = 0; i < 16; i++) out[i] = ft_rank * 100 + i;
    FT_OK(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * sizeof out, out, 16, MPI_INT, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_sync(fh));
    int right = (ft_rank + 1) % ft_size;
    FT_OK(ferry_File_read_at_all(fh, (MPI_Offset)right * sizeof in, in, 16, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; i++) FT_EQ(in[i], right * 100 + i);
    FT_OK(ferry_File_close(&fh));
    if (ft_rank == 0) FT_OK(ferry_File_delete(path, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "auto";
    FT_EQ(ferry__progress_yields(), expected_yields(mode));
    /* The collective form is the job's, not the node's (blocking and nonblocking collectives do not match). */
#ifdef OMPI_MAJOR_VERSION
    FT_EQ(ferry__progress_nonblocking(), strcmp(mode, "yield") == 0);
#else
    FT_EQ(ferry__progress_nonblocking(), strcmp(mode, "block") != 0);
#endif
    MPI_Comm dup;
    FT_EQ(ferry__progress_comm_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
    check_collectives(dup);
    check_waitall(dup);
    MPI_Comm_free(&dup);
    check_file_round_trip();
    return ft_finish();
}

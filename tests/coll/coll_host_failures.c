/*
 * The host MPI's collectives failing inside ferry's collective path (the
 * view cache exchange, the hints broadcast, the call's inputs, the
 * two-phase set-up agreement): the test interposes MPI_Allgather,
 * MPI_Allgatherv, MPI_Allreduce and MPI_Bcast (and their nonblocking forms,
 * which ferry's polling waits use) and makes the k-th call of one of them
 * return MPI_ERR_OTHER on every rank. Each set_view + write_at_all must then
 * either succeed with every byte written, or fail on every rank with
 * MPI_ERR_INTERN and a message saying what failed; never return success
 * over bytes it did not write. The handle stays usable afterwards.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"
#include "host_failures.h"

enum { BLOCK = 8, BLOCKS = 512, MAX_K = 6 };

static unsigned char pattern(int trial, int rank, int i)
{
    return (unsigned char)(trial * 31 + rank * 7 + i + 1);
}

/* Blocks of BLOCK bytes dealt round-robin to the ranks: every window holds every rank's data. */
static MPI_Datatype interleaved(void)
{
    MPI_Datatype block, tile;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)BLOCK * ft_size, &tile);
    MPI_Type_commit(&tile);
    MPI_Type_free(&block);
    return tile;
}

/* Every rank's own blocks as the file holds them equal this trial's pattern. */
static int written(ferry_File fh, MPI_Datatype tile, int trial)
{
    unsigned char back[BLOCK * BLOCKS];
    FT_OK(ferry_File_set_view(fh, (MPI_Offset)ft_rank * BLOCK, MPI_BYTE, tile, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_read_at(fh, 0, back, sizeof back, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < (int)sizeof back; i++)
        if (back[i] != pattern(trial, ft_rank, i)) return 0;
    return 1;
}

/* One trial: the k-th call of op fails (on every rank) during set_view + write_at_all. */
static void trial(ferry_File fh, MPI_Datatype tile, MPI_Info hints, ft_host_op_t op, int k, int number)
{
    unsigned char data[BLOCK * BLOCKS];
    for (int i = 0; i < (int)sizeof data; i++) data[i] = pattern(number, ft_rank, i);
    ft_host_fail_arm(op, k);
    int rc = ft_capture(ferry_File_set_view(fh, (MPI_Offset)ft_rank * BLOCK, MPI_BYTE, tile, "native", hints));
    if (rc == MPI_SUCCESS) rc = ft_capture(ferry_File_write_at_all(fh, 0, data, sizeof data, MPI_BYTE, MPI_STATUS_IGNORE));
    ft_host_fail_disarm();
    int classes[2] = {rc == MPI_SUCCESS ? 0 : ft_class(rc), 0}, lowest[2];
    classes[1] = -classes[0];
    MPI_Allreduce(classes, lowest, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (lowest[0] != -lowest[1])
        ft_fail(__FILE__, __LINE__, "%s #%d: ranks disagree: classes %d..%d", ft_host_op_names[op], k, lowest[0], -lowest[1]);
    if (rc != MPI_SUCCESS) {
        FT_EQ(ft_class(rc), MPI_ERR_INTERN);
        if (!strstr(ft_message, " failed"))
            ft_fail(__FILE__, __LINE__, "%s #%d: message says nothing failed: %s", ft_host_op_names[op], k, ft_message);
    } else if (!written(fh, tile, number)) {
        ft_fail(__FILE__, __LINE__, "%s #%d: write_at_all returned success but the file lacks the data", ft_host_op_names[op],
                k);
    }
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    ferry_File fh;
    MPI_Info hints;
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "romio_cb_write", "enable"); /* two-phase aggregation, one aggregator */
    MPI_Info_set(hints, "cb_nodes", "1");
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("data"), MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &fh));
    MPI_Datatype tile = interleaved();
    int number = 0, failed = 0;
    for (ft_host_op_t op = FT_HOST_ALLGATHER; op < FT_HOST_OPS; op++)
        for (int k = 1; k <= MAX_K; k++) {
            trial(fh, tile, hints, op, k, ++number);
            failed += ft_message[0] != '\0';
        }
    trial(fh, tile, hints, FT_HOST_NONE, 0, ++number); /* the handle still works */
    FT_CHECK(failed > 0);                       /* the injection reached ferry */
    MPI_Type_free(&tile);
    MPI_Info_free(&hints);
    FT_OK(ferry_File_close(&fh));
    return ft_finish();
}

/*
 * The bad arguments that crashed, hung or were accepted before issue 13,
 * one scenario each (tests/mpiio/mpiio_matrix.c feeds every class of bad
 * argument to every function):
 *   - a copy of a handle used after close, also once a new file may have
 *     taken its memory, and garbage handles: MPI_ERR_FILE, nothing read
 *     through them;
 *   - a NULL buffer with count > 0: MPI_ERR_BUFFER, agreed in collectives
 *     when only one rank passes it (the others name that rank); MPI_BOTTOM
 *     with absolute addresses still works;
 *   - uncommitted datatypes in data access and set_view: MPI_ERR_TYPE;
 *   - seek_shared with a bad whence on one non-zero rank: MPI_ERR_ARG on
 *     every rank, the pointer unmoved.
 */
#include <stdint.h>
#include <string.h>

#include "ferry_test.h"

enum { N = 64 };

static void expect_on_every_rank(int rc, int cls, int culprit)
{
    FT_CHECK(rc != MPI_SUCCESS);
    FT_EQ(ft_class(rc), cls);
    char named[32];
    snprintf(named, sizeof named, "rank %d", culprit);
    if (ft_rank != culprit && !strstr(ft_message, named))
        ft_fail(__FILE__, __LINE__, "message does not name %s: %s", named, ft_message);
}

static void stale_and_garbage_handles(void)
{
    ferry_File fh, copy, next;
    char buf[N] = {0};
    MPI_Offset size;
    MPI_Errhandler eh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("stale"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    copy = fh;
    FT_OK(ferry_File_close(&fh));
    /* Files opened and closed meanwhile do not take the closed one's memory (core/live.c reuses a slot
     * only after more than 32 others are free). */
    char churn_name[32];
    snprintf(churn_name, sizeof churn_name, "churn%d", ft_rank);
    const char *churn_path = ft_path(churn_name);
    for (int i = 0; i < 20; i++) { /* on MPI_COMM_SELF: MPICH's window for a shared communicator costs ~0.1 s */
        ferry_File churn;
        FT_OK(ferry_File_open(MPI_COMM_SELF, churn_path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &churn));
        FT_CHECK(churn != copy);
        FT_OK(ferry_File_close(&churn));
    }
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("next"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &next));
    FT_CHECK(next != copy);
    int local = 0;
    ferry_File bad[] = {copy, (ferry_File)&local, (ferry_File)(uintptr_t)0x1000, (ferry_File)(uintptr_t)-64};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FT_FAILS(MPI_ERR_FILE, ferry_File_get_size(bad[i], &size));
        FT_FAILS(MPI_ERR_FILE, ferry_File_write_at(bad[i], 0, buf, N, MPI_BYTE, MPI_STATUS_IGNORE));
        FT_FAILS(MPI_ERR_FILE, ferry_File_write_at_all(bad[i], 0, buf, N, MPI_BYTE, MPI_STATUS_IGNORE));
        FT_FAILS(MPI_ERR_FILE, ferry_File_set_view(bad[i], 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        FT_FAILS(MPI_ERR_FILE, ferry_File_get_errhandler(bad[i], &eh));
        FT_FAILS(MPI_ERR_FILE, ferry_File_set_errhandler(bad[i], MPI_ERRORS_RETURN));
        FT_FAILS(MPI_ERR_FILE, ferry_File_call_errhandler(bad[i], MPI_ERR_OTHER));
        FT_EQ(ferry_File_c2f(bad[i]), 0);
        ferry_File again = bad[i];
        FT_FAILS(MPI_ERR_FILE, ferry_File_close(&again));
    }
    /* The new file is untouched by all that. */
    FT_OK(ferry_File_write_at_all(next, (MPI_Offset)ft_rank * N, buf, N, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_get_size(next, &size));
    FT_EQ(size, (MPI_Offset)ft_size * N);
    FT_OK(ferry_File_close(&next));
}

static void null_buffers(ferry_File fh)
{
    int last = ft_size - 1;
    char buf[N];
    ft_fill(buf, N, ft_seed);
    FT_FAILS(MPI_ERR_BUFFER, ferry_File_write_at(fh, 0, NULL, N, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS(MPI_ERR_BUFFER, ferry_File_read_at(fh, 0, NULL, 1, MPI_INT, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_write_at(fh, 0, NULL, 0, MPI_BYTE, MPI_STATUS_IGNORE)); /* nothing to touch */
    expect_on_every_rank(ft_capture(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * N, ft_rank == last ? NULL : buf,
                                                            N, MPI_BYTE, MPI_STATUS_IGNORE)),
                         MPI_ERR_BUFFER, last);
    expect_on_every_rank(ft_capture(ferry_File_read_all(fh, ft_rank == last ? NULL : buf, N, MPI_BYTE,
                                                        MPI_STATUS_IGNORE)),
                         MPI_ERR_BUFFER, last);
    expect_on_every_rank(ft_capture(ferry_File_write_ordered(fh, ft_rank == last ? NULL : buf, N, MPI_BYTE,
                                                             MPI_STATUS_IGNORE)),
                         MPI_ERR_BUFFER, last);
    /* MPI_BOTTOM (NULL in both hosts) with a datatype of absolute addresses is legal. */
    MPI_Aint address;
    MPI_Get_address(buf, &address);
    int length = N;
    MPI_Datatype absolute;
    MPI_Type_create_hindexed(1, &length, &address, MPI_BYTE, &absolute);
    MPI_Type_commit(&absolute);
    MPI_Offset at = (MPI_Offset)(ft_size + ft_rank) * N;
    FT_OK(ferry_File_write_at_all(fh, at, MPI_BOTTOM, 1, absolute, MPI_STATUS_IGNORE));
    char back[N];
    FT_OK(ferry_File_read_at(fh, at, back, N, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(back, buf, N);
    MPI_Type_free(&absolute);
}

static void uncommitted_types(ferry_File fh)
{
    MPI_Datatype loose, committed;
    MPI_Type_contiguous(4, MPI_INT, &loose);
    MPI_Type_contiguous(4, MPI_INT, &committed);
    MPI_Type_commit(&committed);
    int buf[16] = {0};
    MPI_Request request;
    FT_FAILS(MPI_ERR_TYPE, ferry_File_write_at(fh, 0, buf, 1, loose, MPI_STATUS_IGNORE));
    FT_FAILS(MPI_ERR_TYPE, ferry_File_iread_at(fh, 0, buf, 1, loose, &request));
    FT_FAILS(MPI_ERR_TYPE, ferry_File_read_all(fh, buf, 1, loose, MPI_STATUS_IGNORE));
    FT_FAILS(MPI_ERR_TYPE, ferry_File_set_view(fh, 0, MPI_INT, loose, "native", MPI_INFO_NULL));
    FT_FAILS(MPI_ERR_TYPE, ferry_File_set_view(fh, 0, loose, loose, "native", MPI_INFO_NULL));
    /* Only the last rank's is uncommitted: every rank fails. */
    expect_on_every_rank(ft_capture(ferry_File_write_at_all(fh, 0, buf, 1, ft_rank == ft_size - 1 ? loose : committed,
                                                            MPI_STATUS_IGNORE)),
                         MPI_ERR_TYPE, ft_size - 1);
    MPI_Type_commit(&loose); /* committed now: accepted */
    FT_OK(ferry_File_write_at(fh, 0, buf, 1, loose, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_set_view(fh, 0, MPI_INT, loose, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&loose);
    MPI_Type_free(&committed);
}

static void seek_shared_whence(ferry_File fh)
{
    FT_OK(ferry_File_seek_shared(fh, 5, MPI_SEEK_SET));
    int last = ft_size - 1;
    expect_on_every_rank(ft_capture(ferry_File_seek_shared(fh, 0, ft_rank == last && last > 0 ? 12345 : MPI_SEEK_CUR)),
                         MPI_ERR_ARG, last);
    MPI_Offset position = -1;
    FT_OK(ferry_File_get_position_shared(fh, &position));
    FT_EQ(position, 5);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    stale_and_garbage_handles();
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("data"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    null_buffers(fh);
    uncommitted_types(fh);
    if (ft_size > 1) seek_shared_whence(fh);
    FT_OK(ferry_File_close(&fh));
    return ft_finish();
}

/*
 * File error handlers (MPI-3.1 8.3.4, 13.7): the default is
 * MPI_ERRORS_RETURN; a handler set on FERRY_FILE_NULL catches open failures
 * and is inherited by files opened afterwards (not by files already open);
 * a user handler is called once per error with the file and the code the
 * call returns, on every rank of a failing collective; call_errhandler
 * invokes it; a freed handler keeps working on the files that hold it; a
 * communicator handler is refused.
 */
#include <string.h>

#include "ferry_test.h"

static struct {
    int calls;
    ferry_File file;
    int code;
} seen;

static void record(ferry_File *file, int *code, ...)
{
    seen.calls++;
    seen.file = *file;
    seen.code = *code;
}

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}

static void expect_call(int rc, ferry_File file, int cls)
{
    FT_EQ(seen.calls, 1);
    FT_CHECK(seen.file == file);
    FT_EQ(seen.code, rc);
    FT_EQ(ft_class(rc), cls);
    memset(&seen, 0, sizeof seen);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *path = ft_path("eh"), *missing = ft_path("missing");
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    char buf[16] = {0};

    /* Default: MPI_ERRORS_RETURN, on FERRY_FILE_NULL and on new files. */
    FT_OK(ferry_File_get_errhandler(FERRY_FILE_NULL, &got));
    FT_CHECK(got == MPI_ERRORS_RETURN);
    ferry_File before;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &before));
    FT_OK(ferry_File_get_errhandler(before, &got));
    FT_CHECK(got == MPI_ERRORS_RETURN);
    FT_FAILS(MPI_ERR_ARG, ferry_File_read_at(before, -1, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE));

    /* A user handler on one file. */
    FT_OK(ferry_File_create_errhandler(record, &eh));
    FT_OK(ferry_File_set_errhandler(before, eh));
    FT_OK(ferry_File_get_errhandler(before, &got));
    FT_CHECK(got == eh);
    int rc = ferry_File_read_at(before, -1, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_call(rc, before, MPI_ERR_ARG);
    FT_OK(ferry_File_read_at(before, 0, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE)); /* success: no call */
    FT_EQ(seen.calls, 0);
    /* A collective that fails on rank 0 only calls the handler on every rank. */
    rc = ferry_File_write_at_all(before, ft_rank == 0 ? -8 : 8, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_call(rc, before, MPI_ERR_ARG);
    /* call_errhandler passes the code through. */
    FT_OK(ferry_File_call_errhandler(before, MPI_ERR_IO));
    expect_call(MPI_ERR_IO, before, MPI_ERR_IO);
    /* The default is still MPI_ERRORS_RETURN: open failures return silently. */
    ferry_File fh;
    FT_FAILS(MPI_ERR_NO_SUCH_FILE, ferry_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_EQ(seen.calls, 0);

    /* On FERRY_FILE_NULL: open failures, and files opened afterwards. */
    FT_OK(ferry_File_set_errhandler(FERRY_FILE_NULL, eh));
    FT_OK(ferry_File_get_errhandler(FERRY_FILE_NULL, &got));
    FT_CHECK(got == eh);
    rc = ferry_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    expect_call(rc, FERRY_FILE_NULL, MPI_ERR_NO_SUCH_FILE);
    rc = ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    expect_call(rc, FERRY_FILE_NULL, MPI_ERR_AMODE);
    rc = ferry_File_close(&(ferry_File){FERRY_FILE_NULL});
    expect_call(rc, FERRY_FILE_NULL, MPI_ERR_FILE);
    FT_OK(ferry_File_call_errhandler(FERRY_FILE_NULL, MPI_ERR_OTHER));
    expect_call(MPI_ERR_OTHER, FERRY_FILE_NULL, MPI_ERR_OTHER);
    ferry_File after;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &after));
    FT_OK(ferry_File_get_errhandler(after, &got));
    FT_CHECK(got == eh);
    rc = ferry_File_write(after, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_call(rc, after, MPI_ERR_READ_ONLY);

    /* A communicator error handler is not a file error handler. (Created
     * while eh is alive: ferry cannot see MPI_Errhandler_free, so a handle
     * value the host reuses after a free still looks like eh to ferry.) */
    MPI_Errhandler comm_eh;
    MPI_Comm_create_errhandler(comm_handler, &comm_eh);
    rc = ferry_File_set_errhandler(after, comm_eh); /* the error goes to after's handler */
    expect_call(rc, after, MPI_ERR_ARG);
    MPI_Errhandler_free(&comm_eh);
    FT_OK(ferry_File_get_errhandler(after, &got));
    FT_CHECK(got == eh);

    /* Freeing the handle does not take the handler from the files holding it. */
    MPI_Errhandler_free(&eh);
    rc = ferry_File_seek(after, -1, MPI_SEEK_SET);
    expect_call(rc, after, MPI_ERR_ARG);

    /* Back to MPI_ERRORS_RETURN on FERRY_FILE_NULL: the open file keeps its handler. */
    FT_OK(ferry_File_set_errhandler(FERRY_FILE_NULL, MPI_ERRORS_RETURN));
    FT_FAILS(MPI_ERR_NO_SUCH_FILE, ferry_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_EQ(seen.calls, 0);
    rc = ferry_File_read_at(after, -1, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_call(rc, after, MPI_ERR_ARG);
    FT_OK(ferry_File_set_errhandler(after, MPI_ERRORS_RETURN));
    FT_FAILS(MPI_ERR_ARG, ferry_File_read_at(after, -1, buf, 1, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ(seen.calls, 0);

    FT_OK(ferry_File_get_errhandler(after, &got));
    FT_CHECK(got == MPI_ERRORS_RETURN);

    FT_OK(ferry_File_close(&after));
    FT_OK(ferry_File_close(&before));
    return ft_finish();
}

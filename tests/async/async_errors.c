/*
 * Which error handler sees a nonblocking request that fails in the
 * background (MPI_THREAD_MULTIPLE), as async.h documents:
 *   - the file's own handler, at completion (MPI_Wait, MPI_Test), as for a
 *     blocking call: a user function is called once with the file and the
 *     code, also when query_fn runs twice (MPI_Request_get_status first);
 *   - then MPI_COMM_WORLD's, which the host applies to the code a
 *     generalized request returns: MPI_ERRORS_RETURN there makes MPI_Wait
 *     return it; a user function there is called with it;
 *   - argv[1] = "fatal": MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL and the
 *     file MPI_ERRORS_RETURN: the job aborts, after ferry says why
 *     (tests/async/CMakeLists.txt expects the abort and the explanation).
 * The failures are injected write errors (EIO).
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"
#include "fs/fs.h"

enum { N = 512 };

static struct {
    int calls;
    ferry_File file;
    int code;
} file_seen, world_seen;

static void on_file(ferry_File *file, int *code, ...)
{
    file_seen.calls++;
    file_seen.file = *file;
    file_seen.code = *code;
}

static void on_world(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    world_seen.calls++;
    world_seen.code = *code;
}

/* Starts a write that fails in the background. */
static MPI_Request failing_write(ferry_File fh, const char *data, int collective)
{
    MPI_Request request;
    FT_OK(ferry__fs_fault_arm("write:1+:EIO"));
    MPI_Offset at = (MPI_Offset)ft_rank * N;
    if (collective) FT_OK(ferry_File_iwrite_at_all(fh, at, data, N, MPI_BYTE, &request));
    else FT_OK(ferry_File_iwrite_at(fh, at, data, N, MPI_BYTE, &request));
    return request;
}

static void handlers(ferry_File fh, const char *data)
{
    MPI_Errhandler file_eh, world_eh;
    FT_OK(ferry_File_create_errhandler(on_file, &file_eh));
    FT_OK(ferry_File_set_errhandler(fh, file_eh));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int collective = 0; collective <= 1; collective++) {
        MPI_Request request = failing_write(fh, data, collective);
        int done = 0, rc;
        MPI_Status status;
        do rc = MPI_Request_get_status(request, &done, &status); while (!done); /* query_fn runs here too */
        rc = ft_capture(MPI_Wait(&request, MPI_STATUS_IGNORE));
        ferry__fs_fault_disarm();
        FT_EQ(ft_class(rc), MPI_ERR_IO);
        if (!strstr(ft_message, "errors")) ft_fail(__FILE__, __LINE__, "message lacks the file: %s", ft_message);
        FT_EQ(file_seen.calls, 1);
        FT_CHECK(file_seen.file == fh);
        FT_EQ(ft_class(file_seen.code), MPI_ERR_IO);
        memset(&file_seen, 0, sizeof file_seen);
    }
    /* The file's handler back to MPI_ERRORS_RETURN, a user function on MPI_COMM_WORLD: the host calls it. */
    FT_OK(ferry_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    MPI_Comm_create_errhandler(on_world, &world_eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh);
    MPI_Request request = failing_write(fh, data, 0);
    int flag = 0, rc = MPI_SUCCESS;
    while (!flag && rc == MPI_SUCCESS) rc = MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    ferry__fs_fault_disarm();
    FT_EQ(ft_class(rc), MPI_ERR_IO);
    FT_EQ(world_seen.calls, 1);
    FT_EQ(world_seen.code, rc);
    FT_EQ(file_seen.calls, 0);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&world_eh);
    MPI_Errhandler_free(&file_eh);
}

int main(int argc, char **argv)
{
    int provided = ft_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    if (provided != MPI_THREAD_MULTIPLE) {
        ft_skip("MPI_THREAD_MULTIPLE not provided (got level %d)", provided);
        return ft_finish();
    }
    int fatal = argc > 1 && strcmp(argv[1], "fatal") == 0;
    char data[N];
    ft_fill(data, N, ft_seed);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("errors"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    if (fatal) {
        MPI_Request request = failing_write(fh, data, 0);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        printf("NOT ABORTED: rank %d returned from MPI_Wait\n", ft_rank);
    } else {
        handlers(fh, data);
    }
    FT_OK(ferry_File_close(&fh));
    return ft_finish();
}

/*
 * Error handler references (MPI-3.1 8.3.4, 13.7): get_errhandler returns a
 * new reference the caller frees (mpi4py's file tests get then free), and a
 * file keeps its handler alive after the creator freed its handle. So many
 * get+free rounds on a file, on FERRY_FILE_NULL and on a file whose handler's
 * creator let go, must leave every handle valid: the host aborts on a
 * reference count below zero (Open MPI's predefined handlers) or on a freed
 * handle (MPICH), and a handle got after the creator's free must still set
 * the handler on another file.
 */
#include "ferry_test.h"

enum { ROUNDS = 200 };

static int calls;

static void count(ferry_File *file, int *code, ...)
{
    (void)file;
    (void)code;
    calls++;
}

static void get_and_free_rounds(ferry_File fh, MPI_Errhandler expected)
{
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Errhandler got = MPI_ERRHANDLER_NULL;
        FT_OK(ferry_File_get_errhandler(fh, &got));
        FT_CHECK(got == expected);
        FT_OK(MPI_Errhandler_free(&got));
        FT_CHECK(got == MPI_ERRHANDLER_NULL);
    }
}

/* A failing call on fh reaches the counting handler exactly once. */
static void expect_counted(ferry_File fh)
{
    char byte = 0;
    calls = 0;
    int rc = ferry_File_read_at(fh, -1, &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    FT_EQ(ft_class(rc), MPI_ERR_ARG);
    FT_EQ(calls, 1);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *path = ft_path("refs");
    ferry_File fh, other;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    get_and_free_rounds(fh, MPI_ERRORS_RETURN);
    get_and_free_rounds(FERRY_FILE_NULL, MPI_ERRORS_RETURN);

    /* The creator frees its handle: the file's reference keeps it valid. */
    MPI_Errhandler eh, got;
    FT_OK(ferry_File_create_errhandler(count, &eh));
    FT_OK(ferry_File_set_errhandler(fh, eh));
    MPI_Errhandler kept = eh;
    FT_OK(MPI_Errhandler_free(&eh));
    get_and_free_rounds(fh, kept);
    expect_counted(fh);

    /* A handle got from the file moves the handler to FERRY_FILE_NULL and, by
     * inheritance, to a file opened next; the file above then lets it go. */
    FT_OK(ferry_File_get_errhandler(fh, &got));
    FT_OK(ferry_File_set_errhandler(FERRY_FILE_NULL, got));
    FT_OK(MPI_Errhandler_free(&got));
    FT_OK(ferry_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    get_and_free_rounds(FERRY_FILE_NULL, kept);
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &other));
    get_and_free_rounds(other, kept);
    expect_counted(other);
    FT_OK(ferry_File_close(&other));

    /* Setting a handler again and again holds one reference, not one per set. */
    for (int i = 0; i < ROUNDS; i++) FT_OK(ferry_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL));
    get_and_free_rounds(fh, MPI_ERRORS_ARE_FATAL);
    FT_OK(ferry_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    FT_OK(ferry_File_set_errhandler(FERRY_FILE_NULL, MPI_ERRORS_RETURN));
    get_and_free_rounds(FERRY_FILE_NULL, MPI_ERRORS_RETURN);
    FT_OK(ferry_File_close(&fh));
    return ft_finish();
}

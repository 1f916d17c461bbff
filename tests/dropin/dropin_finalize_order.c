/*
 * A library's own finalize hook still finds the drop-in working (issue 19:
 * HDF5's t_pshutdown). Like HDF5, the program sets an attribute on
 * MPI_COMM_SELF before it opens any file, leaves a file open, and the
 * attribute's delete callback (run by MPI_Finalize) writes to the file and
 * closes it. MPI deletes MPI_COMM_SELF's attributes in the reverse order of
 * their setting, so ferry's own hook must have been set before: the
 * drop-in sets it in MPI_Init. Set at the first open, it ran first, closed
 * and freed the file, and the callback's write went through a dead handle.
 * The callback also checks the file's bytes with POSIX calls once closed.
 * usage: dropin_finalize_order (under LD_PRELOAD=libferry-mpiio.so)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dropin_check.h"

enum { BLOCK = 64 };

static MPI_File left_open = MPI_FILE_NULL;
static char name[4096];
static int rank, size, callback_result = -1, file_ok;

/* The block of rank r in write w (0 before finalize, 1 in the callback). */
static char expected_byte(int r, int w, int i)
{
    return (char)(r * 31 + w * 7 + i);
}

static int write_block(int w)
{
    char block[BLOCK];
    for (int i = 0; i < BLOCK; i++) block[i] = expected_byte(rank, w, i);
    MPI_Offset offset = ((MPI_Offset)w * size + rank) * BLOCK;
    return MPI_File_write_at_all(left_open, offset, block, BLOCK, MPI_CHAR, MPI_STATUS_IGNORE);
}

/* Rank r's blocks of both writes, read back with POSIX calls. */
static int file_holds_both_writes(void)
{
    char got[BLOCK];
    int fd = open(name, O_RDONLY), ok = fd >= 0;
    for (int w = 0; ok && w < 2; w++) {
        ok = pread(fd, got, BLOCK, ((off_t)w * size + rank) * BLOCK) == BLOCK;
        for (int i = 0; ok && i < BLOCK; i++) ok = got[i] == expected_byte(rank, w, i);
    }
    if (fd >= 0) close(fd);
    return ok;
}

/* What HDF5's H5_mpi_delete_cb does: finish and close the files left open. */
static int close_at_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)attr, (void)extra;
    int rc = write_block(1);
    if (rc == MPI_SUCCESS) rc = MPI_File_close(&left_open);
    callback_result = rc;
    file_ok = rc == MPI_SUCCESS && file_holds_both_writes();
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has read the file */
    if (rank == 0) remove(name);
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int keyval;
    dropin_must(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, close_at_finalize, &keyval, NULL), "create_keyval");
    dropin_must(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, NULL), "set_attr");
    dropin_shared_name(name, sizeof name);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    dropin_must(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &left_open), "open");
    dropin_check(dropin_served_by_ferry(left_open), "file not served by ferry");
    dropin_must(write_block(0), "write_at_all");
    MPI_Finalize();
    if (!file_ok) fprintf(stderr, "dropin_finalize_order: rank %d: the finalize callback's write/close returned %d, "
                          "or the file lacks its blocks\n", rank, callback_result);
    return file_ok ? 0 : 1;
}

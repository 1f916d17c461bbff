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
 * At MPI_THREAD_MULTIPLE each rank also leaves a freed MPI_File_iwrite_at
 * pending on a file of its own: the drop-in's MPI_Finalize lets ferry's
 * threads finish before the host's begins (MPI forbids other threads' MPI
 * calls during it; MPICH aborted now and then), so the callback, run inside
 * the host's, finds those bytes in the file too.
 * usage: dropin_finalize_order (under LD_PRELOAD=libferry-mpiio.so)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dropin_check.h"

enum { BLOCK = 64, PENDING = 4 << 20 };

static MPI_File left_open = MPI_FILE_NULL, left_pending = MPI_FILE_NULL;
static char name[4096], pending_name[4200];
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

static char pending_byte(size_t i)
{
    return (char)(i * 13 + (size_t)rank);
}

/* The freed request's bytes, read back with POSIX calls. */
static int file_holds_pending_write(void)
{
    char *got = malloc(PENDING);
    int fd = open(pending_name, O_RDONLY), ok = fd >= 0 && got && pread(fd, got, PENDING, 0) == PENDING;
    for (size_t i = 0; ok && i < PENDING; i++) ok = got[i] == pending_byte(i);
    if (fd >= 0) close(fd);
    free(got);
    return ok;
}

/* A request freed at once: it completes on its own, before MPI_Finalize. */
static void leave_write_pending(void)
{
    static char data[PENDING];
    for (size_t i = 0; i < PENDING; i++) data[i] = pending_byte(i);
    snprintf(pending_name, sizeof pending_name, "%s.pending%d", name, rank);
    dropin_must(
        MPI_File_open(MPI_COMM_SELF, pending_name, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &left_pending),
        "open pending");
    MPI_Request request;
    dropin_must(MPI_File_iwrite_at(left_pending, 0, data, PENDING, MPI_CHAR, &request), "iwrite_at");
    MPI_Request_free(&request);
}

/* What HDF5's H5_mpi_delete_cb does: finish and close the files left open. */
static int close_at_finalize(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm, (void)keyval, (void)attr, (void)extra;
    int rc = write_block(1);
    if (rc == MPI_SUCCESS) rc = MPI_File_close(&left_open);
    callback_result = rc;
    file_ok = rc == MPI_SUCCESS && file_holds_both_writes() && file_holds_pending_write();
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has read the file */
    if (rank == 0) remove(name);
    remove(pending_name); /* still open: ferry's hook closes it */
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    dropin_check(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided");
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
    leave_write_pending();
    MPI_Finalize();
    if (!file_ok)
        fprintf(stderr,
                "dropin_finalize_order: rank %d: the finalize callback's write/close returned %d, "
                "or the files lack their blocks\n",
                rank, callback_result);
    return file_ok ? 0 : 1;
}

/*
 * Checks shared by the drop-in test programs, which link the host MPI only
 * (as unmodified applications do) and so cannot use tests/common.
 */
#ifndef DROPIN_CHECK_H
#define DROPIN_CHECK_H

#include <mpi.h>

/* Aborts the job naming `what` unless ok. */
void dropin_check(int ok, const char *what);

/* Aborts the job with the error string of rc unless rc is MPI_SUCCESS. */
void dropin_must(int rc, const char *what);

/* The value of key in fh's get_info as a number, -1 when absent. */
long long dropin_info_number(MPI_File fh, const char *key);

/* The same, asking get_info (MPI_File_get_info or PMPI_File_get_info). */
long long dropin_info_number_via(int (*get_info)(MPI_File, MPI_Info *), MPI_File fh, const char *key);

/* Whether ferry serves fh (get_info holds "ferry_version"). */
int dropin_served_by_ferry(MPI_File fh);

/* A fresh file name in $FERRY_TEST_DIR (default /tmp), the same on every
 * rank of MPI_COMM_WORLD (collective; rank 0 creates the file empty). */
void dropin_shared_name(char *name, int size);

#endif

/*
 * coll: collective data transfers (the *_all family).
 *
 * Every rank of the file's communicator must call these together. The
 * For now each rank transfers its own share independently (through
 * indep/, with sieving and locks where its view is noncontiguous) and the
 * call ends in one agreement, so either every rank succeeds or every rank
 * returns an error. Two-phase aggregation is the collective-I/O issue.
 */
#ifndef FERRY_COLL_H
#define FERRY_COLL_H

#include "core/core.h"

/* Collective. local_cls carries this rank's argument-check result: a rank
 * whose arguments failed transfers nothing but still joins the agreement.
 * skip is the view stream byte where this rank's data starts. Returns the
 * agreed class; *done is this rank's file-stream byte count. */
int ferry__coll_write(ferry_File fh, int local_cls, MPI_Offset skip, const void *buf, MPI_Count count,
                      MPI_Datatype type, MPI_Count *done, const char *what);
int ferry__coll_read(ferry_File fh, int local_cls, MPI_Offset skip, void *buf, MPI_Count count,
                     MPI_Datatype type, MPI_Count *done, const char *what);

#endif

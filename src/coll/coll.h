/*
 * coll: collective data transfers (the *_all family).
 *
 * Every rank of the file's communicator must call these together. The
 * foundation's views are contiguous, so each rank's share of a collective
 * call is one byte range: each rank transfers its own range and the call
 * ends in one agreement, so either every rank succeeds or every rank
 * returns an error. Two-phase aggregation arrives with noncontiguous views.
 */
#ifndef FERRY_COLL_H
#define FERRY_COLL_H

#include "core/core.h"

/* Collective. local_cls carries this rank's argument-check result: a rank
 * whose arguments failed transfers nothing but still joins the agreement.
 * Returns the agreed class; *done is this rank's byte count. */
int ferry__coll_write(ferry_File fh, int local_cls, MPI_Offset offset, const void *buf, MPI_Count count,
                      MPI_Datatype type, MPI_Count *done, const char *what);
int ferry__coll_read(ferry_File fh, int local_cls, MPI_Offset offset, void *buf, MPI_Count count,
                     MPI_Datatype type, MPI_Count *done, const char *what);

#endif

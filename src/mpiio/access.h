/*
 * The description of one data-access call, shared by the blocking and
 * nonblocking entry points of mpiio/.
 */
#ifndef FERRY_MPIIO_ACCESS_H
#define FERRY_MPIIO_ACCESS_H

#include "core/core.h"

typedef struct ferry__access {
    const char *name; /* for messages: "write_at_all" */
    int write;        /* 1: memory -> file */
    int individual;   /* 1: at the individual file pointer, which advances */
    int collective;   /* 1: every rank calls; ends in an agreement */
    int shared;       /* 1: at the shared file pointer (in rank order when collective) */
} ferry__access_t;

/* shared.c: for call->shared, checks the buffer and claims its place at the
 * shared file pointer, which advances: *offset (etypes) receives it. Not
 * collective for independent calls; collective (one prefix sum, agreed)
 * when call->collective, where ranks come in rank order. Returns local_cls
 * when nonzero (the pointer untouched) or the outcome. */
int ferry__access_shared_offset(const ferry__access_t *call, ferry_File fh, int local_cls, MPI_Count count,
                                MPI_Datatype type, MPI_Offset *offset);

/* The argument checks of a transfer (not collective): 0 or an error class;
 * *skip is the view stream byte where the data starts (at offset, or at the
 * individual file pointer for call->individual). */
int ferry__access_check(const ferry__access_t *call, ferry_File fh, MPI_Offset offset, MPI_Count count,
                        MPI_Datatype type, MPI_Offset *skip);

/* Checks and performs the transfer; returns an error class. Collective when
 * call->collective: a rank with local_cls != 0 (an error its caller found)
 * moves nothing but still takes part. *done: bytes moved on this rank. */
int ferry__access_transfer(const ferry__access_t *call, ferry_File fh, int local_cls, MPI_Offset offset, void *buf,
                           MPI_Count count, MPI_Datatype type, MPI_Count *done);

/* Entry point body: transfer, fill status, leave through the error handler. */
int ferry__access(const ferry__access_t *call, ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                  MPI_Datatype type, MPI_Status *status);

#endif

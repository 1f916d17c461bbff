/*
 * ferry-bench container: shared by its contenders (bench_container.c,
 * bench_container_sionlib.c when CMake was pointed at a SIONlib install,
 * bench_container_fortran.c when libferry_fortran was built).
 */
#ifndef FERRY_BENCH_CONTAINER_H
#define FERRY_BENCH_CONTAINER_H

#include <stddef.h>

#include "bench.h"

/* One contender's turn: every rank writes (or reads) its own stream. */
typedef struct ctr_job {
    char path[600];      /* this turn's container, or the prefix of its task-local files */
    unsigned char *buf;  /* bytes of this rank's stream */
    long long bytes;     /* this turn's bytes per rank (0: open and close only) */
    size_t piece;        /* bytes per write or read call */
    MPI_Offset chunk;    /* chunk size asked for (containers) */
    int sync;            /* make the data durable before close */
    int checksums;       /* ferry: data checksums in the chunk trailers */
    long long flush_every; /* ferry, collective: flush after every this many bytes (0: only at close) */
    int collectors;      /* collective: ranks per collector (0: one collector per node) */
    int rank, size;
    int writing;         /* this phase writes (else it reads) */
    long long meta;      /* metadata system calls this rank made, -1 when unknown */
    double data_seconds; /* the transfer calls alone, between barriers (ctr_pieces) */
    int failed;
} ctr_job_t;

typedef struct ctr_contender {
    const char *name;
    void (*write)(ctr_job_t *job); /* create, open, write, (sync), close: collective */
    void (*read)(ctr_job_t *job);  /* open, read into buf, close: collective */
    void (*remove)(ctr_job_t *job);
} ctr_contender_t;

/* The SIONlib contender, NULL when ferry-bench was built without it. */
const ctr_contender_t *bench_container_sionlib(void);
/* The ferry container through its Fortran module, NULL when ferry-bench was
 * built without Fortran (bench_container_fortran.c). */
const ctr_contender_t *bench_container_fortran(void);

/* Calls step for each piece of the job's bytes in order (piece bytes, the
 * last one shorter), until step returns nonzero (it reported a failure).
 * Collective when there are bytes: times the loop between two barriers
 * (job->data_seconds), so that the data path shows apart from open and
 * close. */
typedef int ctr_step_fn(ctr_job_t *job, void *arg, unsigned char *data, size_t len);
void ctr_pieces(ctr_job_t *job, ctr_step_fn *step, void *arg);

/* The remove of a contender whose job is one shared file at job->path: rank 0 unlinks it. */
void ctr_remove_shared(ctr_job_t *job);

/* Reports a contender's failure on this rank and marks the job failed. */
void ctr_failed(ctr_job_t *job, const char *who, const char *what);

#endif

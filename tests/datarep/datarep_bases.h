/*
 * The predefined datatypes the datarep tests draw from, with what the test
 * needs to make valid values and their external32 bytes independently of
 * ferry: per part a shape ('i' signed, 'u' unsigned, 'c' bytes, 'f' IEEE
 * float, 'q' long double, 'b' boolean), native and external32 scalar sizes
 * (MPI-3.1 table 13.2) and the scalar count.
 */
#ifndef FERRY_DATAREP_BASES_H
#define FERRY_DATAREP_BASES_H

#include <stdint.h>

#include "ferry.h"

typedef struct dr_part {
    char shape;
    int msize, fsize, count;
} dr_part_t;

typedef struct dr_base {
    MPI_Datatype type;
    const char *name;
    int nparts;
    dr_part_t part[2];
    int host_aborts; /* the host's MPI_Pack_external aborts the process on it */
    int host_wrong;  /* found at start-up: the host's external32 bytes differ from the standard's */
} dr_base_t;

extern dr_base_t dr_bases[];
extern int dr_nbases;

/* Native and file bytes of one item of base b. */
int dr_base_msize(const dr_base_t *b);
int dr_base_fsize(const dr_base_t *b);

/* A random valid value of base b: its native bytes and its external32 bytes. */
void dr_base_value(const dr_base_t *b, uint64_t *rng, unsigned char *native, unsigned char *file);

/* Index of type in dr_bases, or -1. */
int dr_base_find(MPI_Datatype type);

/* Whether an element cut by a read window can be stored in pieces. */
int dr_base_local(const dr_base_t *b);

/* The host's MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size
 * with a trap inside the host (MPICH 4.0's yaksa raises SIGILL on resized,
 * subarray and struct types in external32) turned into a -1 return and a
 * count, so a test notes it instead of crashing. */
typedef enum { DR_HOST_PACK, DR_HOST_UNPACK, DR_HOST_SIZE } dr_host_op_t;
extern int dr_host_traps;
int dr_host_external(dr_host_op_t op, const void *in, MPI_Aint insize, MPI_Count count, MPI_Datatype type,
                     void *out, MPI_Aint outsize, MPI_Aint *pos);

#endif

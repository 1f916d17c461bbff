/*
 * Shared by the checkpoint tests: random uneven decompositions (recursive
 * bisection at random cuts, so blocks differ and some are empty), local
 * buffers with halos, and the value every global point must hold.
 */
#ifndef CKPT_CASES_H
#define CKPT_CASES_H

#include "ferry_ckpt.h"
#include "ferry_test.h"

typedef struct ckpt_case_var {
    int ndims, halo;
    MPI_Datatype type;
    MPI_Offset global[4], start[4], count[4];
    void *buf;
    size_t bytes;
} ckpt_case_var_t;

/* The block of rank r of nprocs in a random bisection of global (seeded). */
void cc_block(int ndims, const MPI_Offset *global, int r, int nprocs, uint64_t seed, MPI_Offset *start,
              MPI_Offset *count);
/* Allocates v->buf for the block with halos: interior from value(), halos 0x5A bytes. */
void cc_fill(ckpt_case_var_t *v, int var, long long step);
/* Checks the interior holds value() (or 0 where zero_outside) and the halos 0x5A. */
void cc_check(const ckpt_case_var_t *v, int var, long long step);
/* Defines the dims and the variable in ck. */
void cc_define(ferry_ckpt_t ck, ckpt_case_var_t *v, const char *name, int *varid);
/* The value of global point idx of variable var at step, as bits of v->type. */
void cc_value(MPI_Datatype type, long long idx, int var, long long step, void *out);
int cc_esize(MPI_Datatype type);

#endif

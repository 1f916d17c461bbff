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
/* A set of one 2-D variable var of n x n values of type, this rank's block of a random
 * bisection (seed), halo cells around it (v is filled in; its buffer is not allocated). */
typedef struct cc_set {
    const char *base;
    ferry_ckpt_options_t opt; /* opt.info is ignored */
    int keep;                 /* ferry_ckpt_keep; 0: the default */
    MPI_Datatype type;
    MPI_Offset n;
    int halo;
    uint64_t seed;
    const char *var;
} cc_set_t;
ferry_ckpt_t cc_make_set(const cc_set_t *s, ckpt_case_var_t *v);
/* Whether path exists (local). */
int cc_exists(const char *path);
/* Rank 0 sets the low byte of a CDF-5 checkpoint's ferry_step from step to to (damage the
 * data checksums cannot see); collective (a barrier after it). */
void cc_set_header_step(const char *path, long long step, long long to);
/* The value of global point idx of variable var at step, as bits of v->type. */
void cc_value(MPI_Datatype type, long long idx, int var, long long step, void *out);
int cc_esize(MPI_Datatype type);

#endif

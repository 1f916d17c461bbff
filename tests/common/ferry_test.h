/*
 * The test library: MPI start-up, seeds, scratch directories and asserts
 * that print both operands.
 *
 * A failed assert prints rank, place, both values and the seed, then aborts
 * the job (so other ranks never wait on a failed one). Seeds come from
 * FERRY_TEST_SEED when set, otherwise from the clock, and are printed at
 * start so any failure can be replayed.
 */
#ifndef FERRY_TEST_H
#define FERRY_TEST_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ferry.h"

extern int ft_rank, ft_size;
extern uint64_t ft_seed;

/* MPI_Init, seed (same on all ranks), banner. */
void ft_init(int *argc, char ***argv);
/* ft_init through MPI_Init_thread(required); returns the level provided. */
int ft_init_thread(int *argc, char ***argv, int required);
/* MPI_Finalize and a closing line; returns the exit status for main. */
int ft_finish(void);

/* A fresh directory shared by all ranks (collective); path is static storage. */
const char *ft_scratch_dir(void);
/* "<scratch>/<name>" in static storage rotated over 8 slots. */
const char *ft_path(const char *name);

/* Deterministic per-seed random numbers (splitmix64). */
uint64_t ft_rand(uint64_t *state);
void ft_fill(void *buf, size_t len, uint64_t seed);

/* Error class of an MPI error code. */
int ft_class(int code);
/* The error string of a code. Static storage. */
const char *ft_errstr(int code);

void ft_fail(const char *file, int line, const char *fmt, ...);

/* Keeps the error string of code in ft_message ("" for MPI_SUCCESS) and
 * returns code, so a test can check both the class and the message. */
int ft_capture(int code);
extern char ft_message[MPI_MAX_ERROR_STRING + 1];

/* The number get_info reports for key (a ferry_stats_* counter, a size
 * hint); fails the test when the key is missing. */
long long ft_info_number(ferry_File fh, const char *key);
/* A committed filetype of `block` bytes then (ft_size - 1) * block bytes of
 * gap: with displacement block * ft_rank, rank r owns block r of every
 * ft_size blocks (interleaved writers). Free with MPI_Type_free. */
MPI_Datatype ft_interleaved_view(int block);
/* The value of get_info key (static storage until the next call); fails the test when absent. */
const char *ft_info_string(ferry_File fh, const char *key);
/* The same, "" with *found = 0 when absent. */
const char *ft_info_lookup(ferry_File fh, const char *key, int *found);
/* Rank 0 writes text to the scratch file `name` (ft_path); collective: every
 * rank returns its path after the file is complete. */
const char *ft_write_text(const char *name, const char *text);

#define FT_CHECK(cond)                                                                                             \
    do {                                                                                                           \
        if (!(cond)) ft_fail(__FILE__, __LINE__, "check failed: %s", #cond);                                       \
    } while (0)

#define FT_EQ(a, b)                                                                                                \
    do {                                                                                                           \
        long long ft_a_ = (long long)(a), ft_b_ = (long long)(b);                                                  \
        if (ft_a_ != ft_b_) ft_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, ft_a_, ft_b_);           \
    } while (0)

/* An MPI call that must succeed. */
#define FT_OK(call)                                                                                                \
    do {                                                                                                           \
        int ft_rc_ = (call);                                                                                       \
        if (ft_rc_ != MPI_SUCCESS) ft_fail(__FILE__, __LINE__, "%s failed: %s", #call, ft_errstr(ft_rc_));         \
    } while (0)

/* An MPI call that must fail with error class cls. */
#define FT_FAILS(cls, call)                                                                                        \
    do {                                                                                                           \
        int ft_rc_ = (call);                                                                                       \
        if (ft_rc_ == MPI_SUCCESS || ft_class(ft_rc_) != (cls))                                                    \
            ft_fail(__FILE__, __LINE__, "%s: expected class %d, got class %d (%s)", #call, (cls),                  \
                    ft_rc_ == MPI_SUCCESS ? 0 : ft_class(ft_rc_), ft_rc_ == MPI_SUCCESS ? "success" : ft_errstr(ft_rc_)); \
    } while (0)

/* An MPI call that must fail with error class cls and an error string
 * containing needle (NULL: any string). */
#define FT_FAILS_NAMING(cls, needle, call) ft_expect_fail(__FILE__, __LINE__, #call, (call), (cls), (needle))
void ft_expect_fail(const char *file, int line, const char *expr, int rc, int cls, const char *needle);

/* Prints "<program>: skipped: <why>" on rank 0 (for parts a sandbox cannot run). */
void ft_skip(const char *fmt, ...);

/* Byte-for-byte comparison; prints the first difference. */
#define FT_EQ_MEM(a, b, len) ft_eq_mem(__FILE__, __LINE__, #a, #b, (a), (b), (len))
void ft_eq_mem(const char *file, int line, const char *an, const char *bn, const void *a, const void *b, size_t len);

#endif

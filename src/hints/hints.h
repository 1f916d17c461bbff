/*
 * hints: every MPI_Info hint ferry understands, from one table.
 *
 * hints_table.c lists each hint's name, type, default, bounds and consumer.
 * Parsing, validation, the get_info report and docs/hints.md (printed by
 * `ferry-bench hints`) all derive from that table. A value that fails
 * validation is rejected: the default stays in force and the rejection is
 * reported by get_info under "ferry_hints_rejected". Unknown keys are
 * ignored, as MPI-3.1 13.2.8 requires.
 */
#ifndef FERRY_HINTS_H
#define FERRY_HINTS_H

#include <stdio.h>

#include <mpi.h>

enum { FERRY_HINTS_REJECTED_MAX = 512 };

typedef struct ferry__hints {
    MPI_Offset pack_buffer_size; /* bytes staged per chunk for noncontiguous memory */
    char rejected[FERRY_HINTS_REJECTED_MAX];
} ferry__hints_t;

void ferry__hints_defaults(ferry__hints_t *hints);

/* Applies the keys of info (may be MPI_INFO_NULL) on top of *hints.
 * Never fails: bad values are recorded in hints->rejected. */
void ferry__hints_apply(ferry__hints_t *hints, MPI_Info info);

/* Writes every hint's effective value into info (a fresh MPI_Info). */
int ferry__hints_report(const ferry__hints_t *hints, MPI_Info info);

/* Prints the hint table as a Markdown table. */
void ferry__hints_print_table(FILE *out);

#endif

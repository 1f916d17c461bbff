/*
 * The process around ferry (a leaf header: includes only ferry.h): the
 * MPI_Finalize hook every module registers its tear-down with, whether a
 * communicator has MPI_COMM_WORLD's ranks, and the host
 * MPI library's own definitions of the names the drop-in interposes.
 *
 * ferry has one finalize hook, an attribute on MPI_COMM_SELF that
 * MPI_Finalize deletes (MPI-3.1 8.7.1). It runs the function set with
 * ferry__process_at_finalize_first (core/: close the files the program left
 * open, while MPI still works), then every function registered with
 * ferry__process_at_finalize, the last registered first. A module
 * registers its own tear-down when it first creates process state; no
 * module calls another's finalizer.
 */
#ifndef FERRY_BASE_PROCESS_H
#define FERRY_BASE_PROCESS_H

#include "ferry.h"

/* Sets the finalize hook once MPI is initialized; safe from any thread.
 * Returns 0, MPI_ERR_OTHER (MPI not initialized, or finalized) or
 * MPI_ERR_INTERN (the hook could not be set). No message: the caller says. */
int ferry__process_init(void);

/* Registers fn to run once at MPI_Finalize (setting the hook if needed).
 * Returns 0 or MPI_ERR_INTERN (too many, or no hook). */
int ferry__process_at_finalize(void (*fn)(void));

/* Registers fn to run when the program calls MPI_Finalize, before the host's
 * (ferry__process_quiesce): fn must leave no ferry thread inside MPI, as
 * MPI forbids other threads' MPI calls while MPI_Finalize runs. Returns 0
 * or MPI_ERR_INTERN (too many). */
int ferry__process_at_quiesce(void (*fn)(void));

/* Runs the functions registered with ferry__process_at_quiesce. Called by
 * ferry's MPI_Finalize definitions (core/init.c, the drop-in's) on the
 * program's thread, while MPI still works, so no MPI call of a ferry thread
 * overlaps the host's MPI_Finalize. */
void ferry__process_quiesce(void);

/* The one function that runs before all others at MPI_Finalize. */
void ferry__process_at_finalize_first(void (*fn)(void));
/* Local: whether comm has MPI_COMM_WORLD's ranks in its order (a duplicate of
 * it, as libraries such as HDF5 open each file on): MPI_Comm_compare
 * compares groups, so every rank of comm answers alike. */
int ferry__process_world_ranks(MPI_Comm comm);

/* The host MPI library's definition of function `name` (host.c), for the
 * PMPI_ names the drop-in interposes; NULL when the host has none. Cast it
 * to the function's type before calling. */
typedef void (*ferry__host_fn_t)(void);
ferry__host_fn_t ferry__host_function(const char *name);

#endif

/*
 * MPI_Init and MPI_Init_thread in the drop-in: the host's, then ferry's
 * set-up (ferry_core_init), so ferry's MPI_Finalize hook is the first
 * attribute on MPI_COMM_SELF and so the last deleted. A library that closes
 * the files a program left open in a finalize hook of its own (HDF5, set in
 * H5open, which comes before any file is opened) then still finds ferry
 * working; set up at the first file open instead, ferry closed and freed
 * those files first and HDF5 crashed in MPI_Finalize closing them again
 * (its t_pshutdown test).
 *
 * Both names are defined, as for MPI_File_*: Open MPI's Fortran MPI_INIT
 * calls PMPI_Init. The host's PMPI_ function is the next definition after
 * this library's (RTLD_NEXT): the drop-in is preloaded or linked before
 * the host MPI. MPI_Finalize and PMPI_Finalize first let ferry's background
 * threads finish (ferry_core_quiesce); MPI_Finalize then goes on to the next
 * MPI_Finalize, so a profiling tool's wrapper still runs.
 */
#include <dlfcn.h>
#include <string.h>

#include "dropin/dropin.h"

typedef int init_fn(int *argc, char ***argv);
typedef int init_thread_fn(int *argc, char ***argv, int required, int *provided);

/* The host's definition of `name`, or NULL. */
static void *host_definition(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* Sets ferry up after a successful host initialization; a failure there
 * leaves ferry to set itself up at its first use, as without the drop-in. */
static int after_init(int rc)
{
    if (rc == MPI_SUCCESS) (void)ferry_core_init();
    return rc;
}

int PMPI_Init(int *argc, char ***argv)
{
    init_fn *host;
    void *symbol = host_definition("PMPI_Init");
    if (!symbol) return MPI_ERR_INTERN;
    memcpy(&host, &symbol, sizeof host); /* ISO C has no cast from object to function pointers */
    return after_init(host(argc, argv));
}
FERRY_DROPIN_ALIAS(MPI_Init, PMPI_Init)

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    init_thread_fn *host;
    void *symbol = host_definition("PMPI_Init_thread");
    if (!symbol) return MPI_ERR_INTERN;
    memcpy(&host, &symbol, sizeof host);
    return after_init(host(argc, argv, required, provided));
}
FERRY_DROPIN_ALIAS(MPI_Init_thread, PMPI_Init_thread)

typedef int finalize_fn(void);

/* ferry's threads stop calling MPI, then the next definition of `name`
 * runs: MPI_Finalize goes on to a profiling tool's or the host's. */
static int finalize_through(const char *name)
{
    ferry_core_quiesce();
    finalize_fn *next;
    void *symbol = host_definition(name);
    if (!symbol) return MPI_ERR_INTERN;
    memcpy(&next, &symbol, sizeof next);
    return next();
}

int PMPI_Finalize(void)
{
    return finalize_through("PMPI_Finalize");
}

int MPI_Finalize(void)
{
    return finalize_through("MPI_Finalize");
}

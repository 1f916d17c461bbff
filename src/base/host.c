/*
 * The host MPI's own definitions of names the drop-in interposes.
 *
 * libferry-mpiio.so exports PMPI_File_* and PMPI_Error_string, so in a
 * process that preloads it a plain call from ferry to one of those names
 * (the host's PMPI_File_create_errhandler, or PMPI_Error_string for codes
 * that are not ferry's) would land in the drop-in and come back to ferry
 * for ever. The lookup goes through ferry's own dependency scope instead:
 * it holds the host MPI library, which libferry is linked against, and never
 * the drop-in, which depends on libferry and not the other way round.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "base/process.h"

/* ferry's own object (libferry.so, or the program ferry is linked into
 * statically), opened again without loading anything; NULL when the
 * dynamic linker cannot name it (the static case: the global scope is then
 * the right one, as no drop-in is loaded beside a static ferry). */
static void *own_scope(void)
{
    Dl_info self;
    if (!dladdr((void *)(uintptr_t)ferry__host_function, &self) || !self.dli_fname) return NULL;
    return dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
}

ferry__host_fn_t ferry__host_function(const char *name)
{
    void *scope = own_scope();
    void *symbol = dlsym(scope ? scope : RTLD_DEFAULT, name);
    if (scope) dlclose(scope);
    ferry__host_fn_t fn;
    memcpy(&fn, &symbol, sizeof fn); /* ISO C has no cast from object to function pointers */
    return fn;
}

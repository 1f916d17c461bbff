/*
 * The drop-in functions that are not a plain forward of a ferry.h prototype.
 */
#include <stddef.h>

#include "dropin/dropin.h"

#if MPI_VERSION >= 4
/* MPI-4's large-count user data representations: the conversion functions
 * take MPI_Count, so they cannot be passed to ferry_Register_datarep; until
 * user data representations land this reports the same unsupported error. */
int MPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                           MPI_Datarep_conversion_function_c *write_conversion_fn,
                           MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    (void)read_conversion_fn;
    (void)write_conversion_fn;
    return ferry_Register_datarep(datarep, NULL, NULL, dtype_file_extent_fn, extra_state);
}
#endif

/*
 * The representation registry. This first version knows "native" and
 * "internal" (ferry's internal representation is native); external32 and
 * user representations come with the rest of the module.
 */
#include <string.h>

#include "datarep/datarep.h"
#include "datatype/datatype.h"
#include "error/error.h"

struct ferry__datarep {
    const char *name;
    int native;
};

static const ferry__datarep_t builtin[] = {
    {"native", 1},
    {"internal", 1},
};

int ferry__datarep_find(const char *name, const ferry__datarep_t **rep)
{
    for (size_t i = 0; name && i < sizeof builtin / sizeof builtin[0]; i++)
        if (!strcmp(builtin[i].name, name)) {
            *rep = &builtin[i];
            return 0;
        }
    return ferry__error_set(MPI_ERR_UNSUPPORTED_DATAREP, "ferry: data representation '%s' is not supported",
                            name ? name : "(null)");
}

const char *ferry__datarep_name(const ferry__datarep_t *rep)
{
    return rep->name;
}

int ferry__datarep_is_native(const ferry__datarep_t *rep)
{
    return rep->native;
}

int ferry__datarep_size(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Count *size)
{
    (void)rep;
    ferry__typeinfo_t info;
    FERRY_TRY(ferry__datatype_info(type, &info));
    *size = info.size;
    return 0;
}

int ferry__datarep_extent(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Count *extent)
{
    (void)rep;
    ferry__typeinfo_t info;
    FERRY_TRY(ferry__datatype_info(type, &info));
    *extent = info.extent;
    return 0;
}

int ferry__datarep_file_layout(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Datatype *layout)
{
    (void)rep;
    if (MPI_Type_dup(type, layout) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: cannot duplicate a view datatype");
    return 0;
}

int ferry__datarep_pack(const ferry__datarep_t *rep, const void *buf, MPI_Count count, MPI_Datatype type,
                        MPI_Count skip, void *dst, MPI_Count len)
{
    (void)rep;
    return ferry__datatype_pack(buf, count, type, skip, dst, len);
}

int ferry__datarep_unpack(const ferry__datarep_t *rep, const void *src, MPI_Count len, void *buf, MPI_Count count,
                          MPI_Datatype type, MPI_Count skip)
{
    (void)rep;
    return ferry__datatype_unpack(src, len, buf, count, type, skip);
}

void ferry__datarep_finalize(void)
{
}

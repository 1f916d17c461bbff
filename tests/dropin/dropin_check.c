/* Checks shared by the drop-in test programs (dropin_check.h). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dropin_check.h"

void dropin_check(int ok, const char *what)
{
    if (ok) return;
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

void dropin_must(int rc, const char *what)
{
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, rank = -1;
    MPI_Error_string(rc, text, &len);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "rank %d: %s failed: %s\n", rank, what, text);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

long long dropin_info_number(MPI_File fh, const char *key)
{
    return dropin_info_number_via(MPI_File_get_info, fh, key);
}

long long dropin_info_number_via(int (*get_info)(MPI_File, MPI_Info *), MPI_File fh, const char *key)
{
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    dropin_must(get_info(fh, &info), "get_info");
    MPI_Info_get(info, (char *)key, MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    return flag ? strtoll(value, NULL, 10) : -1;
}

int dropin_served_by_ferry(MPI_File fh)
{
    return dropin_info_number(fh, "ferry_version") != -1;
}

void dropin_shared_name(char *name, int size)
{
    int rank;
    const char *dir = getenv("FERRY_TEST_DIR");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        snprintf(name, (size_t)size, "%s/ferry-dropin-XXXXXX", dir && *dir ? dir : "/tmp");
        int fd = mkstemp(name);
        dropin_check(fd >= 0, "mkstemp");
        close(fd);
    }
    MPI_Bcast(name, size, MPI_CHAR, 0, MPI_COMM_WORLD);
}

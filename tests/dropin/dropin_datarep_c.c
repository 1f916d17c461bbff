/*
 * MPI_Register_datarep_c (MPI-4, so MPICH 4 only here) on the drop-in: a
 * representation storing MPI_INT as 8 big-endian bytes, registered with
 * large-count conversion functions, converts what the program writes and
 * reads through a view in it. The file holds the converted bytes (checked
 * with plain POSIX reads), the values read back are the ones written, the
 * conversion functions were called with MPI_Count counts, and a
 * representation registered with MPI_CONVERSION_FN_NULL_C moves native
 * bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dropin_check.h"

#if MPI_VERSION >= 4
enum { N = 1000 }; /* ints per rank */

typedef struct calls {
    long long reads, writes, items;
} calls_t;

static int write_be64(void *userbuf, MPI_Datatype type, MPI_Count count, void *filebuf, MPI_Offset position,
                      void *extra)
{
    calls_t *calls = extra;
    calls->writes++;
    calls->items += count;
    for (MPI_Count k = 0; k < count; k++) {
        uint64_t w = (uint64_t)(int64_t)((const int *)userbuf)[position + k];
        for (int b = 7; b >= 0; b--, w >>= 8) ((unsigned char *)filebuf)[8 * k + b] = (unsigned char)w;
    }
    return type == MPI_INT ? MPI_SUCCESS : MPI_ERR_TYPE;
}

static int read_be64(void *userbuf, MPI_Datatype type, MPI_Count count, void *filebuf, MPI_Offset position,
                     void *extra)
{
    calls_t *calls = extra;
    calls->reads++;
    calls->items += count;
    for (MPI_Count k = 0; k < count; k++) {
        uint64_t w = 0;
        for (int b = 0; b < 8; b++) w = w << 8 | ((const unsigned char *)filebuf)[8 * k + b];
        ((int *)userbuf)[position + k] = (int)(int64_t)w;
    }
    return type == MPI_INT ? MPI_SUCCESS : MPI_ERR_TYPE;
}

static int extent_be64(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    *extent = 8;
    return type == MPI_INT ? MPI_SUCCESS : MPI_ERR_TYPE;
}

static int extent_native(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    int size;
    MPI_Type_size(type, &size);
    *extent = size;
    return MPI_SUCCESS;
}

static int value(int rank, int i)
{
    return (rank * N + i) * (i % 2 ? -7919 : 7919);
}

/* Every rank writes its N ints at etype offset rank * N through a view in
 * datarep and reads them back. */
static void write_and_read(const char *name, const char *datarep, MPI_Offset file_int_size)
{
    int rank, out[N], in[N];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < N; i++) out[i] = value(rank, i);
    MPI_File fh;
    MPI_Status status;
    dropin_must(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open");
    dropin_check(dropin_served_by_ferry(fh), "file not served by ferry");
    dropin_must(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, datarep, MPI_INFO_NULL), "set_view");
    MPI_Aint extent = 0;
    dropin_must(MPI_File_get_type_extent(fh, MPI_INT, &extent), "get_type_extent");
    dropin_check(extent == file_int_size, "get_type_extent: the representation's extent");
    dropin_must(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, out, N, MPI_INT, &status), "write_at_all");
    dropin_must(MPI_File_sync(fh), "sync");
    MPI_Barrier(MPI_COMM_WORLD);
    dropin_must(MPI_File_sync(fh), "sync");
    dropin_must(MPI_File_read_at_all(fh, (MPI_Offset)rank * N, in, N, MPI_INT, &status), "read_at_all");
    for (int i = 0; i < N; i++) dropin_check(in[i] == out[i], "read back through the representation");
    dropin_must(MPI_File_close(&fh), "close");
}

/* One int as the file holds it: 8 big-endian bytes, or the native int. */
static int64_t file_int(const unsigned char *bytes, int width)
{
    int native;
    if (width == (int)sizeof native) {
        memcpy(&native, bytes, sizeof native);
        return native;
    }
    uint64_t w = 0;
    for (int b = 0; b < 8; b++) w = w << 8 | bytes[b];
    return (int64_t)w;
}

/* The file's bytes, read without MPI: rank r's ints at (r * N + i) * width. */
static void check_file(const char *name, int nprocs, int width)
{
    FILE *file = fopen(name, "rb");
    dropin_check(file != NULL, "open the file with fopen");
    unsigned char bytes[8];
    for (int r = 0; r < nprocs; r++)
        for (int i = 0; i < N; i++) {
            dropin_check(fread(bytes, 1, (size_t)width, file) == (size_t)width, "file too short");
            dropin_check(file_int(bytes, width) == value(r, i), "the file holds each int in the representation");
        }
    dropin_check(fgetc(file) == EOF, "file too long");
    fclose(file);
}

/* A fresh file written and read through datarep, its bytes checked. */
static void check_representation(const char *datarep, int width)
{
    int rank, nprocs;
    char name[4096];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    dropin_shared_name(name, sizeof name);
    write_and_read(name, datarep, width);
    if (rank == 0) check_file(name, nprocs, width);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) unlink(name);
}

#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#if MPI_VERSION >= 4
    calls_t calls = {0};
    dropin_must(MPI_Register_datarep_c("ferry-be64", read_be64, write_be64, extent_be64, &calls), "register");
    dropin_must(MPI_Register_datarep_c("ferry-null-c", MPI_CONVERSION_FN_NULL_C, MPI_CONVERSION_FN_NULL_C,
                                       extent_native, NULL),
                "register");
    check_representation("ferry-be64", 8);
    dropin_check(calls.writes > 0 && calls.reads > 0, "the conversion functions were called");
    dropin_check(calls.items >= 2 * N, "the conversion functions converted every item");
    check_representation("ferry-null-c", (int)sizeof(int));
    if (rank == 0) printf("dropin_datarep_c: converted %lld items in %lld+%lld calls\n", calls.items, calls.writes,
                          calls.reads);
#else
    if (rank == 0) printf("dropin_datarep_c: the host is MPI-%d, without MPI_Register_datarep_c\n", MPI_VERSION);
#endif
    MPI_Finalize();
    return 0;
}

/*
 * Callers of the profiling interface on the drop-in: the same MPI-IO
 * sequence through a table of either the PMPI_File_* or the MPI_File_*
 * names. Run with libferry-mpiio.so preloaded, and for the MPI_ names also
 * behind a profiling layer (dropin_profiler.c, whose MPI_File_* count and
 * call PMPI_File_*). Checks every value read back, that ferry serves the
 * file, and that each call reached ferry once: ferry's per-file counters
 * equal the calls made, and the profiler saw each of its calls once.
 * usage: dropin_layers <pmpi|mpi> [profiled]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* unlink */

#include "dropin_check.h"

typedef struct file_api {
    int (*open)(MPI_Comm, const char *, int, MPI_Info, MPI_File *);
    int (*set_view)(MPI_File, MPI_Offset, MPI_Datatype, MPI_Datatype, const char *, MPI_Info);
    int (*write_all)(MPI_File, const void *, int, MPI_Datatype, MPI_Status *);
    int (*iwrite_at)(MPI_File, MPI_Offset, const void *, int, MPI_Datatype, MPI_Request *);
    int (*read_at_all)(MPI_File, MPI_Offset, void *, int, MPI_Datatype, MPI_Status *);
    int (*get_info)(MPI_File, MPI_Info *);
    MPI_Fint (*c2f)(MPI_File);
    MPI_File (*f2c)(MPI_Fint);
    int (*close)(MPI_File *);
} file_api_t;

static const file_api_t pmpi_names = {PMPI_File_open,    PMPI_File_set_view, PMPI_File_write_all,
                                      PMPI_File_iwrite_at, PMPI_File_read_at_all, PMPI_File_get_info,
                                      PMPI_File_c2f,     PMPI_File_f2c,      PMPI_File_close};
static const file_api_t mpi_names = {MPI_File_open,    MPI_File_set_view, MPI_File_write_all,
                                     MPI_File_iwrite_at, MPI_File_read_at_all, MPI_File_get_info,
                                     MPI_File_c2f,     MPI_File_f2c,      MPI_File_close};

enum { BLOCK = 256, WRITES = 3 }; /* each rank writes WRITES blocks of BLOCK ints, then one by iwrite_at */

/* Rank r owns block b of every round: ints at (b * nprocs + r) * BLOCK. */
static void set_interleaved_view(const file_api_t *api, MPI_File fh, int rank, int nprocs)
{
    MPI_Datatype block, filetype;
    MPI_Type_contiguous(BLOCK, MPI_INT, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)nprocs * BLOCK * sizeof(int), &filetype);
    MPI_Type_commit(&filetype);
    dropin_must(api->set_view(fh, (MPI_Offset)rank * BLOCK * sizeof(int), MPI_INT, filetype, "native", MPI_INFO_NULL),
                "set_view");
    MPI_Type_free(&filetype);
    MPI_Type_free(&block);
}

static int value(int rank, int i)
{
    return rank * 1000003 + i;
}

static void write_blocks(const file_api_t *api, MPI_File fh, int rank)
{
    int out[BLOCK];
    MPI_Status status;
    for (int b = 0; b < WRITES; b++) {
        for (int i = 0; i < BLOCK; i++) out[i] = value(rank, b * BLOCK + i);
        dropin_must(api->write_all(fh, out, BLOCK, MPI_INT, &status), "write_all");
    }
    for (int i = 0; i < BLOCK; i++) out[i] = value(rank, WRITES * BLOCK + i);
    MPI_Request request;
    dropin_must(api->iwrite_at(fh, (MPI_Offset)WRITES * BLOCK, out, BLOCK, MPI_INT, &request), "iwrite_at");
    dropin_must(MPI_Wait(&request, &status), "wait");
    int count = -1;
    MPI_Get_count(&status, MPI_INT, &count);
    dropin_check(count == BLOCK, "iwrite_at's status counts BLOCK ints");
}

static void read_back(const file_api_t *api, MPI_File fh, int rank)
{
    enum { ALL = (WRITES + 1) * BLOCK };
    int *in = malloc(ALL * sizeof *in);
    MPI_Status status;
    dropin_must(api->read_at_all(fh, 0, in, ALL, MPI_INT, &status), "read_at_all");
    for (int i = 0; i < ALL; i++) dropin_check(in[i] == value(rank, i), "read back what the rank wrote");
    free(in);
}

/* Each call reached ferry once: its per-file counters count them. */
static void check_ferry_counts(const file_api_t *api, MPI_File fh)
{
    dropin_check(dropin_info_number_via(api->get_info, fh, "ferry_version") != -1, "file not served by ferry");
    dropin_check(dropin_info_number_via(api->get_info, fh, "ferry_stats_write_calls") == WRITES + 1,
                 "ferry counted a write call other than once");
    dropin_check(dropin_info_number_via(api->get_info, fh, "ferry_stats_read_calls") == 1,
                 "ferry counted the read call other than once");
    dropin_check(dropin_info_number_via(api->get_info, fh, "ferry_stats_coll_calls") == WRITES + 1,
                 "ferry counted a collective call other than once");
}

/* The profiling layer saw each of its calls once. */
static void check_profiler_counts(void)
{
    long long (*calls)(const char *) = (long long (*)(const char *))dlsym(RTLD_DEFAULT, "dropin_profiler_calls");
    dropin_check(calls != NULL, "the profiling layer is not loaded");
    dropin_check(calls("MPI_File_open") == 1 && calls("MPI_File_close") == 1, "profiler: open/close counts");
    dropin_check(calls("MPI_File_write_all") == WRITES, "profiler: write_all count");
    dropin_check(calls("MPI_File_read_at_all") == 1, "profiler: read_at_all count");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    dropin_check(argc >= 2, "usage: dropin_layers <pmpi|mpi> [profiled]");
    const file_api_t *api = strcmp(argv[1], "pmpi") == 0 ? &pmpi_names : &mpi_names;
    char name[4096];
    dropin_shared_name(name, sizeof name);
    MPI_File fh;
    dropin_must(api->open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open");
    dropin_check(api->f2c(api->c2f(fh)) == fh, "f2c(c2f(fh)) is fh");
    set_interleaved_view(api, fh, rank, nprocs);
    write_blocks(api, fh, rank);
    read_back(api, fh, rank);
    check_ferry_counts(api, fh);
    dropin_must(api->close(&fh), "close");
    dropin_check(fh == MPI_FILE_NULL, "close leaves MPI_FILE_NULL");
    if (argc > 2 && strcmp(argv[2], "profiled") == 0) check_profiler_counts();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) unlink(name);
    if (rank == 0) printf("dropin_layers: %s names reached ferry once per call\n", argv[1]);
    MPI_Finalize();
    return 0;
}

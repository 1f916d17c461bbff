/*
 * Every workload's command line (one option table each, tools/cli), the
 * announcement of what runs, per-repetition progress, and which host MPI
 * and MPI-IO component the run measures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

const cli_option_t bench_shared_options[] = {
    {"reps", 0, CLI_INT, offsetof(bench_common_t, reps), 1, BENCH_MAX_REPS, NULL,
     "repetitions; tables give medians"},
    {"json", 0, CLI_TEXT, offsetof(bench_common_t, json), 0, 0, NULL,
     "also write the results as JSON to this file (docs/report.md)"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

/* "Open MPI v4.1.4, package: ..." or "MPICH Version: 4.0.2 ..." into name and version. */
static void host_library(bench_host_t *host)
{
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(text, &len);
    text[strcspn(text, "\n")] = '\0';
    snprintf(host->library, sizeof host->library, "%.200s", text);
    int mpich = strstr(text, "MPICH") != NULL;
    snprintf(host->name, sizeof host->name, "%s", mpich ? "MPICH" : strstr(text, "Open MPI") ? "Open MPI" : "unknown");
    const char *v = strpbrk(text, "0123456789");
    snprintf(host->version, sizeof host->version, "%.*s", v ? (int)strspn(v, "0123456789.") : 0, v ? v : "");
}

/* Open MPI picks its io component by the MCA parameter "io" (mpiexec --mca io
 * romio321 puts it in the environment), else by priority: OMPIO. */
static const char *open_mpi_component(void)
{
    const char *io = getenv("OMPI_MCA_io");
    return io && io[0] != '^' && strstr(io, "romio") ? "romio" : "ompio";
}

/* Collective: MPICH's ROMIO reports its romio_* hints in get_info; Open MPI's
 * components report none (its ROMIO 3.2.1 included), so there the MCA
 * selection says which one serves. */
static void host_io_component(bench_host_t *host, const char *dir)
{
    char path[600];
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(path, sizeof path, "%s/ferry-bench-probe.%ld", dir ? dir : "/tmp", (long)getpid());
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_File fh;
    snprintf(host->io, sizeof host->io, "unknown");
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE;
    if (MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh) != MPI_SUCCESS) return;
    MPI_Info info;
    if (MPI_File_get_info(fh, &info) == MPI_SUCCESS) {
        char value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        MPI_Info_get(info, "romio_cb_read", MPI_MAX_INFO_VAL, value, &flag);
        snprintf(host->io, sizeof host->io, "%s", flag ? "romio" : strcmp(host->name, "Open MPI") ? "unknown"
                                                                                    : open_mpi_component());
        MPI_Info_free(&info);
    }
    MPI_File_close(&fh);
}

/* "--dir /dev/shm --total 1g --reps 3": every option's value. */
static void print_values(const cli_spec_t *spec, const void *config, FILE *out)
{
    char value[256];
    for (int i = 0; cli_option_at(spec, i); i++) {
        const cli_option_t *o = cli_option_at(spec, i);
        cli_format_value(o, config, value, sizeof value);
        if (o->kind != CLI_TEXT || value[0]) fprintf(out, " --%s %s", o->name, value);
    }
}

static void announce(const bench_common_t *c)
{
    fprintf(stderr, "%s: %d ranks, host %s %s (MPI-IO: %s):", c->spec->name, c->nprocs, c->host.name,
            c->host.version, c->host.io);
    print_values(c->spec, c->config, stderr);
    fprintf(stderr, "\n");
}

int bench_parse(const cli_spec_t *spec, int argc, char **argv, void *config)
{
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int rc = cli_parse(spec, argc, argv, config, rank == 0 ? stdout : NULL, rank == 0 ? stderr : NULL);
    if (rc != CLI_RUN) return rc;
    bench_common_t *c = config;
    c->spec = spec;
    c->config = config;
    c->argc = argc;
    c->argv = argv;
    c->rank = rank;
    c->nprocs = nprocs;
    c->started = bench_now();
    c->report = NULL;
    host_library(&c->host);
    host_io_component(&c->host, c->dir);
    if (c->rank == 0) announce(c);
    bench_report_begin(c);
    return CLI_RUN;
}

void bench_progress(const bench_common_t *c, const char *what, int rep)
{
    if (c->rank != 0) return;
    fprintf(stderr, "%s: %s%srepetition %d/%d done, %.1f s since the start\n", c->spec->name, what ? what : "",
            what ? ": " : "", rep + 1, c->reps, bench_now() - c->started);
}

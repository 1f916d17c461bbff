/*
 * ferry-ckpt: inspect, verify and convert ferry checkpoints (netCDF).
 *
 *   ferry-ckpt info <file>              header: format, strategy, step, variables
 *   ferry-ckpt verify <file>...         exit 0 when every file is complete and
 *                                       matches its checksums
 *   ferry-ckpt convert <stacked> <out>  the global image (steered) of a stacked
 *                                       file; serially or under mpiexec
 *
 * An MPI program (run it directly, or with mpiexec for parallel verify and
 * convert). It reads files only as docs/format/netcdf.md describes them.
 * The command line is read before MPI starts (tools/cli): --help prints on
 * stdout and exits 0; a bad command line is refused on stderr with exit
 * status 2.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt.h"
#include "cli/cli.h"

static int rank;

static void print_error(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    ferry_Error_string(rc, msg, &len);
    if (rank == 0) fprintf(stderr, "ferry-ckpt %s: %s\n", what, msg);
}

static void print_atts(const ferry__ckpt_nc_atts_t *atts, const char *indent)
{
    for (int i = 0; i < atts->count; i++) {
        const ferry__ckpt_nc_att_t *a = &atts->atts[i];
        printf("%s%s = ", indent, a->name);
        if (a->type == NC_CHAR) printf("\"%.*s\"", (int)a->nelems, (const char *)a->values);
        for (int64_t k = 0; a->type != NC_CHAR && k < a->nelems && k < 8; k++)
            printf(k ? ", %g" : "%g", ferry__ckpt_nc_att_double(a, k));
        printf("%s\n", a->type != NC_CHAR && a->nelems > 8 ? ", ..." : "");
    }
}

static void print_var(const ferry__ckpt_nc_t *nc, const ferry__ckpt_nc_var_t *v)
{
    printf("  %s %s(", ferry__ckpt_nc_type_name(v->type), v->name);
    for (int d = 0; d < v->ndims; d++) printf("%s%s=%lld", d ? ", " : "", nc->dims[v->dimids[d]].name, (long long)nc->dims[v->dimids[d]].len);
    printf(")  begin %lld, %lld bytes\n", (long long)v->begin, (long long)v->vsize);
    print_atts(&v->atts, "    ");
}

static int info(const char *path)
{
    ferry__ckpt_nc_t nc;
    unsigned char *region;
    size_t len;
    int rc = ferry__ckpt_read_header(MPI_COMM_WORLD, path, FERRY_CKPT_IO_FERRY, &nc, &region, &len);
    if (rc) {
        print_error("info", rc);
        return 1;
    }
    if (rank == 0) {
        long long step = ferry__ckpt_nc_step(&nc, path);
        printf("%s: netCDF CDF-%d, %d dimensions, %d variables, header region %zu bytes\n", path, nc.version, nc.ndims,
               nc.nvars, len);
        if (ferry__ckpt_nc_att(&nc.gatts, "ferry_series"))
            printf("  a ferry series of %lld records along time\n", (long long)nc.numrecs);
        else if (ferry__ckpt_nc_sealed(&nc)) printf("  a ferry checkpoint of step %lld\n", step);
        else if (step >= 0) printf("  not a ferry checkpoint (no checksums); its name says step %lld\n", step);
        else printf("  not a ferry checkpoint (no checksums, no step)\n");
        print_atts(&nc.gatts, "  ");
        for (int i = 0; i < nc.nvars; i++) print_var(&nc, &nc.vars[i]);
    }
    ferry__ckpt_nc_free(&nc);
    ferry__ckpt_region_free(region);
    return 0;
}

static int verify(int n, char **paths)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int rc = ferry_ckpt_verify(MPI_COMM_WORLD, paths[i]);
        if (rc) print_error("verify", rc);
        else if (rank == 0) printf("%s: valid\n", paths[i]);
        bad |= rc != MPI_SUCCESS;
    }
    return bad;
}

int ckpt_convert(const char *in, const char *out);

/* The command line: a command and its files; no options besides --help. */
typedef struct tool_config {
    int command; /* its index in commands[] */
    cli_positional_t files;
} tool_config_t;

static const cli_spec_t info_spec = {
    "ferry-ckpt info",
    "ferry-ckpt info FILE",
    "prints a file's header: format, step, global attributes, variables with their offsets and attributes",
    NULL,
    NULL,
    sizeof(tool_config_t),
    NULL,
    "FILE",
    offsetof(tool_config_t, files)};
static const cli_spec_t verify_spec = {
    "ferry-ckpt verify",
    "[mpiexec -n <ranks>] ferry-ckpt verify FILE...",
    "checks that every file is complete and matches its checksums (exit status 0 when all do)",
    NULL,
    NULL,
    sizeof(tool_config_t),
    NULL,
    "FILE...",
    offsetof(tool_config_t, files)};
static const cli_spec_t convert_spec = {"ferry-ckpt convert",
                                        "[mpiexec -n <ranks>] ferry-ckpt convert STACKED OUT",
                                        "writes the global image (steered) of a stacked checkpoint to OUT",
                                        NULL,
                                        NULL,
                                        sizeof(tool_config_t),
                                        NULL,
                                        "STACKED OUT",
                                        offsetof(tool_config_t, files)};

enum { COMMAND_INFO, COMMAND_VERIFY, COMMAND_CONVERT };
static const cli_command_t commands[] = {
    [COMMAND_INFO] = {"info", &info_spec, 1, 1},
    [COMMAND_VERIFY] = {"verify", &verify_spec, 1, -1},
    [COMMAND_CONVERT] = {"convert", &convert_spec, 2, 2},
    {NULL, NULL, 0, 0},
};
static const cli_program_t program = {"ferry-ckpt",
                                      "ferry-ckpt <command> [arguments]   (info | verify | convert)\n"
                                      "       ferry-ckpt --help | ferry-ckpt <command> --help",
                                      "Inspects, verifies and converts ferry checkpoints (netCDF; docs/checkpoint.md).",
                                      commands, offsetof(tool_config_t, command)};

static int run(int command, char **files, int nfiles)
{
    if (command == COMMAND_INFO) return info(files[0]);
    if (command == COMMAND_VERIFY) return verify(nfiles, files);
    return ckpt_convert(files[0], files[1]);
}

int main(int argc, char **argv)
{
    tool_config_t cfg = {-1, {0, NULL}};
    int printer = cli_launcher_rank() == 0;
    int rc = cli_parse_command(&program, argc, argv, &cfg, printer ? stdout : NULL, printer ? stderr : NULL);
    if (rc != CLI_RUN) return rc;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    rc = run(cfg.command, cfg.files.values, cfg.files.count);
    MPI_Finalize();
    return rc;
}

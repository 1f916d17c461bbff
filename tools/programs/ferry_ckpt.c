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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt.h"

static int rank;

static void print_error(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    ferry_Error_string(rc, msg, &len);
    if (rank == 0) fprintf(stderr, "ferry-ckpt %s: %s\n", what, msg);
}

static void print_atts(const ckpt_nc_atts_t *atts, const char *indent)
{
    for (int i = 0; i < atts->count; i++) {
        const ckpt_nc_att_t *a = &atts->atts[i];
        printf("%s%s = ", indent, a->name);
        if (a->type == NC_CHAR) printf("\"%.*s\"", (int)a->nelems, (const char *)a->values);
        for (int64_t k = 0; a->type != NC_CHAR && k < a->nelems && k < 8; k++)
            printf(k ? ", %g" : "%g", ckpt_nc_att_double(a, k));
        printf("%s\n", a->type != NC_CHAR && a->nelems > 8 ? ", ..." : "");
    }
}

static void print_var(const ckpt_nc_t *nc, const ckpt_nc_var_t *v)
{
    printf("  %s %s(", ckpt_nc_type_name(v->type), v->name);
    for (int d = 0; d < v->ndims; d++) printf("%s%s=%lld", d ? ", " : "", nc->dims[v->dimids[d]].name, (long long)nc->dims[v->dimids[d]].len);
    printf(")  begin %lld, %lld bytes\n", (long long)v->begin, (long long)v->vsize);
    print_atts(&v->atts, "    ");
}

static int info(const char *path)
{
    ckpt_nc_t nc;
    unsigned char *region;
    size_t len;
    int rc = ckpt_read_header(MPI_COMM_WORLD, path, FERRY_CKPT_IO_FERRY, &nc, &region, &len);
    if (rc) {
        print_error("info", rc);
        return 1;
    }
    if (rank == 0) {
        long long step = ckpt_nc_step(&nc, path);
        printf("%s: netCDF CDF-%d, %d dimensions, %d variables, header region %zu bytes\n", path, nc.version, nc.ndims,
               nc.nvars, len);
        if (ckpt_nc_att(&nc.gatts, "ferry_series")) printf("  a ferry series of %lld records along time\n", (long long)nc.numrecs);
        else if (ckpt_nc_sealed(&nc)) printf("  a ferry checkpoint of step %lld\n", step);
        else if (step >= 0) printf("  not a ferry checkpoint (no checksums); its name says step %lld\n", step);
        else printf("  not a ferry checkpoint (no checksums, no step)\n");
        print_atts(&nc.gatts, "  ");
        for (int i = 0; i < nc.nvars; i++) print_var(&nc, &nc.vars[i]);
    }
    ckpt_nc_free(&nc);
    ckpt_region_free(region);
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rc = 2;
    if (argc == 3 && strcmp(argv[1], "info") == 0) rc = info(argv[2]);
    else if (argc >= 3 && strcmp(argv[1], "verify") == 0) rc = verify(argc - 2, argv + 2);
    else if (argc == 4 && strcmp(argv[1], "convert") == 0) rc = ckpt_convert(argv[2], argv[3]);
    else if (rank == 0) fprintf(stderr, "usage: ferry-ckpt info <file> | verify <file>... | convert <stacked> <out>\n");
    MPI_Finalize();
    return rc;
}

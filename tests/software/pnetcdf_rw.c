/*
 * PnetCDF over MPI-IO: an ordinary PnetCDF program, linked against the host
 * MPI and Debian's libpnetcdf only (no ferry), run once on the host's MPI-IO
 * and once with libferry-mpiio.so preloaded by software_compare.sh.
 *
 * usage: pnetcdf_rw [twophase] <file> <ferry|host>
 *
 * Defines int variables over dimensions z (3), y (4 per rank), x (5):
 * "coll" written collectively (ncmpi_put_vara_int_all), "indep" in
 * independent data mode (ncmpi_put_vara_int), the record variables "rec"
 * and "rec2" (time unlimited, y, x; 2 records, interleaved in the file)
 * collectively, and "nb1" and "nb2" through the nonblocking API
 * (ncmpi_iput_vara_int, one ncmpi_wait_all). Each rank owns the y slab [4r, 4r + 4), so its part is a
 * strided file region. Then reopens the file read-only and reads every
 * variable back: the whole variable collectively, the own slab
 * independently, and every other x of a shifted box collectively
 * (ncmpi_get_vars_int_all), and the nonblocking ones with ncmpi_iget_vara_int
 * as well; every value is checked. Also checks that ferry
 * serves the file (ncmpi_inq_file_info holds "ferry_version") exactly when
 * the last argument says so. With "twophase", the hints romio_cb_write/
 * romio_cb_read=enable and cb_nodes=2 make collective calls aggregate.
 */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NZ = 3, YR = 4, NX = 5, NREC = 2, NVARS = 6, NB = 4 };

static int rank;
static const char *const names[NVARS] = {"coll", "indep", "rec", "rec2", "nb1", "nb2"};

static int is_record(int v)
{
    return v == 2 || v == 3;
}

static void must(int err, const char *what)
{
    if (err != NC_NOERR) {
        fprintf(stderr, "pnetcdf_rw rank %d: %s: %s\n", rank, what, ncmpi_strerror(err));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static int value(int v, int z, int y, int x)
{
    return ((v * 100 + z) * 1000 + y) * 100 + x;
}

static int served_by_ferry(int ncid)
{
    MPI_Info info;
    must(ncmpi_inq_file_info(ncid, &info), "inq_file_info");
    char text[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_get(info, "ferry_version", MPI_MAX_INFO_VAL, text, &flag);
    MPI_Info_free(&info);
    return flag;
}

static void fill(int v, const MPI_Offset *start, const MPI_Offset *count, int *buf)
{
    for (MPI_Offset z = 0; z < count[0]; z++)
        for (MPI_Offset y = 0; y < count[1]; y++)
            for (MPI_Offset x = 0; x < count[2]; x++)
                buf[(z * count[1] + y) * count[2] + x] =
                    value(v, (int)(start[0] + z), (int)(start[1] + y), (int)(start[2] + x));
}

static void write_file(const char *path, int nprocs, int expect_ferry, MPI_Info info)
{
    int ncid, dims[4], var[NVARS];
    must(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, info, &ncid), "create");
    if (served_by_ferry(ncid) != expect_ferry) must(NC_EFILE, "file served by the wrong MPI-IO");
    must(ncmpi_def_dim(ncid, "time", NC_UNLIMITED, &dims[0]), "def_dim time");
    must(ncmpi_def_dim(ncid, "z", NZ, &dims[1]), "def_dim z");
    must(ncmpi_def_dim(ncid, "y", (MPI_Offset)YR * nprocs, &dims[2]), "def_dim y");
    must(ncmpi_def_dim(ncid, "x", NX, &dims[3]), "def_dim x");
    for (int v = 0; v < NVARS; v++)
        must(ncmpi_def_var(ncid, names[v], NC_INT, 3, is_record(v) ? (int[]){dims[0], dims[2], dims[3]} : &dims[1],
                           &var[v]),
             "def_var");
    must(ncmpi_put_att_text(ncid, NC_GLOBAL, "title", 5, "ferry"), "put_att");
    must(ncmpi_enddef(ncid), "enddef");

    int buf[NZ * YR * NX];
    MPI_Offset start[3] = {0, (MPI_Offset)YR * rank, 0}, count[3] = {NZ, YR, NX};
    fill(0, start, count, buf);
    must(ncmpi_put_vara_int_all(ncid, var[0], start, count, buf), "put_vara_int_all coll");
    must(ncmpi_begin_indep_data(ncid), "begin_indep_data");
    fill(1, start, count, buf);
    must(ncmpi_put_vara_int(ncid, var[1], start, count, buf), "put_vara_int indep");
    must(ncmpi_end_indep_data(ncid), "end_indep_data");
    MPI_Offset rstart[3] = {0, (MPI_Offset)YR * rank, 0}, rcount[3] = {NREC, YR, NX};
    for (int v = 2; v < NB; v++) {
        fill(v, rstart, rcount, buf);
        must(ncmpi_put_vara_int_all(ncid, var[v], rstart, rcount, buf), "put_vara_int_all rec");
    }
    /* PnetCDF's nonblocking API: both puts become one collective MPI-IO write in wait_all. */
    int nbuf[2][NZ * YR * NX], req[2], st[2];
    for (int v = NB; v < NVARS; v++) {
        fill(v, start, count, nbuf[v - NB]);
        must(ncmpi_iput_vara_int(ncid, var[v], start, count, nbuf[v - NB], &req[v - NB]), "iput_vara_int");
    }
    must(ncmpi_wait_all(ncid, 2, req, st), "wait_all puts");
    must(st[0] != NC_NOERR ? st[0] : st[1], "iput status");
    must(ncmpi_close(ncid), "close after writing");
}

/* Reads start/count/stride of variable v, collectively or not, and checks every value. */
static void read_check(int ncid, int v, int collective, const MPI_Offset *start, const MPI_Offset *count,
                       const MPI_Offset *stride)
{
    size_t n = (size_t)(count[0] * count[1] * count[2]);
    int *buf = malloc(sizeof(int) * n);
    memset(buf, 0xff, sizeof(int) * n);
    must(collective ? ncmpi_get_vars_int_all(ncid, v, start, count, stride, buf)
                    : ncmpi_get_vars_int(ncid, v, start, count, stride, buf),
         collective ? "get_vars_int_all" : "get_vars_int");
    for (MPI_Offset a = 0; a < count[0]; a++)
        for (MPI_Offset b = 0; b < count[1]; b++)
            for (MPI_Offset c = 0; c < count[2]; c++) {
                int at[3] = {(int)(start[0] + a * stride[0]), (int)(start[1] + b * stride[1]),
                             (int)(start[2] + c * stride[2])};
                int want = value(v, at[0], at[1], at[2]), got = buf[(a * count[1] + b) * count[2] + c];
                if (got != want) {
                    fprintf(stderr, "pnetcdf_rw rank %d: %s[%d][%d][%d] is %d, want %d\n", rank, names[v], at[0],
                            at[1], at[2], got, want);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
    free(buf);
}

static void read_file(const char *path, int nprocs, int expect_ferry, MPI_Info info)
{
    int ncid;
    must(ncmpi_open(MPI_COMM_WORLD, path, NC_NOWRITE, info, &ncid), "open");
    if (served_by_ferry(ncid) != expect_ferry) must(NC_EFILE, "reopened file served by the wrong MPI-IO");
    MPI_Offset nrec = -1;
    must(ncmpi_inq_unlimdim(ncid, &(int){0}), "inq_unlimdim");
    must(ncmpi_inq_dimlen(ncid, 0, &nrec), "inq_dimlen");
    if (nrec != NREC) must(NC_EINVALCOORDS, "record count");
    MPI_Offset unit[3] = {1, 1, 1}, every_other_x[3] = {1, 1, 2};
    for (int v = 0; v < NVARS; v++) {
        MPI_Offset first = is_record(v) ? NREC : NZ;
        MPI_Offset all_start[3] = {0, 0, 0}, all_count[3] = {first, (MPI_Offset)YR * nprocs, NX};
        read_check(ncid, v, 1, all_start, all_count, unit);
        MPI_Offset shifted_start[3] = {1, (MPI_Offset)rank, 1}, shifted_count[3] = {first - 1, YR + 1, NX / 2};
        read_check(ncid, v, 1, shifted_start, shifted_count, every_other_x);
        must(ncmpi_begin_indep_data(ncid), "begin_indep_data");
        MPI_Offset own_start[3] = {0, (MPI_Offset)YR * rank, 0}, own_count[3] = {first, YR, NX};
        read_check(ncid, v, 0, own_start, own_count, unit);
        must(ncmpi_end_indep_data(ncid), "end_indep_data");
    }
    /* Both nonblocking variables in one wait_all, each rank the slab above its own. */
    MPI_Offset start[3] = {0, (MPI_Offset)YR * ((rank + 1) % nprocs), 0}, count[3] = {NZ, YR, NX};
    int got[2][NZ * YR * NX], want[NZ * YR * NX], req[2], st[2];
    for (int v = NB; v < NVARS; v++)
        must(ncmpi_iget_vara_int(ncid, v, start, count, got[v - NB], &req[v - NB]), "iget_vara_int");
    must(ncmpi_wait_all(ncid, 2, req, st), "wait_all gets");
    must(st[0] != NC_NOERR ? st[0] : st[1], "iget status");
    for (int v = NB; v < NVARS; v++) {
        fill(v, start, count, want);
        if (memcmp(got[v - NB], want, sizeof want) != 0) must(NC_EINVAL, "iget_vara_int data");
    }
    must(ncmpi_close(ncid), "close after reading");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int twophase = argc == 4 && strcmp(argv[1], "twophase") == 0;
    if (argc != 3 + twophase) must(NC_EINVAL, "usage: pnetcdf_rw [twophase] <file> <ferry|host>");
    const char *path = argv[1 + twophase], *mode = argv[2 + twophase];
    int expect_ferry = strcmp(mode, "ferry") == 0;
    MPI_Info info;
    MPI_Info_create(&info);
    if (twophase) {
        MPI_Info_set(info, "romio_cb_write", "enable");
        MPI_Info_set(info, "romio_cb_read", "enable");
        MPI_Info_set(info, "cb_nodes", "2");
    }
    write_file(path, nprocs, expect_ferry, info);
    read_file(path, nprocs, expect_ferry, info);
    MPI_Info_free(&info);
    if (rank == 0)
        printf("pnetcdf_rw: %d ranks%s, %d variables written and read back (%s)\n", nprocs,
               twophase ? ", two-phase hints" : "", NVARS, mode);
    MPI_Finalize();
    return 0;
}

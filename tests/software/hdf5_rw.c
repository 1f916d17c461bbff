/*
 * Parallel HDF5 over MPI-IO: an ordinary HDF5 program, linked against the
 * host MPI and Debian's parallel HDF5 only (no ferry), run once on the host's
 * MPI-IO and once with libferry-mpiio.so preloaded by software_compare.sh.
 *
 * usage: hdf5_rw [collmeta] [twophase] <file> <ferry|host>
 *
 * Writes a 3-D int dataset (X x Y x Z, Y = 3 per rank, each rank owning the
 * y slab [3r, 3r+3), so a rank's part of a contiguous dataset is a strided
 * file region that HDF5 describes with a derived MPI filetype) five times:
 * contiguous and chunked (chunks of 4 x 2 x Z straddle the ranks' slabs),
 * each collectively (H5FD_MPIO_COLLECTIVE, asserting that HDF5 really did
 * collective I/O) and independently, and chunked with deflate compression
 * collectively (parallel filtered writes; not with collmeta, see main). Then reopens the file read-only and
 * reads each dataset back: every rank its own slab independently, the whole
 * dataset collectively, and a strided hyperslab (every other z) collectively;
 * every value is checked. Also checks that H5F_ACC_EXCL on an existing file
 * fails (MPI_MODE_EXCL), that the file is not in atomic mode, and that
 * ferry serves the file (the MPI_File handle's get_info holds
 * "ferry_version") exactly when the last argument says so. With
 * "collmeta", metadata reads and writes are collective as well; with
 * "twophase", the hints romio_cb_write/romio_cb_read=enable and cb_nodes=2
 * make collective calls aggregate (ferry's and ROMIO's two-phase I/O)
 * instead of letting the MPI-IO choose.
 * Object modification times are off and datasets are filled (-1) when
 * allocated, so the two runs' files compare byte for byte.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { X = 6, YR = 3, Z = 7, CX = 4, CY = 2, NSETS = 5, DEFLATE = 4 };

static int rank;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "hdf5_rw rank %d: %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static int value(int d, int x, int y, int z)
{
    return ((d * 100 + x) * 1000 + y) * 100 + z;
}

static int nsets = NSETS; /* without the deflated dataset under collective metadata (main) */
static const char *const names[NSETS] = {"contig_coll", "contig_indep", "chunked_coll", "chunked_indep",
                                          "deflate_coll"};

static hid_t transfer_plist(int collective)
{
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    check(H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT) >= 0, "set_dxpl_mpio");
    return dxpl;
}

static hid_t access_plist(int collmeta, int twophase)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    MPI_Info info = MPI_INFO_NULL;
    if (twophase) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_cb_write", "enable");
        MPI_Info_set(info, "romio_cb_read", "enable");
        MPI_Info_set(info, "cb_nodes", "2");
    }
    check(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info) >= 0, "set_fapl_mpio");
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    if (collmeta) {
        check(H5Pset_all_coll_metadata_ops(fapl, 1) >= 0, "set_all_coll_metadata_ops");
        check(H5Pset_coll_metadata_write(fapl, 1) >= 0, "set_coll_metadata_write");
    }
    return fapl;
}

/* Whether the file's MPI_File handle is served by ferry. */
static int served_by_ferry(hid_t file, hid_t fapl)
{
    MPI_File *fh = NULL;
    check(H5Fget_vfd_handle(file, fapl, (void **)&fh) >= 0 && fh, "get_vfd_handle");
    MPI_Info info;
    check(MPI_File_get_info(*fh, &info) == MPI_SUCCESS, "MPI_File_get_info");
    char text[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_get(info, "ferry_version", MPI_MAX_INFO_VAL, text, &flag);
    MPI_Info_free(&info);
    return flag;
}

static void write_datasets(hid_t file, int nprocs)
{
    hsize_t dims[3] = {X, (hsize_t)YR * nprocs, Z}, chunk[3] = {CX, CY, Z};
    hsize_t start[3] = {0, (hsize_t)YR * rank, 0}, count[3] = {X, YR, Z};
    hid_t filespace = H5Screate_simple(3, dims, NULL), memspace = H5Screate_simple(3, count, NULL);
    check(H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0, "select slab");
    int *buf = malloc(sizeof(int) * X * YR * Z);
    for (int d = 0; d < nsets; d++) {
        hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_obj_track_times(dcpl, 0);
        if (d >= 2) H5Pset_chunk(dcpl, 3, chunk);
        if (d == DEFLATE) {
            H5Pset_deflate(dcpl, 1); /* parallel filtered writes: whole compressed chunks, collective */
        } else {
            /* Filled when allocated: no byte of an edge chunk stays a hole, which a host
             * aggregator may fill with whatever its buffer held (seen under ASan: 0xbe). */
            int fill = -1;
            H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
            H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC);
        }
        hid_t dset = H5Dcreate2(file, names[d], H5T_STD_I32LE, filespace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        check(dset >= 0, "H5Dcreate2");
        for (int x = 0; x < X; x++)
            for (int y = 0; y < YR; y++)
                for (int z = 0; z < Z; z++) buf[(x * YR + y) * Z + z] = value(d, x, YR * rank + y, z);
        int collective = d % 2 == 0;
        hid_t dxpl = transfer_plist(collective);
        check(H5Dwrite(dset, H5T_NATIVE_INT, memspace, filespace, dxpl, buf) >= 0, "H5Dwrite");
        H5D_mpio_actual_io_mode_t mode;
        check(H5Pget_mpio_actual_io_mode(dxpl, &mode) >= 0, "get_mpio_actual_io_mode");
        check(collective == (mode != H5D_MPIO_NO_COLLECTIVE), "HDF5 did not do the I/O mode asked for");
        H5Pclose(dxpl);
        H5Dclose(dset);
        H5Pclose(dcpl);
    }
    free(buf);
    H5Sclose(memspace);
    H5Sclose(filespace);
}

/* Reads the selection start/count/stride of dataset d into a packed buffer and checks every value. */
static void read_check(hid_t dset, int d, int collective, const hsize_t *start, const hsize_t *count,
                       const hsize_t *stride)
{
    hid_t filespace = H5Dget_space(dset), memspace = H5Screate_simple(3, count, NULL);
    check(H5Sselect_hyperslab(filespace, H5S_SELECT_SET, start, stride, count, NULL) >= 0, "select");
    size_t n = count[0] * count[1] * count[2];
    int *buf = malloc(sizeof(int) * n);
    memset(buf, 0xff, sizeof(int) * n);
    hid_t dxpl = transfer_plist(collective);
    check(H5Dread(dset, H5T_NATIVE_INT, memspace, filespace, dxpl, buf) >= 0, "H5Dread");
    for (hsize_t x = 0; x < count[0]; x++)
        for (hsize_t y = 0; y < count[1]; y++)
            for (hsize_t z = 0; z < count[2]; z++) {
                int want = value(d, (int)(start[0] + x * stride[0]), (int)(start[1] + y * stride[1]),
                                 (int)(start[2] + z * stride[2]));
                int got = buf[(x * count[1] + y) * count[2] + z];
                if (got != want) {
                    fprintf(stderr, "hdf5_rw rank %d: %s[%d][%d][%d] is %d, want %d\n", rank, names[d],
                            (int)(start[0] + x * stride[0]), (int)(start[1] + y * stride[1]),
                            (int)(start[2] + z * stride[2]), got, want);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
    free(buf);
    H5Pclose(dxpl);
    H5Sclose(memspace);
    H5Sclose(filespace);
}

static void read_datasets(hid_t file, int nprocs)
{
    hsize_t unit[3] = {1, 1, 1}, every_other_z[3] = {1, 1, 2};
    for (int d = 0; d < nsets; d++) {
        hid_t dset = H5Dopen2(file, names[d], H5P_DEFAULT);
        check(dset >= 0, "H5Dopen2");
        hsize_t own_start[3] = {0, (hsize_t)YR * rank, 0}, own_count[3] = {X, YR, Z};
        read_check(dset, d, 0, own_start, own_count, unit);
        hsize_t all_start[3] = {0, 0, 0}, all_count[3] = {X, (hsize_t)YR * nprocs, Z};
        read_check(dset, d, 1, all_start, all_count, unit);
        hsize_t odd_start[3] = {1, (hsize_t)rank, 1}, odd_count[3] = {X - 1, (hsize_t)YR * nprocs - rank, Z / 2};
        read_check(dset, d, 1, odd_start, odd_count, every_other_z);
        H5Dclose(dset);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int collmeta = 0, twophase = 0, arg = 1;
    for (; arg < argc - 2; arg++) {
        collmeta |= strcmp(argv[arg], "collmeta") == 0;
        twophase |= strcmp(argv[arg], "twophase") == 0;
    }
    check(argc >= 3 && arg - 1 == collmeta + twophase, "usage: hdf5_rw [collmeta] [twophase] <file> <ferry|host>");
    const char *path = argv[arg], *mode = argv[arg + 1];
    /* HDF5 never writes the first, uncompressed allocation of a deflated dataset's
     * chunks; a collective metadata write spanning that space past the end of
     * the file is served by ROMIO with its buffer's stale bytes there (ferry
     * leaves a hole), so the files would differ in bytes nobody wrote. */
    if (collmeta) nsets = DEFLATE;
    int expect_ferry = strcmp(mode, "ferry") == 0;

    hid_t fapl = access_plist(collmeta, twophase);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    check(file >= 0, "H5Fcreate");
    check(served_by_ferry(file, fapl) == expect_ferry, expect_ferry ? "file not served by ferry" : "ferry served the host run");
    hbool_t atomic = 1;
    check(H5Fget_mpi_atomicity(file, &atomic) >= 0 && !atomic, "H5Fget_mpi_atomicity");
    write_datasets(file, nprocs);
    check(H5Fflush(file, H5F_SCOPE_GLOBAL) >= 0, "H5Fflush");
    check(H5Fclose(file) >= 0, "H5Fclose");

    /* The file exists now: exclusive creation must fail on every rank. */
    H5E_auto2_t old_func;
    void *old_data;
    H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t excl = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
    check(excl < 0, "H5F_ACC_EXCL on an existing file succeeded");

    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    check(file >= 0, "H5Fopen");
    check(served_by_ferry(file, fapl) == expect_ferry, "reopened file served by the wrong MPI-IO");
    read_datasets(file, nprocs);
    check(H5Fclose(file) >= 0, "H5Fclose after reading");
    H5Pclose(fapl);
    if (rank == 0) printf("hdf5_rw: %d ranks%s%s, %d datasets written and read back (%s)\n", nprocs,
                          collmeta ? ", collective metadata" : "", twophase ? ", two-phase hints" : "", nsets, mode);
    MPI_Finalize();
    return 0;
}

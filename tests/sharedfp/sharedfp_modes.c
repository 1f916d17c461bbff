/*
 * The shared file pointer under the access modes and develop mode:
 * MPI_MODE_SEQUENTIAL (shared-pointer calls only; seek_shared, explicit
 * offsets and the individual pointer refused with
 * MPI_ERR_UNSUPPORTED_OPERATION; set_view takes MPI_DISPLACEMENT_CURRENT,
 * which is where the shared pointer is), MPI_MODE_APPEND (both pointers
 * start at end of file), MPI_MODE_DELETE_ON_CLOSE with shared-pointer
 * writes, and seek_shared with differing offsets in develop mode
 * (MPI_ERR_NOT_SAME on every rank, no hang).
 */
#include <string.h>
#include <unistd.h>

#include "ferry_test.h"

static MPI_Offset shared_position(ferry_File fh)
{
    MPI_Offset p = -1;
    FT_OK(ferry_File_get_position_shared(fh, &p));
    return p;
}

static void sequential(const char *path)
{
    const int unsup = MPI_ERR_UNSUPPORTED_OPERATION;
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_SEQUENTIAL | MPI_MODE_CREATE | MPI_MODE_WRONLY,
                          MPI_INFO_NULL, &fh));
    char rec[6];
    memset(rec, 'a' + ft_rank, sizeof rec);
    FT_OK(ferry_File_write_ordered(fh, rec, 6, MPI_CHAR, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_write_shared(fh, rec, 2, MPI_CHAR, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_sync(fh));
    FT_EQ(shared_position(fh), 8 * ft_size);
    FT_FAILS_NAMING(unsup, path, ferry_File_seek_shared(fh, 0, MPI_SEEK_SET));
    FT_FAILS_NAMING(unsup, path, ferry_File_write_at(fh, 0, rec, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(unsup, path, ferry_File_write(fh, rec, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(unsup, path, ferry_File_write_all(fh, rec, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    /* set_view: only MPI_DISPLACEMENT_CURRENT, and it is the shared pointer's byte */
    FT_FAILS(MPI_ERR_ARG, ferry_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset disp = -1;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    FT_OK(ferry_File_get_view(fh, &disp, &et, &ft, rep));
    FT_EQ(disp, 8 * ft_size);
    FT_EQ(shared_position(fh), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    int v = 1000 + ft_rank;
    FT_OK(ferry_File_write_ordered(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    FT_EQ(shared_position(fh), ft_size);
    FT_OK(ferry_File_close(&fh));
    /* Read it all back sequentially. */
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_SEQUENTIAL | MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_FAILS_NAMING(unsup, path, ferry_File_read_at(fh, 0, rec, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(unsup, path, ferry_File_read_all(fh, rec, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    char got[6];
    FT_OK(ferry_File_read_ordered(fh, got, 6, MPI_CHAR, MPI_STATUS_IGNORE));
    FT_EQ_MEM(got, rec, 6);
    FT_OK(ferry_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_CHAR, MPI_CHAR, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_get_view(fh, &disp, &et, &ft, rep));
    FT_EQ(disp, 6 * ft_size);
    FT_FAILS_NAMING(unsup, path, ferry_File_seek_shared(fh, 0, MPI_SEEK_SET));
    FT_OK(ferry_File_close(&fh));
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_FAILS(MPI_ERR_ARG, ferry_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int tail[64] = {0};
    FT_OK(ferry_File_read_at(fh, 8 * ft_size, tail, ft_size, MPI_INT, MPI_STATUS_IGNORE));
    for (int r = 0; r < ft_size; r++) FT_EQ(tail[r], 1000 + r);
    FT_OK(ferry_File_close(&fh));
}

static void append(const char *path)
{
    if (ft_rank == 0) {
        FILE *f = fopen(path, "wb");
        FT_CHECK(f && fwrite("0123456789", 1, 10, f) == 10);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_APPEND | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_Offset individual = -1;
    FT_OK(ferry_File_get_position(fh, &individual));
    FT_EQ(individual, 10);
    FT_EQ(shared_position(fh), 10);
    MPI_Barrier(MPI_COMM_WORLD);
    char c = (char)('A' + ft_rank);
    FT_OK(ferry_File_write_ordered(fh, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    FT_EQ(shared_position(fh), 10 + ft_size);
    FT_OK(ferry_File_close(&fh));
    if (ft_rank == 0) {
        char got[32] = {0}, want[32] = "0123456789";
        for (int r = 0; r < ft_size; r++) want[10 + r] = (char)('A' + r);
        FILE *f = fopen(path, "rb");
        FT_EQ(fread(got, 1, sizeof got, f), 10 + ft_size);
        fclose(f);
        FT_EQ_MEM(got, want, (size_t)(10 + ft_size));
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void delete_on_close(const char *path)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh));
    int v = ft_rank;
    FT_OK(ferry_File_write_shared(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_write_ordered(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_CHECK(access(path, F_OK) == 0);
    FT_EQ(shared_position(fh), 8 * ft_size);
    FT_OK(ferry_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_CHECK(access(path, F_OK) != 0);
}

static void develop_mismatch(const char *path)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ferry_develop", "true");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    FT_OK(ferry_File_seek_shared(fh, 4, MPI_SEEK_SET));
    FT_FAILS_NAMING(MPI_ERR_NOT_SAME, NULL, ferry_File_seek_shared(fh, ft_rank == 1 ? 8 : 12, MPI_SEEK_SET));
    FT_FAILS_NAMING(MPI_ERR_NOT_SAME, NULL, ferry_File_seek_shared(fh, 0, ft_rank == 2 ? MPI_SEEK_CUR : MPI_SEEK_SET));
    FT_EQ(shared_position(fh), 4);
    FT_OK(ferry_File_close(&fh));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    sequential(ft_path("sequential"));
    append(ft_path("append"));
    delete_on_close(ft_path("delete-on-close"));
    develop_mismatch(ft_path("develop"));
    return ft_finish();
}

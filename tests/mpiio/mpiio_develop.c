/*
 * Develop mode: arguments that must match across ranks are checked, and a
 * mismatch fails the collective on every rank with MPI_ERR_NOT_SAME, the
 * message naming the argument and two ranks; nothing is half done (the old
 * view stays, the size is unchanged, no handle is left). Enabled by the
 * ferry_develop hint here; tests/mpiio/CMakeLists.txt also runs this
 * program with FERRY_DEVELOP=1 for the checks at open.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

static void expect_not_same(int code, const char *argument)
{
    FT_CHECK(code != MPI_SUCCESS);
    FT_EQ(ft_class(code), MPI_ERR_NOT_SAME);
    if (!strstr(ft_message, argument)) ft_fail(__FILE__, __LINE__, "message lacks '%s': %s", argument, ft_message);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    int from_environment = getenv("FERRY_DEVELOP") != NULL;
    const char *last = ft_rank == ft_size - 1 ? "odd" : "even";
    if (from_environment && ft_size > 1) {
        ferry_File fh = (ferry_File)&fh;
        int rc = ft_capture(ferry_File_open(MPI_COMM_WORLD, ft_path(last), MPI_MODE_CREATE | MPI_MODE_RDWR,
                                         MPI_INFO_NULL, &fh));
        expect_not_same(rc, "filename");
        FT_CHECK(fh == FERRY_FILE_NULL);
        rc = ft_capture(ferry_File_open(MPI_COMM_WORLD, ft_path("amode"),
                                     MPI_MODE_CREATE | (ft_rank ? MPI_MODE_RDWR : MPI_MODE_WRONLY), MPI_INFO_NULL,
                                     &fh));
        expect_not_same(rc, "amode");
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ferry_develop", "true");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("data"), MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    FT_OK(ferry_File_set_size(fh, 100));
    if (ft_size > 1) {
        expect_not_same(ft_capture(ferry_File_set_size(fh, ft_rank == 0 ? 50 : 60)), "size");
        MPI_Offset size = 0;
        FT_OK(ferry_File_get_size(fh, &size));
        FT_EQ(size, 100);
        expect_not_same(ft_capture(ferry_File_preallocate(fh, 200 + ft_rank)), "size");
        expect_not_same(ft_capture(ferry_File_set_atomicity(fh, ft_rank == 0)), "flag");
        FT_OK(ferry_File_set_view(fh, 8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
        expect_not_same(ft_capture(ferry_File_set_view(fh, 0, ft_rank ? MPI_INT : MPI_DOUBLE,
                                                    ft_rank ? MPI_INT : MPI_DOUBLE, "native", MPI_INFO_NULL)),
                        "etype extent");
        MPI_Offset disp;
        MPI_Datatype etype, filetype;
        char rep[MPI_MAX_DATAREP_STRING];
        FT_OK(ferry_File_get_view(fh, &disp, &etype, &filetype, rep));
        FT_EQ(disp, 8);
        /* Displacements may differ: that is not a mismatch. */
        FT_OK(ferry_File_set_view(fh, 4 * ft_rank, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        /* Hints that change the collective path must match, at set_view and at set_info. */
        MPI_Info cb;
        MPI_Info_create(&cb);
        MPI_Info_set(cb, "cb_nodes", ft_rank ? "2" : "1");
        expect_not_same(ft_capture(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", cb)), "collective hints");
        expect_not_same(ft_capture(ferry_File_set_info(fh, cb)), "collective hints");
        MPI_Info_set(cb, "cb_nodes", "1");
        FT_OK(ferry_File_set_info(fh, cb));
        MPI_Info_free(&cb);
    }
    /* Turning develop mode off everywhere stops the checks. */
    MPI_Info_set(info, "ferry_develop", "false");
    FT_OK(ferry_File_set_info(fh, info));
    if (!from_environment) FT_OK(ferry_File_set_atomicity(fh, 0));
    FT_OK(ferry_File_close(&fh));
    MPI_Info_free(&info);
    return ft_finish();
}

/*
 * System hints files: ROMIO_HINTS is read like FERRY_HINTS ("key value"
 * lines, '#' comments, unknown keys ignored), ferry's own file wins a key
 * both set, the user's info wins over both, and an unreadable file or a
 * rejected value is reported in ferry_hints_rejected.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

/* Opens the test's file with info under the environment as it stands. */
static void open_with(MPI_Info info, ferry_File *fh)
{
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("data"), MPI_MODE_CREATE | MPI_MODE_RDWR, info, fh));
}

static void expect_sizes(long long cb, long long ind_rd, long long ind_wr, MPI_Info info)
{
    ferry_File fh;
    open_with(info, &fh);
    FT_EQ(ft_info_number(fh, "cb_buffer_size"), cb);
    FT_EQ(ft_info_number(fh, "ind_rd_buffer_size"), ind_rd);
    FT_EQ(ft_info_number(fh, "ind_wr_buffer_size"), ind_wr);
    FT_OK(ferry_File_close(&fh));
}

static void expect_rejected(const char *needle)
{
    ferry_File fh;
    open_with(MPI_INFO_NULL, &fh);
    const char *rejected = ft_info_string(fh, "ferry_hints_rejected");
    if (!strstr(rejected, needle)) ft_fail(__FILE__, __LINE__, "'%s' not in rejected '%s'", needle, rejected);
    FT_OK(ferry_File_close(&fh));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const long long cb = 1 << 20, ind = 1 << 20; /* the defaults (docs/hints.md) */
    const char *romio = ft_write_text("romio-hints", "# a site's ROMIO hints file\n"
                                                  "cb_buffer_size 2097152\n"
                                                  "ind_rd_buffer_size 65536  \n"
                                                  "romio_lustre_co_ratio 2\n"
                                                  "\n");
    const char *ferry = ft_write_text("ferry-hints", "cb_buffer_size 4194304\nind_wr_buffer_size\t131072\n");
    const char *bad = ft_write_text("bad-hints", "cb_buffer_size lots\n");

    setenv("ROMIO_HINTS", romio, 1);
    expect_sizes(2097152, 65536, ind, MPI_INFO_NULL); /* ROMIO's file alone */
    setenv("FERRY_HINTS", ferry, 1);
    expect_sizes(4194304, 65536, 131072, MPI_INFO_NULL); /* ferry's wins cb_buffer_size */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "524288");
    expect_sizes(524288, 65536, 131072, info); /* the user's wins over both */
    MPI_Info_free(&info);
    unsetenv("FERRY_HINTS");
    setenv("ROMIO_HINTS", ft_path("no-such-hints-file"), 1);
    expect_rejected("ROMIO_HINTS");
    expect_sizes(cb, ind, ind, MPI_INFO_NULL);
    setenv("ROMIO_HINTS", bad, 1);
    expect_rejected("cb_buffer_size=lots");
    unsetenv("ROMIO_HINTS");
    expect_sizes(cb, ind, ind, MPI_INFO_NULL);
    return ft_finish();
}

/*
 * Count hints (cb_nodes, striping_factor, ferry_cb_group_size, the N of
 * cb_config_list "*:N") are numbers of things, parsed as decimal counts: a
 * byte-size suffix ("2k") is rejected and reported, the previous value stays.
 * Byte sizes keep their k/m/g suffixes.
 */
#include <stdio.h>
#include <string.h>

#include "ferry_test.h"

static void open_with(const char *const pairs[][2], int n, ferry_File *fh)
{
    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 0; i < n; i++) MPI_Info_set(info, (char *)pairs[i][0], (char *)pairs[i][1]);
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("data"), MPI_MODE_CREATE | MPI_MODE_RDWR, info, fh));
    MPI_Info_free(&info);
}

static void expect_rejected(ferry_File fh, const char *needle)
{
    const char *rejected = ft_info_string(fh, "ferry_hints_rejected");
    if (!strstr(rejected, needle)) ft_fail(__FILE__, __LINE__, "'%s' not in rejected '%s'", needle, rejected);
}

/* 1 when get_info reports ferry_hints_rejected. */
static int something_rejected(ferry_File fh)
{
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int found = 0;
    FT_OK(ferry_File_get_info(fh, &info));
    MPI_Info_get(info, "ferry_hints_rejected", MPI_MAX_INFO_VAL, value, &found);
    MPI_Info_free(&info);
    return found;
}

static void suffixed_counts_are_rejected(void)
{
    const char *const pairs[][2] = {{"cb_nodes", "2k"},
                                    {"striping_factor", "4K"},
                                    {"ferry_cb_group_size", "1m"},
                                    {"cb_config_list", "*:2k"},
                                    {"cb_buffer_size", "2m"}};
    ferry_File fh;
    open_with(pairs, 5, &fh);
    FT_EQ(ft_info_number(fh, "cb_nodes"), 0); /* the defaults (docs/hints.md) */
    FT_EQ(ft_info_number(fh, "striping_factor"), 0);
    FT_EQ(ft_info_number(fh, "ferry_cb_group_size"), 1);
    FT_CHECK(strcmp(ft_info_string(fh, "cb_config_list"), "*:*") == 0);
    FT_EQ(ft_info_number(fh, "cb_buffer_size"), 2 << 20); /* a byte size: the suffix stands */
    expect_rejected(fh, "cb_nodes=2k (not a count");
    expect_rejected(fh, "striping_factor=4K (not a count");
    expect_rejected(fh, "ferry_cb_group_size=1m (not a count");
    expect_rejected(fh, "cb_config_list=*:2k");
    FT_OK(ferry_File_close(&fh));
}

static void plain_counts_are_taken(void)
{
    const char *const pairs[][2] = {
        {"cb_nodes", "2"}, {"striping_factor", "4"}, {"ferry_cb_group_size", "2"}, {"cb_config_list", "*:1"}};
    ferry_File fh;
    open_with(pairs, 4, &fh);
    FT_EQ(ft_info_number(fh, "cb_nodes"), 2);
    FT_EQ(ft_info_number(fh, "striping_factor"), 4);
    FT_EQ(ft_info_number(fh, "ferry_cb_group_size"), 2);
    FT_CHECK(strcmp(ft_info_string(fh, "cb_config_list"), "*:1") == 0);
    FT_CHECK(!something_rejected(fh));
    /* A count is not a byte size in the other direction either: set_info rejects these too. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_nodes", "1g");
    MPI_Info_set(info, "striping_factor", "-1");
    FT_OK(ferry_File_set_info(fh, info));
    MPI_Info_free(&info);
    FT_EQ(ft_info_number(fh, "cb_nodes"), 2);
    FT_EQ(ft_info_number(fh, "striping_factor"), 4);
    expect_rejected(fh, "cb_nodes=1g (not a count");
    expect_rejected(fh, "striping_factor=-1 (not a count");
    FT_OK(ferry_File_close(&fh));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    suffixed_counts_are_rejected();
    plain_counts_are_taken();
    return ft_finish();
}

/*
 * File manipulation and queries (MPI-3.1 13.2.2-13.2.8, 13.5.1, 13.6):
 * c2f/f2c round trips, get_group, get_amode, set_size (shrink and grow,
 * with the bytes checked), preallocate (never shrinks, keeps data),
 * get_size, sync, get_info (ferry_version, effective hint values, rejected
 * hints reported) and set_info, get_type_extent, atomicity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

/* The size, once every rank has asked (so no rank's next resize runs first). */
static MPI_Offset size_of(ferry_File fh)
{
    MPI_Offset size = -1;
    FT_OK(ferry_File_get_size(fh, &size));
    MPI_Barrier(MPI_COMM_WORLD);
    return size;
}

static void handles(ferry_File fh)
{
    MPI_Fint f = ferry_File_c2f(fh);
    FT_CHECK(f != 0);
    FT_CHECK(ferry_File_f2c(f) == fh);
    FT_EQ(ferry_File_c2f(fh), f); /* stable */
    FT_EQ(ferry_File_c2f(FERRY_FILE_NULL), 0);
    FT_CHECK(ferry_File_f2c(0) == FERRY_FILE_NULL);
    FT_CHECK(ferry_File_f2c(f + 1000) == FERRY_FILE_NULL);
    ferry_File other;
    char name[32];
    snprintf(name, sizeof name, "other-%d", ft_rank);
    FT_OK(ferry_File_open(MPI_COMM_SELF, ft_path(name), MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                          MPI_INFO_NULL, &other));
    MPI_Fint g = ferry_File_c2f(other);
    FT_CHECK(g != 0 && g != f);
    FT_CHECK(ferry_File_f2c(g) == other);
    FT_OK(ferry_File_close(&other));
    FT_CHECK(ferry_File_f2c(g) == FERRY_FILE_NULL); /* a closed file's index no longer converts */
    FT_CHECK(ferry_File_f2c(f) == fh);
}

static void group_and_amode(ferry_File fh, int amode)
{
    MPI_Group group, world;
    FT_OK(ferry_File_get_group(fh, &group));
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int result = MPI_UNEQUAL;
    MPI_Group_compare(group, world, &result);
    FT_EQ(result, MPI_IDENT);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    int got = 0;
    FT_OK(ferry_File_get_amode(fh, &got));
    FT_EQ(got, amode);
    /* A file on a split communicator has that communicator's group. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, ft_rank % 2, ft_rank, &half);
    ferry_File sub;
    FT_OK(ferry_File_open(half, ft_path(ft_rank % 2 ? "odd" : "even"), MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &sub));
    FT_OK(ferry_File_get_group(sub, &group));
    int gsize = 0;
    MPI_Group_size(group, &gsize);
    FT_EQ(gsize, (ft_size + 1 - ft_rank % 2) / 2);
    MPI_Group_free(&group);
    FT_OK(ferry_File_close(&sub));
    MPI_Comm_free(&half);
}

static void sizes(ferry_File fh)
{
    enum { N = 10000 };
    unsigned char *data = malloc(N), *back = malloc(N), *zeros = calloc(1, N);
    ft_fill(data, N, ft_seed);
    if (ft_rank == 0) FT_OK(ferry_File_write_at(fh, 0, data, N, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_sync(fh));
    FT_EQ(size_of(fh), N);
    FT_OK(ferry_File_set_size(fh, 1000)); /* shrink */
    FT_EQ(size_of(fh), 1000);
    FT_OK(ferry_File_set_size(fh, 3000)); /* grow: the new bytes read as zeros */
    FT_EQ(size_of(fh), 3000);
    MPI_Status st;
    FT_OK(ferry_File_read_at(fh, 0, back, N, MPI_BYTE, &st));
    int got = -1;
    MPI_Get_count(&st, MPI_BYTE, &got);
    FT_EQ(got, 3000);
    FT_EQ_MEM(back, data, 1000);
    FT_EQ_MEM(back + 1000, zeros, 2000);
    FT_OK(ferry_File_preallocate(fh, 2000)); /* never shrinks */
    FT_EQ(size_of(fh), 3000);
    FT_OK(ferry_File_preallocate(fh, 8000)); /* grows, keeping the data */
    FT_EQ(size_of(fh), 8000);
    FT_OK(ferry_File_read_at(fh, 0, back, N, MPI_BYTE, &st));
    FT_EQ_MEM(back, data, 1000);
    FT_EQ_MEM(back + 1000, zeros, 7000);
    FT_OK(ferry_File_preallocate(fh, 0));
    FT_OK(ferry_File_set_size(fh, 0));
    FT_EQ(size_of(fh), 0);
    FT_FAILS(MPI_ERR_ARG, ferry_File_set_size(fh, -1));
    FT_FAILS(MPI_ERR_ARG, ferry_File_preallocate(fh, -1));
    FT_OK(ferry_File_sync(fh));
    free(data);
    free(back);
    free(zeros);
}

static void info(ferry_File fh)
{
    int found = 0;
    const char *v = ft_info_lookup(fh, "ferry_version", &found);
    FT_CHECK(found);
    FT_CHECK(strcmp(v, ferry_version()) == 0);
    v = ft_info_lookup(fh, "ferry_pack_buffer_size", &found);
    FT_CHECK(found);
    FT_CHECK(strcmp(v, "65536") == 0); /* given at open below */
    ft_info_lookup(fh, "ferry_hints_rejected", &found);
    FT_CHECK(!found);

    MPI_Info in;
    MPI_Info_create(&in);
    MPI_Info_set(in, "ferry_pack_buffer_size", "1m");
    MPI_Info_set(in, "no_such_hint_anywhere", "1"); /* no effect, echoed as ROMIO echoes its hints */
    FT_OK(ferry_File_set_info(fh, in));
    MPI_Info_free(&in);
    v = ft_info_lookup(fh, "ferry_pack_buffer_size", &found);
    FT_CHECK(strcmp(v, "1048576") == 0);
    v = ft_info_lookup(fh, "no_such_hint_anywhere", &found);
    FT_CHECK(found && strcmp(v, "1") == 0);
    v = ft_info_lookup(fh, "ferry_hints_ignored", &found);
    FT_CHECK(found && strcmp(v, "no_such_hint_anywhere") == 0);

    /* Rejected values leave the previous value in force and are reported. */
    MPI_Info_create(&in);
    MPI_Info_set(in, "ferry_pack_buffer_size", "12"); /* below the minimum */
    MPI_Info_set(in, "ferry_version", "9.9.9");       /* read-only */
    FT_OK(ferry_File_set_info(fh, in));
    MPI_Info_free(&in);
    v = ft_info_lookup(fh, "ferry_pack_buffer_size", &found);
    FT_CHECK(strcmp(v, "1048576") == 0);
    v = ft_info_lookup(fh, "ferry_hints_rejected", &found);
    FT_CHECK(found);
    FT_CHECK(strstr(v, "ferry_pack_buffer_size=12") != NULL);
    FT_CHECK(strstr(v, "ferry_version") != NULL);
    v = ft_info_lookup(fh, "ferry_version", &found);
    FT_CHECK(strcmp(v, ferry_version()) == 0);
    MPI_Info_create(&in);
    MPI_Info_set(in, "ferry_pack_buffer_size", "lots");
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", in)); /* set_view takes hints too */
    MPI_Info_free(&in);
    v = ft_info_lookup(fh, "ferry_hints_rejected", &found);
    FT_CHECK(found && strstr(v, "lots") != NULL);
    FT_FAILS(MPI_ERR_ARG, ferry_File_get_info(fh, NULL));
}

static void extent_and_atomicity(ferry_File fh)
{
    MPI_Datatype pair;
    MPI_Type_contiguous(3, MPI_DOUBLE, &pair);
    MPI_Type_commit(&pair);
    MPI_Aint extent = -1;
    FT_OK(ferry_File_get_type_extent(fh, pair, &extent));
    FT_EQ(extent, 24);
    FT_OK(ferry_File_get_type_extent(fh, MPI_INT, &extent));
    FT_EQ(extent, sizeof(int));
    MPI_Type_free(&pair);
    int flag = -1;
    FT_OK(ferry_File_get_atomicity(fh, &flag));
    FT_EQ(flag, 0);
    FT_OK(ferry_File_set_atomicity(fh, 7)); /* any nonzero flag */
    FT_OK(ferry_File_get_atomicity(fh, &flag));
    FT_EQ(flag, 1);
    FT_OK(ferry_File_set_atomicity(fh, 0));
    FT_OK(ferry_File_get_atomicity(fh, &flag));
    FT_EQ(flag, 0);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN;
    MPI_Info hints;
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "ferry_pack_buffer_size", "64k");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("manage"), amode, hints, &fh));
    MPI_Info_free(&hints); /* the file keeps no reference */
    handles(fh);
    group_and_amode(fh, amode);
    sizes(fh);
    info(fh);
    extent_and_atomicity(fh);
    MPI_Fint f = ferry_File_c2f(fh);
    FT_OK(ferry_File_close(&fh));
    FT_CHECK(fh == FERRY_FILE_NULL);
    FT_CHECK(ferry_File_f2c(f) == FERRY_FILE_NULL);
    FT_FAILS(MPI_ERR_FILE, ferry_File_get_size(FERRY_FILE_NULL, &(MPI_Offset){0}));
    return ft_finish();
}

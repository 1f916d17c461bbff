/*
 * Data sieving and its locks, seen from outside: many ranks rewriting
 * interleaved 8-byte blocks through small sieving windows lose no update;
 * the statistics show which way each call went; a file system that refuses
 * locks turns sieving writes off without losing data; reads through a view
 * stop at end of file with the right count; the individual pointer moves
 * in etypes through a view, and SEEK_END counts the etypes below the end.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"
#include "fs/fs.h"

enum { BLOCK = 8, BLOCKS = 512, ROUNDS = 30 };

static ferry_File open_with(const char *name, const char *ds_write, const char *ds_read, MPI_Datatype view)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", (char *)ds_write);
    MPI_Info_set(info, "romio_ds_read", (char *)ds_read);
    MPI_Info_set(info, "ind_wr_buffer_size", "4096");
    MPI_Info_set(info, "ind_rd_buffer_size", "4096");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    FT_OK(ferry_File_set_view(fh, (MPI_Offset)BLOCK * ft_rank, MPI_BYTE, view, "native", info));
    MPI_Info_free(&info);
    return fh;
}

/* Rank 0 checks that the file holds every rank's data of `round`. */
static void check_round(const char *name, int round)
{
    size_t size = (size_t)BLOCK * BLOCKS * (size_t)ft_size;
    char *file = malloc(size), *expect = malloc(size), *theirs = malloc(BLOCK * BLOCKS);
    FILE *f = fopen(ft_path(name), "rb");
    FT_CHECK(f && fread(file, 1, size, f) == size);
    fclose(f);
    for (int r = 0; r < ft_size; r++) {
        ft_fill(theirs, BLOCK * BLOCKS, ft_seed + (uint64_t)(round * 1000 + r));
        for (int k = 0; k < BLOCKS; k++) memcpy(expect + BLOCK * (r + (size_t)k * ft_size), theirs + BLOCK * k, BLOCK);
    }
    for (size_t i = 0; i < size; i++)
        if (file[i] != expect[i])
            ft_fail(__FILE__, __LINE__, "round %d: byte %zu (rank %zu's block) lost its update", round, i,
                    (i / BLOCK) % (size_t)ft_size);
    free(file);
    free(expect);
    free(theirs);
}

/* Every rank rewrites its blocks ROUNDS times, all ranks at once; after
 * each round the file must hold every rank's data of that round: a
 * read-modify-write that raced with a neighbour would bring back the
 * neighbour's previous round. */
static void rewrite_rounds(ferry_File fh, const char *name)
{
    char *mine = malloc(BLOCK * BLOCKS);
    for (int round = 0; round < ROUNDS; round++) {
        ft_fill(mine, BLOCK * BLOCKS, ft_seed + (uint64_t)(round * 1000 + ft_rank));
        FT_OK(ferry_File_write_at(fh, 0, mine, BLOCK * BLOCKS, MPI_BYTE, MPI_STATUS_IGNORE));
        FT_OK(ferry_File_sync(fh));
        if (ft_rank == 0) check_round(name, round);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(mine);
}

static void test_no_lost_updates(MPI_Datatype view)
{
    ferry_File fh = open_with("sieved", "enable", "automatic", view);
    rewrite_rounds(fh, "sieved");
    if (ft_size > 1) FT_CHECK(ft_info_number(fh, "ferry_stats_sieve_extra_bytes") > 0); /* it really sieved */
    FT_OK(ferry_File_close(&fh));
}

static void test_locks_refused(MPI_Datatype view)
{
    ferry_File fh = open_with("nolocks", "enable", "automatic", view);
    FT_OK(ferry__fs_fault_arm("lock:1+:ENOLCK"));
    rewrite_rounds(fh, "nolocks");
    ferry__fs_fault_disarm();
    if (ft_size > 1) FT_EQ(ft_info_number(fh, "ferry_stats_sieve_extra_bytes"), 0); /* fell back to one call per block */
    FT_EQ(ft_info_number(fh, "ferry_stats_fs_write_calls"), ft_size > 1 ? (long long)ROUNDS * BLOCKS : ROUNDS);
    FT_OK(ferry_File_close(&fh));
}

/* MPI_MODE_WRONLY files sieve too (ferry reads them back through a
 * read-write descriptor); where only a write-only descriptor can be had
 * (first open refused with EACCES), writes go one block per call. */
static void test_write_only(MPI_Datatype view)
{
    for (int refused = 0; refused < 2; refused++) {
        const char *name = refused ? "wronly-refused" : "wronly";
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_ds_write", "enable");
        MPI_Info_set(info, "ind_wr_buffer_size", "4096");
        if (refused) FT_OK(ferry__fs_fault_arm("open:1:EACCES"));
        ferry_File fh;
        FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path(name), MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
        ferry__fs_fault_disarm();
        FT_OK(ferry_File_set_view(fh, (MPI_Offset)BLOCK * ft_rank, MPI_BYTE, view, "native", info));
        rewrite_rounds(fh, name);
        long long extra = ft_info_number(fh, "ferry_stats_sieve_extra_bytes");
        if (ft_size > 1 && refused) FT_EQ(extra, 0);
        if (ft_size > 1 && !refused) FT_CHECK(extra > 0);
        FT_OK(ferry_File_close(&fh));
        MPI_Info_free(&info);
    }
}

static void test_reads_both_ways(MPI_Datatype view)
{
    ferry_File fh = open_with("reads", "disable", "enable", view);
    rewrite_rounds(fh, "reads");
    char *want = malloc(BLOCK * BLOCKS), *got = malloc(BLOCK * BLOCKS);
    ft_fill(want, BLOCK * BLOCKS, ft_seed + (uint64_t)((ROUNDS - 1) * 1000 + ft_rank));
    long long extra = ft_info_number(fh, "ferry_stats_sieve_extra_bytes");
    FT_OK(ferry_File_read_at(fh, 0, got, BLOCK * BLOCKS, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(got, want, BLOCK * BLOCKS);
    if (ft_size > 1) FT_CHECK(ft_info_number(fh, "ferry_stats_sieve_extra_bytes") > extra);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_read", "disable");
    FT_OK(ferry_File_set_info(fh, info));
    MPI_Info_free(&info);
    long long calls = ft_info_number(fh, "ferry_stats_fs_read_calls");
    memset(got, 0, BLOCK * BLOCKS);
    FT_OK(ferry_File_read_at(fh, 0, got, BLOCK * BLOCKS, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(got, want, BLOCK * BLOCKS);
    FT_EQ(ft_info_number(fh, "ferry_stats_fs_read_calls") - calls, ft_size > 1 ? BLOCKS : 1);

    /* End of file inside the view: the last rank's last block is the file's end. */
    MPI_Status status;
    int count = -1;
    FT_OK(ferry_File_read_at(fh, BLOCK * (BLOCKS - 2), got, 4 * BLOCK, MPI_BYTE, &status));
    MPI_Get_count(&status, MPI_BYTE, &count);
    FT_EQ(count, 2 * BLOCK);
    FT_EQ_MEM(got, want + BLOCK * (BLOCKS - 2), 2 * BLOCK);

    /* Individual pointer in etypes of the view; SEEK_END counts the view's bytes below the end. */
    FT_OK(ferry_File_seek(fh, 0, MPI_SEEK_END));
    MPI_Offset position = -1;
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, BLOCK * BLOCKS);
    FT_OK(ferry_File_seek(fh, BLOCK * 3 + 2, MPI_SEEK_SET));
    FT_OK(ferry_File_read(fh, got, BLOCK, MPI_BYTE, &status));
    FT_EQ_MEM(got, want + BLOCK * 3 + 2, BLOCK);
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, BLOCK * 4 + 2);
    MPI_Offset byte = -1;
    FT_OK(ferry_File_get_byte_offset(fh, position, &byte));
    FT_EQ(byte, (MPI_Offset)BLOCK * ft_rank + (MPI_Offset)BLOCK * 4 * ft_size + 2);
    free(want);
    free(got);
    FT_OK(ferry_File_close(&fh));
}

static void test_bad_views(void)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("bad"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int lens[2] = {4, 4}, disps[2] = {8, 0};
    MPI_Datatype backwards, negative, three;
    FT_OK(MPI_Type_indexed(2, lens, disps, MPI_BYTE, &backwards));
    FT_OK(MPI_Type_commit(&backwards));
    int neg_disp[1] = {-4}, one[1] = {4};
    FT_OK(MPI_Type_indexed(1, one, neg_disp, MPI_BYTE, &negative));
    FT_OK(MPI_Type_commit(&negative));
    FT_OK(MPI_Type_contiguous(3, MPI_BYTE, &three));
    FT_OK(MPI_Type_commit(&three));
    FT_FAILS(MPI_ERR_IO, ferry_File_set_view(fh, 0, MPI_BYTE, backwards, "native", MPI_INFO_NULL)); /* MPICH's class */
    FT_FAILS(MPI_ERR_IO, ferry_File_set_view(fh, 0, MPI_BYTE, negative, "native", MPI_INFO_NULL));
    FT_FAILS(MPI_ERR_IO, ferry_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_File_set_view(fh, -1, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    FT_FAILS(MPI_ERR_UNSUPPORTED_DATAREP, ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "bogus", MPI_INFO_NULL));
    /* A view that fails on one rank only fails everywhere and leaves the old view. */
    FT_OK(ferry_File_set_view(fh, 16, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int rc = ferry_File_set_view(fh, 0, MPI_BYTE, ft_rank == ft_size - 1 ? backwards : MPI_BYTE, "native",
                                 MPI_INFO_NULL);
    FT_CHECK(rc != MPI_SUCCESS);
    MPI_Offset disp;
    MPI_Datatype etype, filetype;
    char rep[MPI_MAX_DATAREP_STRING];
    FT_OK(ferry_File_get_view(fh, &disp, &etype, &filetype, rep));
    FT_EQ(disp, 16);
    FT_CHECK(etype == MPI_INT && filetype == MPI_INT);
    MPI_Type_free(&backwards);
    MPI_Type_free(&negative);
    MPI_Type_free(&three);
    FT_OK(ferry_File_close(&fh));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    MPI_Datatype view = ft_interleaved_view(BLOCK);
    test_no_lost_updates(view);
    test_locks_refused(view);
    test_write_only(view);
    test_reads_both_ways(view);
    test_bad_views();
    MPI_Type_free(&view);
    return ft_finish();
}

/*
 * MPI_Finalize with files still open that hold shared-pointer slots: more
 * files on MPI_COMM_WORLD than its pool holds (the last ones with windows
 * of their own), one on a duplicate of a reordered MPI_COMM_WORLD that the
 * user already freed (its own pool, which lives until that file closes),
 * one on MPI_COMM_SELF. ferry closes them all and
 * frees the pools while MPI still works; no hang, no abort, no leak (ASan).
 * Rank 0 then checks with POSIX calls that every file holds each rank's
 * record exactly once, where write_shared put it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ferry_test.h"

enum { WORLD_FILES = 66 };

static ferry_File open_file(MPI_Comm comm, const char *path)
{
    ferry_File fh; /* left open on purpose */
    FT_OK(ferry_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    return fh;
}

static void write_record(ferry_File fh)
{
    long long record = ft_rank;
    FT_OK(ferry_File_write_shared(fh, &record, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE));
}

/* The file holds n records, each rank's once. */
static void expect_records(const char *path, int n)
{
    long long got[64] = {0};
    int seen[64] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) ft_fail(__FILE__, __LINE__, "%s is missing", path);
    FT_EQ(fread(got, sizeof got[0], 64, f), (size_t)n);
    fclose(f);
    for (int i = 0; i < n; i++) {
        FT_CHECK(got[i] >= 0 && got[i] < n);
        FT_EQ(seen[got[i]]++, 0);
    }
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s", ft_scratch_dir());
    ferry_File fh[WORLD_FILES + 2];
    for (int i = 0; i < WORLD_FILES; i++) {
        snprintf(path, sizeof path, "%s/world%d", dir, i);
        fh[i] = open_file(MPI_COMM_WORLD, path);
    }
    MPI_Comm reversed, dup; /* world's ranks in another order: a pool of its own */
    MPI_Comm_split(MPI_COMM_WORLD, 0, ft_size - ft_rank, &reversed);
    MPI_Comm_dup(reversed, &dup);
    MPI_Comm_free(&reversed);
    snprintf(path, sizeof path, "%s/dup", dir);
    fh[WORLD_FILES] = open_file(dup, path);
    MPI_Comm_free(&dup);
    snprintf(path, sizeof path, "%s/self%d", dir, ft_rank);
    fh[WORLD_FILES + 1] = open_file(MPI_COMM_SELF, path);
    /* Written only once all are open: two files sharing a pointer would show. */
    for (int i = 0; i < WORLD_FILES + 2; i++) write_record(fh[i]);
    if (ft_rank == 0) printf("sharedfp_pool_finalize: finalizing with %d files open\n", WORLD_FILES + 2);
    FT_OK(MPI_Finalize());

    if (ft_rank == 0) {
        for (int i = 0; i < WORLD_FILES; i++) {
            snprintf(path, sizeof path, "%s/world%d", dir, i);
            expect_records(path, ft_size);
        }
        snprintf(path, sizeof path, "%s/dup", dir);
        expect_records(path, ft_size);
        snprintf(path, sizeof path, "%s/self0", dir);
        expect_records(path, 1);
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "sharedfp_pool_finalize: could not remove %s\n", dir);
        printf("sharedfp_pool_finalize: passed\n");
    }
    return 0;
}

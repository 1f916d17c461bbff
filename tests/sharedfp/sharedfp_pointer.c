/*
 * The shared file pointer, independent access (MPI-3.1 13.4.4):
 * write_shared/read_shared interleaved with seek_shared and
 * get_position_shared (checked after each step), the pointer counted in
 * etypes of a noncontiguous view, set_view resetting it, every rank
 * appending records at once (each record exactly once, no gap, no
 * overlap), the large-count forms, and seek_shared's errors (negative
 * result, bad whence) failing on every rank without a hang.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

enum { RECORDS = 200, RECORD_INTS = 8 };

static MPI_Offset shared_position(ferry_File fh)
{
    MPI_Offset pos = -1;
    FT_OK(ferry_File_get_position_shared(fh, &pos));
    return pos;
}

/* Steps taken by all ranks in turn (rank r writes while the others wait), so
 * every position is known. */
static void interleaved(const char *path)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_EQ(shared_position(fh), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < ft_size; r++) {
        if (ft_rank == r) {
            char bytes[10];
            memset(bytes, 'a' + r, sizeof bytes);
            MPI_Status st;
            FT_OK(ferry_File_write_shared(fh, bytes, 10, MPI_BYTE, &st));
            int n = -1;
            MPI_Get_count(&st, MPI_BYTE, &n);
            FT_EQ(n, 10);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        FT_EQ(shared_position(fh), 10 * (r + 1));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* Seek back and overwrite the second record, from the last rank. */
    FT_OK(ferry_File_seek_shared(fh, 10, MPI_SEEK_SET));
    FT_EQ(shared_position(fh), 10);
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == ft_size - 1) FT_OK(ferry_File_write_shared(fh, "XXXXX", 5, MPI_CHAR, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_EQ(shared_position(fh), 15);
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_seek_shared(fh, 3, MPI_SEEK_CUR));
    FT_EQ(shared_position(fh), 18);
    FT_OK(ferry_File_seek_shared(fh, -4, MPI_SEEK_END));
    FT_EQ(shared_position(fh), 10 * ft_size - 4);
    MPI_Barrier(MPI_COMM_WORLD);
    /* The individual pointer is independent of the shared one. */
    MPI_Offset individual = -1;
    FT_OK(ferry_File_get_position(fh, &individual));
    FT_EQ(individual, 0);
    /* Read the last 4 bytes through the shared pointer from rank 0. */
    if (ft_rank == 0) {
        char got[8] = {0};
        MPI_Status st;
        FT_OK(ferry_File_read_shared(fh, got, 8, MPI_BYTE, &st));
        int n = -1;
        MPI_Get_count(&st, MPI_BYTE, &n);
        FT_EQ(n, 4); /* short at end of file */
        char want[4];
        memset(want, 'a' + ft_size - 1, 4);
        FT_EQ_MEM(got, want, 4);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    FT_EQ(shared_position(fh), 10 * ft_size + 4); /* advanced by what was asked (ROMIO does the same) */
    /* Everything the file holds. */
    FT_OK(ferry_File_seek_shared(fh, 0, MPI_SEEK_SET));
    char all[64] = {0}, want[64];
    for (int r = 0; r < ft_size; r++) memset(want + 10 * r, 'a' + r, 10);
    memcpy(want + 10, "XXXXX", 5);
    FT_OK(ferry_File_read_at(fh, 0, all, 10 * ft_size, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(all, want, (size_t)(10 * ft_size));
    FT_OK(ferry_File_close(&fh));
}

/* The pointer counts etypes of the view: ints through a filetype with holes. */
static void through_a_view(const char *path)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    if (ft_rank == 0) FT_OK(ferry_File_write_shared(fh, "....", 4, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Datatype every_other;
    FT_OK(MPI_Type_vector(1, 1, 2, MPI_INT, &every_other));
    MPI_Datatype tile;
    FT_OK(MPI_Type_create_resized(every_other, 0, 2 * sizeof(int), &tile));
    FT_OK(MPI_Type_commit(&tile));
    FT_OK(ferry_File_set_view(fh, 8, MPI_INT, tile, "native", MPI_INFO_NULL));
    FT_EQ(shared_position(fh), 0); /* set_view resets it */
    MPI_Barrier(MPI_COMM_WORLD);
    int mine[3] = {100 * ft_rank, 100 * ft_rank + 1, 100 * ft_rank + 2};
    FT_OK(ferry_File_write_shared_c(fh, mine, 3, MPI_INT, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_sync(fh));
    FT_EQ(shared_position(fh), 3 * ft_size);
    /* Every int in the file is some rank's, in the order that rank wrote them. */
    int *file = calloc((size_t)(6 * ft_size), sizeof(int));
    FT_OK(ferry_File_read_at(fh, 0, file, 3 * ft_size, MPI_INT, MPI_STATUS_IGNORE));
    int seen[64] = {0};
    for (int k = 0; k < ft_size; k++) {
        int r = file[3 * k] / 100;
        FT_CHECK(r >= 0 && r < ft_size);
        for (int i = 0; i < 3; i++) FT_EQ(file[3 * k + i], 100 * r + i);
        seen[r]++;
    }
    for (int r = 0; r < ft_size; r++) FT_EQ(seen[r], 1);
    /* The holes kept their zeros: read the raw bytes. */
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_read_at(fh, 8, file, (int)(6 * ft_size * sizeof(int)), MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < 6 * ft_size; i += 2) FT_EQ(file[i + 1], 0);
    /* read_shared_c through the byte view from the start. */
    FT_OK(ferry_File_seek_shared(fh, 8, MPI_SEEK_SET));
    if (ft_rank == 1 % ft_size) {
        int first = -1;
        FT_OK(ferry_File_read_shared_c(fh, &first, 1, MPI_INT, MPI_STATUS_IGNORE));
        FT_EQ(first, file[0]);
    }
    free(file);
    MPI_Type_free(&tile);
    MPI_Type_free(&every_other);
    FT_OK(ferry_File_close(&fh));
}

/* All ranks append RECORDS records at once: each lands exactly once. */
static void race(const char *path)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Datatype record;
    FT_OK(MPI_Type_contiguous(RECORD_INTS, MPI_INT, &record));
    FT_OK(MPI_Type_commit(&record));
    for (int i = 0; i < RECORDS; i++) {
        int rec[RECORD_INTS];
        for (int k = 0; k < RECORD_INTS; k++) rec[k] = ft_rank * 1000000 + i * 100 + k;
        FT_OK(ferry_File_write_shared(fh, rec, 1, record, MPI_STATUS_IGNORE));
    }
    FT_OK(ferry_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_sync(fh));
    MPI_Offset size = -1;
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, (MPI_Offset)ft_size * RECORDS * RECORD_INTS * (MPI_Offset)sizeof(int));
    FT_EQ(shared_position(fh), size);
    if (ft_rank == 0) {
        size_t n = (size_t)ft_size * RECORDS;
        int *all = malloc(n * RECORD_INTS * sizeof(int));
        FT_OK(ferry_File_read_at(fh, 0, all, (int)n, record, MPI_STATUS_IGNORE));
        char *seen = calloc(n, 1);
        int last[64];
        for (int r = 0; r < ft_size; r++) last[r] = -1;
        for (size_t j = 0; j < n; j++) {
            int *rec = all + j * RECORD_INTS;
            int r = rec[0] / 1000000, i = (rec[0] % 1000000) / 100;
            FT_CHECK(r >= 0 && r < ft_size && i >= 0 && i < RECORDS);
            for (int k = 0; k < RECORD_INTS; k++) FT_EQ(rec[k], r * 1000000 + i * 100 + k); /* no torn record */
            FT_EQ(seen[r * RECORDS + i], 0);
            seen[r * RECORDS + i] = 1;
            FT_CHECK(i > last[r]); /* a rank's records in its own order */
            last[r] = i;
        }
        free(seen);
        free(all);
    }
    MPI_Type_free(&record);
    FT_OK(ferry_File_close(&fh));
}

static void errors(const char *path)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_seek_shared(fh, 5, MPI_SEEK_SET));
    FT_FAILS_NAMING(MPI_ERR_ARG, ft_rank == 0 ? "negative" : "rank 0", ferry_File_seek_shared(fh, -6, MPI_SEEK_CUR));
    FT_EQ(shared_position(fh), 5); /* unchanged */
    FT_FAILS_NAMING(MPI_ERR_ARG, "whence", ferry_File_seek_shared(fh, 0, 12345)); /* found on every rank */
    FT_FAILS(MPI_ERR_ARG, ferry_File_get_position_shared(fh, NULL));
    FT_FAILS(MPI_ERR_FILE, ferry_File_seek_shared(FERRY_FILE_NULL, 0, MPI_SEEK_SET));
    /* A bad count on one rank fails only there; the pointer does not move for it. */
    char b[4] = {0};
    if (ft_rank == 1 % ft_size) FT_FAILS(MPI_ERR_COUNT, ferry_File_write_shared(fh, b, -1, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_EQ(shared_position(fh), 5);
    FT_OK(ferry_File_close(&fh));
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_FAILS(MPI_ERR_READ_ONLY, ferry_File_write_shared(fh, b, 1, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_close(&fh));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    interleaved(ft_path("interleaved"));
    through_a_view(ft_path("view"));
    race(ft_path("race"));
    errors(ft_path("errors"));
    return ft_finish();
}

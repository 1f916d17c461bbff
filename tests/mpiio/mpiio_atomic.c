/*
 * Atomic mode (MPI-3.1 13.6.1): 4 ranks write overlapping runs of blocks,
 * each write uniform in its rank's byte value and made of many pieces
 * through a noncontiguous view (so a non-atomic write is many file-system
 * calls that can interleave with another rank's), independent and
 * collective calls mixed, while the same ranks read overlapping runs. Every
 * read and the final file must show each block wholly from one write: never
 * a mix. Also: set_atomicity/get_atomicity agree, and atomic mode holds
 * under data sieving (ferry_ds_write forced on) and without it.
 *
 * FERRY_TEST_NONATOMIC=1 runs the same race without atomic mode, to see
 * that the check can fail (it usually does, not always).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

enum { BLOCKS = 48, BLOCK = 256, PIECE = 16, ROUNDS = 600, MAX_RUN = 6 };

/* The view every rank uses: the even 16-byte pieces of each 256-byte block. */
static MPI_Datatype even_pieces(void)
{
    MPI_Datatype vec, tile;
    FT_OK(MPI_Type_vector(BLOCK / (2 * PIECE), PIECE, 2 * PIECE, MPI_BYTE, &vec));
    FT_OK(MPI_Type_create_resized(vec, 0, BLOCK, &tile));
    FT_OK(MPI_Type_commit(&tile));
    MPI_Type_free(&vec);
    return tile;
}

enum { VIEW_BLOCK = BLOCK / 2 }; /* view bytes per block */

/* Prints a mixed block as runs of equal bytes (view offset:value x count). */
static void report_mixed(const char *call, int round, int block, const unsigned char *data)
{
    char text[512];
    int used = 0;
    for (int i = 0; i < VIEW_BLOCK && used < (int)sizeof text - 32;) {
        int j = i;
        while (j < VIEW_BLOCK && data[j] == data[i]) j++;
        used += snprintf(text + used, sizeof text - (size_t)used, " %d:%c*%d", i, data[i] ? data[i] : '0', j - i);
        i = j;
    }
    fprintf(stderr, "mpiio_atomic: rank %d %s round %d: block %d mixed:%s\n", ft_rank, call, round, block, text);
}

/* Blocks [first, first + n) as read through the view: each uniform. */
static int mixed_blocks(const unsigned char *data, int first, int n, const char *call, int round)
{
    int mixed = 0;
    for (int b = 0; b < n; b++)
        for (int i = 1; i < VIEW_BLOCK; i++)
            if (data[b * VIEW_BLOCK + i] != data[b * VIEW_BLOCK]) {
                report_mixed(call, round, first + b, data + b * VIEW_BLOCK);
                mixed++;
                break;
            }
    return mixed;
}

static int race(const char *path, int atomic, const char *ds_write)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", ds_write);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    FT_OK(ferry_File_set_size(fh, 0));
    FT_OK(ferry_File_set_atomicity(fh, atomic));
    int flag = -1;
    FT_OK(ferry_File_get_atomicity(fh, &flag));
    FT_EQ(flag, atomic);
    MPI_Datatype tile = even_pieces();
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, tile, "native", MPI_INFO_NULL));
    unsigned char *out = malloc(MAX_RUN * VIEW_BLOCK), *in = malloc(BLOCKS * VIEW_BLOCK);
    memset(out, 'A' + ft_rank, MAX_RUN * VIEW_BLOCK);
    uint64_t rng = ft_seed + (uint64_t)ft_rank * 7919;
    int mixed = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int n = 1 + (int)(ft_rand(&rng) % MAX_RUN);
        int first = (int)(ft_rand(&rng) % (BLOCKS - n + 1));
        MPI_Offset at = (MPI_Offset)first * VIEW_BLOCK;
        if (round % 8 == 7) { /* collective: every rank's round 7, 15, ... */
            FT_OK(ferry_File_write_at_all(fh, at, out, n * VIEW_BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
        } else if (ft_rand(&rng) % 2) {
            FT_OK(ferry_File_write_at(fh, at, out, n * VIEW_BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
        } else {
            MPI_Status st;
            memset(in, 0, (size_t)n * VIEW_BLOCK);
            FT_OK(ferry_File_read_at(fh, at, in, n * VIEW_BLOCK, MPI_BYTE, &st));
            mixed += mixed_blocks(in, first, n, "read_at", round); /* bytes past end of file read as the zeros put there */
        }
    }
    FT_OK(ferry_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_sync(fh));
    memset(in, 0, BLOCKS * VIEW_BLOCK);
    FT_OK(ferry_File_read_at_all(fh, 0, in, BLOCKS * VIEW_BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    mixed += mixed_blocks(in, 0, BLOCKS, "final read_at_all", ROUNDS);
    /* Every written byte is some rank's value. */
    for (int i = 0; i < BLOCKS * VIEW_BLOCK; i++) FT_CHECK(in[i] == 0 || (in[i] >= 'A' && in[i] < 'A' + ft_size));
    /* The odd pieces were never written. */
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[BLOCK];
    FT_OK(ferry_File_read_at(fh, BLOCK, raw, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = PIECE; i < BLOCK; i += 2 * PIECE)
        for (int k = 0; k < PIECE; k++) FT_EQ(raw[i + k], 0);
    free(out);
    free(in);
    MPI_Type_free(&tile);
    FT_OK(ferry_File_close(&fh));
    int total = 0;
    MPI_Allreduce(&mixed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *nonatomic = getenv("FERRY_TEST_NONATOMIC");
    if (nonatomic && *nonatomic == '1') {
        int mixed = race(ft_path("nonatomic"), 0, "disable");
        if (ft_rank == 0) printf("mpiio_atomic: without atomic mode %d mixed blocks seen\n", mixed);
        return ft_finish();
    }
    FT_EQ(race(ft_path("atomic-vectored"), 1, "disable"), 0);
    FT_EQ(race(ft_path("atomic-sieving"), 1, "enable"), 0);
    FT_EQ(race(ft_path("atomic-auto"), 1, "automatic"), 0);
    return ft_finish();
}

/*
 * Nonblocking collectives (iwrite_at_all, iread_at_all, iwrite_all,
 * iread_all), run with argv[1] = "multiple" or "single": interleaved with
 * independent requests and with a blocking collective, completed in mixed
 * order; the individual pointer through a strided view; an argument error on
 * one rank (that rank fails at once, the others' requests fail with the
 * agreed class); an injected write error on rank 0 reaching every rank's
 * MPI_Wait; many collectives outstanding, completed in reverse and random
 * order; a pending iwrite_all followed by close. Bytes checked.
 */
#include <stdlib.h>

#include "async_common.h"
#include "fs/fs.h"

enum { BLOCK = 4096 };

/* Each rank's blocks: collective ones at [rank], independent ones after all ranks'. */
static MPI_Offset slot(int round, int rank)
{
    return ((MPI_Offset)round * ft_size + rank) * BLOCK;
}

static void interleaved(ferry_File fh, unsigned char *data, unsigned char *back)
{
    MPI_Request req[5];
    MPI_Status status[5];
    FT_OK(ferry_File_iwrite_at_all(fh, slot(0, ft_rank), data, BLOCK, MPI_BYTE, &req[0]));
    FT_OK(ferry_File_iwrite_at(fh, slot(1, ft_rank), data + BLOCK, BLOCK, MPI_BYTE, &req[1]));
    FT_OK(ferry_File_iwrite_at_all(fh, slot(2, ft_rank), data + 2 * BLOCK, BLOCK, MPI_BYTE, &req[2]));
    /* A blocking collective while two are pending: runs after them. */
    FT_OK(ferry_File_write_at_all(fh, slot(3, ft_rank), data + 3 * BLOCK, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_iwrite_at(fh, slot(4, ft_rank), data + 4 * BLOCK, BLOCK, MPI_BYTE, &req[3]));
    FT_OK(MPI_Wait(&req[2], &status[2]));
    FT_OK(MPI_Waitall(2, &req[0], status));
    int flag = 0;
    while (!flag) FT_OK(MPI_Test(&req[3], &flag, &status[3]));
    for (int i = 0; i < 4; i++) {
        int count = -1;
        MPI_Get_count(&status[i], MPI_BYTE, &count);
        FT_EQ(count, BLOCK);
    }
    /* Read every rank's blocks back: collectively the next rank's, independently our own. */
    memset(back, 0, 5 * BLOCK);
    int next = (ft_rank + 1) % ft_size;
    for (int i = 0; i < 5; i++) {
        if (i % 2 == 0) FT_OK(ferry_File_iread_at_all(fh, slot(i, next), back + (size_t)i * BLOCK, BLOCK, MPI_BYTE, &req[i]));
        else FT_OK(ferry_File_iread_at(fh, slot(i, next), back + (size_t)i * BLOCK, BLOCK, MPI_BYTE, &req[i]));
    }
    for (int i = 4; i >= 0; i--) FT_OK(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
    unsigned char *theirs = malloc(5 * BLOCK);
    ft_fill(theirs, 5 * BLOCK, ft_seed + (uint64_t)next);
    FT_EQ_MEM(back, theirs, 5 * BLOCK);
    free(theirs);
}

/* iwrite_all/iread_all through a view that interleaves ranks block by block. */
static void individual(ferry_File fh, unsigned char *data, unsigned char *back)
{
    MPI_Datatype block, tile;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)ft_size * BLOCK, &tile);
    MPI_Type_commit(&tile);
    MPI_Offset disp = 8 * (MPI_Offset)ft_size * BLOCK + (MPI_Offset)ft_rank * BLOCK;
    FT_OK(ferry_File_set_view(fh, disp, MPI_BYTE, tile, "native", MPI_INFO_NULL));
    MPI_Request req[3];
    MPI_Status statuses[3];
    MPI_Offset position;
    for (int i = 0; i < 3; i++) FT_OK(ferry_File_iwrite_all(fh, data + (size_t)i * BLOCK, BLOCK, MPI_BYTE, &req[i]));
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, 3 * BLOCK);
    FT_OK(MPI_Waitall(3, req, statuses));
    FT_OK(ferry_File_seek(fh, BLOCK, MPI_SEEK_SET));
    memset(back, 0, 2 * BLOCK);
    FT_OK(ferry_File_iread_all(fh, back, 2 * BLOCK, MPI_BYTE, &req[0]));
    FT_OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
    FT_EQ_MEM(back, data + BLOCK, 2 * BLOCK);
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&tile);
    MPI_Type_free(&block);
    /* The file as a whole: rank r's block i at disp + (i * size + r) * BLOCK. */
    FT_OK(ferry_File_read_at_all(fh, 8 * (MPI_Offset)ft_size * BLOCK + ((MPI_Offset)2 * ft_size + ft_rank) * BLOCK,
                                 back, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(back, data + 2 * BLOCK, BLOCK);
}

/* Many collectives outstanding at once, completed in reverse order, then in
 * random order by MPI_Test loops, each rank's order its own. */
static void many(ferry_File fh, unsigned char *data, unsigned char *back)
{
    enum { N = 16, PIECE = 512 };
    MPI_Offset base = 16 * (MPI_Offset)ft_size * BLOCK;
    MPI_Request req[N];
    for (int i = 0; i < N; i++)
        FT_OK(ferry_File_iwrite_at_all(fh, base + ((MPI_Offset)i * ft_size + ft_rank) * PIECE, data + i * PIECE,
                                       PIECE, MPI_BYTE, &req[i]));
    for (int i = N - 1; i >= 0; i--) FT_OK(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
    memset(back, 0, N * PIECE);
    for (int i = 0; i < N; i++)
        FT_OK(ferry_File_iread_at_all(fh, base + ((MPI_Offset)i * ft_size + ft_rank) * PIECE, back + i * PIECE,
                                      PIECE, MPI_BYTE, &req[i]));
    uint64_t state = ft_seed + 7 * (uint64_t)ft_rank;
    for (int left = N; left > 0;) {
        int i = (int)(ft_rand(&state) % N), flag = 0;
        if (req[i] == MPI_REQUEST_NULL) continue;
        FT_OK(MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE));
        if (flag) left--;
    }
    FT_EQ_MEM(back, data, N * PIECE);
}

/* The background collectives' counters reach the file's statistics. */
static void counted(ferry_File fh, unsigned char *data, unsigned char *back)
{
    long long before = ft_info_number(fh, "ferry_stats_coll_calls");
    long long meta_before = ft_info_number(fh, "ferry_stats_coll_meta_bytes");
    many(fh, data, back);
    FT_EQ(ft_info_number(fh, "ferry_stats_coll_calls"), before + 32);
    FT_CHECK(ft_info_number(fh, "ferry_stats_coll_meta_bytes") > meta_before);
}

static void errors(ferry_File fh, const char *path, unsigned char *data)
{
    /* Rank 1's offset is wrong: it fails at once, the others at completion. */
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = ferry_File_iwrite_at_all(fh, ft_rank == 1 ? -5 : 0, data, 10, MPI_BYTE, &req);
    if (ft_rank == 1) {
        ft_expect_fail(__FILE__, __LINE__, "iwrite_at_all", rc, MPI_ERR_ARG, "iwrite_at_all");
        FT_CHECK(req == MPI_REQUEST_NULL);
    } else {
        at_expect_fail(__FILE__, __LINE__, rc, &req, MPI_ERR_ARG, "rank 1");
    }
    /* Rank 0's write fails in the background; every rank's request fails. */
    FT_OK(ferry__fs_fault_arm("write:1:EIO@0"));
    rc = ferry_File_iwrite_at_all(fh, slot(0, ft_rank), data, BLOCK, MPI_BYTE, &req);
    at_expect_fail(__FILE__, __LINE__, rc, &req, MPI_ERR_IO, path);
    ferry__fs_fault_disarm();
    /* And the file still works collectively afterwards. */
    FT_OK(ferry_File_iwrite_at_all(fh, slot(0, ft_rank), data, BLOCK, MPI_BYTE, &req));
    FT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    int background;
    if (!at_start(&argc, &argv, &background)) return ft_finish();
    const char *path = ft_path("collective");
    unsigned char *data = malloc(8 * BLOCK), *back = malloc(8 * BLOCK);
    ft_fill(data, 8 * BLOCK, ft_seed + (uint64_t)ft_rank);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    interleaved(fh, data, back);
    individual(fh, data, back);
    counted(fh, data, back);
    errors(fh, path, data);
    /* A pending iwrite_all, then close: close waits for it. */
    MPI_Request req;
    FT_OK(ferry_File_iwrite_at_all(fh, slot(6, ft_rank), data + 6 * BLOCK, BLOCK, MPI_BYTE, &req));
    FT_OK(ferry_File_close(&fh));
    FT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_read_at_all(fh, slot(6, ft_rank), back, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(back, data + 6 * BLOCK, BLOCK);
    FT_OK(ferry_File_close(&fh));
    free(data);
    free(back);
    return ft_finish();
}

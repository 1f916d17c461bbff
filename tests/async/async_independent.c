/*
 * Nonblocking independent I/O (iwrite_at, iread_at, iwrite, iread), run with
 * argv[1] = "multiple" (background requests) or "single" (complete at
 * initiation): many requests outstanding at once, completed in reverse
 * order (MPI_Wait), random order (MPI_Test polling loops), with MPI_Waitall,
 * MPI_Testall, MPI_Testany and MPI_Waitsome; the individual pointer
 * advancing at initiation; a derived datatype freed while its request is
 * pending; a request freed while pending; argument errors at initiation; an injected write error reaching
 * MPI_Wait with its class and a message naming the file; iwrite_shared and
 * iread_shared. Bytes checked.
 */
#include <stdlib.h>

#include "async_common.h"
#include "fs/fs.h"

enum { NREQ = 24, BLOCK = 3000 };

static MPI_Offset block_offset(int i)
{
    return ((MPI_Offset)ft_rank * NREQ + i) * BLOCK;
}

static void shuffle(int *order, int n, uint64_t *state)
{
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(ft_rand(state) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
    }
}

static void check_count(MPI_Status *status, int expected)
{
    int count = -1;
    MPI_Get_count(status, MPI_BYTE, &count);
    FT_EQ(count, expected);
}

/* Writes NREQ blocks at once, completed in reverse order; reads them back
 * at once, completed in random order by MPI_Test loops, then Waitall and
 * Testany over a second read. */
static void many_explicit(ferry_File fh, unsigned char *data, unsigned char *back)
{
    MPI_Request req[NREQ];
    MPI_Status status;
    uint64_t state = ft_seed + (uint64_t)ft_rank;
    ft_fill(data, (size_t)NREQ * BLOCK, state);
    for (int i = 0; i < NREQ; i++)
        FT_OK(ferry_File_iwrite_at(fh, block_offset(i), data + (size_t)i * BLOCK, BLOCK - i, MPI_BYTE, &req[i]));
    for (int i = NREQ - 1; i >= 0; i--) {
        FT_OK(MPI_Wait(&req[i], &status));
        check_count(&status, BLOCK - i);
        FT_CHECK(req[i] == MPI_REQUEST_NULL);
    }
    /* What the background counted reaches the file's statistics. */
    long long bytes = 0;
    for (int i = 0; i < NREQ; i++) bytes += BLOCK - i;
    FT_EQ(ft_info_number(fh, "ferry_stats_write_calls"), NREQ);
    FT_EQ(ft_info_number(fh, "ferry_stats_write_bytes"), bytes);
    FT_EQ(ft_info_number(fh, "ferry_stats_fs_write_bytes"), bytes);
    memset(back, 0, (size_t)NREQ * BLOCK);
    for (int i = 0; i < NREQ; i++)
        FT_OK(ferry_File_iread_at(fh, block_offset(i), back + (size_t)i * BLOCK, BLOCK - i, MPI_BYTE, &req[i]));
    int order[NREQ];
    shuffle(order, NREQ, &state);
    for (int k = 0; k < NREQ; k++) {
        int i = order[k], flag = 0;
        while (!flag) FT_OK(MPI_Test(&req[i], &flag, &status));
        check_count(&status, BLOCK - i);
    }
    for (int i = 0; i < NREQ; i++)
        FT_EQ_MEM(back + (size_t)i * BLOCK, data + (size_t)i * BLOCK, (size_t)(BLOCK - i));

    memset(back, 0, (size_t)NREQ * BLOCK);
    MPI_Status statuses[NREQ];
    for (int i = 0; i < NREQ; i++)
        FT_OK(ferry_File_iread_at(fh, block_offset(i), back + (size_t)i * BLOCK, BLOCK, MPI_BYTE, &req[i]));
    int flag = 0, outcount = 0, indices[NREQ];
    FT_OK(MPI_Waitall(NREQ / 4, req + 3 * NREQ / 4, statuses)); /* the last quarter */
    while (!flag) FT_OK(MPI_Testall(NREQ / 4, req + NREQ / 2, &flag, statuses)); /* the third */
    for (int done = 0; done < NREQ / 4;) { /* a quarter of the first half by MPI_Testany */
        int index = -1;
        FT_OK(MPI_Testany(NREQ / 2, req, &index, &flag, &status));
        if (!flag) continue;
        FT_CHECK(index >= 0 && index < NREQ / 2);
        done++;
    }
    for (int done = 0; outcount != MPI_UNDEFINED; done += outcount) { /* the rest by MPI_Waitsome */
        FT_OK(MPI_Waitsome(NREQ / 2, req, &outcount, indices, statuses));
        FT_CHECK(outcount == MPI_UNDEFINED ? done == NREQ / 4 : outcount >= 1);
    }
    for (int i = 0; i < NREQ; i++) FT_CHECK(req[i] == MPI_REQUEST_NULL);
    for (int i = 0; i < NREQ; i++) /* each block's last i bytes were never written */
        FT_EQ_MEM(back + (size_t)i * BLOCK, data + (size_t)i * BLOCK, (size_t)(BLOCK - i));
}

/* Individual pointer: advances at initiation by each request's full size. */
static void individual(ferry_File fh, unsigned char *data, unsigned char *back)
{
    const int n = 4, ints = 500;
    MPI_Offset disp = (MPI_Offset)ft_rank * n * ints * 4;
    FT_OK(ferry_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Request req[4];
    MPI_Status statuses[4];
    MPI_Offset position = -1;
    for (int i = 0; i < n; i++) {
        FT_OK(ferry_File_iwrite(fh, data + (size_t)i * ints * 4, ints, MPI_INT, &req[i]));
        FT_OK(ferry_File_get_position(fh, &position));
        FT_EQ(position, (MPI_Offset)(i + 1) * ints);
    }
    FT_OK(MPI_Waitall(n, req, statuses));
    FT_OK(ferry_File_seek(fh, 0, MPI_SEEK_SET));
    memset(back, 0, (size_t)n * ints * 4);
    for (int i = n - 1; i >= 0; i--) { /* pointer order, not completion order, decides where each lands */
        FT_OK(ferry_File_iread(fh, back + (size_t)(n - 1 - i) * ints * 4, ints, MPI_INT, &req[i]));
    }
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, (MPI_Offset)n * ints);
    FT_OK(MPI_Waitall(n, req, statuses));
    FT_EQ_MEM(back, data, (size_t)n * ints * 4);
    /* A read reaching end of file moves the pointer by what it will read,
     * at initiation: 3 ints and a few bytes remain after position q. */
    MPI_Offset size = 0;
    FT_OK(ferry_File_get_size(fh, &size));
    MPI_Offset q = (size - disp) / 4 - 3;
    MPI_Status status;
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's size before anyone writes */
    FT_OK(ferry_File_seek(fh, q, MPI_SEEK_SET));
    FT_OK(ferry_File_iread(fh, back, 10, MPI_INT, &req[0]));
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, q + 3);
    FT_OK(MPI_Wait(&req[0], &status));
    check_count(&status, (int)(size - disp - 4 * q));
    MPI_Barrier(MPI_COMM_WORLD); /* every rank's read done before the file grows */
    FT_OK(ferry_File_iwrite(fh, data, 10, MPI_INT, &req[0])); /* writes move it by their full size */
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, q + 13);
    FT_OK(MPI_Wait(&req[0], &status));
    /* Argument errors at initiation leave the pointer alone. */
    FT_FAILS(MPI_ERR_TYPE, ferry_File_iwrite(fh, data, 3, MPI_CHAR, &req[0]));
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, q + 13);
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
}

/* Ranks' pieces interleave in the file (8 bytes each, round robin): every
 * write is read-patch-written back in windows under byte-range locks (data
 * sieving) while the other ranks do the same, each rank with several
 * requests outstanding and a blocking write among them. No piece may be
 * lost. */
static void interleaved(ferry_File fh)
{
    enum { WAYS = 4, PIECE = 8, PIECES = 1024 };
    MPI_Datatype piece, tile;
    MPI_Type_contiguous(PIECE, MPI_BYTE, &piece);
    MPI_Type_create_resized(piece, 0, (MPI_Aint)ft_size * PIECE, &tile);
    MPI_Type_commit(&tile);
    MPI_Offset base = 2 * (MPI_Offset)ft_size * NREQ * BLOCK;
    size_t mine_len = (size_t)WAYS * PIECES * PIECE, all_len = mine_len * (size_t)ft_size;
    unsigned char *mine = malloc(mine_len), *all = malloc(all_len);
    FT_OK(ferry_File_set_view(fh, base + ft_rank * PIECE, MPI_BYTE, tile, "native", MPI_INFO_NULL));
    for (int round = 0; round < 3; round++) {
        ft_fill(mine, mine_len, ft_seed + 99 + (uint64_t)(round * ft_size + ft_rank));
        MPI_Request req[WAYS];
        MPI_Status statuses[WAYS];
        size_t part = mine_len / WAYS;
        for (int k = 0; k < WAYS; k++) {
            req[k] = MPI_REQUEST_NULL;
            if (k == 2) FT_OK(ferry_File_write_at(fh, k * (MPI_Offset)part, mine + k * part, (int)part, MPI_BYTE, MPI_STATUS_IGNORE));
            else FT_OK(ferry_File_iwrite_at(fh, k * (MPI_Offset)part, mine + k * part, (int)part, MPI_BYTE, &req[k]));
        }
        FT_OK(MPI_Waitall(WAYS, req, statuses));
        FT_OK(ferry_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        FT_OK(ferry_File_sync(fh));
        FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        FT_OK(ferry_File_read_at(fh, base, all, (int)all_len, MPI_BYTE, MPI_STATUS_IGNORE));
        for (size_t p = 0; p < (size_t)WAYS * PIECES; p++)
            FT_EQ_MEM(all + (p * (size_t)ft_size + (size_t)ft_rank) * PIECE, mine + p * PIECE, PIECE);
        MPI_Barrier(MPI_COMM_WORLD);
        FT_OK(ferry_File_set_view(fh, base + ft_rank * PIECE, MPI_BYTE, tile, "native", MPI_INFO_NULL));
    }
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (ft_size > 1) FT_CHECK(ft_info_number(fh, "ferry_stats_sieve_extra_bytes") > 0); /* it did sieve */
    MPI_Type_free(&tile);
    MPI_Type_free(&piece);
    free(mine);
    free(all);
}

/* A derived type freed, and a request freed, while pending. */
static void freed_while_pending(ferry_File fh, unsigned char *data, unsigned char *back)
{
    MPI_Datatype every_other;
    MPI_Type_vector(1000, 1, 2, MPI_BYTE, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Offset at = block_offset(0);
    MPI_Request req, loose;
    FT_OK(ferry_File_iwrite_at(fh, at, data, 1, every_other, &req));
    MPI_Type_free(&every_other);
    FT_OK(ferry_File_iwrite_at(fh, at + 1000, data + 5000, 500, MPI_BYTE, &loose));
    FT_OK(MPI_Request_free(&loose));
    FT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_sync(fh)); /* waits for the freed request too */
    FT_OK(ferry_File_read_at(fh, at, back, 1500, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < 1000; i++) FT_EQ(back[i], data[2 * i]);
    FT_EQ_MEM(back + 1000, data + 5000, 500);
}

static void errors(ferry_File fh, const char *path, unsigned char *data)
{
    MPI_Request req = MPI_REQUEST_NULL;
    FT_FAILS(MPI_ERR_ARG, ferry_File_iwrite_at(fh, -1, data, 10, MPI_BYTE, &req));
    FT_CHECK(req == MPI_REQUEST_NULL);
    FT_FAILS(MPI_ERR_REQUEST, ferry_File_iread_at(fh, 0, data, 10, MPI_BYTE, NULL));
    /* An I/O error found while the request runs. */
    FT_OK(ferry__fs_fault_arm("write:1:ENOSPC"));
    int rc = ferry_File_iwrite_at(fh, block_offset(0), data, 100, MPI_BYTE, &req);
    at_expect_fail(__FILE__, __LINE__, rc, &req, MPI_ERR_NO_SPACE, path);
    ferry__fs_fault_disarm();
    /* Waitall reports it in the failed request's status (MPICH 4.0.2 rewrites
     * that code: only Open MPI's is checked for the class). */
    FT_OK(ferry__fs_fault_arm("write:2:EIO"));
    MPI_Request two[2];
    MPI_Status statuses[2];
    rc = ferry_File_iwrite_at(fh, block_offset(0), data, 100, MPI_BYTE, &two[0]);
    if (rc == MPI_SUCCESS) rc = ferry_File_iwrite_at(fh, block_offset(1), data, 100, MPI_BYTE, &two[1]);
    else two[1] = MPI_REQUEST_NULL;
    if (rc == MPI_SUCCESS) {
        rc = MPI_Waitall(2, two, statuses);
        FT_EQ(rc, MPI_ERR_IN_STATUS);
#if defined(OPEN_MPI)
        /* Which of the two made the second write is up to the workers. */
        int io = ft_class(statuses[0].MPI_ERROR) == MPI_ERR_IO ? 0 : 1;
        FT_EQ(ft_class(statuses[io].MPI_ERROR), MPI_ERR_IO);
        FT_EQ(statuses[1 - io].MPI_ERROR, MPI_SUCCESS);
        FT_CHECK(strstr(ft_errstr(statuses[io].MPI_ERROR), path) != NULL);
#endif
    }
    ferry__fs_fault_disarm();
}

/* iwrite_shared/iread_shared: places claimed at initiation, in any order
 * between ranks; every block lands whole exactly once. */
static void shared(const char *path)
{
    enum { INTS = 100, PER_RANK = 3 };
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int blocks[PER_RANK][INTS];
    MPI_Request req[PER_RANK];
    MPI_Status statuses[PER_RANK];
    for (int k = 0; k < PER_RANK; k++) {
        for (int i = 0; i < INTS; i++) blocks[k][i] = (ft_rank * PER_RANK + k) * 1000 + i;
        FT_OK(ferry_File_iwrite_shared(fh, blocks[k], INTS, MPI_INT, &req[k]));
    }
    FT_OK(MPI_Waitall(PER_RANK, req, statuses));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset end = -1;
    FT_OK(ferry_File_get_position_shared(fh, &end));
    FT_EQ(end, (MPI_Offset)ft_size * PER_RANK * INTS * 4);
    FT_OK(ferry_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int back[PER_RANK][INTS];
    for (int k = 0; k < PER_RANK; k++) FT_OK(ferry_File_iread_shared(fh, back[k], INTS, MPI_INT, &req[k]));
    for (int k = PER_RANK - 1; k >= 0; k--) FT_OK(MPI_Wait(&req[k], &statuses[k]));
    long long ids = 0, all = 0;
    for (int k = 0; k < PER_RANK; k++) {
        int id = back[k][0] / 1000;
        FT_CHECK(id >= 0 && id < ft_size * PER_RANK);
        for (int i = 0; i < INTS; i++) FT_EQ(back[k][i], id * 1000 + i);
        ids += 1ll << id;
    }
    MPI_Allreduce(&ids, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    FT_EQ(all, (1ll << (ft_size * PER_RANK)) - 1); /* each block read once */
    FT_OK(ferry_File_close(&fh));
}

int main(int argc, char **argv)
{
    int background;
    if (!at_start(&argc, &argv, &background)) return ft_finish();
    const char *path = ft_path("independent");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    size_t size = (size_t)NREQ * BLOCK;
    unsigned char *data = malloc(size), *back = malloc(size);
    many_explicit(fh, data, back);
    individual(fh, data, back);
    freed_while_pending(fh, data, back);
    interleaved(fh);
    errors(fh, path, data);
    /* Pending requests at close: close waits for them. */
    MPI_Request req;
    FT_OK(ferry_File_iwrite_at(fh, block_offset(2), data, BLOCK, MPI_BYTE, &req));
    FT_OK(ferry_File_close(&fh));
    FT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_read_at(fh, block_offset(2), back, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(back, data, BLOCK);
    FT_FAILS(MPI_ERR_READ_ONLY, ferry_File_iwrite_at(fh, 0, data, 1, MPI_BYTE, &req));
    FT_OK(ferry_File_close(&fh));
    shared(ft_path("shared"));
    free(data);
    free(back);
    return ft_finish();
}

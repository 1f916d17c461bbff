/*
 * Every amode rule of MPI-3.1 13.2.1: illegal combinations, unknown bits,
 * CREATE/EXCL, missing files, APPEND, DELETE_ON_CLOSE, SEQUENTIAL,
 * UNIQUE_OPEN, and access checks on RDONLY/WRONLY handles. Every error is
 * checked for its class and for a message that names the file.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ferry_test.h"

enum {
    KNOWN = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL |
            MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND,
};

static void write_bytes(const char *path, size_t n)
{
    ferry_File fh;
    char *buf = malloc(n);
    ft_fill(buf, n, ft_seed);
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    if (ft_rank == 0) FT_OK(ferry_File_write_at(fh, 0, buf, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_close(&fh));
    free(buf);
}

static void illegal_combinations(const char *path)
{
    int unknown = 1;
    while (unknown & KNOWN) unknown <<= 1;
    const int bad[] = {
        0,
        MPI_MODE_CREATE,
        MPI_MODE_RDONLY | MPI_MODE_WRONLY,
        MPI_MODE_RDONLY | MPI_MODE_RDWR,
        MPI_MODE_WRONLY | MPI_MODE_RDWR,
        MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR,
        MPI_MODE_RDONLY | MPI_MODE_CREATE,
        MPI_MODE_RDONLY | MPI_MODE_EXCL,
        MPI_MODE_RDONLY | MPI_MODE_CREATE | MPI_MODE_EXCL,
        MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
        MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_SEQUENTIAL,
        MPI_MODE_RDWR | unknown,
        MPI_MODE_RDONLY | (1 << 30),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ferry_File fh = (ferry_File)&fh; /* must be reset to FERRY_FILE_NULL */
        FT_FAILS_NAMING(MPI_ERR_AMODE, path, ferry_File_open(MPI_COMM_WORLD, path, bad[i], MPI_INFO_NULL, &fh));
        FT_CHECK(fh == FERRY_FILE_NULL);
    }
    /* None of them may have created the file. */
    FT_CHECK(access(path, F_OK) != 0);
}

static void create_and_exist(const char *path)
{
    ferry_File fh;
    FT_FAILS_NAMING(MPI_ERR_NO_SUCH_FILE, path, ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_FAILS_NAMING(MPI_ERR_NO_SUCH_FILE, path, ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_CHECK(fh == FERRY_FILE_NULL);
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_close(&fh));
    FT_CHECK(access(path, F_OK) == 0);
    /* Every rank fails, and every rank's message names the file. */
    FT_FAILS_NAMING(MPI_ERR_FILE_EXISTS, path,
                    ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                                    MPI_INFO_NULL, &fh));
    FT_CHECK(fh == FERRY_FILE_NULL);
    /* CREATE alone on an existing file opens it and keeps its contents. */
    write_bytes(path, 100);
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Offset size = -1;
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, 100);
    FT_OK(ferry_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0) FT_OK(ferry_File_delete(path, MPI_INFO_NULL)); /* not collective */
    MPI_Barrier(MPI_COMM_WORLD);
    FT_FAILS_NAMING(MPI_ERR_NO_SUCH_FILE, path, ferry_File_delete(path, MPI_INFO_NULL));
}

static void append_mode(const char *path)
{
    write_bytes(path, 1000);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_APPEND | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Offset pos = -1;
    FT_OK(ferry_File_get_position(fh, &pos));
    FT_EQ(pos, 1000);
    int amode = 0;
    FT_OK(ferry_File_get_amode(fh, &amode));
    FT_EQ(amode, MPI_MODE_APPEND | MPI_MODE_RDWR);
    /* Each rank appends its record at EOF + rank * 10 through its own pointer. */
    char rec[10], back[10];
    memset(rec, 'a' + ft_rank, sizeof rec);
    FT_OK(ferry_File_seek(fh, ft_rank * 10, MPI_SEEK_CUR));
    FT_OK(ferry_File_write_all(fh, rec, 10, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_get_position(fh, &pos));
    FT_EQ(pos, 1000 + ft_rank * 10 + 10);
    /* APPEND does not force explicit-offset writes to the end. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0) FT_OK(ferry_File_write_at(fh, 0, "Z", 1, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset size = 0;
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, 1000 + 10 * ft_size);
    for (int r = 0; r < ft_size; r++) {
        FT_OK(ferry_File_read_at(fh, 1000 + r * 10, back, 10, MPI_BYTE, MPI_STATUS_IGNORE));
        memset(rec, 'a' + r, sizeof rec);
        FT_EQ_MEM(back, rec, 10);
    }
    FT_OK(ferry_File_read_at(fh, 0, back, 1, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ(back[0], 'Z');
    FT_OK(ferry_File_close(&fh));
    /* APPEND on a new file with CREATE starts at 0. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0) unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_APPEND | MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                          &fh));
    FT_OK(ferry_File_get_position(fh, &pos));
    FT_EQ(pos, 0);
    FT_OK(ferry_File_close(&fh));
}

static void delete_on_close(const char *path)
{
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_CREATE | MPI_MODE_RDWR,
                          MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_write_at_all(fh, ft_rank * 4, "abcd", 4, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_CHECK(access(path, F_OK) == 0);
    FT_OK(ferry_File_close(&fh));
    FT_CHECK(access(path, F_OK) != 0); /* gone on every rank when close returns */
    /* On an existing file too. */
    write_bytes(path, 10);
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_close(&fh));
    FT_CHECK(access(path, F_OK) != 0);
}

static void sequential_mode(const char *path)
{
    ferry_File fh;
    char buf[8] = {0};
    MPI_Offset pos;
    MPI_Request req;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_SEQUENTIAL | MPI_MODE_CREATE | MPI_MODE_WRONLY,
                          MPI_INFO_NULL, &fh));
    const int unsup = MPI_ERR_UNSUPPORTED_OPERATION;
    FT_FAILS_NAMING(unsup, path, ferry_File_write_at(fh, 0, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(unsup, path, ferry_File_write(fh, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(unsup, path, ferry_File_iwrite_at(fh, 0, buf, 8, MPI_BYTE, &req));
    FT_FAILS_NAMING(unsup, path, ferry_File_iwrite(fh, buf, 8, MPI_BYTE, &req));
    FT_FAILS_NAMING(unsup, path, ferry_File_write_at_all(fh, 0, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(unsup, path, ferry_File_write_all(fh, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(unsup, path, ferry_File_seek(fh, 0, MPI_SEEK_SET));
    FT_FAILS_NAMING(unsup, path, ferry_File_get_position(fh, &pos));
    FT_OK(ferry_File_close(&fh));
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_SEQUENTIAL | MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_FAILS_NAMING(unsup, path, ferry_File_read_at(fh, 0, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(unsup, path, ferry_File_read(fh, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(unsup, path, ferry_File_read_at_all(fh, 0, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(unsup, path, ferry_File_read_all(fh, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(unsup, path, ferry_File_iread_at(fh, 0, buf, 8, MPI_BYTE, &req));
    FT_OK(ferry_File_close(&fh));
}

/* Reads on a WRONLY handle and writes on a RDONLY handle, every form. */
static void access_checks(const char *path)
{
    write_bytes(path, 64);
    ferry_File fh;
    char buf[8] = {0};
    MPI_Request req;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    FT_FAILS_NAMING(MPI_ERR_ACCESS, path, ferry_File_read_at(fh, 0, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_ACCESS, path, ferry_File_read(fh, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_ACCESS, path, ferry_File_read_at_all(fh, 0, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_ACCESS, path, ferry_File_read_all(fh, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_ACCESS, path, ferry_File_iread_at(fh, 0, buf, 8, MPI_BYTE, &req));
    FT_FAILS_NAMING(MPI_ERR_ACCESS, path, ferry_File_iread(fh, buf, 8, MPI_BYTE, &req));
    FT_FAILS_NAMING(MPI_ERR_ACCESS, path, ferry_File_read_at_c(fh, 0, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Offset pos = -1;
    FT_OK(ferry_File_get_position(fh, &pos)); /* a failed read does not move the pointer */
    FT_EQ(pos, 0);
    FT_OK(ferry_File_write_at(fh, 8 * ft_rank, "wwwwwwww", 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_close(&fh));

    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FT_FAILS_NAMING(MPI_ERR_READ_ONLY, path, ferry_File_write_at(fh, 0, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_READ_ONLY, path, ferry_File_write(fh, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_READ_ONLY, path, ferry_File_write_at_all(fh, 0, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_READ_ONLY, path, ferry_File_write_all(fh, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_READ_ONLY, path, ferry_File_iwrite_at(fh, 0, buf, 8, MPI_BYTE, &req));
    FT_FAILS_NAMING(MPI_ERR_READ_ONLY, path, ferry_File_iwrite(fh, buf, 8, MPI_BYTE, &req));
    FT_FAILS_NAMING(MPI_ERR_READ_ONLY, path, ferry_File_write_c(fh, buf, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_READ_ONLY, path, ferry_File_set_size(fh, 0));
    FT_FAILS_NAMING(MPI_ERR_READ_ONLY, path, ferry_File_preallocate(fh, 1000));
    MPI_Offset size = -1;
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, 64);
    char back[8];
    FT_OK(ferry_File_read_at(fh, 8 * (ft_size - 1), back, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(back, "wwwwwwww", 8);
    FT_OK(ferry_File_close(&fh));
}

static void unique_open(const char *path)
{
    ferry_File fh;
    int amode = MPI_MODE_UNIQUE_OPEN | MPI_MODE_CREATE | MPI_MODE_RDWR;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh));
    int got = 0;
    FT_OK(ferry_File_get_amode(fh, &got));
    FT_EQ(got, amode);
    int mine = 1000 + ft_rank, back = -1;
    FT_OK(ferry_File_write_at_all(fh, ft_rank * (MPI_Offset)sizeof(int), &mine, 1, MPI_INT, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_read_at_all(fh, ft_rank * (MPI_Offset)sizeof(int), &back, 1, MPI_INT, MPI_STATUS_IGNORE));
    FT_EQ(back, mine);
    FT_OK(ferry_File_close(&fh));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    illegal_combinations(ft_path("illegal"));
    create_and_exist(ft_path("exist"));
    append_mode(ft_path("append"));
    delete_on_close(ft_path("doc"));
    sequential_mode(ft_path("seq"));
    access_checks(ft_path("access"));
    unique_open(ft_path("unique"));
    return ft_finish();
}

/*
 * Pools of shared file pointers (one window per communicator, a slot per
 * open file): many files open at once, more than a pool holds (64; the
 * rest get windows of their own), closed in an interleaved order and
 * reopened, so slots are reused: every file's pointer starts where the
 * standard says (0, or end of file with MPI_MODE_APPEND) and moves by
 * exactly what was written to it, whatever its neighbours do. Then files
 * on two communicators at once (MPI_COMM_WORLD and a split, and
 * MPI_COMM_SELF), and files on duplicates the user frees while a file is
 * still open (the pool outlives the communicator until the last close) or
 * after closing (the pool goes with the communicator), of MPI_COMM_WORLD
 * (whose pool they share) and of a reordered communicator (a pool each).
 */
#include <stdio.h>
#include <string.h>

#include "ferry_test.h"

enum { MANY = 70, MORE = 30 };

static MPI_Offset shared_position(ferry_File fh)
{
    MPI_Offset p = -1;
    FT_OK(ferry_File_get_position_shared(fh, &p));
    return p;
}

static ferry_File open_file(MPI_Comm comm, const char *name, int extra_amode)
{
    ferry_File fh;
    const char *path = ft_path(name);
    FT_OK(ferry_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR | extra_amode, MPI_INFO_NULL, &fh));
    return fh;
}

/* Every rank of comm appends `bytes` bytes with write_shared; the file's
 * pointer moves by bytes per rank. */
static void write_some(ferry_File fh, MPI_Comm comm, int bytes)
{
    char rec[16];
    int size;
    MPI_Comm_size(comm, &size);
    memset(rec, 'x', sizeof rec);
    MPI_Offset before = shared_position(fh);
    MPI_Barrier(comm);
    FT_OK(ferry_File_write_shared(fh, rec, bytes, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Barrier(comm);
    FT_EQ(shared_position(fh), before + (MPI_Offset)size * bytes);
    MPI_Barrier(comm);
}

static int bytes_of(int i)
{
    return 1 + i % 13;
}

/* More files than a pool holds, closed every third and reopened. */
static void many_files(void)
{
    ferry_File fh[MANY + MORE];
    char name[32];
    for (int i = 0; i < MANY; i++) {
        snprintf(name, sizeof name, "many%d", i);
        fh[i] = open_file(MPI_COMM_WORLD, name, MPI_MODE_DELETE_ON_CLOSE);
        FT_EQ(shared_position(fh[i]), 0);
        write_some(fh[i], MPI_COMM_WORLD, bytes_of(i));
    }
    for (int i = 0; i < MANY; i++) FT_EQ(shared_position(fh[i]), (MPI_Offset)ft_size * bytes_of(i));
    for (int i = 0; i < MANY; i += 3) FT_OK(ferry_File_close(&fh[i]));
    for (int i = MANY; i < MANY + MORE; i++) {
        snprintf(name, sizeof name, "more%d", i);
        fh[i] = open_file(MPI_COMM_WORLD, name, MPI_MODE_DELETE_ON_CLOSE);
        FT_EQ(shared_position(fh[i]), 0); /* a reused slot starts again at 0 */
        FT_OK(ferry_File_seek_shared(fh[i], 7 * i, MPI_SEEK_SET));
        write_some(fh[i], MPI_COMM_WORLD, 2);
        FT_EQ(shared_position(fh[i]), 7 * i + 2 * ft_size);
    }
    for (int i = 0; i < MANY; i++)
        if (i % 3 != 0) FT_EQ(shared_position(fh[i]), (MPI_Offset)ft_size * bytes_of(i)); /* untouched */
    FT_OK(ferry_File_set_view(fh[MANY], 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    FT_EQ(shared_position(fh[MANY]), 0); /* set_view resets it */
    FT_EQ(shared_position(fh[MANY + 1]), 7 * (MANY + 1) + 2 * ft_size);
    for (int i = MANY + MORE - 1; i >= 0; i--)
        if (fh[i] != FERRY_FILE_NULL) FT_OK(ferry_File_close(&fh[i]));
}

/* A reused slot under MPI_MODE_APPEND starts at end of file. */
static void append_reuses_slot(void)
{
    ferry_File fh = open_file(MPI_COMM_WORLD, "before_append", MPI_MODE_DELETE_ON_CLOSE);
    write_some(fh, MPI_COMM_WORLD, 5);
    FT_OK(ferry_File_close(&fh));
    const char *path = ft_path("append");
    if (ft_rank == 0) {
        FILE *f = fopen(path, "wb");
        FT_CHECK(f && fwrite("0123456789abc", 1, 13, f) == 13);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    FT_EQ(shared_position(fh), 13);
    write_some(fh, MPI_COMM_WORLD, 3);
    FT_EQ(shared_position(fh), 13 + 3 * ft_size);
    MPI_Offset size = -1;
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, 13 + 3 * ft_size);
    FT_OK(ferry_File_close(&fh));
}

/* Files of MPI_COMM_WORLD, a split and MPI_COMM_SELF, opened and closed interleaved. */
static void two_communicators(void)
{
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, ft_rank % 2, ft_rank, &half);
    int half_size;
    MPI_Comm_size(half, &half_size);
    char name[32];
    for (int round = 0; round < 5; round++) {
        ferry_File w = open_file(MPI_COMM_WORLD, "world", MPI_MODE_DELETE_ON_CLOSE);
        snprintf(name, sizeof name, "half%d", ft_rank % 2);
        ferry_File h = open_file(half, name, MPI_MODE_DELETE_ON_CLOSE);
        snprintf(name, sizeof name, "self%d", ft_rank);
        ferry_File s = open_file(MPI_COMM_SELF, name, MPI_MODE_DELETE_ON_CLOSE);
        write_some(h, half, 3 + round);
        write_some(w, MPI_COMM_WORLD, 1 + round);
        write_some(s, MPI_COMM_SELF, 2);
        FT_EQ(shared_position(h), (MPI_Offset)half_size * (3 + round));
        FT_EQ(shared_position(s), 2);
        if (round % 2) FT_OK(ferry_File_close(&h));
        FT_OK(ferry_File_close(&w));
        FT_EQ(shared_position(s), 2);
        if (!(round % 2)) FT_OK(ferry_File_close(&h));
        FT_OK(ferry_File_close(&s));
    }
    MPI_Comm_free(&half);
}

/* Duplicates freed with files open (the pool lives on) and after closing.
 * A communicator with world's ranks in world's order shares world's pool;
 * the reversed order (MPI_SIMILAR) makes each duplicate a pool of its own. */
static void freed_communicators(void)
{
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, ft_size - ft_rank, &reversed);
    for (int round = 0; round < 8; round++) {
        MPI_Comm dup;
        MPI_Comm_dup(round < 6 ? reversed : MPI_COMM_WORLD, &dup);
        ferry_File a = open_file(dup, "dup_a", MPI_MODE_DELETE_ON_CLOSE);
        ferry_File b = open_file(dup, "dup_b", MPI_MODE_DELETE_ON_CLOSE);
        write_some(a, MPI_COMM_WORLD, 4);
        if (round % 2) { /* freed while both are open: each keeps its pointer */
            MPI_Comm_free(&dup);
            write_some(b, MPI_COMM_WORLD, 6);
            FT_OK(ferry_File_close(&a));
            write_some(b, MPI_COMM_WORLD, 1);
            FT_EQ(shared_position(b), 7 * ft_size);
            FT_OK(ferry_File_close(&b));
        } else {
            FT_OK(ferry_File_close(&a));
            FT_OK(ferry_File_close(&b));
            MPI_Comm_free(&dup);
        }
    }
    MPI_Comm_free(&reversed);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    many_files();
    append_reuses_slot();
    two_communicators();
    freed_communicators();
    many_files(); /* the world's pool again, after the others came and went */
    return ft_finish();
}

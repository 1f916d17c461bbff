/*
 * Ranks that pass NULL or disagree on what they open: every rank fails the
 * collective open with the same class, nothing crashes, hangs or writes
 * where it should not (issue 29, items 1 and 2).
 *
 *   - open_read with a NULL path on several ranks (it overflowed rank 0's
 *     list of names: ASan at 2-3 ranks, glibc's heap check at 16);
 *   - a path differing on one rank for open_write, open_read and
 *     open_mapped: MPI_ERR_NOT_SAME everywhere (the differing rank used to
 *     write into, or read, another file with no error), and an existing
 *     container at rank 0's path is left intact;
 *   - a NULL handle pointer on one rank (it returned at once and left the
 *     other ranks waiting in the open's collectives).
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_container.h"
#include "ferry_test.h"

enum { LENGTH = 3000 };

/* Which ranks pass the bad argument. */
typedef enum { ONLY_LAST, ALL_BUT_FIRST, ALL_RANKS, ONLY_FIRST } who_t;

static int chosen(who_t who)
{
    switch (who) {
    case ONLY_LAST: return ft_rank == ft_size - 1;
    case ALL_BUT_FIRST: return ft_rank > 0;
    case ALL_RANKS: return 1;
    default: return ft_rank == 0;
    }
}

static void write_container(const char *path, int salt)
{
    ferry_container_params_t p = {0};
    p.block_size = 512;
    p.chunk_size = 1024;
    ferry_container_t c;
    unsigned char bytes[LENGTH];
    size_t done;
    ft_fill(bytes, sizeof bytes, ft_seed + (uint64_t)(ft_rank * 7 + salt));
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    FT_OK(ferry_container_write(c, bytes, sizeof bytes, &done));
    FT_OK(ferry_container_close(&c));
}

/* Every rank's stream of the container at path holds what write_container(salt) wrote. */
static void check_container(const char *path, int salt)
{
    ferry_container_t c;
    unsigned char want[LENGTH], got[LENGTH + 1];
    size_t done;
    ft_fill(want, sizeof want, ft_seed + (uint64_t)(ft_rank * 7 + salt));
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    FT_OK(ferry_container_read(c, got, sizeof got, &done));
    FT_EQ(done, LENGTH);
    FT_EQ_MEM(got, want, LENGTH);
    FT_OK(ferry_container_close(&c));
}

static void null_paths(const char *path)
{
    static const who_t cases[] = {ONLY_LAST, ALL_BUT_FIRST, ALL_RANKS, ONLY_FIRST};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ferry_container_t c = (ferry_container_t)&c; /* the open must set it to NULL */
        const char *mine = chosen(cases[i]) ? NULL : path;
        int stream = ft_rank;
        FT_FAILS_NAMING(MPI_ERR_ARG, "NULL path", ferry_container_open_read(MPI_COMM_WORLD, mine, &c));
        FT_CHECK(c == NULL);
        FT_FAILS_NAMING(MPI_ERR_ARG, "NULL path", ferry_container_open_mapped(MPI_COMM_WORLD, mine, &stream, 1, &c));
        FT_CHECK(c == NULL);
    }
}

static void differing_paths(const char *path, const char *other)
{
    static const who_t cases[] = {ONLY_LAST, ONLY_FIRST};
    ferry_container_params_t p = {0};
    p.block_size = 512;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && ft_size > 1; i++) {
        const char *mine = chosen(cases[i]) ? other : path;
        ferry_container_t c;
        int stream = ft_size - 1 - ft_rank;
        FT_FAILS_NAMING(MPI_ERR_NOT_SAME, "another path", ferry_container_open_read(MPI_COMM_WORLD, mine, &c));
        FT_CHECK(c == NULL);
        FT_FAILS_NAMING(MPI_ERR_NOT_SAME, "another path",
                        ferry_container_open_mapped(MPI_COMM_WORLD, mine, &stream, 1, &c));
        FT_CHECK(c == NULL);
        FT_FAILS_NAMING(MPI_ERR_NOT_SAME, "another path", ferry_container_open_write(MPI_COMM_WORLD, mine, &p, &c));
        FT_CHECK(c == NULL);
        /* Neither container was emptied or written. */
        check_container(path, 0);
        check_container(other, 1);
    }
}

static void null_handle_pointer(const char *path)
{
    static const who_t cases[] = {ONLY_LAST, ONLY_FIRST};
    ferry_container_params_t p = {0};
    int stream = ft_rank;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ferry_container_t c, *result = chosen(cases[i]) ? NULL : &c;
        FT_FAILS_NAMING(MPI_ERR_ARG, "NULL handle pointer", ferry_container_open_read(MPI_COMM_WORLD, path, result));
        FT_FAILS_NAMING(MPI_ERR_ARG, "NULL handle pointer",
                        ferry_container_open_mapped(MPI_COMM_WORLD, path, &stream, 1, result));
        FT_FAILS_NAMING(MPI_ERR_ARG, "NULL handle pointer",
                        ferry_container_open_write(MPI_COMM_WORLD, path, &p, result));
        check_container(path, 0);
    }
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *path = ft_path("a.ctr"), *other = ft_path("b.ctr");
    write_container(path, 0);
    write_container(other, 1);
    null_paths(path);
    differing_paths(path, other);
    null_handle_pointer(path);
    check_container(path, 0);
    return ft_finish();
}

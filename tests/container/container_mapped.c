/*
 * Reading with another rank count: a container written by all ranks read
 * by fewer (each reader several streams, switching with select), one
 * written by fewer ranks read by all (ranks naming the same stream, one
 * naming none), a two-file set read mapped; the plain open with the wrong
 * count and mapped opens naming streams that do not exist fail on every
 * rank with a message saying why.
 */
#include <stdlib.h>
#include <string.h>

#include "container_model.h"
#include "ferry_test.h"

enum { MAX_LENGTH = 30000, MAX_PIECE = 5000 };

/* Writes the model's streams with the ranks of comm (stream = rank in comm). */
static void write_with(MPI_Comm comm, const char *path, int files)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    ferry_container_params_t p = {0};
    p.block_size = 512;
    p.chunk_size = 700 + 300 * rank;
    p.files = files;
    ct_model_t m;
    ct_model(ft_seed, rank, MAX_LENGTH, MAX_PIECE, &m);
    ferry_container_t c;
    FT_OK(ferry_container_open_write(comm, path, &p, &c));
    ct_write(c, &m, 3);
    FT_OK(ferry_container_close(&c));
}

/* Opens path mapped over comm with the given streams and checks each. */
static void read_mapped(MPI_Comm comm, const char *path, const int *streams, int count)
{
    ferry_container_t c;
    FT_OK(ferry_container_open_mapped(comm, path, streams, count, &c));
    for (int i = count - 1; i >= 0; i--) {
        ct_model_t m;
        ferry_container_info_t info;
        ct_model(ft_seed, streams[i], MAX_LENGTH, MAX_PIECE, &m);
        FT_OK(ferry_container_select(c, i));
        FT_OK(ferry_container_info(c, &info));
        FT_EQ(info.stream, streams[i]);
        FT_EQ(info.length, m.length);
        ct_check_read(c, &m);
    }
    FT_FAILS(MPI_ERR_ARG, ferry_container_select(c, count));
    FT_OK(ferry_container_close(&c));
}

static void fewer_readers(int files)
{
    const char *path = ft_path(files > 1 ? "fewer2.ctr" : "fewer.ctr");
    write_with(MPI_COMM_WORLD, path, files);
    int readers = ft_size > 1 ? ft_size / 2 : 1, streams[16], count = 0;
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, ft_rank < readers ? 0 : MPI_UNDEFINED, ft_rank, &comm);
    if (comm == MPI_COMM_NULL) return;
    for (int s = ft_rank; s < ft_size; s += readers) streams[count++] = s;
    read_mapped(comm, path, streams, count);
    MPI_Comm_free(&comm);
}

static void more_readers(void)
{
    const char *path = ft_path("more.ctr");
    int writers = ft_size > 2 ? ft_size - 2 : 1;
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, ft_rank < writers ? 0 : MPI_UNDEFINED, ft_rank, &comm);
    if (comm != MPI_COMM_NULL) {
        write_with(comm, path, 1);
        MPI_Comm_free(&comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int streams[2] = {ft_rank % writers, (ft_rank + 1) % writers};
    int count = ft_rank == ft_size - 1 && ft_size > 1 ? 0 : 2;
    read_mapped(MPI_COMM_WORLD, path, streams, count);
    if (count == 0) { /* a rank with no stream has nothing to read */
        ferry_container_t c;
        FT_OK(ferry_container_open_mapped(MPI_COMM_WORLD, path, NULL, 0, &c));
        size_t done;
        char byte;
        FT_FAILS_NAMING(MPI_ERR_ARG, "opened no stream", ferry_container_read(c, &byte, 1, &done));
        FT_OK(ferry_container_close(&c));
    } else {
        ferry_container_t c;
        FT_OK(ferry_container_open_mapped(MPI_COMM_WORLD, path, streams, 1, &c));
        FT_OK(ferry_container_close(&c));
    }
    /* The plain open insists on the writers' count. */
    ferry_container_t c;
    if (writers != ft_size)
        FT_FAILS_NAMING(MPI_ERR_ARG, "use ferry_container_open_mapped",
                        ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    int bad[1] = {ft_rank == 0 ? writers : 0};
    FT_FAILS_NAMING(MPI_ERR_ARG, "no stream", ferry_container_open_mapped(MPI_COMM_WORLD, path, bad, 1, &c));
    int negative[1] = {-1};
    FT_FAILS(MPI_ERR_ARG, ferry_container_open_mapped(MPI_COMM_WORLD, path, ft_rank == ft_size - 1 ? negative : bad,
                                                      1, &c));
    FT_CHECK(c == NULL);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    fewer_readers(1);
    fewer_readers(2);
    more_readers();
    return ft_finish();
}

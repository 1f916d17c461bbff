/*
 * Bad arguments and impossible requests: a collective open fails on every
 * rank, naming the rank that was wrong and why (NULL path, negative chunk
 * size, bad block size, ranks disagreeing on the file count, a directory
 * that does not exist), and independent calls refuse what their handle
 * cannot do. Nothing hangs.
 */
#include <string.h>

#include "ferry_test.h"
#include "ferry_container.h"

static ferry_container_params_t params(int files)
{
    ferry_container_params_t p = {0};
    p.files = files;
    p.block_size = 512;
    return p;
}

static void collective_failures(void)
{
    ferry_container_t c = NULL;
    const char *path = ft_path("args.ctr");
    ferry_container_params_t p = params(1);
    int last = ft_size - 1;
    FT_FAILS_NAMING(MPI_ERR_ARG, ft_rank == last ? "NULL path" : "rank",
                    ferry_container_open_write(MPI_COMM_WORLD, ft_rank == last ? NULL : path, &p, &c));
    p.chunk_size = ft_rank == last ? -5 : 0;
    FT_FAILS_NAMING(MPI_ERR_ARG, "negative chunk size", ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    p = params(1);
    p.block_size = ft_rank == 0 ? 1000 : 512;
    FT_FAILS_NAMING(MPI_ERR_ARG, "block size 1000", ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    if (ft_size > 1) {
        p = params(ft_rank == last ? 1 : 2);
        FT_FAILS_NAMING(MPI_ERR_NOT_SAME, "files", ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
        p = params(ft_rank == last ? 3 : 2);
        FT_FAILS_NAMING(MPI_ERR_NOT_SAME, "files", ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    }
    p = params(2);
    FT_FAILS(MPI_ERR_NO_SUCH_FILE, ferry_container_open_write(MPI_COMM_WORLD, ft_path("no/such/dir.ctr"), &p, &c));
    p = params(1);
    FT_FAILS(MPI_ERR_NO_SUCH_FILE, ferry_container_open_write(MPI_COMM_WORLD, ft_path("no/such/dir.ctr"), &p, &c));
    /* The failed creations left at most an empty file, which no reader takes for a container. */
    FT_FAILS_NAMING(MPI_ERR_BAD_FILE, "truncated", ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    FT_OK(ferry_container_close(&c));
    FT_FAILS_NAMING(MPI_ERR_ARG, "NULL path",
                    ferry_container_open_read(MPI_COMM_WORLD, ft_rank == last ? NULL : path, &c));
    FT_CHECK(c == NULL);
    FT_FAILS(MPI_ERR_ARG, ferry_container_close(&c));
    FT_FAILS(MPI_ERR_ARG, ferry_container_close(NULL));
    ferry_container_set_t set = NULL;
    FT_EQ(ferry_container_serial_close(NULL), MPI_ERR_ARG); /* it returned MPI_SUCCESS (issue 29 item 7) */
    FT_EQ(ferry_container_serial_close(&set), MPI_ERR_ARG);
    FT_FAILS(MPI_ERR_ARG, ferry_container_open_write(MPI_COMM_WORLD, path, &p, NULL));
}

static void writer_misuse(ferry_container_t c)
{
    char byte = 'x';
    size_t done;
    MPI_Offset at;
    FT_FAILS_NAMING(MPI_ERR_ACCESS, "opened for writing", ferry_container_read(c, &byte, 1, &done));
    FT_FAILS(MPI_ERR_ARG, ferry_container_write(c, NULL, 1, &done));
    FT_FAILS(MPI_ERR_ARG, ferry_container_seek(c, -1, MPI_SEEK_SET));
    FT_FAILS(MPI_ERR_ARG, ferry_container_seek(c, 0, 12345));
    FT_FAILS(MPI_ERR_ARG, ferry_container_select(c, 1));
    FT_OK(ferry_container_write(c, &byte, 1, NULL));
    FT_OK(ferry_container_seek(c, 100, MPI_SEEK_CUR));
    FT_OK(ferry_container_tell(c, &at));
    FT_EQ(at, 101);
    FT_OK(ferry_container_bytes_avail(c, &at)); /* room left in the chunk */
    FT_EQ(at, 512 - 64 - 101);
    /* A position whose chunk would lie beyond 2^63 in the file is refused, not wrapped. */
    FT_OK(ferry_container_seek(c, (MPI_Offset)1 << 62, MPI_SEEK_SET));
    FT_FAILS_NAMING(MPI_ERR_ARG, "beyond 2^63", ferry_container_write(c, &byte, 1, &done));
    FT_OK(ferry_container_seek(c, 101, MPI_SEEK_SET));
}

static void per_node_and_misuse(void)
{
    const char *path = ft_path("node.ctr");
    ferry_container_params_t p = params(FERRY_CONTAINER_FILE_PER_NODE);
    p.chunk_size = 512;
    ferry_container_t c;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    ferry_container_info_t info;
    FT_OK(ferry_container_info(c, &info));
    FT_EQ(info.files, 1); /* one node here */
    FT_EQ(info.block_size, 512);
    writer_misuse(c);
    FT_OK(ferry_container_close(&c));
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    FT_OK(ferry_container_info(c, &info));
    FT_EQ(info.length, 1); /* a seek past the end writes nothing */
    FT_FAILS_NAMING(MPI_ERR_READ_ONLY, "opened for reading", ferry_container_write(c, "x", 1, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_container_flush(NULL));
    FT_OK(ferry_container_flush(c)); /* nothing to flush on a reader */
    FT_OK(ferry_container_close(&c));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    collective_failures();
    per_node_and_misuse();
    return ft_finish();
}

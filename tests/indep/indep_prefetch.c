/*
 * Guided prefetching: reads through a sparse view announce their file
 * ranges ahead (statistics count the bytes announced); reads through a
 * contiguous view leave readahead to the kernel; ferry_prefetch_size=0
 * turns it off; access_style=random turns it on for dense noncontiguous
 * views; files in memory (tmpfs) are never announced. Announcing changes
 * no byte read.
 */
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "ferry_test.h"

enum { N = 1 << 16 };

static long long read_through(const char *name, MPI_Datatype filetype, const char *hint, const char *value,
                              const char *data)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (hint) MPI_Info_set(info, (char *)hint, (char *)value);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_SELF, ft_path(name), MPI_MODE_RDONLY, info, &fh));
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, filetype, "native", info));
    MPI_Count size;
    MPI_Type_size_x(filetype, &size);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(filetype, &lb, &extent);
    int want = (int)(N / extent * size);
    char *got = malloc((size_t)want);
    FT_OK(ferry_File_read_at(fh, 0, got, want, MPI_BYTE, MPI_STATUS_IGNORE));
    /* The bytes: block j of the filetype's stream is file bytes [j * extent, + size). */
    for (int k = 0; k < want; k++)
        if (got[k] != data[(k / size) * extent + k % size]) ft_fail(__FILE__, __LINE__, "byte %d differs", k);
    long long announced = ft_info_number(fh, "ferry_stats_prefetch_bytes");
    FT_OK(ferry_File_close(&fh));
    MPI_Info_free(&info);
    free(got);
    return announced;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    char *data = malloc(N);
    ft_fill(data, N, ft_seed);
    char name[32];
    snprintf(name, sizeof name, "data.%d", ft_rank);
    FILE *f = fopen(ft_path(name), "wb");
    FT_CHECK(f && fwrite(data, 1, N, f) == N);
    fclose(f);
    MPI_Datatype sparse, dense, sparse_block, dense_block;
    FT_OK(MPI_Type_contiguous(64, MPI_BYTE, &sparse_block));
    FT_OK(MPI_Type_create_resized(sparse_block, 0, 1024, &sparse)); /* 64 of every 1024 bytes */
    FT_OK(MPI_Type_contiguous(1000, MPI_BYTE, &dense_block));
    FT_OK(MPI_Type_create_resized(dense_block, 0, 1024, &dense)); /* 1000 of every 1024 */
    MPI_Type_commit(&sparse);
    MPI_Type_commit(&dense);
    struct statfs fs;
    FT_CHECK(statfs(ft_scratch_dir(), &fs) == 0);
    int in_memory = fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC;
    if (ft_rank == 0 && in_memory) printf("indep_prefetch: %s is in memory: expecting no prefetching\n", ft_scratch_dir());
    long long announced = read_through(name, sparse, NULL, NULL, data);
    FT_CHECK(in_memory ? announced == 0 : announced > 0);
    FT_EQ(read_through(name, sparse, "ferry_prefetch_size", "0", data), 0);
    FT_EQ(read_through(name, dense, NULL, NULL, data), 0);
    announced = read_through(name, dense, "access_style", "random", data);
    FT_CHECK(in_memory ? announced == 0 : announced > 0);
    FT_EQ(read_through(name, MPI_BYTE, "access_style", "random", data), 0); /* contiguous: the kernel's readahead */
    MPI_Type_free(&sparse);
    MPI_Type_free(&dense);
    MPI_Type_free(&sparse_block);
    MPI_Type_free(&dense_block);
    free(data);
    return ft_finish();
}

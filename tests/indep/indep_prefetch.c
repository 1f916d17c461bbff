/*
 * Guided prefetching: reads through a sparse view whose pieces lie far
 * apart (read one call each) announce their file ranges ahead (statistics
 * count the bytes announced); sparse views of close pieces (sieved, or
 * streamed by the kernel's readahead: issue 31 item 4) and contiguous views
 * leave readahead to the kernel; ferry_prefetch_size=0 turns it off;
 * access_style=random turns it on for any noncontiguous view; files in
 * memory (tmpfs) are never announced. Announcing changes no byte read.
 */
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "ferry_test.h"

enum { N = 2 << 20 };

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
    MPI_Datatype sparse, far, dense, sparse_block, far_block, dense_block;
    FT_OK(MPI_Type_contiguous(64, MPI_BYTE, &sparse_block));
    FT_OK(MPI_Type_create_resized(sparse_block, 0, 1024, &sparse)); /* 64 of every 1024 bytes */
    FT_OK(MPI_Type_contiguous(4096, MPI_BYTE, &far_block));
    FT_OK(MPI_Type_create_resized(far_block, 0, 128 << 10, &far)); /* 4 KiB of every 128 KiB */
    FT_OK(MPI_Type_contiguous(1000, MPI_BYTE, &dense_block));
    FT_OK(MPI_Type_create_resized(dense_block, 0, 1024, &dense)); /* 1000 of every 1024 */
    MPI_Type_commit(&sparse);
    MPI_Type_commit(&far);
    MPI_Type_commit(&dense);
    struct statfs fs;
    FT_CHECK(statfs(ft_scratch_dir(), &fs) == 0);
    int in_memory = fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC;
    if (ft_rank == 0 && in_memory) printf("indep_prefetch: %s is in memory: expecting no prefetching\n", ft_scratch_dir());
    long long announced = read_through(name, far, NULL, NULL, data);
    FT_CHECK(in_memory ? announced == 0 : announced > 0);
    FT_EQ(read_through(name, far, "ferry_prefetch_size", "0", data), 0);
    FT_EQ(read_through(name, sparse, NULL, NULL, data), 0); /* sieved: whole windows */
    FT_EQ(read_through(name, sparse, "romio_ds_read", "disable", data), 0); /* 960-byte gaps: the kernel's */
    FT_EQ(read_through(name, dense, NULL, NULL, data), 0);
    announced = read_through(name, dense, "access_style", "random", data);
    FT_CHECK(in_memory ? announced == 0 : announced > 0);
    announced = read_through(name, sparse, "access_style", "random", data);
    FT_CHECK(in_memory ? announced == 0 : announced > 0);
    FT_EQ(read_through(name, MPI_BYTE, "access_style", "random", data), 0); /* contiguous: the kernel's readahead */
    MPI_Type_free(&sparse);
    MPI_Type_free(&far);
    MPI_Type_free(&dense);
    MPI_Type_free(&sparse_block);
    MPI_Type_free(&far_block);
    MPI_Type_free(&dense_block);
    free(data);
    return ft_finish();
}

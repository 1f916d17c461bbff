/*
 * write_shared from several threads of every rank at once
 * (MPI_THREAD_MULTIPLE): the fetch-and-add on the pointer's window is the
 * only coordination, so the file must hold every thread's records exactly
 * once, whole, with no gap.
 */
#include <pthread.h>
#include <stdlib.h>

#include "ferry_test.h"

enum { THREADS = 3, RECORDS = 60, RECORD_INTS = 16 };

static ferry_File fh;

static void *writer(void *arg)
{
    int id = ft_rank * THREADS + (int)(intptr_t)arg;
    for (int i = 0; i < RECORDS; i++) {
        int rec[RECORD_INTS];
        for (int k = 0; k < RECORD_INTS; k++) rec[k] = id * 100000 + i * 100 + k;
        FT_OK(ferry_File_write_shared(fh, rec, RECORD_INTS, MPI_INT, MPI_STATUS_IGNORE));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (ft_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE) != MPI_THREAD_MULTIPLE) {
        ft_skip("MPI_THREAD_MULTIPLE not provided");
        return ft_finish();
    }
    const char *path = ft_path("threads");
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) FT_EQ(pthread_create(&t[i], NULL, writer, (void *)(intptr_t)i), 0);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    FT_OK(ferry_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_sync(fh));
    int writers = ft_size * THREADS;
    size_t n = (size_t)writers * RECORDS;
    MPI_Offset pos = -1;
    FT_OK(ferry_File_get_position_shared(fh, &pos));
    FT_EQ(pos, (MPI_Offset)(n * RECORD_INTS * sizeof(int)));
    if (ft_rank == 0) {
        int *all = malloc(n * RECORD_INTS * sizeof(int));
        MPI_Status st;
        FT_OK(ferry_File_read_at(fh, 0, all, (int)(n * RECORD_INTS), MPI_INT, &st));
        int got = -1;
        MPI_Get_count(&st, MPI_INT, &got);
        FT_EQ(got, n * RECORD_INTS);
        char *seen = calloc(n, 1);
        for (size_t j = 0; j < n; j++) {
            int *rec = all + j * RECORD_INTS;
            int id = rec[0] / 100000, i = (rec[0] % 100000) / 100;
            FT_CHECK(id >= 0 && id < writers && i >= 0 && i < RECORDS);
            for (int k = 0; k < RECORD_INTS; k++) FT_EQ(rec[k], id * 100000 + i * 100 + k);
            FT_EQ(seen[id * RECORDS + i], 0);
            seen[id * RECORDS + i] = 1;
        }
        free(seen);
        free(all);
    }
    FT_OK(ferry_File_close(&fh));
    return ft_finish();
}

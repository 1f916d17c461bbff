/*
 * Threads (MPI_THREAD_MULTIPLE): first use of a type from several threads
 * at once (one decode, one attribute, no lost tree), and threads decoding
 * and freeing their own types side by side. Results are checked against
 * MPI_Pack done before the threads start.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "datatype/datatype.h"
#include "ferry_test.h"

enum { THREADS = 4, ROUNDS = 50, N = 64 };

static MPI_Datatype shared[ROUNDS];
static char buf[N * 64], ref[ROUNDS][N * 64];
static int sizes[ROUNDS];
static pthread_barrier_t start;

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    char out[N * 64];
    for (int r = 0; r < ROUNDS; r++) {
        pthread_barrier_wait(&start);
        FT_EQ(ferry__datatype_pack(buf, 1, shared[r], 0, out, sizes[r]), 0);
        FT_EQ_MEM(out, ref[r], (size_t)sizes[r]);
        MPI_Datatype own; /* a private type decoded and freed while others do the same */
        FT_OK(MPI_Type_vector(N, 1 + id % 3, 4, MPI_SHORT, &own));
        FT_OK(MPI_Type_commit(&own));
        ferry__typeinfo_t info;
        FT_EQ(ferry__datatype_info(own, &info), 0);
        FT_EQ(info.size, N * 2 * (1 + id % 3));
        MPI_Type_free(&own);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &ft_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ft_size);
    ft_seed = 1;
    if (provided < MPI_THREAD_MULTIPLE) {
        if (ft_rank == 0) printf("datatype_threads: host gives thread level %d only, skipped\n", provided);
        return ft_finish();
    }
    ft_fill(buf, sizeof buf, 7);
    for (int r = 0; r < ROUNDS; r++) {
        int lens[3] = {1 + r % 4, 2, 3}, disps[3] = {0, 7 + r % 5, 20};
        FT_OK(MPI_Type_indexed(3, lens, disps, MPI_INT, &shared[r]));
        FT_OK(MPI_Type_commit(&shared[r]));
        int position = 0;
        MPI_Type_size(shared[r], &sizes[r]);
        FT_OK(MPI_Pack(buf, 1, shared[r], ref[r], sizeof ref[r], &position, MPI_COMM_SELF));
    }
    pthread_barrier_init(&start, NULL, THREADS);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);
    for (int r = 0; r < ROUNDS; r++) MPI_Type_free(&shared[r]);
    if (ft_rank == 0) printf("datatype_threads: %d threads x %d first uses\n", THREADS, ROUNDS);
    return ft_finish();
}

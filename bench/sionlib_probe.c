/*
 * ferry-sionlib-probe: checks, through SIONlib 1.7.6's public API, the
 * failures issue 16 names, next to ferry's container doing the same thing.
 * Built only when CMake is given -DFERRY_SIONLIB_DIR (SIONlib itself is
 * built by hand, outside ferry); tools/bench/sionlib-probe.sh runs every mode.
 *
 *   collectives BLOCKS   collectives in open and close, writing BLOCKS chunks per rank
 *                        (MPI_ and PMPI_ entry points counted: SIONlib calls PMPI_ directly)
 *   big-write            one write three chunks long
 *   tail                 two writes of 3000 bytes into 4096-byte chunks: where does the second go?
 *   write PATH           each rank writes 1000 bytes of its rank number (a file for read-with)
 *   read-with PATH       read PATH with this job's rank count: which streams does each rank get?
 *   crash PATH           write and flush, then SIGKILL before close (run siondump on PATH after)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sion.h>

#include "ferry_container.h"

/* ---- counting collectives ---- */

static long collectives;

#define COUNTED(name, params, args)                                                                                \
    int P##name params;                                                                                            \
    int P##name params                                                                                             \
    {                                                                                                              \
        static int (*real) params;                                                                                 \
        if (!real) *(void **)&real = dlsym(RTLD_NEXT, "P" #name);                                                  \
        collectives++;                                                                                             \
        return real args;                                                                                          \
    }                                                                                                              \
    int name params;                                                                                               \
    int name params                                                                                                \
    {                                                                                                              \
        static int (*real) params;                                                                                 \
        if (!real) *(void **)&real = dlsym(RTLD_NEXT, "P" #name);                                                  \
        collectives++;                                                                                             \
        return real args;                                                                                          \
    }

COUNTED(MPI_Gather, (const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm c),
        (s, sc, st, r, rc, rt, root, c))
COUNTED(MPI_Scatter, (const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm c),
        (s, sc, st, r, rc, rt, root, c))
COUNTED(MPI_Gatherv, (const void *s, int sc, MPI_Datatype st, void *r, const int *rc, const int *d, MPI_Datatype rt,
                      int root, MPI_Comm c), (s, sc, st, r, rc, d, rt, root, c))
COUNTED(MPI_Scatterv, (const void *s, const int *sc, const int *d, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                       int root, MPI_Comm c), (s, sc, d, st, r, rc, rt, root, c))
COUNTED(MPI_Bcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c))
COUNTED(MPI_Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c), (s, r, n, t, op, c))
COUNTED(MPI_Reduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c),
        (s, r, n, t, op, root, c))
COUNTED(MPI_Barrier, (MPI_Comm c), (c))
COUNTED(MPI_Comm_dup, (MPI_Comm c, MPI_Comm *d), (c, d))
COUNTED(MPI_Comm_split, (MPI_Comm c, int color, int key, MPI_Comm *d), (c, color, key, d))
/* ferry polls the nonblocking forms when ranks outnumber cores on MPICH (src/progress) */
COUNTED(MPI_Igather, (const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm c,
                      MPI_Request *q), (s, sc, st, r, rc, rt, root, c, q))
COUNTED(MPI_Iscatter, (const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm c,
                       MPI_Request *q), (s, sc, st, r, rc, rt, root, c, q))
COUNTED(MPI_Igatherv, (const void *s, int sc, MPI_Datatype st, void *r, const int *rc, const int *d, MPI_Datatype rt,
                       int root, MPI_Comm c, MPI_Request *q), (s, sc, st, r, rc, d, rt, root, c, q))
COUNTED(MPI_Iscatterv, (const void *s, const int *sc, const int *d, MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                        int root, MPI_Comm c, MPI_Request *q), (s, sc, d, st, r, rc, rt, root, c, q))
COUNTED(MPI_Ibcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *q), (b, n, t, root, c, q))
COUNTED(MPI_Iallreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request *q),
        (s, r, n, t, op, c, q))
COUNTED(MPI_Ibarrier, (MPI_Comm c, MPI_Request *q), (c, q))
COUNTED(MPI_Comm_idup, (MPI_Comm c, MPI_Comm *d, MPI_Request *q), (c, d, q))

static int rank, size;

static int sion_open_write(const char *path, sion_int64 chunk, FILE **fp)
{
    int files = 1, global = rank;
    MPI_Comm local = MPI_COMM_WORLD;
    sion_int32 block = 4096;
    char *name = NULL;
    return sion_paropen_mpi(path, "bw", &files, MPI_COMM_WORLD, &local, &chunk, &block, &global, fp, &name);
}

static long max_over_ranks(long value)
{
    long total = 0;
    PMPI_Allreduce(&value, &total, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    return total;
}

static void mode_collectives(const char *dir, int blocks)
{
    char path[512];
    static char data[4096];
    long open_calls, close_calls;
    snprintf(path, sizeof path, "%s/probe.sion", dir);
    FILE *fp;
    collectives = 0;
    int sid = sion_open_write(path, 4096, &fp);
    open_calls = collectives;
    for (int b = 0; b < blocks; b++) {
        sion_ensure_free_space(sid, sizeof data);
        sion_fwrite(data, 1, sizeof data, sid);
    }
    collectives = 0;
    sion_parclose_mpi(sid);
    close_calls = collectives;
    long so = max_over_ranks(open_calls), sc = max_over_ranks(close_calls);
    snprintf(path, sizeof path, "%s/probe.ctr", dir);
    ferry_container_params_t p = {0};
    p.chunk_size = 4096 + 64;
    p.block_size = 4096;
    ferry_container_t c;
    collectives = 0;
    ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c);
    open_calls = collectives;
    for (int b = 0; b < blocks; b++) ferry_container_write(c, data, sizeof data, NULL);
    collectives = 0;
    ferry_container_close(&c);
    close_calls = collectives;
    long fo = max_over_ranks(open_calls), fc = max_over_ranks(close_calls);
    if (rank == 0)
        printf("collectives per rank (most on any rank), %d ranks, %d chunks each: SIONlib open %ld, close %ld; "
               "ferry open %ld, close %ld\n", size, blocks, so, sc, fo, fc);
}

static void mode_big_write(const char *dir)
{
    char path[512];
    static char data[3 * 4096], back[3 * 4096];
    memset(data, 'a' + rank, sizeof data);
    snprintf(path, sizeof path, "%s/big.sion", dir);
    FILE *fp;
    int sid = sion_open_write(path, 4096, &fp);
    size_t put = sid >= 0 ? sion_fwrite(data, 1, sizeof data, sid) : 0;
    if (sid >= 0) sion_parclose_mpi(sid);
    snprintf(path, sizeof path, "%s/big.ctr", dir);
    ferry_container_params_t p = {0};
    p.chunk_size = 4096;
    ferry_container_t c;
    size_t done = 0, got = 0;
    ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c);
    ferry_container_write(c, data, sizeof data, &done);
    ferry_container_close(&c);
    ferry_container_open_read(MPI_COMM_WORLD, path, &c);
    ferry_container_read(c, back, sizeof back, &got);
    ferry_container_close(&c);
    if (rank == 0)
        printf("one write of %zu bytes into 4096-byte chunks: SIONlib sion_fwrite returned %zu; ferry wrote %zu and "
               "read back %zu (%s)\n", sizeof data, put, done, got, memcmp(back, data, sizeof data) ? "wrong" : "same");
}

static void mode_tail(const char *dir)
{
    char path[512];
    static char data[3000];
    snprintf(path, sizeof path, "%s/tail.sion", dir);
    FILE *fp;
    int sid = sion_open_write(path, 4096, &fp), block = 0, maxchunks = 0;
    sion_int64 pos = 0, *chunks = NULL;
    sion_fwrite(data, 1, sizeof data, sid);
    sion_fwrite(data, 1, sizeof data, sid);
    sion_get_current_location(sid, &block, &pos, &maxchunks, &chunks);
    sion_parclose_mpi(sid);
    if (rank == 0)
        printf("two writes of 3000 bytes into a 4096-byte chunk: SIONlib continues in chunk %d at byte %lld (%s); "
               "ferry fills chunk 0 with 4032 bytes and puts the other 1968 in chunk 1\n", block, (long long)pos,
               block > 0 ? "the first chunk's last 1096 bytes are wasted" : "no waste");
}

static void mode_write(const char *path)
{
    char data[1000];
    memset(data, '0' + rank % 10, sizeof data);
    FILE *fp;
    int sid = sion_open_write(path, 4096, &fp);
    sion_fwrite(data, 1, sizeof data, sid);
    sion_parclose_mpi(sid);
    if (rank == 0) printf("wrote %s with %d ranks\n", path, size);
}

static void mode_read_with(const char *path)
{
    int files = 1, global = rank;
    MPI_Comm local = MPI_COMM_WORLD;
    sion_int64 chunk = 0;
    sion_int32 block = -1;
    char *name = NULL, data[1000] = "";
    FILE *fp;
    int sid = sion_paropen_mpi(path, "br", &files, MPI_COMM_WORLD, &local, &chunk, &block, &global, &fp, &name);
    size_t got = sid >= 0 ? sion_fread(data, 1, sizeof data, sid) : 0;
    printf("reader rank %d of %d: open %s, stream of rank %d, %zu bytes of '%c'\n", rank, size,
           sid >= 0 ? "succeeded" : "failed", global, got, got ? data[0] : '-');
    if (sid >= 0) sion_parclose_mpi(sid);
}

static void mode_crash(const char *path)
{
    char data[100000];
    memset(data, 'x', sizeof data);
    FILE *fp;
    int sid = sion_open_write(path, 1 << 20, &fp);
    sion_fwrite(data, 1, sizeof data, sid);
    sion_flush(sid);
    sion_fwrite(data, 1, sizeof data, sid); /* buffered, never flushed */
    PMPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("wrote and flushed 100000 bytes per rank, then 100000 more; killing the job\n");
    fflush(stdout);
    raise(SIGKILL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "", *arg = argc > 2 ? argv[2] : "/tmp";
    if (!strcmp(mode, "collectives")) mode_collectives(arg, argc > 3 ? atoi(argv[3]) : 1);
    else if (!strcmp(mode, "big-write")) mode_big_write(arg);
    else if (!strcmp(mode, "tail")) mode_tail(arg);
    else if (!strcmp(mode, "write")) mode_write(arg);
    else if (!strcmp(mode, "read-with")) mode_read_with(arg);
    else if (!strcmp(mode, "crash")) mode_crash(arg);
    else if (rank == 0) fprintf(stderr, "usage: ferry-sionlib-probe MODE ARGS (see bench/sionlib_probe.c)\n");
    MPI_Finalize();
    return 0;
}

/*
 * The SIONlib contender of ferry-bench container: SIONlib's own parallel
 * API (sion_paropen_mpi, sion_fwrite, sion_fread, sion_parclose_mpi), one
 * physical file, the file system's block size, one chunk holding each
 * rank's whole stream. Compiled only when CMake was given
 * -DFERRY_SIONLIB_DIR=<a SIONlib install> (FERRY_BENCH_SIONLIB); SIONlib
 * itself is never part of ferry.
 */
#include "bench_container.h"

#ifdef FERRY_BENCH_SIONLIB
#include <stdio.h>

#include <sion.h>

static int sionlib_open(ctr_job_t *job, const char *mode, FILE **fp)
{
    int files = 1, rank = job->rank;
    MPI_Comm local = MPI_COMM_WORLD;
    sion_int64 chunk = job->chunk;
    sion_int32 block = -1; /* the file system's */
    char *name = NULL;
    int sid = sion_paropen_mpi(job->path, mode, &files, MPI_COMM_WORLD, &local, &chunk, &block, &rank, fp, &name);
    if (sid < 0) ctr_failed(job, "sionlib", "sion_paropen_mpi failed");
    return sid;
}

static int sionlib_step(ctr_job_t *job, void *arg, unsigned char *data, size_t len)
{
    int sid = *(int *)arg;
    size_t done = job->writing ? sion_fwrite(data, 1, len, sid) : sion_fread(data, 1, len, sid);
    if (done != len)
        ctr_failed(job, "sionlib",
                   job->writing ? "sion_fwrite wrote less than asked" : "sion_fread read less than asked");
    return done != len;
}

static void sionlib_write(ctr_job_t *job)
{
    FILE *fp = NULL;
    int sid = sionlib_open(job, "bw", &fp);
    if (sid < 0) return;
    ctr_pieces(job, sionlib_step, &sid); /* metadata calls: tools/bench/bench-container-syscalls.sh counts them */
    if (job->sync && fp && (fflush(fp) != 0 || fsync(fileno(fp)) != 0)) ctr_failed(job, "sionlib", "fsync failed");
    if (sion_parclose_mpi(sid) < 0) ctr_failed(job, "sionlib", "sion_parclose_mpi failed");
}

static void sionlib_read(ctr_job_t *job)
{
    FILE *fp = NULL;
    int sid = sionlib_open(job, "br", &fp);
    if (sid < 0) return;
    ctr_pieces(job, sionlib_step, &sid);
    if (sion_parclose_mpi(sid) < 0) ctr_failed(job, "sionlib", "sion_parclose_mpi failed");
}

const ctr_contender_t *bench_container_sionlib(void)
{
    static const ctr_contender_t sionlib = {"sionlib", sionlib_write, sionlib_read, ctr_remove_shared};
    return &sionlib;
}
#else
const ctr_contender_t *bench_container_sionlib(void)
{
    return NULL;
}
#endif

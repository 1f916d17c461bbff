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
#include <unistd.h>

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

static void sionlib_write(ctr_job_t *job)
{
    FILE *fp = NULL;
    int sid = sionlib_open(job, "bw", &fp);
    if (sid < 0) return;
    for (long long done = 0; done < job->bytes;) {
        size_t want = job->bytes - done < (long long)job->piece ? (size_t)(job->bytes - done) : job->piece;
        size_t put = sion_fwrite(job->buf + done, 1, want, sid);
        if (put != want) {
            ctr_failed(job, "sionlib", "sion_fwrite wrote less than asked");
            break;
        }
        done += (long long)want;
    }
    if (job->sync && fp && (fflush(fp) != 0 || fsync(fileno(fp)) != 0)) ctr_failed(job, "sionlib", "fsync failed");
    if (sion_parclose_mpi(sid) < 0) ctr_failed(job, "sionlib", "sion_parclose_mpi failed");
}

static void sionlib_read(ctr_job_t *job)
{
    FILE *fp = NULL;
    int sid = sionlib_open(job, "br", &fp);
    if (sid < 0) return;
    for (long long done = 0; done < job->bytes;) {
        size_t want = job->bytes - done < (long long)job->piece ? (size_t)(job->bytes - done) : job->piece;
        size_t got = sion_fread(job->buf + done, 1, want, sid);
        if (got != want) {
            ctr_failed(job, "sionlib", "sion_fread read less than asked");
            break;
        }
        done += (long long)want;
    }
    if (sion_parclose_mpi(sid) < 0) ctr_failed(job, "sionlib", "sion_parclose_mpi failed");
}

static void sionlib_remove(ctr_job_t *job)
{
    if (job->rank == 0) unlink(job->path);
}

const ctr_contender_t *bench_container_sionlib(void)
{
    static const ctr_contender_t sionlib = {"sionlib", sionlib_write, sionlib_read, sionlib_remove};
    return &sionlib;
}
#else
const ctr_contender_t *bench_container_sionlib(void)
{
    return NULL;
}
#endif

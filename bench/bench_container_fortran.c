/*
 * The "fortran" contender of ferry-bench container: the "ferry" contender's
 * container, parameters and pieces, written and read through the Fortran
 * module ferry_container (bench_container_fortran.f90 makes each call with
 * `use ferry_container`), so the two rows differ by the Fortran binding
 * alone: a Fortran descriptor per call and the shim's conversions, no copy
 * of the data. Compiled only when CMake built libferry_fortran
 * (FERRY_BENCH_FORTRAN).
 */
#include "bench_container.h"

#ifdef FERRY_BENCH_FORTRAN
#include <stdint.h>

#include "ferry_container.h"

/* bench_container_fortran.f90 (BIND(C)); each returns the error class in *ierror. */
void bench_fortran_open(MPI_Fint comm, const char *path, int writing, const ferry_container_params_t *params,
                        ferry_container_t *container, int *ierror);
void bench_fortran_transfer(const ferry_container_t *container, int writing, unsigned char *data, int64_t len,
                            int64_t *bytes_done, int *ierror);
void bench_fortran_close(ferry_container_t *container, int64_t *metadata_calls, int *ierror);

static int fortran_step(ctr_job_t *job, void *arg, unsigned char *data, size_t len)
{
    int64_t done = 0;
    int ierror = MPI_SUCCESS;
    bench_fortran_transfer(arg, job->writing, data, (int64_t)len, &done, &ierror);
    if (ierror != MPI_SUCCESS) ctr_failed(job, "fortran", ferry_container_error_message());
    else if (done < (int64_t)len) ctr_failed(job, "fortran", "short stream");
    return ierror != MPI_SUCCESS || done < (int64_t)len;
}

static void fortran_run(ctr_job_t *job)
{
    ferry_container_params_t p = {0};
    p.chunk_size = job->chunk;
    p.durable = job->sync;
    p.data_checksums = job->checksums ? 1 : FERRY_CONTAINER_CHECKSUMS_OFF;
    ferry_container_t c = NULL;
    int ierror = MPI_SUCCESS;
    bench_fortran_open(MPI_Comm_c2f(MPI_COMM_WORLD), job->path, job->writing, &p, &c, &ierror);
    if (ierror != MPI_SUCCESS) return ctr_failed(job, "fortran", ferry_container_error_message());
    ctr_pieces(job, fortran_step, &c);
    int64_t meta = 0;
    bench_fortran_close(&c, &meta, &ierror);
    if (job->writing) job->meta = meta;
    if (ierror != MPI_SUCCESS) ctr_failed(job, "fortran", ferry_container_error_message());
}

const ctr_contender_t *bench_container_fortran(void)
{
    static const ctr_contender_t fortran = {"fortran", fortran_run, fortran_run, ctr_remove_shared};
    return &fortran;
}
#else
const ctr_contender_t *bench_container_fortran(void)
{
    return NULL;
}
#endif

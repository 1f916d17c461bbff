/*
 * The paper's table (seed 004, tables 1-5): checkpoint time per strategy,
 * collective and independent, on ferry and on the host MPI-IO through the
 * same code, at this run's rank count. Each configuration writes reps
 * checkpoints of the same state (keep 1); a time is the slowest rank's,
 * barrier to barrier; the median is reported. Configurations alternate
 * ferry and host so a noisy machine slows both alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "table.h"

enum { MAX_REPS = 32 };

typedef struct row {
    int strategy, independent, io;
    double seconds;
    long long peak; /* most module memory on any rank */
} row_t;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int time_config(model_t *m, const run_opts_t *r, row_t *row)
{
    char base[600];
    snprintf(base, sizeof base, "%s/shelfsea_table", r->table_dir);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ferry_ckpt_keep", "1");
    shelf_ckpt_opts_t o = {row->strategy, row->independent, row->io, FERRY_CKPT_CDF5, base, info};
    ferry_ckpt_t ck;
    void *bufs[NFIELDS];
    double t[MAX_REPS];
    int rc = shelf_ckpt_open(m, &o, &ck), reps = r->reps < MAX_REPS ? r->reps : MAX_REPS;
    MPI_Info_free(&info);
    shelf_ckpt_buffers(m, bufs);
    for (int k = 0; k < reps && !rc; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        rc = ferry_ckpt_write(ck, k + 1, 0.0, bufs);
        MPI_Barrier(MPI_COMM_WORLD);
        t[k] = MPI_Wtime() - t0;
    }
    long long peak = ferry_ckpt_peak_memory(ck);
    MPI_Allreduce(&peak, &row->peak, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    char path[700];
    if (!rc && m->rank == 0 && ferry_ckpt_path(ck, reps, path, (int)sizeof path) == MPI_SUCCESS) unlink(path);
    ferry_ckpt_free(&ck);
    qsort(t, (size_t)reps, sizeof *t, by_value);
    row->seconds = t[reps / 2];
    return rc;
}

static const char *mpi_name(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    return strstr(version, "Open MPI") ? "openmpi" : "mpich";
}

static void print_rows(const model_t *m, const run_opts_t *r, const row_t *rows, int n, double mib)
{
    static const char *names[] = {"steer", "stack", "gather"};
    printf("shelfsea: %dx%dx%d, %.1f MiB per checkpoint, %d ranks, %s, %s (median of %d)\n", m->nx, m->ny, m->nz, mib,
           m->nprocs, r->table_dir, mpi_name(), r->reps);
    printf("| strategy | transfers | MPI-IO | seconds | MiB/s | module memory (max rank) |\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++)
        printf("| %s | %s | %s | %.4f | %.0f | %lld |\n", names[rows[i].strategy],
               rows[i].independent ? "independent" : "collective", rows[i].io ? "host" : "ferry", rows[i].seconds,
               mib / rows[i].seconds, rows[i].peak);
    FILE *f = r->json ? fopen(r->json, "a") : NULL;
    for (int i = 0; f && i < n; i++)
        fprintf(f, "%s{\"source\":\"shelfsea\",\"ranks\":%d,\"dir\":\"%s\",\"mpi\":\"%s\",\"mib\":%.3f,\"strategy\":\"%s\","
                   "\"transfers\":\"%s\",\"io\":\"%s\",\"seconds\":%.6f,\"peak\":%lld}\n",
                "", m->nprocs, r->table_dir, mpi_name(), mib, names[rows[i].strategy],
                rows[i].independent ? "independent" : "collective", rows[i].io ? "host" : "ferry", rows[i].seconds,
                rows[i].peak);
    if (f) fclose(f);
}

int shelf_table(model_t *m, const run_opts_t *r)
{
    static const int order[3] = {FERRY_CKPT_GATHER, FERRY_CKPT_STACK, FERRY_CKPT_STEER};
    row_t rows[12];
    int n = 0, rc = 0;
    shelf_init(m);
    shelf_exchange(m);
    shelf_step(m);
    for (int s = 0; s < 3; s++)
        for (int indep = 0; indep < 2; indep++)
            for (int k = 0; k < 2 && !rc; k++, n++) {
                rows[n] = (row_t){order[s], indep, (k + n / 2) % 2, 0, 0};
                rc = time_config(m, r, &rows[n]);
            }
    double bytes = (double)m->nx * m->ny * (m->nz * 16.0 + 12.0);
    if (!rc && m->rank == 0) print_rows(m, r, rows, n, bytes / (1 << 20));
    return rc;
}

enum { COMPARED = 2 };

/* One timed checkpoint of set ck: the slowest rank's seconds, barrier to barrier. */
static int timed_checkpoint(ferry_ckpt_t ck, long long step, void **bufs, double *seconds)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = ferry_ckpt_write(ck, step, 0.0, bufs);
    MPI_Barrier(MPI_COMM_WORLD);
    *seconds = MPI_Wtime() - t0;
    return rc;
}

static void print_compare(const model_t *m, const run_opts_t *r, double t[COMPARED][MAX_REPS], int reps)
{
    static const char *names[COMPARED] = {"steer", "gather"};
    double mib = (double)m->nx * m->ny * (m->nz * 16.0 + 12.0) / (1 << 20), med[COMPARED];
    for (int s = 0; s < COMPARED; s++) {
        qsort(t[s], (size_t)reps, sizeof t[s][0], by_value);
        med[s] = t[s][reps / 2];
    }
    printf("shelfsea compare: %dx%dx%d, %.1f MiB, %d ranks, %s, %s, collective, ferry's MPI-IO, median of %d: "
           "steer %.2f ms, gather %.2f ms, steer/gather %.2f\n",
           m->nx, m->ny, m->nz, mib, m->nprocs, r->compare_dir, mpi_name(), reps, 1e3 * med[0], 1e3 * med[1],
           med[0] / med[1]);
    FILE *f = r->json ? fopen(r->json, "a") : NULL;
    for (int s = 0; f && s < COMPARED; s++)
        fprintf(f, "{\"source\":\"shelfsea-compare\",\"ranks\":%d,\"dir\":\"%s\",\"mpi\":\"%s\",\"mib\":%.3f,"
                   "\"strategy\":\"%s\",\"transfers\":\"collective\",\"io\":\"ferry\",\"seconds\":%.6f}\n",
                m->nprocs, r->compare_dir, mpi_name(), mib, names[s], med[s]);
    if (f) fclose(f);
}

int shelf_compare(model_t *m, const run_opts_t *r)
{
    static const int strategies[COMPARED] = {FERRY_CKPT_STEER, FERRY_CKPT_GATHER};
    ferry_ckpt_t ck[COMPARED] = {0};
    void *bufs[NFIELDS];
    double t[COMPARED][MAX_REPS];
    int rc = 0, reps = r->reps < MAX_REPS ? r->reps : MAX_REPS;
    MPI_Info info;
    shelf_init(m);
    shelf_exchange(m);
    shelf_step(m);
    MPI_Info_create(&info);
    MPI_Info_set(info, "ferry_ckpt_keep", "1");
    for (int s = 0; s < COMPARED && !rc; s++) {
        char base[600];
        snprintf(base, sizeof base, "%s/shelfsea_compare%d", r->compare_dir, s);
        shelf_ckpt_opts_t o = {strategies[s], 0, FERRY_CKPT_IO_FERRY, FERRY_CKPT_CDF5, base, info};
        rc = shelf_ckpt_open(m, &o, &ck[s]);
    }
    MPI_Info_free(&info);
    shelf_ckpt_buffers(m, bufs);
    for (int k = 0; k < reps && !rc; k++)
        for (int j = 0; j < COMPARED && !rc; j++) { /* alternating, the first rotating rep by rep */
            int s = (j + k) % COMPARED;
            rc = timed_checkpoint(ck[s], k + 1, bufs, &t[s][k]);
        }
    for (int s = 0; s < COMPARED; s++) {
        char path[700];
        if (!rc && m->rank == 0 && ferry_ckpt_path(ck[s], reps, path, (int)sizeof path) == MPI_SUCCESS) unlink(path);
        if (ck[s]) ferry_ckpt_free(&ck[s]);
    }
    if (!rc && m->rank == 0) print_compare(m, r, t, reps);
    return rc;
}

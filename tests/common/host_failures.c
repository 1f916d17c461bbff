/* The interposed collectives of host_failures.h. */
#include <mpi.h>

#include "host_failures.h"

const char *const ft_host_op_names[FT_HOST_OPS] = {"none",          "MPI_Allgather", "MPI_Allgatherv",
                                                   "MPI_Allreduce", "MPI_Bcast",     "MPI_Gather",
                                                   "MPI_Gatherv",   "MPI_Scatter",   "MPI_Scatterv"};

static ft_host_op_t armed_op = FT_HOST_NONE;
static int countdown;

void ft_host_fail_arm(ft_host_op_t op, int k)
{
    armed_op = op;
    countdown = k;
}

int ft_host_fail_disarm(void)
{
    int came = armed_op != FT_HOST_NONE && countdown <= 0;
    armed_op = FT_HOST_NONE;
    return came;
}

/* 1 when this call of op is the one that fails. */
static int fails(ft_host_op_t op)
{
    return armed_op == op && --countdown == 0;
}

int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm)
{
    return fails(FT_HOST_ALLGATHER) ? MPI_ERR_OTHER : PMPI_Allgather(s, sc, st, r, rc, rt, comm);
}

int MPI_Iallgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm,
                   MPI_Request *req)
{
    return fails(FT_HOST_ALLGATHER) ? MPI_ERR_OTHER : PMPI_Iallgather(s, sc, st, r, rc, rt, comm, req);
}

int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rc[], const int d[], MPI_Datatype rt,
                   MPI_Comm comm)
{
    return fails(FT_HOST_ALLGATHERV) ? MPI_ERR_OTHER : PMPI_Allgatherv(s, sc, st, r, rc, d, rt, comm);
}

int MPI_Iallgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rc[], const int d[], MPI_Datatype rt,
                    MPI_Comm comm, MPI_Request *req)
{
    return fails(FT_HOST_ALLGATHERV) ? MPI_ERR_OTHER : PMPI_Iallgatherv(s, sc, st, r, rc, d, rt, comm, req);
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    return fails(FT_HOST_ALLREDUCE) ? MPI_ERR_OTHER : PMPI_Allreduce(s, r, n, t, op, comm);
}

int MPI_Iallreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    return fails(FT_HOST_ALLREDUCE) ? MPI_ERR_OTHER : PMPI_Iallreduce(s, r, n, t, op, comm, req);
}

int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    return fails(FT_HOST_BCAST) ? MPI_ERR_OTHER : PMPI_Bcast(b, n, t, root, comm);
}

int MPI_Ibcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request *req)
{
    return fails(FT_HOST_BCAST) ? MPI_ERR_OTHER : PMPI_Ibcast(b, n, t, root, comm, req);
}

int MPI_Gather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm)
{
    return fails(FT_HOST_GATHER) ? MPI_ERR_OTHER : PMPI_Gather(s, sc, st, r, rc, rt, root, comm);
}

int MPI_Igather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm,
                MPI_Request *req)
{
    return fails(FT_HOST_GATHER) ? MPI_ERR_OTHER : PMPI_Igather(s, sc, st, r, rc, rt, root, comm, req);
}

int MPI_Gatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rc[], const int d[], MPI_Datatype rt,
                int root, MPI_Comm comm)
{
    return fails(FT_HOST_GATHERV) ? MPI_ERR_OTHER : PMPI_Gatherv(s, sc, st, r, rc, d, rt, root, comm);
}

int MPI_Igatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rc[], const int d[], MPI_Datatype rt,
                 int root, MPI_Comm comm, MPI_Request *req)
{
    return fails(FT_HOST_GATHERV) ? MPI_ERR_OTHER : PMPI_Igatherv(s, sc, st, r, rc, d, rt, root, comm, req);
}

int MPI_Scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm)
{
    return fails(FT_HOST_SCATTER) ? MPI_ERR_OTHER : PMPI_Scatter(s, sc, st, r, rc, rt, root, comm);
}

int MPI_Iscatter(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, int root, MPI_Comm comm,
                 MPI_Request *req)
{
    return fails(FT_HOST_SCATTER) ? MPI_ERR_OTHER : PMPI_Iscatter(s, sc, st, r, rc, rt, root, comm, req);
}

int MPI_Scatterv(const void *s, const int sc[], const int d[], MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                 int root, MPI_Comm comm)
{
    return fails(FT_HOST_SCATTERV) ? MPI_ERR_OTHER : PMPI_Scatterv(s, sc, d, st, r, rc, rt, root, comm);
}

int MPI_Iscatterv(const void *s, const int sc[], const int d[], MPI_Datatype st, void *r, int rc, MPI_Datatype rt,
                  int root, MPI_Comm comm, MPI_Request *req)
{
    return fails(FT_HOST_SCATTERV) ? MPI_ERR_OTHER : PMPI_Iscatterv(s, sc, d, st, r, rc, rt, root, comm, req);
}

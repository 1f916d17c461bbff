/*
 * Every strategy x collective/independent x ferry/host MPI-IO x 1-D to 4-D,
 * written on P ranks with a random uneven decomposition (some blocks
 * empty) and read on P' != P ranks with another one (and another strategy,
 * so image files are also read by read-scatter): every point bit for bit
 * equal to the global array's, halos untouched, the writer's buffers
 * restored after the write. CDF-5 and CDF-2 alternate.
 */
#include <stdlib.h>
#include <string.h>

#include "ckpt_cases.h"

static const MPI_Datatype *second_types(void)
{
    static MPI_Datatype types[5];
    types[0] = MPI_INT, types[1] = MPI_FLOAT, types[2] = MPI_SHORT, types[3] = MPI_SIGNED_CHAR, types[4] = MPI_LONG_LONG;
    return types;
}

typedef struct matrix_case {
    int id, ndims, strategy, independent, io, format;
    int writers, readers;
    uint64_t seed;
} matrix_case_t;

static void make_vars(const matrix_case_t *c, ckpt_case_var_t v[2], int nprocs, uint64_t seed, int rank)
{
    uint64_t state = c->seed;
    for (int k = 0; k < 2; k++) {
        memset(&v[k], 0, sizeof v[k]);
        v[k].ndims = c->ndims;
        v[k].halo = k == 0 ? 2 : 1;
        v[k].type = k == 0 ? MPI_DOUBLE : second_types()[c->id % (c->format == FERRY_CKPT_CDF2 ? 4 : 5)];
        for (int d = 0; d < c->ndims; d++) v[k].global[d] = 1 + (MPI_Offset)(ft_rand(&state) % (c->ndims > 2 ? 6 : 13));
        cc_block(c->ndims, v[k].global, rank, nprocs, seed + (uint64_t)k, v[k].start, v[k].count);
    }
}

static ferry_ckpt_t open_set(const matrix_case_t *c, MPI_Comm comm, int strategy, int io, ckpt_case_var_t v[2], int *ids)
{
    ferry_ckpt_options_t o = {.strategy = strategy, .independent = c->independent, .format = c->format, .io = io};
    char base[600];
    snprintf(base, sizeof base, "%s", ft_path("case"));
    snprintf(base + strlen(base), sizeof base - strlen(base), "%d", c->id);
    ferry_ckpt_t ck;
    FT_OK(ferry_ckpt_create(comm, base, &o, &ck));
    cc_define(ck, &v[0], "temp", &ids[0]);
    cc_define(ck, &v[1], "salt", &ids[1]);
    return ck;
}

/* The variables of this side's decomposition (seeded by salt) and its checkpoint set. */
static ferry_ckpt_t side(const matrix_case_t *c, MPI_Comm comm, uint64_t salt, int strategy, int io, ckpt_case_var_t v[2])
{
    int rank, n, ids[2];
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    make_vars(c, v, n, c->seed * salt + salt, rank);
    return open_set(c, comm, strategy, io, v, ids);
}

static void write_side(const matrix_case_t *c, MPI_Comm comm)
{
    ckpt_case_var_t v[2];
    ferry_ckpt_t ck = side(c, comm, 31, c->strategy, c->io, v);
    cc_fill(&v[0], 0, c->id);
    cc_fill(&v[1], 1, c->id);
    void *bufs[2] = {v[0].buf, v[1].buf};
    FT_OK(ferry_ckpt_write(ck, c->id, c->id * 0.5, bufs));
    cc_check(&v[0], 0, c->id); /* the write swapped the buffers back */
    cc_check(&v[1], 1, c->id);
    FT_OK(ferry_ckpt_free(&ck));
    free(v[0].buf);
    free(v[1].buf);
}

static void read_side(const matrix_case_t *c, MPI_Comm comm)
{
    ckpt_case_var_t v[2];
    int strategy = (c->strategy + 1 + c->id % 2) % 3; /* the reader's own strategy: any may read any file */
    ferry_ckpt_t ck = side(c, comm, 77, strategy, 1 - c->io, v);
    for (int k = 0; k < 2; k++) {
        cc_fill(&v[k], k, -1);
        memset(v[k].buf, 0x5A, v[k].bytes);
    }
    void *bufs[2] = {v[0].buf, v[1].buf};
    ferry_ckpt_info_t info;
    FT_OK(ferry_ckpt_restart(ck, bufs, &info));
    FT_EQ(info.step, c->id);
    FT_EQ(info.writer_ranks, c->writers);
    FT_EQ(info.strategy, c->strategy);
    FT_EQ(info.fallbacks, 0);
    cc_check(&v[0], 0, c->id);
    cc_check(&v[1], 1, c->id);
    FT_OK(ferry_ckpt_free(&ck));
    free(v[0].buf);
    free(v[1].buf);
}

/* Runs fn on the first k ranks of the world (the others wait). */
static void on_ranks(int k, const matrix_case_t *c, void (*fn)(const matrix_case_t *, MPI_Comm))
{
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, ft_rank < k ? 0 : MPI_UNDEFINED, ft_rank, &comm);
    if (comm != MPI_COMM_NULL) {
        fn(c, comm);
        MPI_Comm_free(&comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    ft_scratch_dir(); /* collective on the world: before sub-communicators use ft_path */
    int id = 0, only = getenv("CKPT_CASE") ? atoi(getenv("CKPT_CASE")) : -1;
    /* CKPT_FERRY_ONLY=1: skip the host MPI-IO backend (on tools/cluster's caching clients the
     * hosts' read-modify-writes read stale pages; the checkpoint then fails its checksum). */
    int ferry_only = getenv("CKPT_FERRY_ONLY") && atoi(getenv("CKPT_FERRY_ONLY")) == 1;
    for (int ndims = 1; ndims <= 4; ndims++)
        for (int strategy = 0; strategy < 3; strategy++)
            for (int independent = 0; independent < 2; independent++)
                for (int io = 0; io < 2; io++, id++) {
                    int fewer = ft_size > 1 ? ft_size - 1 : 1, more_first = id % 2;
                    matrix_case_t c = {id, ndims, strategy, independent, io, id % 3 == 2 ? FERRY_CKPT_CDF2 : FERRY_CKPT_CDF5,
                                       more_first ? ft_size : fewer, more_first ? fewer : ft_size, ft_seed + (uint64_t)id};
                    if ((only >= 0 && id != only) || (ferry_only && io == 1)) continue;
                    if (ft_rank == 0 && getenv("CKPT_VERBOSE"))
                        printf("case %d: %d-D strategy %d %s io %d cdf%d on %d, read on %d\n", id, ndims, strategy,
                               independent ? "indep" : "coll", io, c.format ? 2 : 5, c.writers, c.readers);
                    on_ranks(c.writers, &c, write_side);
                    on_ranks(c.readers, &c, read_side);
                }
    return ft_finish();
}

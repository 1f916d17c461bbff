/*
 * container_host_failures: the host MPI's collectives failing inside the
 * container. The test interposes the collectives the container calls
 * (MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv, MPI_Bcast and
 * MPI_Allreduce, and the nonblocking forms progress/ starts when it polls:
 * tests/common/host_failures.h) and makes the k-th call of one of them
 * return MPI_ERR_OTHER on every rank, for every k up to the calls a session
 * makes: a write session (open for writing, writes, a flush, more writes,
 * close) in the default mode, with two files, in collective mode (collector
 * groups of 2) and with buddy copies, and a read session through
 * ferry_container_open_read and through ferry_container_open_mapped. Every
 * call either succeeds or fails on every rank with MPI_ERR_INTERN and a
 * message naming the call and the container; never a hang (the runner's timeout) or a crash; a
 * failed open leaves the handle NULL. A write session whose open and close
 * succeeded reads back exactly what it wrote (also when its flush failed in
 * collective mode: nothing is then taken as written, the close writes it);
 * a read session that opened reads exactly the streams written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_container.h"
#include "ferry_test.h"
#include "host_failures.h"

enum { LENGTH = 5000, FIRST_PART = 2100, PIECE = 700, MAX_K = 100 };

typedef enum { S_WRITE, S_WRITE_FILES, S_COLLECT, S_BUDDY, S_READ, S_MAPPED, S_KINDS } session_t;
static const char *const session_names[S_KINDS] = {"write",        "write, 2 files", "write, collective mode",
                                                   "write, buddy", "read",           "read, mapped"};

static const ft_host_op_t ops[] = {FT_HOST_GATHER,   FT_HOST_GATHERV, FT_HOST_SCATTER,
                                   FT_HOST_SCATTERV, FT_HOST_BCAST,   FT_HOST_ALLREDUCE};
enum { OPS = sizeof ops / sizeof ops[0] };

/* The host collectives each session must reach (the injection covers its path). */
static int must_reach(session_t kind, ft_host_op_t op)
{
    switch (kind) {
    case S_READ: return op == FT_HOST_GATHER || op == FT_HOST_SCATTERV;
    case S_MAPPED: return op == FT_HOST_GATHER || op == FT_HOST_GATHERV || op == FT_HOST_SCATTERV;
    case S_COLLECT: return op != FT_HOST_SCATTERV;
    default: return op == FT_HOST_GATHER || op == FT_HOST_SCATTER || op == FT_HOST_ALLREDUCE;
    }
}

static unsigned char byte_of(int stream, size_t pos, int version)
{
    return (unsigned char)(pos * 7 + (size_t)stream * 31 + (size_t)version * 101 + (pos >> 8) + 1);
}

static void fill(unsigned char *buf, int stream, size_t from, size_t len, int version)
{
    for (size_t i = 0; i < len; i++) buf[i] = byte_of(stream, from + i, version);
}

static const char *path_of(session_t kind)
{
    static char name[S_KINDS][64];
    snprintf(name[kind], sizeof name[kind], "hf_%d.ctr", (int)kind);
    return ft_path(name[kind]);
}

/* Every rank returned the same class, MPI_ERR_INTERN on failure, with a message naming the call and the
 * container at path. 1 when the call failed. */
static int agreed(int rc, const char *call, const char *path, session_t kind, ft_host_op_t op, int k)
{
    int cls = rc == MPI_SUCCESS ? 0 : ft_class(rc), mine[2] = {cls, -cls}, low[2];
    PMPI_Allreduce(mine, low, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (low[0] != -low[1])
        ft_fail(__FILE__, __LINE__, "%s, %s, %s #%d: ranks disagree: classes %d..%d", session_names[kind], call,
                ft_host_op_names[op], k, low[0], -low[1]);
    if (cls && (cls != MPI_ERR_INTERN || !strstr(ft_message, call) || !strstr(ft_message, path)))
        ft_fail(__FILE__, __LINE__, "%s, %s, %s #%d: class %d, message '%s'", session_names[kind], call,
                ft_host_op_names[op], k, cls, ft_message);
    return cls != 0;
}

/* The selected stream of c holds exactly the bytes `stream` wrote in `version`. */
static void check_stream(ferry_container_t c, int stream, int version)
{
    static unsigned char got[LENGTH + 1], want[LENGTH];
    size_t done = 0;
    FT_OK(ferry_container_read(c, got, sizeof got, &done));
    FT_EQ(done, LENGTH);
    fill(want, stream, 0, LENGTH, version);
    FT_EQ_MEM(got, want, LENGTH);
}

static void write_part(ferry_container_t c, size_t from, size_t to, int version)
{
    unsigned char piece[PIECE];
    for (size_t at = from; at < to; at += PIECE) {
        size_t len = to - at < PIECE ? to - at : PIECE, done = 0;
        fill(piece, ft_rank, at, len, version);
        FT_OK(ferry_container_write(c, piece, len, &done));
        FT_EQ(done, len);
    }
}

static int open_write(session_t kind, const char *path, ferry_container_t *c)
{
    ferry_container_params_t p = {.chunk_size = 1024, .block_size = 512, .files = kind == S_WRITE_FILES ? 2 : 0};
    ferry_container_modes_t m = {.collector_size = kind == S_COLLECT ? 2 : 0, .buddy = kind == S_BUDDY};
    if (kind == S_WRITE) return ferry_container_open_write(MPI_COMM_WORLD, path, &p, c);
    return ferry_container_open_write_modes(MPI_COMM_WORLD, path, &p, &m, c);
}

/* A write session to path with the k-th call of op failing; returns whether that call came. */
static int write_session(session_t kind, const char *path, ft_host_op_t op, int k, int version)
{
    ferry_container_t c = NULL;
    ft_host_fail_arm(op, k);
    int failed = agreed(ft_capture(open_write(kind, path, &c)), "ferry_container_open_write", path, kind, op, k);
    if (failed) FT_CHECK(c == NULL);
    if (!failed) {
        write_part(c, 0, FIRST_PART, version);
        agreed(ft_capture(ferry_container_flush(c)), "ferry_container_flush", path, kind, op, k);
        write_part(c, FIRST_PART, LENGTH, version);
        failed = agreed(ft_capture(ferry_container_close(&c)), "ferry_container_close", path, kind, op, k);
        FT_CHECK(c == NULL);
    }
    int reached = ft_host_fail_disarm();
    if (!failed) {
        FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
        check_stream(c, ft_rank, version);
        FT_OK(ferry_container_close(&c));
    }
    return reached;
}

/* A read session of the container written first (in `version`), with the k-th call of op failing. */
static int read_session(session_t kind, ft_host_op_t op, int k, int version)
{
    ferry_container_t c = NULL;
    int streams[2] = {(ft_rank + 1) % ft_size, ft_rank};
    const char *call = kind == S_READ ? "ferry_container_open_read" : "ferry_container_open_mapped";
    ft_host_fail_arm(op, k);
    int rc = kind == S_READ ? ferry_container_open_read(MPI_COMM_WORLD, path_of(S_READ), &c)
                            : ferry_container_open_mapped(MPI_COMM_WORLD, path_of(S_READ), streams, 2, &c);
    int failed = agreed(ft_capture(rc), call, path_of(S_READ), kind, op, k);
    int reached = ft_host_fail_disarm();
    if (failed) {
        FT_CHECK(c == NULL);
        return reached;
    }
    check_stream(c, kind == S_READ ? ft_rank : streams[0], version);
    if (kind == S_MAPPED) {
        FT_OK(ferry_container_select(c, 1));
        check_stream(c, streams[1], version);
    }
    FT_OK(ferry_container_close(&c));
    return reached;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    int version = 1;
    FT_CHECK(!write_session(S_WRITE, path_of(S_READ), FT_HOST_NONE, 0, version)); /* what the read sessions read */
    const int written = version;
    for (int kind = 0; kind < S_KINDS; kind++)
        for (int o = 0; o < OPS; o++) {
            int k = 1;
            while (k <= MAX_K && (kind >= S_READ ? read_session(kind, ops[o], k, written)
                                                 : write_session(kind, path_of(kind), ops[o], k, ++version)))
                k++;
            if (ft_rank == 0)
                printf("container_host_failures: %s, %s: each of %d calls failed in turn\n", session_names[kind],
                       ft_host_op_names[ops[o]], k - 1);
            FT_CHECK(k <= MAX_K); /* the calls ran out */
            if (must_reach(kind, ops[o])) FT_CHECK(k > 1);
        }
    return ft_finish();
}

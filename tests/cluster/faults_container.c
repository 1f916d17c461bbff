/*
 * The container case of the fault suite: every rank appends to its stream
 * of one container, flushing every few pieces, while the driver breaks the
 * file system. Each rank's ledger counts the bytes its flushes made durable
 * (extra[0]) and the bytes it handed over (extra[1]).
 *
 * Call 1: the faulted appends (stopping at a rank's first error). Call 2: one
 * more append and flush on the same handle (a stream that failed refuses
 * it: it holds what came before the failure), then the collective close.
 * After the repair (and `ferry-container recover`, run by the driver), call
 * 3 writes and closes a fresh container. The check: the container opens
 * complete, every stream holds at least its flushed bytes and at most its
 * written ones, each equal to the model, and it verifies.
 */
#include <stdlib.h>
#include <string.h>

#include "cluster_faults.h"
#include "ferry_container.h"

enum { PIECE = 64 << 10, FLUSH_EVERY = 4, SETUP_BYTES = 256 << 10 };

static unsigned char stream_value(int stream, long long at)
{
    return (unsigned char)(at * 131 + (at >> 12) * 7 + stream * 29 + 1);
}

/* Appends [from, to) of this rank's stream, whose first `flushed` bytes are durable; stops at the
 * first error. */
static void append(ferry_container_t c, long long flushed, long long from, long long to, fx_outcome_t *o)
{
    unsigned char *buf = malloc(PIECE);
    FT_CHECK(buf != NULL);
    memset(o, 0, sizeof *o);
    o->extra[0] = flushed;
    o->extra[1] = from;
    double t0 = fx_now();
    int rc = MPI_SUCCESS;
    for (long long at = from, n = 1; at < to && rc == MPI_SUCCESS; n++) {
        size_t len = to - at < PIECE ? (size_t)(to - at) : PIECE, done = 0;
        for (size_t i = 0; i < len; i++) buf[i] = stream_value(ft_rank, at + (long long)i);
        rc = ferry_container_write(c, buf, len, &done);
        at += (long long)done;
        o->extra[1] = at;
        if (rc == MPI_SUCCESS && (n % FLUSH_EVERY == 0 || at == to) && (rc = ferry_container_flush(c)) == MPI_SUCCESS)
            o->extra[0] = at;
    }
    fx_record(o, rc, t0);
    free(buf);
}

/* A stream against its ledger: bytes lost below the flushed length, wrong bytes in what it holds. */
static void check_stream(ferry_container_set_t set, int s, const long long ledger[2], long long counts[2])
{
    ferry_container_info_t info;
    if (ferry_container_serial_stream(set, s, &info) != MPI_SUCCESS) {
        counts[0] += ledger[0];
        return;
    }
    if (info.length < ledger[0]) counts[0] += ledger[0] - info.length;
    if (info.length > ledger[1]) counts[1] += info.length - ledger[1];
    unsigned char *buf = malloc(PIECE);
    FT_CHECK(buf != NULL);
    for (long long at = 0; at < info.length && at < ledger[1]; at += PIECE) {
        size_t done = 0;
        if (ferry_container_serial_read(set, s, at, buf, PIECE, &done) != MPI_SUCCESS) {
            counts[1] += (info.length < ledger[1] ? info.length : ledger[1]) - at;
            break;
        }
        for (size_t i = 0; i < done && at + (long long)i < ledger[1]; i++)
            counts[1] += buf[i] != stream_value(s, at + (long long)i);
    }
    free(buf);
}

/* Rank 0: the container against every rank's ledger (calls 1 and 2). */
static void check(const fx_run_t *run, const fx_outcome_t *call1, const fx_outcome_t *call2)
{
    ferry_container_set_t set;
    long long counts[2] = {0, 0}; /* lost flushed bytes, wrong bytes */
    int opened = ferry_container_serial_open(run->data, 0, &set) == MPI_SUCCESS;
    for (int s = 0; s < ft_size; s++) {
        long long ledger[2] = {call2[s].extra[0] > call1[s].extra[0] ? call2[s].extra[0] : call1[s].extra[0],
                               call2[s].extra[1] > call1[s].extra[1] ? call2[s].extra[1] : call1[s].extra[1]};
        if (opened) check_stream(set, s, ledger, counts);
        else counts[0] += ledger[0];
    }
    if (opened) ferry_container_serial_close(&set);
    ferry_container_check_t verify = {0};
    int verified = ferry_container_verify(run->data, &verify) == MPI_SUCCESS;
    char text[256];
    snprintf(text, sizeof text, "complete\t%d\nverified\t%d\nlost_bytes\t%lld\nwrong_bytes\t%lld\n", opened, verified,
             counts[0], counts[1]);
    fx_mark(run, "check.out", text);
}

/* Call 3: a fresh container after the repair. */
static void fresh_container(const fx_run_t *run, fx_outcome_t *o)
{
    char path[1100];
    snprintf(path, sizeof path, "%s.after", run->data);
    ferry_container_t c;
    double t0 = fx_now();
    memset(o, 0, sizeof *o);
    if (fx_record(o, ferry_container_open_write(MPI_COMM_WORLD, path, NULL, &c), t0) != MPI_SUCCESS) return;
    fx_outcome_t step;
    append(c, 0, 0, SETUP_BYTES, &step);
    fx_merge(o, &step);
    fx_record(&step, ferry_container_close(&c), t0);
    fx_merge(o, &step);
}

void fx_container_case(const fx_run_t *run)
{
    ferry_container_params_t params = {.chunk_size = 1 << 20};
    ferry_container_t c;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, run->data, &params, &c));
    fx_outcome_t o[3], closing, *all[2];
    append(c, 0, 0, SETUP_BYTES, &o[0]);
    FT_EQ(o[0].cls, 0);
    long long end = SETUP_BYTES + (run->megabytes << 20);
    fx_ready(run, (o[0].t1 - o[0].t0) * (double)(end - SETUP_BYTES) / SETUP_BYTES, run->data);
    for (int k = 0; k < 2; k++) all[k] = calloc((size_t)ft_size, sizeof *all[k]);
    fx_begin_call(run);
    append(c, SETUP_BYTES, SETUP_BYTES, end, &o[0]);
    fx_report(run, "call1", &o[0], all[0]);
    fx_wait(run, "next");
    append(c, o[0].extra[0], o[0].extra[1], o[0].extra[1] + PIECE, &o[1]);
    fx_report(run, "call2", &o[1], all[1]);
    double t0 = fx_now();
    fx_record(&closing, ferry_container_close(&c), t0);
    fx_report(run, "close", &closing, NULL);
    fx_wait(run, "repaired");
    fresh_container(run, &o[2]);
    fx_report(run, "call3", &o[2], NULL);
    if (ft_rank == 0) check(run, all[0], all[1]);
    for (int k = 0; k < 2; k++) free(all[k]);
}

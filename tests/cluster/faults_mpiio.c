/*
 * The MPI-IO calls of the fault suite: a collective write (write_at_all),
 * an independent write (write_at) and a collective read (read_at_all),
 * through ferry or the host's MPI_File_*, all through the same strided
 * view, against a byte model.
 *
 * The file: three sections and a guard tile. A section is tiles of P + 1
 * blocks: block r is rank r's, the last one a hole no call touches, so
 * two-phase windows and sieving read-modify-write around bytes the call
 * must not change. Call k (1: the faulted call, 2: the next call on the
 * same handle, 3: after the repair, on a fresh handle) accesses section k;
 * a write writes generation k. Generation 0 is what the set-up wrote (in
 * the full-brick cases section 1 starts as a hole: zeros).
 *
 * The model after the job: a block of rank r in section k holds generation k
 * when rank r's call k returned success, generation 0 or k when it failed;
 * every other byte holds generation 0, and the size is unchanged.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_faults.h"

enum { BLOCK = 64 << 10, SMALL_TILES = 2 };

typedef struct layout {
    MPI_Offset tile;     /* (P + 1) blocks */
    MPI_Offset tiles[3]; /* per section */
    MPI_Offset start[4]; /* sections 1-3, then the guard tile */
    MPI_Offset total;
    int sparse;
} layout_t;

typedef union fx_file {
    ferry_File ferry;
    MPI_File host;
} fx_file_t;

static void make_layout(const fx_run_t *run, layout_t *l)
{
    l->tile = (MPI_Offset)(ft_size + 1) * BLOCK;
    l->tiles[0] = run->megabytes * ((1 << 20) / BLOCK);
    l->tiles[1] = l->tiles[2] = SMALL_TILES;
    l->start[0] = 0;
    for (int k = 0; k < 3; k++) l->start[k + 1] = l->start[k] + l->tiles[k] * l->tile;
    l->total = l->start[3] + l->tile;
    l->sparse = run->sparse;
}

static unsigned char value(const layout_t *l, MPI_Offset at, int gen)
{
    if (gen == 0 && l->sparse && at < l->start[1]) return 0;
    return (unsigned char)(at * 131 + (at >> 11) * 7 + gen * 91 + 1);
}

/* File offset of byte i of rank's data for section k. */
static MPI_Offset offset_of(const layout_t *l, int k, int rank, MPI_Offset i)
{
    return l->start[k] + (i / BLOCK) * l->tile + (MPI_Offset)rank * BLOCK + i % BLOCK;
}

static void fill(const layout_t *l, int k, int gen, unsigned char *buf)
{
    for (MPI_Offset i = 0; i < l->tiles[k] * BLOCK; i++) buf[i] = value(l, offset_of(l, k, ft_rank, i), gen);
}

static long long differing(const layout_t *l, int k, const unsigned char *buf)
{
    long long wrong = 0;
    for (MPI_Offset i = 0; i < l->tiles[k] * BLOCK; i++) wrong += buf[i] != value(l, offset_of(l, k, ft_rank, i), 0);
    return wrong;
}

/* Rank 0 writes generation 0 (section 1 left a hole when sparse), size total. */
static void create_file(const char *path, const layout_t *l)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    FT_CHECK(fd >= 0);
    FT_CHECK(ftruncate(fd, (off_t)l->total) == 0);
    unsigned char *buf = malloc(1 << 20);
    FT_CHECK(buf != NULL);
    for (MPI_Offset at = l->sparse ? l->start[1] : 0; at < l->total;) {
        MPI_Offset n = l->total - at < (1 << 20) ? l->total - at : (1 << 20);
        for (MPI_Offset i = 0; i < n; i++) buf[i] = value(l, at + i, 0);
        FT_CHECK(pwrite(fd, buf, (size_t)n, (off_t)at) == (ssize_t)n);
        at += n;
    }
    FT_CHECK(fsync(fd) == 0 && close(fd) == 0);
    free(buf);
}

static int io_open(int host, const char *path, MPI_Info info, fx_file_t *f)
{
    int amode = MPI_MODE_RDWR;
    if (host) return MPI_File_open(MPI_COMM_WORLD, path, amode, info, &f->host);
    return ferry_File_open(MPI_COMM_WORLD, path, amode, info, &f->ferry);
}

static int io_close(int host, fx_file_t *f)
{
    return host ? MPI_File_close(&f->host) : ferry_File_close(&f->ferry);
}

/* The call of this case on section k: set_view, then the access. */
static int io_access(const fx_run_t *run, const layout_t *l, fx_file_t f, int k, unsigned char *buf)
{
    MPI_Datatype block, tile;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, l->tile, &tile);
    MPI_Type_commit(&tile);
    MPI_Type_free(&block);
    MPI_Offset disp = l->start[k] + (MPI_Offset)ft_rank * BLOCK;
    int n = (int)(l->tiles[k] * BLOCK), rc, coll = !strcmp(run->call, "coll"), read = !strcmp(run->call, "read");
    if (run->host) {
        rc = MPI_File_set_view(f.host, disp, MPI_BYTE, tile, "native", MPI_INFO_NULL);
        if (rc == MPI_SUCCESS && read) rc = MPI_File_read_at_all(f.host, 0, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
        else if (rc == MPI_SUCCESS && coll) rc = MPI_File_write_at_all(f.host, 0, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
        else if (rc == MPI_SUCCESS) rc = MPI_File_write_at(f.host, 0, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
    } else {
        rc = ferry_File_set_view(f.ferry, disp, MPI_BYTE, tile, "native", MPI_INFO_NULL);
        if (rc == MPI_SUCCESS && read) rc = ferry_File_read_at_all(f.ferry, 0, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
        else if (rc == MPI_SUCCESS && coll)
            rc = ferry_File_write_at_all(f.ferry, 0, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
        else if (rc == MPI_SUCCESS) rc = ferry_File_write_at(f.ferry, 0, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    MPI_Type_free(&tile);
    return rc;
}

/* Call k: writes generation k (or reads, then counts the bytes read wrong into extra[0]). */
static void one_call(const fx_run_t *run, const layout_t *l, fx_file_t f, int k, fx_outcome_t *o)
{
    int read = !strcmp(run->call, "read");
    unsigned char *buf = malloc((size_t)(l->tiles[k] * BLOCK));
    FT_CHECK(buf != NULL);
    if (read) memset(buf, 0xEE, (size_t)(l->tiles[k] * BLOCK));
    else fill(l, k, k + 1, buf);
    memset(o, 0, sizeof *o);
    double t0 = fx_now();
    if (fx_record(o, io_access(run, l, f, k, buf), t0) == MPI_SUCCESS && read) o->extra[0] = differing(l, k, buf);
    free(buf);
}

/* A fault-free run of call 1 that changes nothing (writes generation 0 again); its duration. */
static double rehearse(const fx_run_t *run, const layout_t *l, fx_file_t f)
{
    unsigned char *buf = malloc((size_t)(l->tiles[0] * BLOCK));
    FT_CHECK(buf != NULL);
    fill(l, 0, 0, buf);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = fx_now();
    FT_OK(io_access(run, l, f, 0, buf));
    double seconds = fx_now() - t0;
    free(buf);
    return seconds;
}

/* Whether the model allows byte b at offset o, given every rank's outcome of calls 1-3. */
static int allowed(const layout_t *l, int write, fx_outcome_t *const all[3], MPI_Offset o, unsigned char b)
{
    int k = o < l->start[1] ? 0 : o < l->start[2] ? 1 : o < l->start[3] ? 2 : -1;
    int r = k < 0 ? ft_size : (int)((o - l->start[k]) % l->tile / BLOCK);
    if (!write || r == ft_size) return b == value(l, o, 0);
    if (all[k][r].cls == 0) return b == value(l, o, k + 1);
    return b == value(l, o, 0) || b == value(l, o, k + 1);
}

/* Rank 0: the bytes the model does not allow, the first of them, the size. */
static void check(const fx_run_t *run, const layout_t *l, fx_outcome_t *const all[3])
{
    int write = strcmp(run->call, "read") != 0, fd = open(run->data, O_RDONLY);
    long long wrong = 0, first = -1, read_wrong = 0;
    unsigned char *buf = malloc(1 << 20);
    FT_CHECK(buf != NULL);
    if (fd >= 0) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
    for (MPI_Offset at = 0; fd >= 0 && at < l->total; at += 1 << 20) {
        ssize_t got = pread(fd, buf, 1 << 20, (off_t)at);
        for (ssize_t i = 0; i < got; i++) {
            if (allowed(l, write, all, at + i, buf[i])) continue;
            if (first < 0) first = at + i;
            wrong++;
        }
    }
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < ft_size; r++) read_wrong += all[k][r].cls ? 0 : all[k][r].extra[0];
    char text[256];
    snprintf(text, sizeof text,
             "wrong_bytes\t%lld\nfirst_wrong\t%lld\nsize\t%lld\nexpected_size\t%lld\nread_wrong\t%lld\n", wrong, first,
             (long long)size, (long long)l->total, read_wrong);
    fx_mark(run, "check.out", text);
    if (fd >= 0) close(fd);
    free(buf);
}

static MPI_Info hints(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576"); /* several two-phase windows per call */
    return info;
}

/* Calls 2 and 3 and the closes around the repair. */
static void after_fault(const fx_run_t *run, const layout_t *l, fx_file_t f, fx_outcome_t *o, fx_outcome_t *call2)
{
    MPI_Info info = hints();
    fx_outcome_t closing;
    fx_wait(run, "next");
    one_call(run, l, f, 1, &o[1]);
    fx_report(run, "call2", &o[1], call2);
    double t0 = fx_now();
    memset(&closing, 0, sizeof closing);
    fx_record(&closing, io_close(run->host, &f), t0);
    fx_report(run, "close", &closing, NULL);
    fx_wait(run, "repaired");
    t0 = fx_now();
    memset(&o[2], 0, sizeof o[2]);
    if (fx_record(&o[2], io_open(run->host, run->data, info, &f), t0) == MPI_SUCCESS) {
        fx_outcome_t access, closed;
        one_call(run, l, f, 2, &access);
        fx_merge(&o[2], &access);
        fx_record(&closed, io_close(run->host, &f), t0);
        fx_merge(&o[2], &closed);
    }
    MPI_Info_free(&info);
}

void fx_mpiio_case(const fx_run_t *run)
{
    layout_t l;
    make_layout(run, &l);
    if (ft_rank == 0) create_file(run->data, &l);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info info = hints();
    fx_file_t f;
    double seconds = 0;
    if (run->rehearse) { /* on a handle of its own: the faulted read must not find its pages cached */
        FT_OK(io_open(run->host, run->data, info, &f));
        seconds = rehearse(run, &l, f);
        FT_OK(io_close(run->host, &f));
    }
    FT_OK(io_open(run->host, run->data, info, &f));
    fx_ready(run, seconds, run->data);
    fx_outcome_t o[3], *all[3];
    for (int k = 0; k < 3; k++) all[k] = calloc((size_t)ft_size, sizeof *all[k]);
    fx_begin_call(run);
    one_call(run, &l, f, 0, &o[0]);
    fx_report(run, "call1", &o[0], all[0]);
    MPI_Info_free(&info);
    after_fault(run, &l, f, o, all[1]);
    fx_report(run, "call3", &o[2], all[2]);
    if (ft_rank == 0) check(run, &l, all);
    for (int k = 0; k < 3; k++) free(all[k]);
}

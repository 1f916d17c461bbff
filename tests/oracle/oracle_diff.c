/*
 * The I/O differential harness (see oracle_diff.h): sequence generation,
 * the byte model, the two back ends and the comparison.
 *
 * The model follows MPI-3.1 chapter 13 for one node: a write stores its
 * stream at disp + offset * etype_size and extends the file; a read returns
 * min(bytes asked, bytes before EOF); the individual pointer moves by the
 * etypes moved; SEEK_END counts from the end of file in etypes of the view;
 * set_size truncates or zero-extends; preallocate never shrinks; a reopen
 * resets the view and puts the pointer at 0, or at EOF with APPEND.
 *
 * What the generator avoids, because the standard leaves it open or a host
 * gets it wrong (see od_host_skip for the second list):
 *  - views with etype MPI_INT whose displacement is not congruent to the
 *    file size mod 4 (a read would end inside an etype);
 *  - memory types whose size is not a multiple of the etype size;
 *  - overlapping writes from different ranks in one step, and independent
 *    operations on two ranks in one step;
 *  - set_size/preallocate on a read-only handle (the standard gives no class).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#include "ferry_test.h"
#include "oracle_diff.h"

enum { OD_MAX_RANKS = 8, OD_TYPES = 10, OD_MAX_BYTES = 600, OD_FILE_SPAN = 4096, OD_MARGIN = 16 };

typedef enum {
    OP_WRITE_AT, OP_READ_AT, OP_WRITE, OP_READ, OP_IWRITE_AT, OP_IREAD_AT, OP_IWRITE, OP_IREAD, /* one rank */
    OP_WRITE_AT_ALL, OP_READ_AT_ALL, OP_WRITE_ALL, OP_READ_ALL,                                 /* collective */
    OP_SEEK,                                                                                    /* every rank */
    OP_SET_SIZE, OP_PREALLOCATE, OP_SYNC, OP_SET_VIEW, OP_REOPEN, OP_EXCL_OPEN,                /* collective */
    OP_KINDS
} op_kind_t;

static const char *op_names[OP_KINDS] = {
    "write_at", "read_at", "write", "read", "iwrite_at", "iread_at", "iwrite", "iread", "write_at_all",
    "read_at_all", "write_all", "read_all", "seek", "set_size", "preallocate", "sync", "set_view", "reopen",
    "excl_open"};

static int is_access(op_kind_t k) { return k <= OP_READ_ALL; }
static int is_write(op_kind_t k) { return is_access(k) && k % 2 == 0; }
static int is_individual(op_kind_t k)
{
    return k == OP_WRITE || k == OP_READ || k == OP_IWRITE || k == OP_IREAD || k == OP_WRITE_ALL || k == OP_READ_ALL;
}
static int is_independent(op_kind_t k) { return k <= OP_IREAD; }

typedef struct rank_args {
    MPI_Offset off; /* explicit offset (etypes), or seek offset */
    int count, type, whence;
} rank_args_t;

typedef struct step {
    op_kind_t kind;
    int active;       /* independent operations: the rank that runs it */
    MPI_Offset value; /* set_size, preallocate: bytes; set_view: displacement */
    int amode;        /* reopen */
    int esize;        /* set_view: 1 (MPI_BYTE) or 4 (MPI_INT) */
    int ftcount;      /* set_view: filetype = contiguous(ftcount, etype) when > 1 */
    rank_args_t r[OD_MAX_RANKS];
} step_t;

typedef struct model {
    unsigned char *bytes; /* OD_FILE_SPAN * 4 bytes, size valid */
    unsigned char *undef; /* 1: never written: added by set_size/preallocate (MPI-3.1 13.2.4-5: undefined) or a gap left by a write past EOF */
    MPI_Offset size;
    int amode;
    MPI_Offset disp;
    int esize;
    int ftcount; /* filetype = contiguous(ftcount, etype) when > 1 */
    MPI_Offset pos[OD_MAX_RANKS]; /* etypes */
} model_t;

/* What one back end (or the model) answered for one rank's part of a step. */
typedef struct answer {
    int cls;
    int count;       /* MPI_Get_count with the memory type */
    MPI_Count bytes; /* MPI_Get_elements_x with MPI_BYTE */
    MPI_Offset pos, byte_off, size;
} answer_t;

typedef struct backend {
    const char *name;
    int host;
    ferry_File f;
    MPI_File m;
    char path[600];
} backend_t;

typedef struct run {
    const od_options_t *opt;
    int rank, nprocs;
    od_type_t types[OD_TYPES];
    step_t *steps;
    model_t model;
    backend_t be[2];
    int nbe;
    int ompio;          /* the host is Open MPI (see host_pointer_fixup) */
    long fixups;        /* host pointer fix-ups made */
} run_t;

/* --- generation ------------------------------------------------------- */

static int pick(uint64_t *state, int n)
{
    return (int)(ft_rand(state) % (uint64_t)n);
}

static int writable(int amode) { return !(amode & MPI_MODE_RDONLY); }
static int readable(int amode) { return !(amode & MPI_MODE_WRONLY); }

static int random_amode(uint64_t *s)
{
    static const int access[3] = {MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR};
    int amode = access[pick(s, 3)];
    if (amode != MPI_MODE_RDONLY && pick(s, 2)) amode |= MPI_MODE_CREATE;
    if (pick(s, 3) == 0) amode |= MPI_MODE_APPEND;
    if (pick(s, 4) == 0) amode |= MPI_MODE_UNIQUE_OPEN;
    return amode;
}

/* A type index whose size is a multiple of esize (index 0 is MPI_INT). */
static int random_type(run_t *run, uint64_t *s, int esize)
{
    for (int tries = 0; tries < 20; tries++) {
        int t = pick(s, OD_TYPES);
        if (run->types[t].size % esize == 0) return t;
    }
    return 0;
}

static MPI_Offset etype_limit(const model_t *m)
{
    return (OD_FILE_SPAN - m->disp) / m->esize;
}

static void random_access(run_t *run, uint64_t *s, op_kind_t kind, int r, rank_args_t *a)
{
    const model_t *m = &run->model;
    a->type = random_type(run, s, m->esize);
    const od_type_t *t = &run->types[a->type];
    int most = (int)(OD_MAX_BYTES / t->size);
    a->count = pick(s, 20) == 0 ? 0 : pick(s, most + 1);
    MPI_Offset eof = m->size > m->disp ? (m->size - m->disp) / m->esize : 0;
    switch (pick(s, 4)) {
    case 0: a->off = eof > 0 ? pick(s, (int)eof) : 0; break;         /* inside the file */
    case 1: a->off = eof + pick(s, 64) - 16; break; /* around EOF */
    default: a->off = pick(s, (int)(etype_limit(m) / 2)); break;
    }
    if (a->off < 0) a->off = 0;
    /* Writes through a pointer that seeks moved far away write nothing, so the model stays small. */
    MPI_Offset at = m->disp + (is_individual(kind) ? m->pos[r] : a->off) * m->esize;
    if (is_write(kind) && at + a->count * t->size > OD_FILE_SPAN * 3) a->count = 0;
}

static MPI_Offset access_offset(const model_t *m, op_kind_t k, int r, const rank_args_t *a)
{
    return is_individual(k) ? m->pos[r] : a->off;
}

/* Collective writes: a rank whose range meets an earlier rank's writes nothing. */
static void make_disjoint(run_t *run, step_t *st)
{
    const model_t *m = &run->model;
    for (int r = 0; r < run->nprocs; r++) {
        MPI_Offset lo = m->disp + access_offset(m, st->kind, r, &st->r[r]) * m->esize;
        MPI_Offset hi = lo + st->r[r].count * run->types[st->r[r].type].size;
        for (int q = 0; q < r; q++) {
            MPI_Offset qlo = m->disp + access_offset(m, st->kind, q, &st->r[q]) * m->esize;
            MPI_Offset qhi = qlo + st->r[q].count * run->types[st->r[q].type].size;
            if (lo < qhi && qlo < hi) st->r[r].count = 0;
        }
    }
}

static void generate(run_t *run, uint64_t *s, step_t *st)
{
    const model_t *m = &run->model;
    memset(st, 0, sizeof *st);
    int roll = pick(s, 100);
    if (roll < 50) {
        st->kind = (op_kind_t)pick(s, 8);
        st->active = pick(s, run->nprocs);
        random_access(run, s, st->kind, st->active, &st->r[st->active]);
        /* Now and then a negative explicit offset (writes only when the handle allows them). */
        if (!is_individual(st->kind) && pick(s, 25) == 0 &&
            (is_write(st->kind) ? writable(m->amode) : readable(m->amode)))
            st->r[st->active].off = -1 - pick(s, 100);
    } else if (roll < 72) {
        st->kind = (op_kind_t)(OP_WRITE_AT_ALL + pick(s, 4));
        for (int r = 0; r < run->nprocs; r++) random_access(run, s, st->kind, r, &st->r[r]);
        if (is_write(st->kind)) make_disjoint(run, st);
    } else if (roll < 82) {
        st->kind = OP_SEEK;
        for (int r = 0; r < run->nprocs; r++) {
            static const int whence[3] = {MPI_SEEK_SET, MPI_SEEK_CUR, MPI_SEEK_END};
            st->r[r].whence = whence[pick(s, 3)];
            st->r[r].off = pick(s, 300) - (st->r[r].whence == MPI_SEEK_SET ? 20 : 150);
        }
    } else if (roll < 87 && writable(m->amode)) {
        st->kind = pick(s, 2) ? OP_SET_SIZE : OP_PREALLOCATE;
        /* Stay congruent to the displacement mod the etype size (see above). */
        st->value = m->disp + (MPI_Offset)pick(s, (int)etype_limit(m)) * m->esize;
        if (pick(s, 8) == 0) st->value = m->size; /* no change */
    } else if (roll < 90) {
        st->kind = OP_SYNC;
    } else if (roll < 95) {
        st->kind = OP_SET_VIEW;
        st->esize = pick(s, 2) ? 4 : 1;
        st->ftcount = pick(s, 3) + 1;
        st->value = st->esize == 1 ? pick(s, 64) : (m->size % 4) + 4 * pick(s, 16);
    } else if (roll < 98) {
        st->kind = OP_REOPEN;
        st->amode = random_amode(s);
    } else {
        st->kind = OP_EXCL_OPEN;
    }
}

static void describe(const run_t *run, const step_t *st, char *out, size_t len)
{
    int n = snprintf(out, len, "%-12s", op_names[st->kind]);
    switch (st->kind) {
    case OP_SET_SIZE:
    case OP_PREALLOCATE: snprintf(out + n, len - n, "%lld", (long long)st->value); return;
    case OP_SET_VIEW:
        snprintf(out + n, len - n, "disp %lld etype %s filetype contiguous(%d)", (long long)st->value,
                 st->esize == 4 ? "INT" : "BYTE", st->ftcount);
        return;
    case OP_REOPEN: snprintf(out + n, len - n, "amode 0x%x", st->amode); return;
    case OP_SYNC:
    case OP_EXCL_OPEN: return;
    default: break;
    }
    for (int r = 0; r < run->nprocs && (size_t)n < len; r++) {
        const rank_args_t *a = &st->r[r];
        if (is_independent(st->kind) && r != st->active) continue;
        if (st->kind == OP_SEEK)
            n += snprintf(out + n, len - n, " [r%d %lld %s]", r, (long long)a->off,
                          a->whence == MPI_SEEK_SET ? "SET" : a->whence == MPI_SEEK_CUR ? "CUR" : "END");
        else
            n += snprintf(out + n, len - n, " [r%d off %lld count %d type %d]", r, (long long)a->off, a->count,
                          a->type);
    }
}

/* --- the model ---------------------------------------------------------- */

/* Grows the file to size; the new bytes are zeros in the model, and
 * undefined for the host when `undefined`. */
static void model_extend(model_t *m, MPI_Offset size, int undefined)
{
    if (size > m->size) {
        memset(m->bytes + m->size, 0, (size_t)(size - m->size));
        memset(m->undef + m->size, undefined, (size_t)(size - m->size));
    }
    m->size = size;
}

/* Model answer for rank r's access; applies its effect when apply. `mem` is
 * r's buffer (reads fill stream bytes, writes take them). */
static answer_t model_access(run_t *run, const step_t *st, int r, unsigned char *mem, int apply,
                             unsigned char *dontcare)
{
    model_t *m = &run->model;
    const rank_args_t *a = &st->r[r];
    const od_type_t *t = &run->types[a->type];
    answer_t ans = {0};
    MPI_Offset off = access_offset(m, st->kind, r, a);
    MPI_Count bytes = a->count * t->size;
    if (is_write(st->kind) && !writable(m->amode)) ans.cls = MPI_ERR_READ_ONLY;
    else if (!is_write(st->kind) && !readable(m->amode)) ans.cls = MPI_ERR_ACCESS;
    else if (off < 0) ans.cls = MPI_ERR_ARG;
    if (ans.cls) return ans;
    MPI_Offset at = m->disp + off * m->esize;
    if (is_write(st->kind)) {
        if (bytes > 0 && apply) {
            /* The gap a write past EOF leaves is never written: ferry (POSIX)
             * reads zeros there, but MPI promises nothing, and OMPIO's
             * two-phase collective writes fill such gaps with buffer garbage. */
            if (at + bytes > m->size) model_extend(m, at + bytes, 1);
            for (MPI_Count k = 0; k < bytes; k++) m->bytes[at + k] = mem[od_type_byte(t, k)];
            memset(m->undef + at, 0, (size_t)bytes);
        }
        ans.bytes = bytes;
    } else {
        ans.bytes = at >= m->size ? 0 : (m->size - at < bytes ? m->size - at : bytes);
        for (MPI_Count k = 0; k < ans.bytes; k++) {
            mem[od_type_byte(t, k)] = m->bytes[at + k];
            if (dontcare && m->undef[at + k]) dontcare[od_type_byte(t, k)] = 1;
        }
    }
    ans.count = ans.bytes % t->size == 0 ? (int)(ans.bytes / t->size) : MPI_UNDEFINED;
    if (apply && is_individual(st->kind)) m->pos[r] += ans.bytes / m->esize;
    return ans;
}

static int model_seek(model_t *m, int r, const rank_args_t *a)
{
    MPI_Offset base = 0;
    if (a->whence == MPI_SEEK_CUR) base = m->pos[r];
    if (a->whence == MPI_SEEK_END) base = m->size > m->disp ? (m->size - m->disp + m->esize - 1) / m->esize : 0;
    if (base + a->off < 0) return MPI_ERR_ARG;
    m->pos[r] = base + a->off;
    return 0;
}

/* --- back ends ------------------------------------------------------------ */

static int be_open(backend_t *b, int amode)
{
    if (b->host) return MPI_File_open(MPI_COMM_WORLD, b->path, amode, MPI_INFO_NULL, &b->m);
    return ferry_File_open(MPI_COMM_WORLD, b->path, amode, MPI_INFO_NULL, &b->f);
}

static int be_excl_open(backend_t *b)
{
    const int amode = MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR;
    MPI_File m = MPI_FILE_NULL;
    ferry_File f = FERRY_FILE_NULL;
    int rc = b->host ? MPI_File_open(MPI_COMM_WORLD, b->path, amode, MPI_INFO_NULL, &m)
                     : ferry_File_open(MPI_COMM_WORLD, b->path, amode, MPI_INFO_NULL, &f);
    if (rc == MPI_SUCCESS && b->host) MPI_File_close(&m);
    if (rc == MPI_SUCCESS && !b->host) ferry_File_close(&f);
    return rc;
}

static int be_close(backend_t *b)
{
    return b->host ? MPI_File_close(&b->m) : ferry_File_close(&b->f);
}

static int be_host_access(MPI_File fh, op_kind_t k, MPI_Offset off, void *buf, int n, MPI_Datatype t,
                          MPI_Status *st)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;
    switch (k) {
    case OP_WRITE_AT: return MPI_File_write_at(fh, off, buf, n, t, st);
    case OP_READ_AT: return MPI_File_read_at(fh, off, buf, n, t, st);
    case OP_WRITE: return MPI_File_write(fh, buf, n, t, st);
    case OP_READ: return MPI_File_read(fh, buf, n, t, st);
    case OP_WRITE_AT_ALL: return MPI_File_write_at_all(fh, off, buf, n, t, st);
    case OP_READ_AT_ALL: return MPI_File_read_at_all(fh, off, buf, n, t, st);
    case OP_WRITE_ALL: return MPI_File_write_all(fh, buf, n, t, st);
    case OP_READ_ALL: return MPI_File_read_all(fh, buf, n, t, st);
    case OP_IWRITE_AT: rc = MPI_File_iwrite_at(fh, off, buf, n, t, &req); break;
    case OP_IREAD_AT: rc = MPI_File_iread_at(fh, off, buf, n, t, &req); break;
    case OP_IWRITE: rc = MPI_File_iwrite(fh, buf, n, t, &req); break;
    default: rc = MPI_File_iread(fh, buf, n, t, &req); break;
    }
    return rc == MPI_SUCCESS ? MPI_Wait(&req, st) : rc;
}

static int be_ferry_access(ferry_File fh, op_kind_t k, MPI_Offset off, void *buf, int n, MPI_Datatype t,
                           MPI_Status *st)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;
    switch (k) {
    case OP_WRITE_AT: return ferry_File_write_at(fh, off, buf, n, t, st);
    case OP_READ_AT: return ferry_File_read_at(fh, off, buf, n, t, st);
    case OP_WRITE: return ferry_File_write(fh, buf, n, t, st);
    case OP_READ: return ferry_File_read(fh, buf, n, t, st);
    case OP_WRITE_AT_ALL: return ferry_File_write_at_all(fh, off, buf, n, t, st);
    case OP_READ_AT_ALL: return ferry_File_read_at_all(fh, off, buf, n, t, st);
    case OP_WRITE_ALL: return ferry_File_write_all(fh, buf, n, t, st);
    case OP_READ_ALL: return ferry_File_read_all(fh, buf, n, t, st);
    case OP_IWRITE_AT: rc = ferry_File_iwrite_at(fh, off, buf, n, t, &req); break;
    case OP_IREAD_AT: rc = ferry_File_iread_at(fh, off, buf, n, t, &req); break;
    case OP_IWRITE: rc = ferry_File_iwrite(fh, buf, n, t, &req); break;
    default: rc = ferry_File_iread(fh, buf, n, t, &req); break;
    }
    return rc == MPI_SUCCESS ? MPI_Wait(&req, st) : rc;
}

static int be_seek(backend_t *b, MPI_Offset off, int whence)
{
    return b->host ? MPI_File_seek(b->m, off, whence) : ferry_File_seek(b->f, off, whence);
}

static int be_resize(backend_t *b, op_kind_t k, MPI_Offset v)
{
    if (k == OP_SET_SIZE) return b->host ? MPI_File_set_size(b->m, v) : ferry_File_set_size(b->f, v);
    if (k == OP_PREALLOCATE) return b->host ? MPI_File_preallocate(b->m, v) : ferry_File_preallocate(b->f, v);
    return b->host ? MPI_File_sync(b->m) : ferry_File_sync(b->f);
}

static int be_set_view(backend_t *b, MPI_Offset disp, int esize, int ftcount)
{
    MPI_Datatype etype = esize == 4 ? MPI_INT : MPI_BYTE, filetype = etype;
    if (ftcount > 1) {
        MPI_Type_contiguous(ftcount, etype, &filetype);
        MPI_Type_commit(&filetype);
    }
    int rc = b->host ? MPI_File_set_view(b->m, disp, etype, filetype, "native", MPI_INFO_NULL)
                     : ferry_File_set_view(b->f, disp, etype, filetype, "native", MPI_INFO_NULL);
    if (ftcount > 1) MPI_Type_free(&filetype);
    return rc;
}

/* Pointer, byte offset of the pointer, and size, into ans. */
static void be_positions(backend_t *b, int amode, answer_t *ans)
{
    int rc = b->host ? MPI_File_get_size(b->m, &ans->size) : ferry_File_get_size(b->f, &ans->size);
    if (rc != MPI_SUCCESS) ans->size = -1;
    (void)amode;
    rc = b->host ? MPI_File_get_position(b->m, &ans->pos) : ferry_File_get_position(b->f, &ans->pos);
    if (rc != MPI_SUCCESS) ans->pos = -1;
    rc = b->host ? MPI_File_get_byte_offset(b->m, ans->pos, &ans->byte_off)
                 : ferry_File_get_byte_offset(b->f, ans->pos, &ans->byte_off);
    if (rc != MPI_SUCCESS) ans->byte_off = -1;
}

/* --- comparison ------------------------------------------------------------ */

static void report(run_t *run, int upto, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(run_t *run, int upto, const char *fmt, ...)
{
    char line[400];
    fprintf(stderr, "\n=== ferry differential mismatch, rank %d, seed %llu, %d ranks, step %d ===\n", run->rank,
            (unsigned long long)run->opt->seed, run->nprocs, upto);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    const model_t *m = &run->model;
    fprintf(stderr, "\nmodel after the step: size %lld, view disp %lld etype size %d, amode 0x%x, pointers", (long long)m->size,
            (long long)m->disp, m->esize, m->amode);
    for (int r = 0; r < run->nprocs; r++) fprintf(stderr, " %lld", (long long)m->pos[r]);
    fprintf(stderr, "\ntypes:\n");
    for (int t = 0; t < OD_TYPES; t++)
        fprintf(stderr, "  %d: %s (size %lld extent %lld lb %lld)\n", t, run->types[t].desc,
                (long long)run->types[t].size, (long long)run->types[t].extent, (long long)run->types[t].lb);
    fprintf(stderr, "sequence (replay: FERRY_DIFF_SEED=%llu FERRY_DIFF_STEPS=%d):\n", (unsigned long long)run->opt->seed,
            upto + 1);
    fprintf(stderr, "  open         amode 0x%x\n", MPI_MODE_CREATE | MPI_MODE_RDWR);
    for (int i = 0; i <= upto; i++) {
        describe(run, &run->steps[i], line, sizeof line);
        fprintf(stderr, "  %4d %s\n", i, line);
    }
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static int class_of(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    return cls;
}

/* Both hosts' collective reads report the bytes asked for when they stop
 * at or start past EOF; only "at least what was read" is checked. */
static int host_status_lenient(const run_t *run, const backend_t *b, op_kind_t k)
{
    (void)run;
    return b->host && (k == OP_READ_AT_ALL || k == OP_READ_ALL);
}

/* MPICH's ROMIO reports the bytes asked for when a read into a
 * noncontiguous memory type stops at or starts past EOF (every read form),
 * and such reads write into the gaps of the memory type (e.g. below buf
 * for a negative lower bound): neither status nor buffer is compared. */
static int host_romio_lenient(const run_t *run, const backend_t *b, const od_type_t *t)
{
    if (!b->host || run->ompio) return 0;
    for (MPI_Count k = 0; k < t->size; k++)
        if (t->map[k] != k) return 1;
    return t->extent != t->size;
}

/* True when some rank's part of a collective read stops at EOF. OMPIO's
 * collective reads then return wrong bytes and write into the gaps of
 * memory datatypes; on 3 or more ranks they return wrong bytes in other
 * steps too (overlapping requests). The host's buffers are not compared
 * for those steps. */
static int any_short_read(const run_t *run, const step_t *st)
{
    const model_t *m = &run->model;
    for (int q = 0; q < run->nprocs; q++) {
        MPI_Offset at = m->disp + access_offset(m, st->kind, q, &st->r[q]) * m->esize;
        if (st->r[q].count > 0 && at + st->r[q].count * run->types[st->r[q].type].size > m->size) return 1;
    }
    return 0;
}

static void compare_answers(run_t *run, int i, const backend_t *b, const answer_t *got, const answer_t *want,
                            int rc)
{
    const step_t *st = &run->steps[i];
    const od_type_t *t = &run->types[st->r[run->rank].type];
    int lenient = host_status_lenient(run, b, st->kind) || (!is_write(st->kind) && host_romio_lenient(run, b, t));
    if (lenient && got->cls == 0 && want->cls == 0 && got->bytes >= want->bytes) return;
    if (got->cls != want->cls)
        report(run, i, "%s: error class %d, model %d (%s)", b->name, got->cls, want->cls,
               rc == MPI_SUCCESS ? "success" : b->host ? "host error" : ft_errstr(rc));
    if (got->cls == 0 && (got->bytes != want->bytes || got->count != want->count))
        report(run, i, "%s: status bytes %lld count %d, model %lld count %d", b->name, (long long)got->bytes,
               got->count, (long long)want->bytes, want->count);
}

static void compare_positions(run_t *run, int i, backend_t *b)
{
    const model_t *m = &run->model;
    answer_t got;
    be_positions(b, m->amode, &got);
    MPI_Offset pos = m->pos[run->rank];
    if (got.pos != pos || got.byte_off != m->disp + pos * m->esize || got.size != m->size)
        report(run, i, "%s: position %lld byte offset %lld size %lld, model %lld %lld %lld", b->name,
               (long long)got.pos, (long long)got.byte_off, (long long)got.size, (long long)pos,
               (long long)(m->disp + pos * m->esize), (long long)m->size);
}

/* The buffer of a read: ferry must match the model everywhere; the host in
 * the bytes it read and every byte the type skips. `dontcare` marks what
 * the standard leaves open: stream bytes past EOF, and bytes read from
 * regions set_size/preallocate added (ferry must give zeros there). */
static void compare_buffer(run_t *run, int i, const backend_t *b, const unsigned char *mem, const unsigned char *want,
                           const unsigned char *dontcare, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        if (mem[k] == want[k] || (b->host && dontcare[k])) continue;
        report(run, i, "%s: read buffer byte %zd (from buf) is 0x%02x, model 0x%02x", b->name,
               (ssize_t)k - OD_MARGIN, mem[k], want[k]);
    }
}

/* --- running ---------------------------------------------------------------- */

/* Both hosts move the individual pointer wrongly in places: by the bytes
 * asked for, not the bytes read, when a read stops at EOF (MPI-3.1
 * 13.4.3: by the data accessed) -- OMPIO always, ROMIO for noncontiguous
 * memory types and collective reads -- and ROMIO's write_all with a
 * noncontiguous memory type by a wrong amount. After individual-pointer
 * steps the host pointer is put back where the model says; the fix-ups
 * are counted and printed. */
int od_host_is_open_mpi(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    return strstr(version, "Open MPI") != NULL;
}

static int host_pointer_fixup(run_t *run, const step_t *st)
{
    if (!run->opt->host || !is_individual(st->kind)) return 0;
    MPI_Offset pos = -1;
    MPI_File_get_position(run->be[1].m, &pos);
    if (pos == run->model.pos[run->rank]) return 0;
    MPI_File_seek(run->be[1].m, run->model.pos[run->rank], MPI_SEEK_SET);
    return 1;
}

/* Known host deviations: the host side of these steps is not run. */
static int od_host_skip(const run_t *run, const step_t *st)
{
    const model_t *m = &run->model;
    /* Open MPI's OMPIO accepts negative explicit offsets (MPI_ERR_ARG is required). */
    if (is_access(st->kind) && !is_individual(st->kind) && st->r[st->active].off < 0) return 1;
    /* OMPIO's MPI_SEEK_END is wrong when the filetype is derived, even a
     * contiguous one (e.g. disp 2, contiguous(2, MPI_BYTE), size 512:
     * seek(136, END) gives 138, not 646); the host seeks with SEEK_SET to
     * the model's answer instead (run_other). */
    if (run->ompio && st->kind == OP_SEEK && m->ftcount > 1) return 1;
    /* When the file ends before the view's displacement, ROMIO's SEEK_END
     * counts from a negative end (size - disp); ferry and the model count
     * from 0, the first offset the view has. Same emulation. */
    if (st->kind == OP_SEEK && m->size < m->disp) return 1;
    /* OMPIO's nonblocking reads that reach EOF never complete: MPI_Wait
     * spins in its aio progress forever. The host pointer is fixed up after. */
    if (run->ompio && (st->kind == OP_IREAD_AT || st->kind == OP_IREAD)) {
        const rank_args_t *a = &st->r[st->active];
        MPI_Offset at = m->disp + access_offset(m, st->kind, st->active, a) * m->esize;
        if (at + a->count * run->types[a->type].size > m->size) return 1;
    }
    /* OMPIO's collectives on more than one rank skip the access-mode check:
     * read_all on a WRONLY handle and write_all on a RDONLY one succeed. */
    if (run->ompio && run->nprocs > 1 && is_access(st->kind) && !is_independent(st->kind) &&
        !(is_write(st->kind) ? writable(m->amode) : readable(m->amode)))
        return 1;
    /* OMPIO's preallocate fails on WRONLY handles (MPI_ERR_ACCESS), fails now
     * and then with MPI_ERR_OTHER on several ranks, and may grow the file to
     * twice the size asked; the host gets set_size(max(size, value)) instead,
     * which gives the size preallocate must (the new bytes are undefined either way). */
    if (run->ompio && st->kind == OP_PREALLOCATE) return 1;
    /* ROMIO does not check the access mode of a zero-count access. */
    if (!run->ompio && is_access(st->kind) && !(is_write(st->kind) ? writable(m->amode) : readable(m->amode))) {
        for (int q = 0; q < run->nprocs; q++)
            if (st->r[q].count == 0 && (!is_independent(st->kind) || q == st->active)) return 1;
    }
    /* Both hosts refuse MPI_File_sync on a read-only handle (OMPIO:
     * MPI_ERR_ACCESS, ROMIO: MPI_ERR_READ_ONLY); ferry syncs it. */
    if (st->kind == OP_SYNC && !writable(m->amode)) return 1;
    return 0;
}

static int host_access_as_bytes(backend_t *b, op_kind_t k, MPI_Offset off, unsigned char *buf, int count,
                                const od_type_t *t, MPI_Status *status)
{
    MPI_Datatype flat;
    MPI_Type_contiguous((int)t->size, MPI_BYTE, &flat);
    MPI_Type_commit(&flat);
    MPI_Count n = count * t->size;
    unsigned char *stream = malloc((size_t)n + 1);
    if (is_write(k)) od_type_gather(t, buf, n, stream);
    int rc = be_host_access(b->m, k, off, stream, count, flat, status);
    MPI_Count got = 0;
    if (rc == MPI_SUCCESS && !is_write(k)) MPI_Get_elements_x(status, MPI_BYTE, &got);
    for (MPI_Count s = 0; s < got && s < n; s++) buf[od_type_byte(t, s)] = stream[s];
    free(stream);
    MPI_Type_free(&flat);
    return rc;
}

static void run_access(run_t *run, int i, const step_t *st, int host_skip)
{
    int r = run->rank;
    int mine = !is_independent(st->kind) || st->active == r;
    const rank_args_t *a = &st->r[r];
    const od_type_t *t = &run->types[a->type];
    MPI_Count lo, hi;
    od_type_span(t, a->count, &lo, &hi);
    size_t len = (size_t)(hi - lo) + 2 * OD_MARGIN;
    unsigned char *want = malloc(len), *mem = malloc(len), *tail = calloc(1, len);
    ft_fill(want, len, run->opt->seed * 1000003u + (uint64_t)i * 31u + (uint64_t)r);
    unsigned char *base = want + OD_MARGIN - lo;
    answer_t expect = {0};
    if (mine) {
        expect = model_access(run, st, r, base, 0, tail + OD_MARGIN - lo);
        if (!is_write(st->kind) && expect.cls == 0)
            for (MPI_Count s = expect.bytes; s < a->count * t->size; s++)
                tail[OD_MARGIN - lo + od_type_byte(t, s)] = 1;
    }
    for (int e = 0; e < run->nbe; e++) {
        backend_t *b = &run->be[e];
        if (b->host && host_skip) continue;
        if (!mine) continue;
        ft_fill(mem, len, run->opt->seed * 1000003u + (uint64_t)i * 31u + (uint64_t)r);
        void *buf = mem + OD_MARGIN - lo;
        MPI_Status status;
        MPI_Offset off = a->off;
        int rc = b->host && od_host_needs_bytes(t) ? host_access_as_bytes(b, st->kind, off, buf, a->count, t, &status)
                 : b->host ? be_host_access(b->m, st->kind, off, buf, a->count, t->type, &status)
                           : be_ferry_access(b->f, st->kind, off, buf, a->count, t->type, &status);
        answer_t got = {.cls = class_of(rc)};
        if (rc == MPI_SUCCESS) {
            MPI_Get_count(&status, t->type, &got.count);
            MPI_Get_elements_x(&status, MPI_BYTE, &got.bytes);
        }
        compare_answers(run, i, b, &got, &expect, rc);
        if (!is_write(st->kind) &&
            !(host_status_lenient(run, b, st->kind) && run->ompio && (run->nprocs > 2 || any_short_read(run, st))) &&
            !host_romio_lenient(run, b, t))
            compare_buffer(run, i, b, mem, want, tail, len);
    }
    /* Every rank applies every rank's part to the model, in rank order. */
    for (int q = 0; q < run->nprocs; q++) {
        if (is_independent(st->kind) && q != st->active) continue;
        const od_type_t *tq = &run->types[st->r[q].type];
        MPI_Count qlo, qhi;
        od_type_span(tq, st->r[q].count, &qlo, &qhi);
        size_t qlen = (size_t)(qhi - qlo) + 2 * OD_MARGIN;
        unsigned char *qmem = malloc(qlen);
        ft_fill(qmem, qlen, run->opt->seed * 1000003u + (uint64_t)i * 31u + (uint64_t)q);
        model_access(run, st, q, qmem + OD_MARGIN - qlo, 1, NULL);
        free(qmem);
    }
    free(want);
    free(mem);
    free(tail);
}

static void expect_class(run_t *run, int i, const backend_t *b, int rc, int cls)
{
    if (class_of(rc) != cls)
        report(run, i, "%s: %s returned class %d, model %d (%s)", b->name, op_names[run->steps[i].kind], class_of(rc),
               cls, rc == MPI_SUCCESS ? "success" : b->host ? "host error" : ft_errstr(rc));
}

static void run_other(run_t *run, int i, const step_t *st, int host_skip)
{
    model_t *m = &run->model;
    int r = run->rank, cls = 0;
    for (int e = 0; e < run->nbe; e++) {
        backend_t *b = &run->be[e];
        if (b->host && host_skip && st->kind == OP_SEEK) {
            model_t scratch = *m;
            if (model_seek(&scratch, r, &st->r[r]) == 0) be_seek(b, scratch.pos[r], MPI_SEEK_SET);
            continue;
        }
        if (b->host && host_skip && st->kind == OP_PREALLOCATE) {
            if (st->value > m->size) expect_class(run, i, b, be_resize(b, OP_SET_SIZE, st->value), 0);
            continue;
        }
        if (b->host && host_skip) continue;
        switch (st->kind) {
        case OP_SEEK: {
            model_t scratch = *m;
            cls = model_seek(&scratch, r, &st->r[r]);
            int rc = be_seek(b, st->r[r].off, st->r[r].whence);
            /* OMPIO fails a seek to a negative position with MPI_ERR_OTHER, not MPI_ERR_ARG. */
            if (b->host && run->ompio && cls != 0 && rc != MPI_SUCCESS) break;
            expect_class(run, i, b, rc, cls);
            break;
        }
        case OP_SET_SIZE:
        case OP_PREALLOCATE:
        case OP_SYNC: expect_class(run, i, b, be_resize(b, st->kind, st->value), 0); break;
        case OP_SET_VIEW: expect_class(run, i, b, be_set_view(b, st->value, st->esize, st->ftcount), 0); break;
        case OP_REOPEN:
            expect_class(run, i, b, be_close(b), 0);
            expect_class(run, i, b, be_open(b, st->amode), 0);
            break;
        default: expect_class(run, i, b, be_excl_open(b), MPI_ERR_FILE_EXISTS); break;
        }
    }
    switch (st->kind) {
    case OP_SEEK:
        for (int q = 0; q < run->nprocs; q++) model_seek(m, q, &st->r[q]);
        break;
    case OP_SET_SIZE:
        if (st->value < m->size) m->size = st->value;
        model_extend(m, st->value, 1);
        break;
    case OP_PREALLOCATE:
        if (st->value > m->size) model_extend(m, st->value, 1);
        break;
    case OP_SET_VIEW:
        m->disp = st->value;
        m->esize = st->esize;
        m->ftcount = st->ftcount;
        memset(m->pos, 0, sizeof m->pos);
        break;
    case OP_REOPEN:
        m->amode = st->amode;
        m->disp = 0;
        m->esize = 1;
        m->ftcount = 1;
        for (int q = 0; q < OD_MAX_RANKS; q++) m->pos[q] = (st->amode & MPI_MODE_APPEND) ? m->size : 0;
        break;
    default: break;
    }
}

/* Rank 0 compares both files with the model (at the end, or after every
 * step with od_options_t.check_files to find the step that went wrong). */
static void compare_files(run_t *run, int step)
{
    if (run->rank != 0) return;
    for (int e = 0; e < run->nbe; e++) {
        FILE *f = fopen(run->be[e].path, "rb");
        if (!f) report(run, step, "%s: file %s cannot be opened", run->be[e].name, run->be[e].path);
        unsigned char *data = malloc((size_t)run->model.size + 1);
        size_t n = fread(data, 1, (size_t)run->model.size + 1, f);
        fclose(f);
        if ((MPI_Offset)n != run->model.size)
            report(run, step, "%s: file has %zu bytes, model %lld", run->be[e].name, n,
                   (long long)run->model.size);
        for (size_t k = 0; k < n; k++)
            if (data[k] != run->model.bytes[k] && !(run->be[e].host && run->model.undef[k]))
                report(run, step, "%s: file byte %zu is 0x%02x, model 0x%02x", run->be[e].name,
                       k, data[k], run->model.bytes[k]);
        free(data);
    }
}

/* Every backend: sync, barrier, sync (failures are reported by the next step's checks). */
static void sync_barrier_sync(run_t *run)
{
    for (int e = 0; e < run->nbe; e++) {
        backend_t *b = &run->be[e];
        (void)(b->host ? MPI_File_sync(b->m) : ferry_File_sync(b->f));
        MPI_Barrier(MPI_COMM_WORLD);
        (void)(b->host ? MPI_File_sync(b->m) : ferry_File_sync(b->f));
    }
}

static void setup(run_t *run, uint64_t *state)
{
    od_type_named(&run->types[0], MPI_INT);
    od_type_named(&run->types[1], MPI_BYTE);
    for (int t = 2; t < OD_TYPES; t++) od_type_random(&run->types[t], state, 2);
    run->model.bytes = calloc(1, OD_FILE_SPAN * 4);
    run->model.undef = calloc(1, OD_FILE_SPAN * 4);
    run->model.amode = MPI_MODE_CREATE | MPI_MODE_RDWR;
    run->model.esize = 1;
    run->model.ftcount = 1;
    run->nbe = run->opt->host ? 2 : 1;
    for (int e = 0; e < run->nbe; e++) {
        backend_t *b = &run->be[e];
        b->host = e == 1;
        b->name = b->host ? "host MPI-IO" : "ferry";
        snprintf(b->path, sizeof b->path, "%s/diff-%llu-%s", run->opt->dir, (unsigned long long)run->opt->seed,
                 b->host ? "host" : "ferry");
        int rc = be_open(b, run->model.amode);
        if (rc != MPI_SUCCESS) ft_fail(__FILE__, __LINE__, "%s: open %s failed", b->name, b->path);
    }
}

int od_run(const od_options_t *opt)
{
    run_t run = {.opt = opt};
    MPI_Comm_rank(MPI_COMM_WORLD, &run.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &run.nprocs);
    if (run.nprocs > OD_MAX_RANKS) ft_fail(__FILE__, __LINE__, "at most %d ranks", OD_MAX_RANKS);
    uint64_t state = opt->seed;
    run.ompio = od_host_is_open_mpi();
    setup(&run, &state);
    run.steps = calloc((size_t)opt->steps, sizeof *run.steps);
    char line[400];
    for (int i = 0; i < opt->steps; i++) {
        step_t *st = &run.steps[i];
        generate(&run, &state, st);
        if (opt->verbose && run.rank == 0) {
            describe(&run, st, line, sizeof line);
            printf("  %4d %s\n", i, line);
        }
        int skip = od_host_skip(&run, st);
        if (is_access(st->kind)) run_access(&run, i, st, skip);
        else run_other(&run, i, st, skip);
        if (opt->sync_writes && is_write(st->kind)) sync_barrier_sync(&run);
        MPI_Barrier(MPI_COMM_WORLD); /* other ranks' writes are done before sizes are compared */
        run.fixups += host_pointer_fixup(&run, st);
        for (int e = 0; e < run.nbe; e++) compare_positions(&run, i, &run.be[e]);
        if (opt->check_files) compare_files(&run, i);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    for (int e = 0; e < run.nbe; e++)
        if (be_close(&run.be[e]) != MPI_SUCCESS) report(&run, opt->steps - 1, "%s: close failed", run.be[e].name);
    MPI_Barrier(MPI_COMM_WORLD);
    compare_files(&run, opt->steps - 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (run.rank == 0)
        for (int e = 0; e < run.nbe; e++) remove(run.be[e].path);
    long fixups = 0;
    MPI_Reduce(&run.fixups, &fixups, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (run.rank == 0 && fixups)
        printf("  host individual-pointer fix-ups (known host deviations): %ld\n", fixups);
    for (int t = 0; t < OD_TYPES; t++) od_type_free(&run.types[t]);
    free(run.model.bytes);
    free(run.model.undef);
    free(run.steps);
    return 0;
}

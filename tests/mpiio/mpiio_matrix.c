/*
 * The bad-argument matrix (issue 13): every ferry_File_* function fed each
 * class of bad argument that applies to it, asserting the error class on
 * every rank, a message naming the rank that broke a collective, and no
 * crash (the job would die), hang (a per-case alarm names the case and
 * ends the job) or silent success. Classes: MPI_FILE_NULL, garbage and
 * stale handles (a copy used after close), NULL buffers, negative counts,
 * null and uncommitted datatypes, negative and overflowing offsets and
 * sizes, bad whence, amodes and access modes, NULL output arguments and
 * requests, and arguments that differ across ranks (one rank bad).
 *
 * Built twice from this file: mpiio_matrix calls ferry_File_*; with
 * MATRIX_DROPIN it is a plain MPI program calling MPI_File_*, run with
 * libferry-mpiio.so preloaded (it checks that ferry serves its files).
 * Rank 0 prints the cases and the classes of each function, the totals
 * docs/status.md quotes, and "matrix: passed" when every case was right.
 *
 * Offsets that overflow only inside view navigation (huge filetype extents,
 * displacements near INT64_MAX: issue 13 item 2) are view_overflows.
 */
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef MATRIX_DROPIN
#include <mpi.h>
typedef MPI_File file_t;
#define NULL_FILE MPI_FILE_NULL
#define FN(name) MPI_File_##name
#define error_string MPI_Error_string
#define LARGE_FORMS (MPI_VERSION >= 4)
#define VARIANT "MPI_File_* (drop-in)"
#else
#include "ferry.h"
typedef ferry_File file_t;
#define NULL_FILE FERRY_FILE_NULL
#define FN(name) ferry_File_##name
#define error_string ferry_Error_string
#define LARGE_FORMS 1
#define VARIANT "ferry_File_*"
#endif

enum { BUF = 4096, CASE_SECONDS = 30, MAX_FUNCTIONS = 128, MAX_CLASSES = 24, ALL = -1 };

static int rank, size, last;
static char dir[512], buf[BUF], other[BUF];
static file_t rw, ro, wo, stale;
static _Alignas(64) char garbage_bytes[1024];
#define GARBAGE ((file_t)(void *)garbage_bytes)
static MPI_Datatype loose; /* never committed */

/* ---- the harness ---------------------------------------------------- */

static struct {
    const char *function;
    int cases;
    const char *classes[MAX_CLASSES];
    int nclasses;
} tally[MAX_FUNCTIONS];
static int nfunctions, ncases, nsilent, nwrong, nunnamed;
static const char *volatile current_function = "", *volatile current_class = "";

static void on_alarm(int sig)
{
    (void)sig;
    char line[256];
    int n = snprintf(line, sizeof line, "matrix rank %d: HANG in %s with %s\n", rank, current_function, current_class);
    if (write(2, line, (size_t)n) < 0) _exit(3);
    _exit(3);
}

static void arm(const char *function, const char *bad)
{
    current_function = function;
    current_class = bad;
    alarm(CASE_SECONDS);
}

static void count(const char *function, const char *bad)
{
    int f = 0;
    while (f < nfunctions && strcmp(tally[f].function, function) != 0) f++;
    if (f == nfunctions && nfunctions < MAX_FUNCTIONS) tally[nfunctions++].function = function;
    if (f == MAX_FUNCTIONS) return;
    tally[f].cases++;
    ncases++;
    for (int c = 0; c < tally[f].nclasses; c++)
        if (strcmp(tally[f].classes[c], bad) == 0) return;
    if (tally[f].nclasses < MAX_CLASSES) tally[f].classes[tally[f].nclasses++] = bad;
}

static const char *message_of(int rc)
{
    static char text[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    text[0] = '\0';
    if (rc != MPI_SUCCESS) error_string(rc, text, &len);
    return text;
}

/* The maximum of value over all ranks. Polled with yields: MPICH busy-polls
 * in blocking calls, which costs time slices per case when ranks share cores. */
static int max_over_ranks(int value)
{
    int result = value, done = 0;
    MPI_Request request;
    MPI_Iallreduce(&value, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &request);
    while (!done) {
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        if (!done) sched_yield();
    }
    return result;
}

/* 0: right; 1: silent success; 2: wrong class; 3: the message does not name the culprit rank. */
static int verdict_of(int rc, int expected, int culprit)
{
    int cls = MPI_SUCCESS;
    if (rc == MPI_SUCCESS) return 1;
    MPI_Error_class(rc, &cls);
    if (cls != expected) return 2;
    char named[32];
    snprintf(named, sizeof named, "rank %d", culprit);
    if (culprit != ALL && rank != culprit && !strstr(message_of(rc), named)) return 3;
    return 0;
}

/* Every rank's verdict on one case, agreed over MPI_COMM_WORLD. */
static void expect(const char *function, const char *bad, int culprit, int expected, int rc)
{
    alarm(0);
    int verdict = verdict_of(rc, expected, culprit);
    if (verdict) {
        int cls = 0;
        if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
        fprintf(stderr, "matrix rank %d: %s with %s: expected class %d, got %s (class %d) %s\n", rank, function, bad,
                expected, verdict == 1 ? "success" : "an error", cls, message_of(rc));
    }
    int worst = max_over_ranks(verdict);
    nsilent += worst == 1;
    nwrong += worst == 2;
    nunnamed += worst == 3;
    count(function, bad);
}

/* A call that returns a value, not an error code. */
static void expect_value(const char *function, const char *bad, int right)
{
    alarm(0);
    if (!right) fprintf(stderr, "matrix rank %d: %s with %s: wrong result\n", rank, function, bad);
    nwrong += max_over_ranks(!right);
    count(function, bad);
}

#define CASE(function, bad, culprit, expected, call)                                                             \
    do {                                                                                                           \
        arm(function, bad);                                                                                        \
        int rc_ = (call);                                                                                          \
        expect(function, bad, culprit, expected, rc_);                                                             \
    } while (0)

/* The rank that passes the bad argument in a one-rank case. */
static int bad_here(int culprit)
{
    return culprit == ALL || rank == culprit;
}

/* ---- the 28 data-access forms, int and large counts ------------------- */

typedef int access_fn(file_t fh, MPI_Offset offset, void *b, MPI_Count n, MPI_Datatype type, MPI_Request *request);

typedef struct form {
    const char *name;
    access_fn *call;
    int at, write, collective, nonblocking;
} form_t;

static int complete(int rc, MPI_Request *request)
{
    MPI_Status status;
    if (rc == MPI_SUCCESS && request && *request != MPI_REQUEST_NULL) rc = MPI_Wait(request, &status);
    return rc;
}

#define AT_BLOCKING(name, fn, end, type_)                                                                          \
    static int w_##name(file_t fh, MPI_Offset o, void *b, MPI_Count n, MPI_Datatype t, MPI_Request *r)             \
    {                                                                                                              \
        MPI_Status status;                                                                                         \
        (void)r;                                                                                                   \
        return fn(fh, o, b, (type_)n, t, &status);                                                                 \
    }
#define PTR_BLOCKING(name, fn, end, type_)                                                                         \
    static int w_##name(file_t fh, MPI_Offset o, void *b, MPI_Count n, MPI_Datatype t, MPI_Request *r)             \
    {                                                                                                              \
        MPI_Status status;                                                                                         \
        (void)o, (void)r;                                                                                          \
        return fn(fh, b, (type_)n, t, &status);                                                                    \
    }
#define AT_NONBLOCKING(name, fn, end, type_)                                                                       \
    static int w_##name(file_t fh, MPI_Offset o, void *b, MPI_Count n, MPI_Datatype t, MPI_Request *r)             \
    {                                                                                                              \
        return complete(fn(fh, o, b, (type_)n, t, r), r);                                                          \
    }
#define PTR_NONBLOCKING(name, fn, end, type_)                                                                      \
    static int w_##name(file_t fh, MPI_Offset o, void *b, MPI_Count n, MPI_Datatype t, MPI_Request *r)             \
    {                                                                                                              \
        (void)o;                                                                                                   \
        return complete(fn(fh, b, (type_)n, t, r), r);                                                             \
    }
/* A begin that (wrongly) succeeds is ended, so the next case starts clean. */
#define AT_BEGIN(name, fn, end, type_)                                                                              \
    static int w_##name(file_t fh, MPI_Offset o, void *b, MPI_Count n, MPI_Datatype t, MPI_Request *r)             \
    {                                                                                                              \
        MPI_Status status;                                                                                         \
        (void)r;                                                                                                   \
        int rc = fn(fh, o, b, (type_)n, t);                                                                        \
        if (rc == MPI_SUCCESS) end(fh, b, &status);                                                                \
        return rc;                                                                                                 \
    }
#define PTR_BEGIN(name, fn, end, type_)                                                                             \
    static int w_##name(file_t fh, MPI_Offset o, void *b, MPI_Count n, MPI_Datatype t, MPI_Request *r)             \
    {                                                                                                              \
        MPI_Status status;                                                                                         \
        (void)o, (void)r;                                                                                          \
        int rc = fn(fh, b, (type_)n, t);                                                                           \
        if (rc == MPI_SUCCESS) end(fh, b, &status);                                                                \
        return rc;                                                                                                 \
    }

/* The 28 forms, once: X(name, suffix, count type, wrapper kind, at, write, collective, nonblocking, end). */
#define ACCESS_FORMS(X, sfx, t)                                                                                    \
    X(read_at, sfx, t, AT_BLOCKING, 1, 0, 0, 0, none)                                                             \
    X(read_at_all, sfx, t, AT_BLOCKING, 1, 0, 1, 0, none)                                                         \
    X(write_at, sfx, t, AT_BLOCKING, 1, 1, 0, 0, none)                                                            \
    X(write_at_all, sfx, t, AT_BLOCKING, 1, 1, 1, 0, none)                                                        \
    X(read, sfx, t, PTR_BLOCKING, 0, 0, 0, 0, none)                                                               \
    X(read_all, sfx, t, PTR_BLOCKING, 0, 0, 1, 0, none)                                                           \
    X(write, sfx, t, PTR_BLOCKING, 0, 1, 0, 0, none)                                                              \
    X(write_all, sfx, t, PTR_BLOCKING, 0, 1, 1, 0, none)                                                          \
    X(read_shared, sfx, t, PTR_BLOCKING, 0, 0, 0, 0, none)                                                        \
    X(write_shared, sfx, t, PTR_BLOCKING, 0, 1, 0, 0, none)                                                       \
    X(read_ordered, sfx, t, PTR_BLOCKING, 0, 0, 1, 0, none)                                                       \
    X(write_ordered, sfx, t, PTR_BLOCKING, 0, 1, 1, 0, none)                                                      \
    X(iread_at, sfx, t, AT_NONBLOCKING, 1, 0, 0, 1, none)                                                         \
    X(iwrite_at, sfx, t, AT_NONBLOCKING, 1, 1, 0, 1, none)                                                        \
    X(iread_at_all, sfx, t, AT_NONBLOCKING, 1, 0, 1, 1, none)                                                     \
    X(iwrite_at_all, sfx, t, AT_NONBLOCKING, 1, 1, 1, 1, none)                                                    \
    X(iread, sfx, t, PTR_NONBLOCKING, 0, 0, 0, 1, none)                                                           \
    X(iwrite, sfx, t, PTR_NONBLOCKING, 0, 1, 0, 1, none)                                                          \
    X(iread_all, sfx, t, PTR_NONBLOCKING, 0, 0, 1, 1, none)                                                       \
    X(iwrite_all, sfx, t, PTR_NONBLOCKING, 0, 1, 1, 1, none)                                                      \
    X(iread_shared, sfx, t, PTR_NONBLOCKING, 0, 0, 0, 1, none)                                                    \
    X(iwrite_shared, sfx, t, PTR_NONBLOCKING, 0, 1, 0, 1, none)                                                   \
    X(read_at_all_begin, sfx, t, AT_BEGIN, 1, 0, 1, 0, read_at_all_end)                                           \
    X(write_at_all_begin, sfx, t, AT_BEGIN, 1, 1, 1, 0, write_at_all_end)                                         \
    X(read_all_begin, sfx, t, PTR_BEGIN, 0, 0, 1, 0, read_all_end)                                                \
    X(write_all_begin, sfx, t, PTR_BEGIN, 0, 1, 1, 0, write_all_end)                                              \
    X(read_ordered_begin, sfx, t, PTR_BEGIN, 0, 0, 1, 0, read_ordered_end)                                        \
    X(write_ordered_begin, sfx, t, PTR_BEGIN, 0, 1, 1, 0, write_ordered_end)

#define WRAPPER(n, sfx, t, kind, at, wr, co, nb, end) kind(n##sfx, FN(n##sfx), FN(end), t)
#define ENTRY(n, sfx, t, kind, at, wr, co, nb, end) {#n #sfx, w_##n##sfx, at, wr, co, nb},

ACCESS_FORMS(WRAPPER, , int)
#if LARGE_FORMS
ACCESS_FORMS(WRAPPER, _c, MPI_Count)
#endif

static const form_t forms[] = {ACCESS_FORMS(ENTRY, , int)
#if LARGE_FORMS
                                   ACCESS_FORMS(ENTRY, _c, MPI_Count)
#endif
};

/* The bad arguments every rank passes alike: each fails locally. */
static void access_everywhere(const form_t *f)
{
    MPI_Request request;
    const char *n = f->name;
    CASE(n, "MPI_FILE_NULL", ALL, MPI_ERR_FILE, f->call(NULL_FILE, 0, buf, 8, MPI_BYTE, &request));
    CASE(n, "garbage handle", ALL, MPI_ERR_FILE, f->call(GARBAGE, 0, buf, 8, MPI_BYTE, &request));
    CASE(n, "stale handle (after close)", ALL, MPI_ERR_FILE, f->call(stale, 0, buf, 8, MPI_BYTE, &request));
    CASE(n, "NULL buffer", ALL, MPI_ERR_BUFFER, f->call(rw, 0, NULL, 8, MPI_BYTE, &request));
    CASE(n, "negative count", ALL, MPI_ERR_COUNT, f->call(rw, 0, buf, -1, MPI_BYTE, &request));
    CASE(n, "MPI_DATATYPE_NULL", ALL, MPI_ERR_TYPE, f->call(rw, 0, buf, 8, MPI_DATATYPE_NULL, &request));
    CASE(n, "uncommitted datatype", ALL, MPI_ERR_TYPE, f->call(rw, 0, buf, 1, loose, &request));
    if (f->write) CASE(n, "wrong access mode", ALL, MPI_ERR_READ_ONLY, f->call(ro, 0, buf, 8, MPI_BYTE, &request));
    else CASE(n, "wrong access mode", ALL, MPI_ERR_ACCESS, f->call(wo, 0, buf, 8, MPI_BYTE, &request));
    if (f->at) {
        CASE(n, "negative offset", ALL, MPI_ERR_ARG, f->call(rw, -1, buf, 8, MPI_BYTE, &request));
        CASE(n, "overflowing offset", ALL, MPI_ERR_ARG, f->call(rw, INT64_MAX, buf, 8, MPI_BYTE, &request));
    }
    if (f->nonblocking) CASE(n, "NULL request", ALL, MPI_ERR_REQUEST, f->call(rw, 0, buf, 8, MPI_BYTE, NULL));
}

/* Collective forms with one rank's argument bad: every rank fails with its class. */
static void access_one_rank(const form_t *f)
{
    MPI_Request request;
    const char *n = f->name;
    MPI_Offset at = (MPI_Offset)rank * 8;
    CASE(n, "NULL buffer on one rank", last, MPI_ERR_BUFFER,
         f->call(rw, at, bad_here(last) ? NULL : buf, 8, MPI_BYTE, &request));
    CASE(n, "negative count on one rank", last, MPI_ERR_COUNT,
         f->call(rw, at, buf, bad_here(last) ? -1 : 8, MPI_BYTE, &request));
    CASE(n, "uncommitted datatype on one rank", last, MPI_ERR_TYPE,
         f->call(rw, at, buf, bad_here(last) ? 1 : 8, bad_here(last) ? loose : MPI_BYTE, &request));
    if (f->at)
        CASE(n, "negative offset on one rank", last, MPI_ERR_ARG,
             f->call(rw, bad_here(last) ? -8 : at, buf, 8, MPI_BYTE, &request));
}

/* ---- split collectives: ends, and a second begin on one rank ---------- */

typedef struct split {
    const char *begin_name, *end_name;
    int (*begin)(file_t fh, const void *b); /* MPI_BYTE x 8 at offset 0 / the pointer */
    int (*end)(file_t fh, void *b, MPI_Status *status);
} split_t;

#define SPLIT_AT(kind)                                                                                              \
    static int b_##kind(file_t fh, const void *b)                                                                  \
    {                                                                                                              \
        return FN(kind##_begin)(fh, (MPI_Offset)rank * 8, (void *)b, 8, MPI_BYTE);                                 \
    }                                                                                                              \
    static int e_##kind(file_t fh, void *b, MPI_Status *s) { return FN(kind##_end)(fh, b, s); }
#define SPLIT_PTR(kind)                                                                                             \
    static int b_##kind(file_t fh, const void *b) { return FN(kind##_begin)(fh, (void *)b, 8, MPI_BYTE); }          \
    static int e_##kind(file_t fh, void *b, MPI_Status *s) { return FN(kind##_end)(fh, b, s); }
SPLIT_AT(read_at_all)
SPLIT_AT(write_at_all)
SPLIT_PTR(read_all)
SPLIT_PTR(write_all)
SPLIT_PTR(read_ordered)
SPLIT_PTR(write_ordered)

#define SPLIT_ENTRY(kind) {#kind "_begin", #kind "_end", b_##kind, e_##kind}
static const split_t splits[] = {SPLIT_ENTRY(read_at_all), SPLIT_ENTRY(write_at_all),  SPLIT_ENTRY(read_all),
                                 SPLIT_ENTRY(write_all),   SPLIT_ENTRY(read_ordered), SPLIT_ENTRY(write_ordered)};

static int must(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "matrix rank %d: %s failed: %s\n", rank, what, message_of(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return rc;
}

static void split_cases(const split_t *s)
{
    MPI_Status status;
    CASE(s->end_name, "MPI_FILE_NULL", ALL, MPI_ERR_FILE, s->end(NULL_FILE, buf, &status));
    CASE(s->end_name, "garbage handle", ALL, MPI_ERR_FILE, s->end(GARBAGE, buf, &status));
    CASE(s->end_name, "stale handle (after close)", ALL, MPI_ERR_FILE, s->end(stale, buf, &status));
    CASE(s->end_name, "no active begin", ALL, MPI_ERR_OTHER, s->end(rw, buf, &status));
    must(s->begin(rw, buf), s->begin_name);
    CASE(s->end_name, "another buffer", ALL, MPI_ERR_BUFFER, s->end(rw, other, &status));
    /* A second begin on one rank: refused there at once; the next collective fails everywhere, naming it. */
    CASE(s->begin_name, "second begin while active (one rank)", ALL, MPI_ERR_OTHER,
         rank == last ? s->begin(rw, buf) : MPI_ERR_OTHER /* the others do not call it */);
    must(s->end(rw, buf, &status), s->end_name);
    CASE(s->begin_name, "second begin, reported at the next collective", last, MPI_ERR_OTHER, FN(sync)(rw));
}

/* ---- the other functions ---------------------------------------------- */

static void handle_cases(const char *function, int (*call)(file_t fh))
{
    CASE(function, "MPI_FILE_NULL", ALL, MPI_ERR_FILE, call(NULL_FILE));
    CASE(function, "garbage handle", ALL, MPI_ERR_FILE, call(GARBAGE));
    CASE(function, "stale handle (after close)", ALL, MPI_ERR_FILE, call(stale));
}

static MPI_Offset offset_out;
static int int_out;
static MPI_Group group_out;
static MPI_Info info_out;
static MPI_Datatype etype_out, filetype_out;
static char rep_out[MPI_MAX_DATAREP_STRING];
#if LARGE_FORMS
static MPI_Count count_out;
#endif
static MPI_Aint aint_out;

static int c_get_size(file_t fh) { return FN(get_size)(fh, &offset_out); }
static int c_get_group(file_t fh) { return FN(get_group)(fh, &group_out); }
static int c_get_amode(file_t fh) { return FN(get_amode)(fh, &int_out); }
static int c_get_info(file_t fh) { return FN(get_info)(fh, &info_out); }
static int c_get_atomicity(file_t fh) { return FN(get_atomicity)(fh, &int_out); }
static int c_get_position(file_t fh) { return FN(get_position)(fh, &offset_out); }
static int c_get_position_shared(file_t fh) { return FN(get_position_shared)(fh, &offset_out); }
static int c_get_byte_offset(file_t fh) { return FN(get_byte_offset)(fh, 0, &offset_out); }
static int c_get_view(file_t fh) { return FN(get_view)(fh, &offset_out, &etype_out, &filetype_out, rep_out); }
static int c_get_type_extent(file_t fh) { return FN(get_type_extent)(fh, MPI_INT, &aint_out); }
#if LARGE_FORMS
static int c_get_type_extent_c(file_t fh) { return FN(get_type_extent_c)(fh, MPI_INT, &count_out); }
#endif
static int c_set_size(file_t fh) { return FN(set_size)(fh, 0); }
static int c_preallocate(file_t fh) { return FN(preallocate)(fh, 0); }
static int c_set_info(file_t fh) { return FN(set_info)(fh, MPI_INFO_NULL); }
static int c_set_view(file_t fh) { return FN(set_view)(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL); }
static int c_seek(file_t fh) { return FN(seek)(fh, 0, MPI_SEEK_SET); }
static int c_seek_shared(file_t fh) { return FN(seek_shared)(fh, 0, MPI_SEEK_SET); }
static int c_sync(file_t fh) { return FN(sync)(fh); }
static int c_set_atomicity(file_t fh) { return FN(set_atomicity)(fh, 0); }
static int c_close(file_t fh) { return FN(close)(&fh); }
static int c_call_errhandler(file_t fh) { return FN(call_errhandler)(fh, MPI_ERR_OTHER); }

static const struct {
    const char *name;
    int (*call)(file_t fh);
} handled[] = {
    {"get_size", c_get_size}, {"get_group", c_get_group}, {"get_amode", c_get_amode}, {"get_info", c_get_info},
    {"get_atomicity", c_get_atomicity}, {"get_position", c_get_position},
    {"get_position_shared", c_get_position_shared}, {"get_byte_offset", c_get_byte_offset},
    {"get_view", c_get_view}, {"get_type_extent", c_get_type_extent},
#if LARGE_FORMS
    {"get_type_extent_c", c_get_type_extent_c},
#endif
    {"set_size", c_set_size}, {"preallocate", c_preallocate}, {"set_info", c_set_info}, {"set_view", c_set_view},
    {"seek", c_seek}, {"seek_shared", c_seek_shared}, {"sync", c_sync}, {"set_atomicity", c_set_atomicity},
    {"close", c_close},
};

static void null_outputs(void)
{
    CASE("get_size", "NULL output", ALL, MPI_ERR_ARG, FN(get_size)(rw, NULL));
    CASE("get_group", "NULL output", ALL, MPI_ERR_ARG, FN(get_group)(rw, NULL));
    CASE("get_amode", "NULL output", ALL, MPI_ERR_ARG, FN(get_amode)(rw, NULL));
    CASE("get_info", "NULL output", ALL, MPI_ERR_ARG, FN(get_info)(rw, NULL));
    CASE("get_atomicity", "NULL output", ALL, MPI_ERR_ARG, FN(get_atomicity)(rw, NULL));
    CASE("get_position", "NULL output", ALL, MPI_ERR_ARG, FN(get_position)(rw, NULL));
    CASE("get_position_shared", "NULL output", ALL, MPI_ERR_ARG, FN(get_position_shared)(rw, NULL));
    CASE("get_byte_offset", "NULL output", ALL, MPI_ERR_ARG, FN(get_byte_offset)(rw, 0, NULL));
    CASE("get_view", "NULL output", ALL, MPI_ERR_ARG, FN(get_view)(rw, NULL, &etype_out, &filetype_out, rep_out));
    CASE("get_type_extent", "NULL output", ALL, MPI_ERR_ARG, FN(get_type_extent)(rw, MPI_INT, NULL));
#if LARGE_FORMS
    CASE("get_type_extent_c", "NULL output", ALL, MPI_ERR_ARG, FN(get_type_extent_c)(rw, MPI_INT, NULL));
#endif
    CASE("get_errhandler", "NULL output", ALL, MPI_ERR_ARG, FN(get_errhandler)(rw, NULL));
    CASE("create_errhandler", "NULL output", ALL, MPI_ERR_ARG, FN(create_errhandler)(NULL, NULL));
    CASE("close", "NULL argument", ALL, MPI_ERR_ARG, FN(close)(NULL));
    int len = 0;
    char text[MPI_MAX_ERROR_STRING];
    CASE("Error_string", "NULL output", ALL, MPI_ERR_ARG, error_string(MPI_ERR_OTHER, NULL, &len));
    CASE("Error_string", "NULL length", ALL, MPI_ERR_ARG, error_string(MPI_ERR_OTHER, text, NULL));
    CASE("open", "NULL output", ALL, MPI_ERR_ARG, FN(open)(MPI_COMM_WORLD, dir, MPI_MODE_RDONLY, MPI_INFO_NULL, NULL));
}

static void offsets_and_sizes(void)
{
    CASE("get_byte_offset", "negative offset", ALL, MPI_ERR_ARG, FN(get_byte_offset)(rw, -1, &offset_out));
    CASE("get_byte_offset", "overflowing offset", ALL, MPI_ERR_ARG, FN(get_byte_offset)(rw, INT64_MAX, &offset_out));
    CASE("seek", "bad whence", ALL, MPI_ERR_ARG, FN(seek)(rw, 0, 12345));
    CASE("seek", "negative offset", ALL, MPI_ERR_ARG, FN(seek)(rw, -1, MPI_SEEK_SET));
    CASE("seek", "overflowing offset", ALL, MPI_ERR_ARG, FN(seek)(rw, INT64_MAX, MPI_SEEK_END));
    CASE("seek_shared", "bad whence", ALL, MPI_ERR_ARG, FN(seek_shared)(rw, 0, 12345));
    CASE("seek_shared", "bad whence on one rank", last, MPI_ERR_ARG,
         FN(seek_shared)(rw, 0, bad_here(last) ? 12345 : MPI_SEEK_SET));
    CASE("seek_shared", "negative offset", ALL, MPI_ERR_ARG, FN(seek_shared)(rw, -1, MPI_SEEK_SET));
    CASE("seek_shared", "negative offset on one rank", last, MPI_ERR_ARG,
         FN(seek_shared)(rw, bad_here(last) ? -1 : 0, MPI_SEEK_SET));
    CASE("seek_shared", "overflowing offset", ALL, MPI_ERR_ARG, FN(seek_shared)(rw, INT64_MAX, MPI_SEEK_END));
    CASE("set_size", "negative size", ALL, MPI_ERR_ARG, FN(set_size)(rw, -1));
    CASE("set_size", "negative size on one rank", last, MPI_ERR_ARG, FN(set_size)(rw, bad_here(last) ? -1 : 0));
    CASE("set_size", "wrong access mode", ALL, MPI_ERR_READ_ONLY, FN(set_size)(ro, 0));
    CASE("preallocate", "negative size", ALL, MPI_ERR_ARG, FN(preallocate)(rw, -1));
    CASE("preallocate", "negative size on one rank", last, MPI_ERR_ARG, FN(preallocate)(rw, bad_here(last) ? -1 : 0));
    CASE("preallocate", "wrong access mode", ALL, MPI_ERR_READ_ONLY, FN(preallocate)(ro, 0));
}

static int view(file_t fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *rep)
{
    return FN(set_view)(fh, disp, etype, filetype, rep, MPI_INFO_NULL);
}

static void views_and_types(void)
{
    const char *f = "set_view";
    CASE(f, "MPI_DATATYPE_NULL etype", ALL, MPI_ERR_TYPE, view(rw, 0, MPI_DATATYPE_NULL, MPI_BYTE, "native"));
    CASE(f, "MPI_DATATYPE_NULL filetype", ALL, MPI_ERR_TYPE, view(rw, 0, MPI_BYTE, MPI_DATATYPE_NULL, "native"));
    CASE(f, "uncommitted etype", ALL, MPI_ERR_TYPE, view(rw, 0, loose, loose, "native"));
    CASE(f, "uncommitted filetype", ALL, MPI_ERR_TYPE, view(rw, 0, MPI_INT, loose, "native"));
    CASE(f, "uncommitted filetype on one rank", last, MPI_ERR_TYPE,
         view(rw, 0, MPI_INT, bad_here(last) ? loose : MPI_INT, "native"));
    CASE(f, "negative displacement", ALL, MPI_ERR_ARG, view(rw, -5, MPI_BYTE, MPI_BYTE, "native"));
    CASE(f, "negative displacement on one rank", last, MPI_ERR_ARG,
         view(rw, bad_here(last) ? -5 : 0, MPI_BYTE, MPI_BYTE, "native"));
    CASE(f, "unknown datarep", ALL, MPI_ERR_UNSUPPORTED_DATAREP, view(rw, 0, MPI_BYTE, MPI_BYTE, "nonsense"));
    CASE(f, "NULL datarep", ALL, MPI_ERR_ARG, view(rw, 0, MPI_BYTE, MPI_BYTE, NULL));
    CASE(f, "filetype not made of etypes", ALL, MPI_ERR_IO, view(rw, 0, MPI_INT, MPI_SHORT, "native"));
    CASE("get_type_extent", "MPI_DATATYPE_NULL", ALL, MPI_ERR_TYPE,
         FN(get_type_extent)(rw, MPI_DATATYPE_NULL, &aint_out));
#if LARGE_FORMS
    CASE("get_type_extent_c", "MPI_DATATYPE_NULL", ALL, MPI_ERR_TYPE,
         FN(get_type_extent_c)(rw, MPI_DATATYPE_NULL, &count_out));
#endif
}

/* Offsets that overflow inside view navigation (issue 13 item 2): a
 * filetype extent of 2^40 reached at etype 2^24, a displacement near
 * INT64_MAX. They once wrote at byte 0 and succeeded. */
static void view_overflows(void)
{
    MPI_Datatype huge;
    MPI_Status status;
    MPI_Type_create_resized(MPI_BYTE, 0, (MPI_Aint)1 << 40, &huge);
    MPI_Type_commit(&huge);
    must(view(rw, 0, MPI_BYTE, huge, "native"), "set_view");
    MPI_Offset far = (MPI_Offset)1 << 24; /* times 2^40 bytes per filetype */
    CASE("get_byte_offset", "offset overflowing the view (item 2)", ALL, MPI_ERR_ARG,
         FN(get_byte_offset)(rw, far, &offset_out));
    CASE("write_at", "offset overflowing the view (item 2)", ALL, MPI_ERR_ARG,
         FN(write_at)(rw, far, buf, 1, MPI_BYTE, &status));
    must(view(rw, 0, MPI_BYTE, MPI_BYTE, "native"), "set_view");
    CASE("set_view", "overflowing displacement (item 2)", ALL, MPI_ERR_ARG,
         view(rw, INT64_MAX - 2, MPI_BYTE, MPI_BYTE, "native"));
    must(view(rw, 0, MPI_BYTE, MPI_BYTE, "native"), "set_view");
    MPI_Type_free(&huge);
}

static file_t opened;

static int open_(MPI_Comm comm, const char *path, int amode)
{
    return FN(open)(comm, path, amode, MPI_INFO_NULL, &opened);
}

static void opens(void)
{
    char missing[600];
    snprintf(missing, sizeof missing, "%s/missing", dir);
    CASE("open", "MPI_COMM_NULL", ALL, MPI_ERR_COMM, open_(MPI_COMM_NULL, missing, MPI_MODE_RDONLY));
    CASE("open", "NULL file name", ALL, MPI_ERR_BAD_FILE, open_(MPI_COMM_WORLD, NULL, MPI_MODE_RDONLY));
    CASE("open", "empty file name", ALL, MPI_ERR_BAD_FILE, open_(MPI_COMM_WORLD, "", MPI_MODE_RDONLY));
    CASE("open", "missing file", ALL, MPI_ERR_NO_SUCH_FILE, open_(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY));
    CASE("open", "bad amode (none)", ALL, MPI_ERR_AMODE, open_(MPI_COMM_WORLD, missing, 0));
    CASE("open", "bad amode (RDONLY|CREATE)", ALL, MPI_ERR_AMODE,
         open_(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY | MPI_MODE_CREATE));
    CASE("open", "bad amode (unknown bits)", ALL, MPI_ERR_AMODE,
         open_(MPI_COMM_WORLD, missing, MPI_MODE_RDWR | (1 << 30)));
    CASE("open", "amode differing across ranks (CREATE)", ALL, MPI_ERR_AMODE,
         open_(MPI_COMM_WORLD, missing, MPI_MODE_RDWR | (bad_here(last) ? MPI_MODE_CREATE : 0)));
    CASE("open", "amode differing across ranks (access)", ALL, MPI_ERR_AMODE,
         open_(MPI_COMM_WORLD, missing, bad_here(last) ? MPI_MODE_RDONLY : MPI_MODE_RDWR | MPI_MODE_CREATE));
    CASE("open", "bad amode on one rank", last, MPI_ERR_AMODE,
         open_(MPI_COMM_WORLD, missing, bad_here(last) ? MPI_MODE_RDONLY | MPI_MODE_EXCL : MPI_MODE_RDONLY));
    arm("open", "no file left behind by the failed opens");
    expect_value("open", "no file left behind by the failed opens", access(missing, F_OK) != 0);
    CASE("delete", "NULL file name", ALL, MPI_ERR_BAD_FILE, FN(delete)(NULL, MPI_INFO_NULL));
    CASE("delete", "empty file name", ALL, MPI_ERR_BAD_FILE, FN(delete)("", MPI_INFO_NULL));
    CASE("delete", "missing file", ALL, MPI_ERR_NO_SUCH_FILE, FN(delete)(missing, MPI_INFO_NULL));
}

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
}

static void errhandlers_and_handles(void)
{
    MPI_Errhandler eh, comm_eh;
    MPI_Comm_create_errhandler(comm_handler, &comm_eh);
    CASE("set_errhandler", "garbage handle", ALL, MPI_ERR_FILE, FN(set_errhandler)(GARBAGE, MPI_ERRORS_RETURN));
    CASE("set_errhandler", "stale handle (after close)", ALL, MPI_ERR_FILE,
         FN(set_errhandler)(stale, MPI_ERRORS_RETURN));
    CASE("set_errhandler", "communicator error handler", ALL, MPI_ERR_ARG, FN(set_errhandler)(rw, comm_eh));
    CASE("get_errhandler", "garbage handle", ALL, MPI_ERR_FILE, FN(get_errhandler)(GARBAGE, &eh));
    CASE("get_errhandler", "stale handle (after close)", ALL, MPI_ERR_FILE, FN(get_errhandler)(stale, &eh));
    CASE("call_errhandler", "garbage handle", ALL, MPI_ERR_FILE, c_call_errhandler(GARBAGE));
    CASE("call_errhandler", "stale handle (after close)", ALL, MPI_ERR_FILE, c_call_errhandler(stale));
    MPI_Errhandler_free(&comm_eh);
    arm("c2f", "garbage handle");
    expect_value("c2f", "garbage handle", FN(c2f)(GARBAGE) == 0);
    arm("c2f", "stale handle (after close)");
    expect_value("c2f", "stale handle (after close)", FN(c2f)(stale) == 0);
    arm("f2c", "unknown index");
    expect_value("f2c", "unknown index", FN(f2c)(12345) == NULL_FILE && FN(f2c)(-7) == NULL_FILE);
}

static int extent_fn(MPI_Datatype type, MPI_Aint *extent, void *state)
{
    (void)state;
    MPI_Aint lb;
    return MPI_Type_get_extent(type, &lb, extent);
}

static void datareps(void)
{
#ifdef MATRIX_DROPIN
#define REGISTER MPI_Register_datarep
#else
#define REGISTER ferry_Register_datarep
#endif
    CASE("Register_datarep", "predefined name", ALL, MPI_ERR_DUP_DATAREP,
         REGISTER("native", NULL, NULL, extent_fn, NULL));
    CASE("Register_datarep", "NULL name", ALL, MPI_ERR_ARG, REGISTER(NULL, NULL, NULL, extent_fn, NULL));
    CASE("Register_datarep", "NULL extent function", ALL, MPI_ERR_ARG, REGISTER("matrix", NULL, NULL, NULL, NULL));
}

/* ---- set-up ------------------------------------------------------------ */

static file_t open_file(const char *name, int amode)
{
    char path[600];
    file_t fh;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    must(FN(open)(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh), path);
    return fh;
}

static void set_up(void)
{
    if (rank == 0) {
        const char *base = getenv("FERRY_TEST_DIR");
        snprintf(dir, sizeof dir, "%s/ferry-matrix-XXXXXX", base ? base : "/tmp");
        if (!mkdtemp(dir)) MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    memset(buf, 'x', sizeof buf);
    memset(other, 'y', sizeof other);
    memset(garbage_bytes, 0x5a, sizeof garbage_bytes);
    MPI_Type_contiguous(2, MPI_INT, &loose);
    rw = open_file("rw", MPI_MODE_CREATE | MPI_MODE_RDWR);
    must(FN(write_at_all)(rw, (MPI_Offset)rank * BUF, buf, BUF, MPI_BYTE, MPI_STATUS_IGNORE), "write_at_all");
    ro = open_file("rw", MPI_MODE_RDONLY);
    wo = open_file("wo", MPI_MODE_CREATE | MPI_MODE_WRONLY);
    file_t closed = open_file("stale", MPI_MODE_CREATE | MPI_MODE_RDWR);
    stale = closed;
    must(FN(close)(&closed), "close");
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    must(FN(get_info)(rw, &info), "get_info");
    MPI_Info_get(info, "ferry_version", MPI_MAX_INFO_VAL, value, &flag);
    MPI_Info_free(&info);
    if (!flag) {
        fprintf(stderr, "matrix: the files are not served by ferry (is libferry-mpiio.so preloaded?)\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Distinct names in every function's class list. */
static int distinct_classes(void)
{
    const char *seen[MAX_FUNCTIONS * 4];
    int n = 0;
    for (int f = 0; f < nfunctions; f++)
        for (int c = 0; c < tally[f].nclasses; c++) {
            int known = 0;
            for (int i = 0; i < n && !known; i++) known = strcmp(seen[i], tally[f].classes[c]) == 0;
            if (!known && n < MAX_FUNCTIONS * 4) seen[n++] = tally[f].classes[c];
        }
    return n;
}

static void report(void)
{
    if (rank != 0) return;
    printf("matrix %s: function: cases: bad-argument classes\n", VARIANT);
    for (int f = 0; f < nfunctions; f++) {
        printf("  %s: %d:", tally[f].function, tally[f].cases);
        for (int c = 0; c < tally[f].nclasses; c++) printf("%s %s", c ? "," : "", tally[f].classes[c]);
        printf("\n");
    }
    printf("matrix %s: %d functions, %d cases (one per function and class), %d distinct classes, %d ranks: %d silent "
           "successes, %d wrong classes, %d messages not naming the culprit rank, 0 crashes, 0 hangs\n",
           VARIANT, nfunctions, ncases, distinct_classes(), size, nsilent, nwrong, nunnamed);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    last = size - 1;
    signal(SIGALRM, on_alarm);
    set_up();
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        access_everywhere(&forms[i]);
        if (forms[i].collective && size > 1) access_one_rank(&forms[i]);
    }
    for (size_t i = 0; i < sizeof splits / sizeof splits[0] && size > 1; i++) split_cases(&splits[i]);
    for (size_t i = 0; i < sizeof handled / sizeof handled[0]; i++) handle_cases(handled[i].name, handled[i].call);
    null_outputs();
    offsets_and_sizes();
    views_and_types();
    opens();
    errhandlers_and_handles();
    datareps();
    view_overflows();
    report();
    must(FN(close)(&rw), "close");
    must(FN(close)(&ro), "close");
    must(FN(close)(&wo), "close");
    MPI_Type_free(&loose);
    int failed = nsilent + nwrong + nunnamed;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "matrix: could not remove %s\n", dir);
        printf(failed ? "matrix: FAILED\n" : "matrix: passed\n");
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}

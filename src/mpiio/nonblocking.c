/*
 * Nonblocking data access (MPI-3.1 13.4.2-13.4.5): iread, iwrite,
 * iread_at, iwrite_at, iread_shared, iwrite_shared and the nonblocking
 * collectives iread_all, iwrite_all, iread_at_all, iwrite_at_all.
 *
 * Each call becomes an explicit-offset transfer run by async/: in the
 * background at MPI_THREAD_MULTIPLE, at initiation below it (async.h). The
 * individual file pointer advances at initiation, by the request's full
 * size for writes and, for reads, by what lies before the end of file at
 * initiation (what a blocking read would move it by, unless another
 * request changes the file's size meanwhile); argument errors of an
 * independent call are returned at once and leave the pointer alone.
 * iread_shared/iwrite_shared claim their place at the shared file pointer
 * at initiation (one atomic, sharedfp/; by the full size, as the blocking
 * forms do) and then run as an explicit-offset request at that place. A collective call whose arguments fail on
 * one rank returns the error at once on that rank, which still takes part
 * (in the background, without a request) so that the other ranks' requests
 * complete with the agreed error instead of waiting.
 *
 * The shadow. A background transfer runs on a copy of the file struct
 * taken at initiation, changed where sharing would be unsafe:
 *   - comm: for collectives, the file's background communicator
 *     (ferry__async_comm), so ferry__coll_* (which use fh->comm) never mix
 *     their messages with blocking collectives on fh->comm;
 *   - stats: zeroed; what the transfer counts is handed back to the file
 *     (ferry__async_add_stats) and folded in on the application thread.
 *     The file-system layer counts into the file's own counters through
 *     fs->stats (a pointer into the real struct): those few additions come
 *     from the worker (counts may be lost when the application does I/O on
 *     the same file at the same instant);
 *   - staging, sieve: empty slots of its own (the slots hold a buffer by
 *     value: two copies of one slot would both own it), freed at the end;
 *   - coll (coll/'s per-file state): independent transfers get none;
 *     collectives take the file's at run time and hand it back, which is
 *     safe because a file's background collectives run one at a time and
 *     blocking collectives, set_view, set_info and close drain them first;
 *   - async: NULL, so nothing run on the shadow waits for itself.
 * The rest (view, hints, fs, filename, layout) is only read, and stays
 * valid because every call that changes or frees it drains first.
 */
#include <stdio.h>
#include <string.h>

#include "async/async.h"
#include "mpiio/access.h"
#include "mpiio/mpiio.h"

typedef struct background {
    ferry_File file;          /* the caller's handle */
    struct ferry_file shadow; /* what a background transfer runs on */
    ferry_File target;        /* &shadow in the background, file at initiation */
    ferry__access_t call;     /* the explicit-offset form of the caller's call */
    MPI_Offset offset;        /* in etypes */
    void *buf;
    MPI_Count count;
    MPI_Datatype type; /* the caller's, or our duplicate (type_owned) */
    int type_owned;
    int local_cls;  /* a collective rank's own argument error: it only takes part */
    char *message;  /* its message, for the agreement to broadcast; owned */
} background_t;

static int run(void *arg, MPI_Count *bytes)
{
    background_t *b = arg;
    ferry_File fh = b->target;
    if (b->call.collective && fh == &b->shadow) fh->coll = b->file->coll;
    if (b->local_cls) ferry__error_set(b->local_cls, "%s", b->message ? b->message : "");
    int cls = ferry__access_transfer(&b->call, fh, b->local_cls, b->offset, b->buf, b->count, b->type, bytes);
    if (cls == 0) cls = ferry__memory_bytes(fh, b->type, b->count, *bytes, bytes);
    if (fh == &b->shadow) {
        if (b->call.collective) b->file->coll = fh->coll;
        ferry__async_add_stats(b->file, &fh->stats);
    }
    return cls;
}

static void release(void *arg)
{
    background_t *b = arg;
    ferry__scratch_release(&b->shadow.staging);
    ferry__scratch_release(&b->shadow.sieve);
    if (b->type_owned) MPI_Type_free(&b->type);
    ferry__free(b->message);
    ferry__free(b);
}

static void shadow_init(struct ferry_file *shadow, ferry_File fh, MPI_Comm comm)
{
    *shadow = *fh;
    shadow->comm = comm;
    shadow->async = NULL;
    shadow->coll = NULL;
    memset(&shadow->stats, 0, sizeof shadow->stats);
    memset(&shadow->staging, 0, sizeof shadow->staging);
    memset(&shadow->sieve, 0, sizeof shadow->sieve);
    shadow->split.kind = NULL;
    shadow->split.misused_begin = NULL;
}

/* The caller may free a derived datatype while its request is pending. */
static int keep_type(background_t *b, MPI_Datatype type)
{
    int ints, addrs, types, combiner;
    b->type = type;
    if (MPI_Type_get_envelope(type, &ints, &addrs, &types, &combiner) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: %s '%s': invalid datatype", b->call.name, b->file->filename);
    if (combiner == MPI_COMBINER_NAMED) return 0;
    if (MPI_Type_dup(type, &b->type) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: %s '%s': cannot keep the datatype", b->call.name,
                                b->file->filename);
    b->type_owned = 1;
    return 0;
}

/* The individual pointer's value for this call, advanced past the data it
 * will access (MPI-3.1 13.4.3): its full size, but for reads only as far as
 * the end of file as of initiation, as a blocking read moves it. */
static int claim_individual(const ferry__access_t *call, ferry_File fh, MPI_Offset skip, MPI_Count count,
                            MPI_Datatype type, MPI_Offset *offset)
{
    MPI_Count size = 0;
    MPI_Offset file_size = 0, below = 0;
    FERRY_TRY(ferry__datarep_size(fh->view.rep, type, &size));
    MPI_Offset bytes = count * size;
    if (!call->write) {
        FERRY_TRY(ferry__fs_size(fh->fs, &file_size));
        FERRY_TRY(ferry__view_stream_below(&fh->view, file_size, &below));
        if (below - skip < bytes) bytes = below > skip ? below - skip : 0;
    }
    *offset = fh->position;
    fh->position += bytes / fh->view.etype_size;
    return 0;
}

/* Everything the operation needs, checked; for a collective with failed
 * arguments, what it needs to take part. comm: the background
 * communicator, MPI_COMM_NULL at initiation. */
static int prepare(background_t *b, const ferry__access_t *call, MPI_Offset offset, MPI_Comm comm)
{
    ferry_File fh = b->file;
    MPI_Offset skip = 0;
    int cls = call->collective ? ferry__split_misuse(fh, 0, call->name) : 0;
    if (cls == 0) cls = ferry__check_memory(fh, b->buf, b->count, b->type, call->name);
    if (cls == 0)
        cls = call->shared ? ferry__access_shared_offset(call, fh, 0, b->count, b->type, &offset)
                           : ferry__access_check(call, fh, offset, b->count, b->type, &skip);
    if (cls == 0) cls = keep_type(b, b->type);
    if (cls == 0 && call->individual) cls = claim_individual(call, fh, skip, b->count, b->type, &offset);
    b->offset = offset;
    if (comm == MPI_COMM_NULL && call->shared) comm = fh->comm;
    if (comm != MPI_COMM_NULL) {
        shadow_init(&b->shadow, fh, comm);
        b->target = &b->shadow;
    }
    /* The claimed offset is an explicit one, which a MPI_MODE_SEQUENTIAL
     * file would refuse; the checks that apply were made above. */
    if (call->shared) b->shadow.amode &= ~MPI_MODE_SEQUENTIAL;
    if (cls != 0 && call->collective) {
        b->local_cls = cls;
        b->message = ferry__strdup(ferry__error_message());
        b->buf = NULL, b->count = 0, b->type = MPI_BYTE; /* moves nothing */
    }
    return cls;
}

/* A collective rank that cannot even build its operation still takes part,
 * in initiation order, on the communicator the others use. */
static int take_part_now(const ferry__access_t *call, ferry_File fh, MPI_Comm comm, int cls)
{
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", ferry__error_message());
    struct ferry_file shadow;
    shadow_init(&shadow, fh, comm);
    ferry__async_drain(fh);
    MPI_Count done;
    ferry__access_transfer(call, &shadow, cls, 0, NULL, 0, MPI_BYTE, &done);
    return ferry__error_set(cls, "%s", saved);
}

static int start(const ferry__access_t *call, ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                 MPI_Datatype type, MPI_Request *request)
{
    ferry__access_t explicit_call = *call;
    explicit_call.individual = 0;
    explicit_call.shared = 0;
    MPI_Comm comm = MPI_COMM_NULL;
    if (ferry__async_background()) {
        if (!call->collective) comm = fh->comm;
        else FERRY_TRY(ferry__async_comm(fh, &comm));
    }
    background_t *b = ferry__calloc(1, sizeof *b);
    if (!b) {
        int cls = ferry__error_set(MPI_ERR_NO_MEM, "ferry: %s '%s': out of memory", call->name, fh->filename);
        if (!call->collective) return cls;
        return take_part_now(&explicit_call, fh, comm != MPI_COMM_NULL ? comm : fh->comm, cls);
    }
    *b = (background_t){.file = fh, .target = fh, .call = explicit_call, .buf = buf, .count = count, .type = type};
    int cls = prepare(b, call, offset, comm);
    if (cls != 0 && !call->collective) {
        release(b);
        return cls;
    }
    char saved[1024] = "";
    if (cls != 0) snprintf(saved, sizeof saved, "%s", ferry__error_message());
    ferry__async_op_t op = {run, release, ferry__status_set_bytes, b};
    ferry__async_lane_t lane = call->collective ? FERRY_ASYNC_COLLECTIVE : FERRY_ASYNC_INDEPENDENT;
    int started = ferry__async_start(fh, lane, &op, cls ? NULL : request);
    return cls ? ferry__error_set(cls, "%s", saved) : started;
}

static int initiate(const ferry__access_t *call, ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                    MPI_Datatype type, MPI_Request *request)
{
    int cls = ferry__check_file(fh, call->name);
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!request) return ferry__error_return(fh, ferry__error_set(MPI_ERR_REQUEST, "ferry: %s: NULL request", call->name));
    *request = MPI_REQUEST_NULL;
    return ferry__error_return(fh, start(call, fh, offset, buf, count, type, request));
}

#define NONBLOCKING(name_, write_, individual_, collective_)                                                       \
    static const ferry__access_t name_##_call = {                                                                \
        .name = #name_, .write = write_, .individual = individual_, .collective = collective_};

NONBLOCKING(iread_at, 0, 0, 0)
NONBLOCKING(iwrite_at, 1, 0, 0)
NONBLOCKING(iread, 0, 1, 0)
NONBLOCKING(iwrite, 1, 1, 0)
NONBLOCKING(iread_at_all, 0, 0, 1)
NONBLOCKING(iwrite_at_all, 1, 0, 1)
NONBLOCKING(iread_all, 0, 1, 1)
NONBLOCKING(iwrite_all, 1, 1, 1)
static const ferry__access_t iread_shared_call = {.name = "iread_shared", .write = 0, .shared = 1};
static const ferry__access_t iwrite_shared_call = {.name = "iwrite_shared", .write = 1, .shared = 1};

int ferry_File_iread_at_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Request *request)
{
    return initiate(&iread_at_call, fh, offset, buf, count, datatype, request);
}
int ferry_File_iwrite_at_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Request *request)
{
    return initiate(&iwrite_at_call, fh, offset, (void *)buf, count, datatype, request);
}
int ferry_File_iread_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return initiate(&iread_call, fh, 0, buf, count, datatype, request);
}
int ferry_File_iwrite_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    return initiate(&iwrite_call, fh, 0, (void *)buf, count, datatype, request);
}
int ferry_File_iread_at_all_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Request *request)
{
    return initiate(&iread_at_all_call, fh, offset, buf, count, datatype, request);
}
int ferry_File_iwrite_at_all_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                               MPI_Datatype datatype, MPI_Request *request)
{
    return initiate(&iwrite_at_all_call, fh, offset, (void *)buf, count, datatype, request);
}
int ferry_File_iread_all_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return initiate(&iread_all_call, fh, 0, buf, count, datatype, request);
}
int ferry_File_iwrite_all_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Request *request)
{
    return initiate(&iwrite_all_call, fh, 0, (void *)buf, count, datatype, request);
}
int ferry_File_iread_shared_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return initiate(&iread_shared_call, fh, 0, buf, count, datatype, request);
}
int ferry_File_iwrite_shared_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                               MPI_Request *request)
{
    return initiate(&iwrite_shared_call, fh, 0, (void *)buf, count, datatype, request);
}

/* The int-count forms are the large-count forms with a smaller count. */
int ferry_File_iread_at(ferry_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    return ferry_File_iread_at_c(fh, offset, buf, count, datatype, request);
}
int ferry_File_iwrite_at(ferry_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                         MPI_Request *request)
{
    return ferry_File_iwrite_at_c(fh, offset, buf, count, datatype, request);
}
int ferry_File_iread(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return ferry_File_iread_c(fh, buf, count, datatype, request);
}
int ferry_File_iwrite(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return ferry_File_iwrite_c(fh, buf, count, datatype, request);
}
int ferry_File_iread_at_all(ferry_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                            MPI_Request *request)
{
    return ferry_File_iread_at_all_c(fh, offset, buf, count, datatype, request);
}
int ferry_File_iwrite_at_all(ferry_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                             MPI_Request *request)
{
    return ferry_File_iwrite_at_all_c(fh, offset, buf, count, datatype, request);
}
int ferry_File_iread_all(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return ferry_File_iread_all_c(fh, buf, count, datatype, request);
}
int ferry_File_iwrite_all(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return ferry_File_iwrite_all_c(fh, buf, count, datatype, request);
}
int ferry_File_iread_shared(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return ferry_File_iread_shared_c(fh, buf, count, datatype, request);
}
int ferry_File_iwrite_shared(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return ferry_File_iwrite_shared_c(fh, buf, count, datatype, request);
}

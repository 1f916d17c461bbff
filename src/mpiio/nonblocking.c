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
 * forms do) and then run as an explicit-offset request at that place. A
 * collective call whose arguments fail on one rank returns the error at once on that rank, which still takes part
 * (in the background, without a request) so that the other ranks' requests
 * complete with the agreed error instead of waiting.
 *
 * A request's context (request/request.h). Below MPI_THREAD_MULTIPLE a
 * request runs at initiation with its file's context. Otherwise it owns
 * one (also when async/ cannot queue it and runs it at once): the file's background communicator for collectives
 * (ferry__async_comm, so its messages never mix with blocking collectives
 * on fh->target.comm), counters of its own that async/ folds into the file on the
 * application thread, and scratch slots of its own freed with it. The
 * request is checked and its place (individual or shared pointer) claimed
 * at initiation, so the worker only moves data (ferry__access_move); the
 * request's target (the file as the data path sees it: view, hints...) is
 * the file's own, not a snapshot: it is only read there and stays valid
 * because every call that changes or frees it drains first, and coll/'s
 * per-file state is used by one collective at a time (a file's background
 * collectives run one at a time; blocking collectives drain them first).
 */
#include <stdio.h>
#include <string.h>

#include "async/async.h"
#include "mpiio/access.h"
#include "mpiio/mpiio.h"

typedef struct background {
    ferry__request_t req; /* checked, its place claimed: only the move is left */
    ferry__context_t ctx; /* req.ctx: the file's, or (own_context) the fields below */
    int own_context;
    ferry__stats_t stats;                 /* its own counters, folded into the file by async/ */
    ferry__scratch_slot_t staging, sieve; /* its own kept buffers, freed with it */
    int type_owned;                       /* req.type is our duplicate of the caller's */
    char *message; /* a collective rank's own argument error, for the agreement to broadcast; owned */
} background_t;

static int run(void *arg, MPI_Count *bytes)
{
    background_t *b = arg;
    ferry__request_t *req = &b->req;
    if (req->local_cls) ferry__error_set(req->local_cls, "%s", b->message ? b->message : "");
    int cls = ferry__access_move(req);
    if (cls == 0) cls = ferry__memory_bytes(req->fh, req->type, req->count, req->done, bytes);
    if (b->own_context) ferry__async_add_stats(req->fh, &b->stats);
    return cls;
}

static void release(void *arg)
{
    background_t *b = arg;
    ferry__scratch_release(&b->staging);
    ferry__scratch_release(&b->sieve);
    if (b->type_owned) MPI_Type_free(&b->req.type);
    ferry__free(b->message);
    ferry__free(b);
}

/* comm: the background communicator, MPI_COMM_NULL to run at initiation. */
static void set_context(background_t *b, MPI_Comm comm)
{
    b->own_context = comm != MPI_COMM_NULL;
    b->ctx = b->own_context ? (ferry__context_t){comm, &b->stats, &b->staging, &b->sieve}
                            : ferry__context_of_file(b->req.fh);
    b->req.ctx = &b->ctx;
}

/* The caller may free a derived datatype while its request is pending. */
static int keep_type(background_t *b)
{
    ferry__request_t *req = &b->req;
    int ints, addrs, types, combiner;
    if (MPI_Type_get_envelope(req->type, &ints, &addrs, &types, &combiner) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: %s '%s': invalid datatype", req->call->name,
                                req->fh->target.filename);
    if (combiner == MPI_COMBINER_NAMED) return 0;
    if (MPI_Type_dup(req->type, &req->type) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: %s '%s': cannot keep the datatype", req->call->name,
                                req->fh->target.filename);
    b->type_owned = 1;
    return 0;
}

/* Claims the individual pointer for this call, advanced past the data it
 * will access (MPI-3.1 13.4.3): its full size, but for reads only as far as
 * the end of file as of initiation, as a blocking read moves it. */
static int claim_individual(ferry__request_t *req)
{
    ferry_File fh = req->fh;
    MPI_Count size = 0;
    MPI_Offset file_size = 0, below = 0;
    FERRY_TRY(ferry__datarep_size(fh->target.view.rep, req->type, &size));
    MPI_Offset bytes = req->count * size;
    if (!req->call->write) {
        FERRY_TRY(ferry__fs_size(fh->target.fs, &file_size));
        FERRY_TRY(ferry__view_stream_below(&fh->target.view, file_size, &below));
        if (below - req->skip < bytes) bytes = below > req->skip ? below - req->skip : 0;
    }
    req->offset = fh->position;
    fh->position += bytes / fh->target.view.etype_size;
    return 0;
}

/* Everything the operation needs, checked, its place claimed; for a
 * collective with failed arguments, what it needs to take part. */
static int prepare(background_t *b, MPI_Comm comm)
{
    ferry__request_t *req = &b->req;
    const ferry__access_t *call = req->call;
    ferry_File fh = req->fh;
    int cls = call->collective ? ferry__split_misuse(fh, 0, call->name) : 0;
    if (cls == 0) cls = ferry__check_memory(fh, req->buf, req->count, req->type, call->name);
    if (cls == 0 && call->shared) cls = ferry__access_shared_offset(req);
    if (cls == 0) cls = ferry__access_check(req);
    if (cls == 0) cls = keep_type(b);
    if (cls == 0 && call->individual) cls = claim_individual(req);
    set_context(b, comm);
    if (cls != 0 && call->collective) {
        req->local_cls = cls;
        b->message = ferry__strdup(ferry__error_message());
        req->buf = NULL, req->count = 0; /* moves nothing */
        if (b->type_owned) MPI_Type_free(&req->type);
        b->type_owned = 0;
        req->type = MPI_BYTE;
    }
    return cls;
}

/* A collective rank that cannot even build its operation still takes part,
 * in initiation order, on the communicator the others use. */
static int take_part_now(const ferry__request_t *proto, MPI_Comm comm, int cls)
{
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", ferry__error_message());
    ferry__context_t ctx = ferry__context_of_file(proto->fh);
    ctx.comm = comm;
    ferry__request_t req = {.target = &proto->fh->target,
                            .fh = proto->fh,
                            .call = proto->call,
                            .type = MPI_BYTE,
                            .local_cls = cls,
                            .ctx = &ctx};
    ferry__async_drain(proto->fh);
    ferry__access_move(&req);
    return ferry__error_set(cls, "%s", saved);
}

static int start(const ferry__request_t *proto, MPI_Request *request)
{
    const ferry__access_t *call = proto->call;
    ferry_File fh = proto->fh;
    MPI_Comm comm = MPI_COMM_NULL;
    if (ferry__async_background()) {
        if (!call->collective) comm = fh->target.comm;
        else FERRY_TRY(ferry__async_comm(fh, &comm));
    }
    background_t *b = ferry__calloc(1, sizeof *b);
    if (!b) {
        int cls = ferry__error_set(MPI_ERR_NO_MEM, "ferry: %s '%s': out of memory", call->name, fh->target.filename);
        if (!call->collective) return cls;
        return take_part_now(proto, comm != MPI_COMM_NULL ? comm : fh->target.comm, cls);
    }
    b->req = *proto;
    b->req.target = &fh->target; /* the file is live: checked by initiate */
    int cls = prepare(b, comm);
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

static int initiate(const ferry__request_t *proto, MPI_Request *request)
{
    int cls = ferry__check_file(proto->fh, proto->call->name);
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!request)
        return ferry__error_return(proto->fh,
                                   ferry__error_set(MPI_ERR_REQUEST, "ferry: %s: NULL request", proto->call->name));
    *request = MPI_REQUEST_NULL;
    return ferry__error_return(proto->fh, start(proto, request));
}

int ferry_File_iread_at_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Request *request)
{
    return initiate(FERRY__REQUEST(FERRY_CALL_IREAD_AT, fh, offset, buf, count, datatype), request);
}
int ferry_File_iwrite_at_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Request *request)
{
    return initiate(FERRY__REQUEST(FERRY_CALL_IWRITE_AT, fh, offset, (void *)buf, count, datatype), request);
}
int ferry_File_iread_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return initiate(FERRY__REQUEST(FERRY_CALL_IREAD, fh, 0, buf, count, datatype), request);
}
int ferry_File_iwrite_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    return initiate(FERRY__REQUEST(FERRY_CALL_IWRITE, fh, 0, (void *)buf, count, datatype), request);
}
int ferry_File_iread_at_all_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Request *request)
{
    return initiate(FERRY__REQUEST(FERRY_CALL_IREAD_AT_ALL, fh, offset, buf, count, datatype), request);
}
int ferry_File_iwrite_at_all_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                               MPI_Datatype datatype, MPI_Request *request)
{
    return initiate(FERRY__REQUEST(FERRY_CALL_IWRITE_AT_ALL, fh, offset, (void *)buf, count, datatype), request);
}
int ferry_File_iread_all_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return initiate(FERRY__REQUEST(FERRY_CALL_IREAD_ALL, fh, 0, buf, count, datatype), request);
}
int ferry_File_iwrite_all_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Request *request)
{
    return initiate(FERRY__REQUEST(FERRY_CALL_IWRITE_ALL, fh, 0, (void *)buf, count, datatype), request);
}
int ferry_File_iread_shared_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return initiate(FERRY__REQUEST(FERRY_CALL_IREAD_SHARED, fh, 0, buf, count, datatype), request);
}
int ferry_File_iwrite_shared_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                               MPI_Request *request)
{
    return initiate(FERRY__REQUEST(FERRY_CALL_IWRITE_SHARED, fh, 0, (void *)buf, count, datatype), request);
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

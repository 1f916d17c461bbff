/*
 * Opening, closing and deleting files (MPI-3.1 13.2.1-13.2.3).
 *
 * Open is collective and all-or-nothing: with MPI_MODE_CREATE rank 0
 * creates the file first and the others open it once rank 0's outcome is
 * agreed; the call ends in one more agreement, and a rank that opened its
 * file when another failed closes it again, so every rank returns the same
 * success or failure and no rank keeps a half-open file; a file the failed
 * open created is removed again.
 */
#include <stdio.h>
#include <string.h>

#include "async/async.h"
#include "coll/coll.h"
#include "mpiio/mpiio.h"
#include "progress/progress.h"
#include "sharedfp/sharedfp.h"

enum {
    ACCESS_BITS = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR,
    KNOWN_BITS = ACCESS_BITS | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                 MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND,
};

static int check_amode(int amode, const char *filename)
{
    int access = amode & ACCESS_BITS;
    const char *why = NULL;
    if (amode & ~KNOWN_BITS) why = "unknown bits set";
    else if (access != MPI_MODE_RDONLY && access != MPI_MODE_WRONLY && access != MPI_MODE_RDWR)
        why = "exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR is required";
    else if (access == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        why = "MPI_MODE_CREATE and MPI_MODE_EXCL are not allowed with MPI_MODE_RDONLY";
    else if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL))
        why = "MPI_MODE_SEQUENTIAL is not allowed with MPI_MODE_RDWR";
    if (why) return ferry__error_set(MPI_ERR_AMODE, "ferry: open '%s': invalid amode 0x%x: %s", filename, amode, why);
    return 0;
}

static int check_open_args(const char *filename, int amode, ferry_File *fh)
{
    if (!fh) return ferry__error_set(MPI_ERR_ARG, "ferry: open: NULL file handle pointer");
    if (!filename) return ferry__error_set(MPI_ERR_BAD_FILE, "ferry: open: NULL file name");
    if (filename[0] == '\0') return ferry__error_set(MPI_ERR_BAD_FILE, "ferry: open: empty file name");
    return check_amode(amode, filename);
}

static int fs_flags(int amode, int creating)
{
    int flags = 0;
    if (amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR)) flags |= FERRY_FS_READ;
    if (amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)) flags |= FERRY_FS_WRITE;
    if (creating && (amode & MPI_MODE_CREATE)) flags |= FERRY_FS_CREATE;
    if (creating && (amode & MPI_MODE_EXCL)) flags |= FERRY_FS_EXCL;
    return flags;
}

/* Opens the file on this rank. A write-only file is opened for reading too
 * where permissions allow, so data sieving can read back the holes of its
 * windows (as ROMIO does); *readable says whether that worked. */
static int open_here(const char *filename, int amode, int creating, ferry__fs_file_t **fs, int *readable)
{
    int flags = fs_flags(amode, creating);
    *readable = (flags & FERRY_FS_READ) != 0;
    if (*readable) return ferry__fs_open(filename, flags, fs);
    int cls = ferry__fs_open(filename, flags | FERRY_FS_READ, fs);
    if (cls == 0) {
        *readable = 1;
        return 0;
    }
    if (cls != MPI_ERR_ACCESS) return cls;
    return ferry__fs_open(filename, flags, fs);
}

/* Collective: the first agreement of every open, after rank 0 created the
 * file (when its amode says so). Every rank takes part whatever its amode,
 * and learns rank 0's outcome and whether all ranks passed the same amode:
 * one that differs (the CREATE bit included, which decides who creates)
 * fails the open on every rank with MPI_ERR_AMODE. The shared pointer's
 * proposals ride along (plan->range: every rank learns their extremes). */
static int agree_amode(MPI_Comm comm, int local_cls, int amode, const char *filename, ferry__sharedfp_plan_t *plan,
                       int *same_name)
{
    /* The largest amode and the smallest one's complement, then the same of the proposals and of a
     * hash of the name (whether every rank named rank 0's file, which lost_after_create needs). */
    int64_t name = filename ? (int64_t)(ferry__develop_hash(filename, strlen(filename)) >> 1) : -1;
    int64_t range[6] = {amode, ~(int64_t)amode, plan->range[0], plan->range[1], name, ~name};
    int cls = ferry__error_agree_max(comm, local_cls, "open", range, 6);
    plan->range[0] = range[2];
    plan->range[1] = range[3];
    *same_name = range[4] == ~range[5];
    if (cls != 0 || range[0] == ~range[1]) return cls;
    return ferry__error_set(MPI_ERR_AMODE,
                            "ferry: open '%s': amode differs between ranks (values from 0x%llx to 0x%llx; this "
                            "rank passed 0x%x): MPI requires the same amode on every rank",
                            filename, (unsigned long long)~range[1], (unsigned long long)range[0], amode);
}

/* What open_everywhere makes on this rank. develop: in, this rank's wish;
 * out, ORed over ranks. */
typedef struct opening {
    ferry__fs_file_t *fs;
    int readable;
    int created; /* rank 0 made the file: a failed open removes it again */
    int develop;
    ferry__sharedfp_plan_t plan; /* proposed on every rank before the first agreement */
    ferry__sharedfp_t *shared;   /* made from the plan after it */
} opening_t;

/* Rank 0's open with MPI_MODE_CREATE: exclusive first, so that it knows
 * whether this open made the file. */
static int create_here(const char *filename, int amode, opening_t *o)
{
    int cls = open_here(filename, amode | MPI_MODE_EXCL, 1, &o->fs, &o->readable);
    o->created = cls == 0;
    if (cls == MPI_ERR_FILE_EXISTS && !(amode & MPI_MODE_EXCL))
        cls = open_here(filename, amode, 1, &o->fs, &o->readable);
    return cls;
}

/* Collective, after a failed open: every rank drops what it made, and the
 * file rank 0 created (all or nothing) is gone before any rank returns. */
static void undo_open(MPI_Comm comm, const char *filename, opening_t *o)
{
    ferry__sharedfp_withdraw(&o->plan); /* a no-op once the pointer is made */
    ferry__sharedfp_free(comm, &o->shared);
    if (o->fs != NULL) ferry__fs_close(o->fs);
    o->fs = NULL;
    if (o->created) ferry__fs_remove(filename);
    ferry__progress_barrier(comm);
}

/* Rank 0 created the file (the agreement said so) and every rank named it,
 * yet this rank's file system does not show it: not a wrong name but lost storage (a storage
 * server died and took the file's only copy: GlusterFS then answers ENOENT)
 * or a node that sees another namespace. MPI_ERR_IO, as for any other lost
 * server; MPI_ERR_NO_SUCH_FILE would tell the program its name was wrong. */
static int lost_after_create(const char *filename)
{
    char cause[512];
    snprintf(cause, sizeof cause, "%s", ferry__error_message());
    return ferry__error_set(MPI_ERR_IO,
                            "ferry: open '%s': rank 0 created the file but this rank does not find it "
                            "(the storage lost it, or this node sees another file system): %s",
                            filename, cause);
}

/* Collective over comm (a private duplicate): opens the file on every rank
 * or on none. Rank 0 alone creates it. The shared file pointer (a slot of
 * the communicator's pool, or a window) is made on every rank before the
 * last agreement, which publishes its initial value (end of file for
 * APPEND). */
static int open_everywhere(MPI_Comm comm, int local_cls, const char *filename, int amode, ferry_File file,
                           opening_t *o)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0 && local_cls == 0 && (amode & MPI_MODE_CREATE)) local_cls = create_here(filename, amode, o);
    int same_name = 0;
    local_cls = agree_amode(comm, local_cls, amode, filename, &o->plan, &same_name);
    if (local_cls != 0) { /* agreed: every rank stops here, before the pointer is made */
        undo_open(comm, filename, o);
        return local_cls;
    }
    if (o->fs == NULL) local_cls = open_here(filename, amode, 0, &o->fs, &o->readable);
    if (local_cls == MPI_ERR_NO_SUCH_FILE && (amode & MPI_MODE_CREATE) && same_name)
        local_cls = lost_after_create(filename);
    /* What the file needs from the file system, checked in the same agreement. */
    if (local_cls == 0) local_cls = ferry__fs_layout(o->fs, &file->target.layout);
    if (local_cls == 0 && file->target.layout.client_caches) ferry__hints_fit_network(&file->target.hints);
    MPI_Offset end = 0;
    if (local_cls == 0 && (amode & MPI_MODE_APPEND)) local_cls = ferry__fs_size(o->fs, &end);
    if (local_cls == 0) file->position = end;
    int shared_cls = ferry__sharedfp_create(&o->plan, comm, end, &o->shared);
    if (local_cls == 0) local_cls = shared_cls;
    int cls = ferry__error_agree_flag(comm, local_cls, "open", &o->develop);
    if (cls != 0) undo_open(comm, filename, o);
    return cls;
}

/* Develop mode at open: the name and amode must be the same on every rank.
 * Runs before anything is created, so a mismatch leaves no file behind. */
static int check_same_everywhere(MPI_Comm comm, int local_cls, const char *filename, int amode)
{
    ferry__develop_arg_t args[2] = {
        {"filename", filename ? ferry__develop_hash(filename, strlen(filename)) : 0},
        {"amode", (uint64_t)(unsigned)amode},
    };
    return ferry__develop_check(comm, local_cls, "open", args, 2);
}

static int init_file(ferry_File file, MPI_Comm comm, const char *filename, int amode, MPI_Info info)
{
    file->target.comm = comm;
    MPI_Comm_rank(comm, &file->target.rank);
    MPI_Comm_size(comm, &file->target.nprocs);
    file->target.amode = amode;
    ferry__errhandler_inherit(&file->errh);
    ferry__view_init(&file->target.view);
    ferry__hints_defaults(&file->target.hints);
    ferry__hints_apply_system(&file->target.hints);
    ferry__hints_apply(&file->target.hints, info);
    char *name = ferry__strdup(filename);
    if (!name) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: open '%s': out of memory", filename);
    file->target.filename = name;
    file->target.locks_refused = &file->locks_refused;
    return ferry__coll_open(&file->target, &file->target.coll);
}

static void free_file(ferry_File file)
{
    if (!file) return;
    ferry__handle_unregister(file);
    ferry__handle_forget(file);
    ferry__errhandler_drop(&file->errh);
    ferry__coll_release(&file->target.coll);
    ferry__view_release(&file->target.view);
    ferry__scratch_release(&file->staging);
    ferry__scratch_release(&file->sieve);
    if (file->target.comm != MPI_COMM_NULL) MPI_Comm_free(&file->target.comm);
    ferry__free((char *)file->target.filename); /* the file's own copy (init_file), const only to the data path */
    ferry__handle_destroy(file);
}

/* Collective over the file's ranks: ends everything the open made; returns
 * the agreed outcome. The caller frees the file. */
static int close_everywhere(ferry_File file)
{
    ferry__async_release(file); /* pending nonblocking requests finish first */
    file->stats.coll_view_cache_bytes = ferry__coll_cache_bytes(&file->target);
    file->stats.coll_view_recv_bytes = ferry__coll_update_recv_bytes(&file->target);
    ferry__stats_summarize(&file->stats, file->target.comm, file->target.filename);
    ferry__sharedfp_free(file->target.comm, &file->sharedfp);
    int cls = ferry__error_agree(file->target.comm,
                                 ferry__split_misuse(file, ferry__fs_close(file->target.fs), "close"), "close");
    file->target.fs = NULL;
    if (file->target.amode & MPI_MODE_DELETE_ON_CLOSE) {
        int removed = (file->target.rank == 0 && cls == 0) ? ferry__fs_remove(file->target.filename) : 0;
        int agreed = ferry__error_agree(file->target.comm, removed, "close (delete on close)");
        if (cls == 0) cls = agreed;
    }
    return cls;
}

/* MPI_Finalize with the file still open (core/live.c calls this on every
 * rank, in the same order): closed as by close, without the error handler,
 * so the host's objects (window, communicators) go before the host does. */
static void close_at_finalize(ferry_File file)
{
    close_everywhere(file);
    free_file(file);
}

int ferry_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, ferry_File *fh)
{
    int cls = ferry__core_init();
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    ferry__handle_set_closer(close_at_finalize);
    int inter = 0;
    if (comm == MPI_COMM_NULL || MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return ferry__error_return(FERRY_FILE_NULL,
                                   ferry__error_set(MPI_ERR_COMM, "ferry: open: not a valid intracommunicator"));
    MPI_Comm dup;
    if (ferry__progress_comm_dup(comm, &dup) != MPI_SUCCESS)
        return ferry__error_return(FERRY_FILE_NULL,
                                   ferry__error_set(MPI_ERR_COMM, "ferry: open: cannot duplicate the communicator"));
    cls = check_open_args(filename, amode, fh);
    opening_t o = {.fs = NULL, .develop = ferry__develop_from_environment(), .shared = NULL};
    if (cls == 0) cls = ferry__sharedfp_propose(comm, filename, &o.plan);
    if (o.develop) cls = check_same_everywhere(dup, cls, filename, amode);
    ferry_File file = NULL;
    if (cls == 0 && !(file = ferry__handle_create()))
        cls = ferry__error_set(MPI_ERR_NO_MEM, "ferry: open '%s': out of memory", filename);
    if (file) {
        file->target.comm = MPI_COMM_NULL;
        file->errh.handle = MPI_ERRHANDLER_NULL; /* no reference held until init_file */
    }
    if (cls == 0) cls = init_file(file, dup, filename, amode, info);
    if (file && file->target.hints.develop) o.develop = 1;
    cls = open_everywhere(dup, cls, filename, amode, file, &o);
    if (cls != 0) {
        if (file && file->target.comm == dup) file->target.comm = MPI_COMM_NULL;
        free_file(file);
        MPI_Comm_free(&dup);
        if (fh) *fh = FERRY_FILE_NULL;
        return ferry__error_return(FERRY_FILE_NULL, cls);
    }
    file->target.fs = o.fs;
    file->sharedfp = o.shared;
    file->sharedfp_used = ferry__sharedfp_has_window(file) && (amode & MPI_MODE_APPEND); /* it starts at end of file */
    file->develop = o.develop;
    file->target.readable = o.readable;
    ferry__handle_register(file);
    *fh = file;
    return MPI_SUCCESS;
}

int ferry_File_close(ferry_File *fh)
{
    int cls = fh ? ferry__check_file(*fh, "close") : ferry__error_set(MPI_ERR_ARG, "ferry: close: NULL argument");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    ferry_File file = *fh;
    int code = ferry__error_return(file, close_everywhere(file));
    free_file(file);
    *fh = FERRY_FILE_NULL;
    return code;
}

int ferry_File_delete(const char *filename, MPI_Info info)
{
    (void)info;
    int cls = ferry__core_init();
    if (cls == 0 && (!filename || !filename[0]))
        cls = ferry__error_set(MPI_ERR_BAD_FILE, "ferry: delete: empty or NULL file name");
    if (cls == 0) cls = ferry__fs_remove(filename);
    return ferry__error_return(FERRY_FILE_NULL, cls);
}

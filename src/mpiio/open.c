/*
 * Opening, closing and deleting files (MPI-3.1 13.2.1-13.2.3).
 *
 * Open is collective and all-or-nothing: with MPI_MODE_CREATE rank 0
 * creates the file first and the others open it once rank 0's outcome is
 * agreed; the call ends in one more agreement, and a rank that opened its
 * file when another failed closes it again, so every rank returns the same
 * success or failure and no rank keeps a half-open file.
 */
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

/* Collective over comm (a private duplicate): opens the file on every rank
 * or on none. Rank 0 alone creates it. *develop is ORed over ranks. The
 * shared file pointer's window is made on every rank before the last
 * agreement, which publishes its initial value (end of file for APPEND). */
static int open_everywhere(MPI_Comm comm, int local_cls, const char *filename, int amode, ferry_File file,
                           ferry__fs_file_t **fs, int *develop, int *readable, MPI_Win *shared)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    *fs = NULL;
    if (amode & MPI_MODE_CREATE) {
        if (rank == 0 && local_cls == 0) local_cls = open_here(filename, amode, 1, fs, readable);
        local_cls = ferry__error_agree(comm, local_cls, "open (create)");
    }
    if (local_cls == 0 && *fs == NULL) local_cls = open_here(filename, amode, 0, fs, readable);
    /* What the file needs from the file system, checked in the same agreement. */
    if (local_cls == 0) local_cls = ferry__fs_layout(*fs, &file->layout);
    MPI_Offset end = 0;
    if (local_cls == 0 && (amode & MPI_MODE_APPEND)) local_cls = ferry__fs_size(*fs, &end);
    if (local_cls == 0) file->position = end;
    int shared_cls = ferry__sharedfp_create(comm, end, shared);
    if (local_cls == 0) local_cls = shared_cls;
    int cls = ferry__error_agree_flag(comm, local_cls, "open", develop);
    if (cls != 0) ferry__sharedfp_free(comm, shared);
    if (cls != 0 && *fs != NULL) {
        ferry__fs_close(*fs);
        *fs = NULL;
    }
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
    file->comm = comm;
    MPI_Comm_rank(comm, &file->rank);
    MPI_Comm_size(comm, &file->nprocs);
    file->amode = amode;
    ferry__errhandler_inherit(file);
    ferry__view_init(&file->view);
    ferry__hints_defaults(&file->hints);
    ferry__hints_apply_system(&file->hints);
    ferry__hints_apply(&file->hints, info);
    file->filename = ferry__strdup(filename);
    if (!file->filename) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: open '%s': out of memory", filename);
    return ferry__coll_open(file);
}

static void free_file(ferry_File file)
{
    if (!file) return;
    ferry__handle_forget(file);
    ferry__errhandler_drop(file);
    ferry__coll_release(file);
    ferry__view_release(&file->view);
    ferry__scratch_release(&file->staging);
    ferry__scratch_release(&file->sieve);
    if (file->comm != MPI_COMM_NULL) MPI_Comm_free(&file->comm);
    ferry__free(file->filename);
    ferry__free(file);
}

int ferry_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, ferry_File *fh)
{
    int cls = ferry__core_init();
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    int inter = 0;
    if (comm == MPI_COMM_NULL || MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return ferry__error_return(FERRY_FILE_NULL,
                                   ferry__error_set(MPI_ERR_COMM, "ferry: open: not a valid intracommunicator"));
    MPI_Comm dup;
    if (ferry__progress_comm_dup(comm, &dup) != MPI_SUCCESS)
        return ferry__error_return(FERRY_FILE_NULL,
                                   ferry__error_set(MPI_ERR_COMM, "ferry: open: cannot duplicate the communicator"));
    cls = check_open_args(filename, amode, fh);
    int develop = ferry__develop_from_environment();
    if (develop) cls = check_same_everywhere(dup, cls, filename, amode);
    ferry_File file = NULL;
    if (cls == 0 && !(file = ferry__calloc(1, sizeof *file)))
        cls = ferry__error_set(MPI_ERR_NO_MEM, "ferry: open '%s': out of memory", filename);
    if (file) {
        file->comm = MPI_COMM_NULL;
        file->errhandler = MPI_ERRHANDLER_NULL; /* no reference held until init_file */
    }
    if (cls == 0) cls = init_file(file, dup, filename, amode, info);
    ferry__fs_file_t *fs = NULL;
    if (file && file->hints.develop) develop = 1;
    int readable = 0;
    MPI_Win shared = MPI_WIN_NULL;
    cls = open_everywhere(dup, cls, filename, amode, file, &fs, &develop, &readable, &shared);
    if (cls != 0) {
        ferry__fs_close(fs);
        if (file && file->comm == dup) file->comm = MPI_COMM_NULL;
        free_file(file);
        MPI_Comm_free(&dup);
        if (fh) *fh = FERRY_FILE_NULL;
        return ferry__error_return(FERRY_FILE_NULL, cls);
    }
    file->fs = fs;
    file->sharedfp = shared;
    file->sharedfp_used = shared != MPI_WIN_NULL && (amode & MPI_MODE_APPEND); /* it starts at end of file */
    fs->stats = &file->stats;
    file->develop = develop;
    file->readable = readable;
    *fh = file;
    return MPI_SUCCESS;
}

int ferry_File_close(ferry_File *fh)
{
    int cls = fh ? ferry__check_file(*fh, "close") : ferry__error_set(MPI_ERR_ARG, "ferry: close: NULL argument");
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    ferry_File file = *fh;
    ferry__async_release(file); /* pending nonblocking requests finish first */
    ferry__stats_summarize(&file->stats, file->comm, file->filename);
    ferry__sharedfp_free(file->comm, &file->sharedfp);
    cls = ferry__error_agree(file->comm, ferry__fs_close(file->fs), "close");
    file->fs = NULL;
    if (file->amode & MPI_MODE_DELETE_ON_CLOSE) {
        int removed = (file->rank == 0 && cls == 0) ? ferry__fs_remove(file->filename) : 0;
        int agreed = ferry__error_agree(file->comm, removed, "close (delete on close)");
        if (cls == 0) cls = agreed;
    }
    int code = ferry__error_return(file, cls);
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

/*
 * The I/O backends: one table of MPI-IO calls per implementation, chosen
 * per file, so the same checkpoint code runs on ferry and on the host MPI's
 * own MPI-IO (benchmarks compare them side by side). Views are etype and
 * filetype MPI_BYTE; big-endian values come from the implementation's
 * external32 conversion where it is trusted (ferry__ckpt_io_t.converts), else from
 * swapping the blocks in place. FERRY_CKPT_DATAREP=native forces the swaps
 * on ferry too (to compare the two).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"

/* One backend from its prefix (ferry or MPI) and the handle field it uses:
 * every function is the library's call with the file's handle. */
#define CKPT_BACKEND(P, H, CONVERTS, AGREES, UNTRUSTED)                                                                \
    static int P##_open(MPI_Comm c, const char *path, int amode, MPI_Info info, ferry__ckpt_file_t *f)                 \
    {                                                                                                                  \
        return P##_File_open(c, path, amode, info, &f->H);                                                             \
    }                                                                                                                  \
    static int P##_close(ferry__ckpt_file_t *f)                                                                        \
    {                                                                                                                  \
        return P##_File_close(&f->H);                                                                                  \
    }                                                                                                                  \
    static int P##_set_view(ferry__ckpt_file_t *f, MPI_Datatype ft, const char *datarep)                               \
    {                                                                                                                  \
        return P##_File_set_view(f->H, 0, MPI_BYTE, ft, datarep, MPI_INFO_NULL);                                       \
    }                                                                                                                  \
    static int P##_write(ferry__ckpt_file_t *f, const void *b, int n, MPI_Datatype t, MPI_Status *st)                  \
    {                                                                                                                  \
        return P##_File_write(f->H, b, n, t, st);                                                                      \
    }                                                                                                                  \
    static int P##_write_all(ferry__ckpt_file_t *f, const void *b, int n, MPI_Datatype t, MPI_Status *st)              \
    {                                                                                                                  \
        return P##_File_write_all(f->H, b, n, t, st);                                                                  \
    }                                                                                                                  \
    static int P##_read(ferry__ckpt_file_t *f, void *b, int n, MPI_Datatype t, MPI_Status *st)                         \
    {                                                                                                                  \
        return P##_File_read(f->H, b, n, t, st);                                                                       \
    }                                                                                                                  \
    static int P##_read_all(ferry__ckpt_file_t *f, void *b, int n, MPI_Datatype t, MPI_Status *st)                     \
    {                                                                                                                  \
        return P##_File_read_all(f->H, b, n, t, st);                                                                   \
    }                                                                                                                  \
    static int P##_write_at(ferry__ckpt_file_t *f, MPI_Offset o, const void *b, int n, MPI_Datatype t, MPI_Status *st) \
    {                                                                                                                  \
        return P##_File_write_at(f->H, o, b, n, t, st);                                                                \
    }                                                                                                                  \
    static int P##_write_at_all(ferry__ckpt_file_t *f, MPI_Offset o, const void *b, int n, MPI_Datatype t,             \
                                MPI_Status *st)                                                                        \
    {                                                                                                                  \
        return P##_File_write_at_all(f->H, o, b, n, t, st);                                                            \
    }                                                                                                                  \
    static int P##_read_at(ferry__ckpt_file_t *f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *st)        \
    {                                                                                                                  \
        return P##_File_read_at(f->H, o, b, n, t, st);                                                                 \
    }                                                                                                                  \
    static int P##_read_at_all(ferry__ckpt_file_t *f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *st)    \
    {                                                                                                                  \
        return P##_File_read_at_all(f->H, o, b, n, t, st);                                                             \
    }                                                                                                                  \
    static int P##_set_size(ferry__ckpt_file_t *f, MPI_Offset s)                                                       \
    {                                                                                                                  \
        return P##_File_set_size(f->H, s);                                                                             \
    }                                                                                                                  \
    static int P##_get_size(ferry__ckpt_file_t *f, MPI_Offset *s)                                                      \
    {                                                                                                                  \
        return P##_File_get_size(f->H, s);                                                                             \
    }                                                                                                                  \
    static int P##_sync(ferry__ckpt_file_t *f)                                                                         \
    {                                                                                                                  \
        return P##_File_sync(f->H);                                                                                    \
    }                                                                                                                  \
    static const ferry__ckpt_io_t P##_backend = {                                                                      \
        #P,           CONVERTS,     AGREES,           UNTRUSTED,     P##_open,                                         \
        P##_close,    P##_set_view, P##_write,        P##_write_all, P##_read,                                         \
        P##_read_all, P##_write_at, P##_write_at_all, P##_read_at,   P##_read_at_all,                                  \
        P##_set_size, P##_get_size, P##_sync};

CKPT_BACKEND(ferry, ff, 1, 1, 0)
CKPT_BACKEND(MPI, mf, 0, 0, 1)

const ferry__ckpt_io_t *ferry__ckpt_io_get(int which)
{
    return which == FERRY_CKPT_IO_HOST ? &MPI_backend : &ferry_backend;
}

int ferry__ckpt_io_check(const ferry__ckpt_file_t *f, int rc, const char *op)
{
    if (rc == MPI_SUCCESS) return 0;
    char why[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0, cls = MPI_ERR_OTHER;
    ferry_Error_string(rc, why, &len);
    MPI_Error_class(rc, &cls);
    /* The cause first, the path once: an MPI error string is cut at MPI_MAX_ERROR_STRING (256 on
     * Open MPI). Of MPICH's error stack, its last line holds the cause. */
    const char *stack = strstr(why, "error stack:"), *last = stack ? strrchr(stack, '\n') : NULL;
    const char *cause = last && last[1] ? last + 1 : why;
    int named = strstr(cause, f->path) != NULL;
    return ferry__error_set(cls, "ferry_ckpt: %s (%s MPI-IO): %s%s%s%s", op, f->io == &MPI_backend ? "host" : "ferry", cause,
                            named ? "" : " (file '", named ? "" : f->path, named ? "" : "')");
}

/* After a failed transfer through the host: MPICH 4.0.2's ROMIO returns from an independent write
 * whose data-sieving read-modify-write failed (ENOSPC) without releasing the byte-range lock it
 * took, and the other ranks' sieving writes wait on it forever. Closing any descriptor of a file
 * releases all the process's fcntl locks on it (POSIX), so the failed rank opens and closes it. */
static void release_stale_locks(const ferry__ckpt_file_t *f)
{
    int fd = open(f->path, O_RDONLY);
    if (fd >= 0) close(fd);
}

int ferry__ckpt_io_collective(MPI_Comm comm, const ferry__ckpt_file_t *f, int rc, const char *op)
{
    int cls = ferry__ckpt_io_check(f, rc, op);
    return f->io && f->io->agrees ? cls : ferry__error_agree(comm, cls, op);
}

int ferry__ckpt_file_open(const ferry__ckpt_io_t *io, MPI_Comm comm, const char *path, int amode, MPI_Info info,
                          ferry__ckpt_file_t *f)
{
    memset(f, 0, sizeof *f);
    f->io = io;
    f->path = path;
    f->ff = FERRY_FILE_NULL;
    f->mf = MPI_FILE_NULL;
    const char *force = getenv("FERRY_CKPT_DATAREP");
    f->swaps = !io->converts || (force && strcmp(force, "native") == 0);
    f->datarep = f->swaps ? "native" : "external32";
    int cls = ferry__ckpt_io_check(f, io->open(comm, path, amode, info ? info : MPI_INFO_NULL, f), "open");
    if (cls) f->io = NULL;
    return cls;
}

int ferry__ckpt_file_close(ferry__ckpt_file_t *f)
{
    if (!f->io) return 0;
    int cls = ferry__ckpt_io_check(f, f->io->close(f), "close");
    f->io = NULL;
    return cls;
}

/* 0 when st counts the count elements of type asked for; a short transfer otherwise (the
 * count, not the return code alone: see ferry__ckpt_io_transfer). */
static int check_count(const ferry__ckpt_file_t *f, const MPI_Status *st, int count, MPI_Datatype type, const char *op,
                       int write)
{
    MPI_Count size = 0, got = 0;
    MPI_Type_size_x(type, &size);
    MPI_Count want = size * (MPI_Count)count;
    if (want == 0) return 0;
    if (MPI_Get_elements_x(st, MPI_BYTE, &got) != MPI_SUCCESS || got == MPI_UNDEFINED) got = -1;
    if (got == want) return 0;
    return ferry__error_set(write ? MPI_ERR_NO_SPACE : MPI_ERR_IO,
                            "ferry_ckpt: a short %s%s: %s moved %lld of %lld bytes and returned success (%s MPI-IO, file '%s')",
                            write ? "write" : "read", write ? " (is the device full?)" : "", op, (long long)got,
                            (long long)want, f->io == &MPI_backend ? "host" : "ferry", f->path);
}

int ferry__ckpt_io_transfer(ferry__ckpt_file_t *f, int how, void *buf, int count, MPI_Datatype type)
{
    const ferry__ckpt_io_t *io = f->io;
    int write = how & FERRY__CKPT_WRITE, collective = how & FERRY__CKPT_COLLECTIVE;
    const char *op = write ? (collective ? "write_all" : "write") : (collective ? "read_all" : "read");
    MPI_Status st;
    int rc = write ? (collective ? io->write_all : io->write)(f, buf, count, type, &st)
                   : (collective ? io->read_all : io->read)(f, buf, count, type, &st);
    int cls = ferry__ckpt_io_check(f, rc, op);
    if (!cls) cls = check_count(f, &st, count, type, op, write);
    if (cls && f->io->untrusted) release_stale_locks(f);
    return cls;
}

int ferry__ckpt_io_transfer_at(ferry__ckpt_file_t *f, int how, MPI_Offset off, void *buf, int count, MPI_Datatype type)
{
    const ferry__ckpt_io_t *io = f->io;
    int write = how & FERRY__CKPT_WRITE, collective = how & FERRY__CKPT_COLLECTIVE;
    const char *op = write ? (collective ? "write_at_all" : "write_at") : (collective ? "read_at_all" : "read_at");
    MPI_Status st;
    int rc = write ? (collective ? io->write_at_all : io->write_at)(f, off, buf, count, type, &st)
                   : (collective ? io->read_at_all : io->read_at)(f, off, buf, count, type, &st);
    int cls = ferry__ckpt_io_check(f, rc, op);
    if (!cls) cls = check_count(f, &st, count, type, op, write);
    if (cls && f->io->untrusted) release_stale_locks(f);
    return cls;
}

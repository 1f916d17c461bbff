/*
 * The I/O backends: one table of MPI-IO calls per implementation, chosen
 * per file, so the same checkpoint code runs on ferry and on the host MPI's
 * own MPI-IO (benchmarks compare them side by side). Views are etype and
 * filetype MPI_BYTE; big-endian values come from the implementation's
 * external32 conversion where it is trusted (ckpt_io_t.converts), else from
 * swapping the blocks in place. FERRY_CKPT_DATAREP=native forces the swaps
 * on ferry too (to compare the two).
 */
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_int.h"

/* One backend from its prefix (ferry or MPI) and the handle field it uses:
 * every function is the library's call with the file's handle. */
#define CKPT_BACKEND(P, H, CONVERTS, AGREES)                                                                                          \
    static int P##_open(MPI_Comm c, const char *path, int amode, MPI_Info info, ckpt_file_t *f)                     \
    {                                                                                                               \
        return P##_File_open(c, path, amode, info, &f->H);                                                          \
    }                                                                                                               \
    static int P##_close(ckpt_file_t *f) { return P##_File_close(&f->H); }                                         \
    static int P##_set_view(ckpt_file_t *f, MPI_Datatype ft, const char *datarep)                                   \
    {                                                                                                               \
        return P##_File_set_view(f->H, 0, MPI_BYTE, ft, datarep, MPI_INFO_NULL);                                    \
    }                                                                                                               \
    static int P##_write(ckpt_file_t *f, const void *b, int n, MPI_Datatype t)                                      \
    {                                                                                                               \
        return P##_File_write(f->H, b, n, t, MPI_STATUS_IGNORE);                                                    \
    }                                                                                                               \
    static int P##_write_all(ckpt_file_t *f, const void *b, int n, MPI_Datatype t)                                  \
    {                                                                                                               \
        return P##_File_write_all(f->H, b, n, t, MPI_STATUS_IGNORE);                                                \
    }                                                                                                               \
    static int P##_read(ckpt_file_t *f, void *b, int n, MPI_Datatype t)                                             \
    {                                                                                                               \
        return P##_File_read(f->H, b, n, t, MPI_STATUS_IGNORE);                                                     \
    }                                                                                                               \
    static int P##_read_all(ckpt_file_t *f, void *b, int n, MPI_Datatype t)                                         \
    {                                                                                                               \
        return P##_File_read_all(f->H, b, n, t, MPI_STATUS_IGNORE);                                                 \
    }                                                                                                               \
    static int P##_write_at(ckpt_file_t *f, MPI_Offset o, const void *b, int n, MPI_Datatype t)                     \
    {                                                                                                               \
        return P##_File_write_at(f->H, o, b, n, t, MPI_STATUS_IGNORE);                                              \
    }                                                                                                               \
    static int P##_write_at_all(ckpt_file_t *f, MPI_Offset o, const void *b, int n, MPI_Datatype t)                 \
    {                                                                                                               \
        return P##_File_write_at_all(f->H, o, b, n, t, MPI_STATUS_IGNORE);                                         \
    }                                                                                                               \
    static int P##_read_at(ckpt_file_t *f, MPI_Offset o, void *b, int n, MPI_Datatype t)                            \
    {                                                                                                               \
        return P##_File_read_at(f->H, o, b, n, t, MPI_STATUS_IGNORE);                                               \
    }                                                                                                               \
    static int P##_read_at_all(ckpt_file_t *f, MPI_Offset o, void *b, int n, MPI_Datatype t)                        \
    {                                                                                                               \
        return P##_File_read_at_all(f->H, o, b, n, t, MPI_STATUS_IGNORE);                                          \
    }                                                                                                               \
    static int P##_set_size(ckpt_file_t *f, MPI_Offset s) { return P##_File_set_size(f->H, s); }                 \
    static int P##_get_size(ckpt_file_t *f, MPI_Offset *s) { return P##_File_get_size(f->H, s); }                 \
    static int P##_sync(ckpt_file_t *f) { return P##_File_sync(f->H); }                                           \
    static const ckpt_io_t P##_backend = {#P, CONVERTS, AGREES, P##_open,     P##_close,   P##_set_view,     P##_write,     \
                                          P##_write_all, P##_read,    P##_read_all, P##_write_at,    P##_write_at_all, \
                                          P##_read_at,  P##_read_at_all, P##_set_size, P##_get_size, P##_sync};

CKPT_BACKEND(ferry, ff, 1, 1)
CKPT_BACKEND(MPI, mf, 0, 0)

const ckpt_io_t *ckpt_io_get(int which)
{
    return which == FERRY_CKPT_IO_HOST ? &MPI_backend : &ferry_backend;
}

int ckpt_io_check(const ckpt_file_t *f, int rc, const char *op)
{
    if (rc == MPI_SUCCESS) return 0;
    char why[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0, cls = MPI_ERR_OTHER;
    ferry_Error_string(rc, why, &len);
    MPI_Error_class(rc, &cls);
    return ferry__error_set(cls, "ferry_ckpt: %s on '%s' (%s MPI-IO): %s", op, f->path,
                            f->io == &MPI_backend ? "host" : "ferry", why);
}

int ckpt_io_collective(MPI_Comm comm, const ckpt_file_t *f, int rc, const char *op)
{
    int cls = ckpt_io_check(f, rc, op);
    return f->io && f->io->agrees ? cls : ferry__error_agree(comm, cls, op);
}

int ckpt_file_open(const ckpt_io_t *io, MPI_Comm comm, const char *path, int amode, MPI_Info info, ckpt_file_t *f)
{
    memset(f, 0, sizeof *f);
    f->io = io;
    f->path = path;
    f->ff = FERRY_FILE_NULL;
    f->mf = MPI_FILE_NULL;
    const char *force = getenv("FERRY_CKPT_DATAREP");
    f->swaps = !io->converts || (force && strcmp(force, "native") == 0);
    f->datarep = f->swaps ? "native" : "external32";
    int cls = ckpt_io_check(f, io->open(comm, path, amode, info ? info : MPI_INFO_NULL, f), "open");
    if (cls) f->io = NULL;
    return cls;
}

int ckpt_file_close(ckpt_file_t *f)
{
    if (!f->io) return 0;
    int cls = ckpt_io_check(f, f->io->close(f), "close");
    f->io = NULL;
    return cls;
}

int ckpt_io_transfer(ckpt_file_t *f, int how, void *buf, int count, MPI_Datatype type)
{
    const ckpt_io_t *io = f->io;
    int write = how & CKPT_WRITE, collective = how & CKPT_COLLECTIVE;
    int rc = write ? (collective ? io->write_all : io->write)(f, buf, count, type)
                   : (collective ? io->read_all : io->read)(f, buf, count, type);
    return ckpt_io_check(f, rc, write ? (collective ? "write_all" : "write") : (collective ? "read_all" : "read"));
}

int ckpt_io_transfer_at(ckpt_file_t *f, int how, MPI_Offset off, void *buf, int count, MPI_Datatype type)
{
    const ckpt_io_t *io = f->io;
    int write = how & CKPT_WRITE, collective = how & CKPT_COLLECTIVE;
    int rc = write ? (collective ? io->write_at_all : io->write_at)(f, off, buf, count, type)
                   : (collective ? io->read_at_all : io->read_at)(f, off, buf, count, type);
    return ckpt_io_check(f, rc,
                         write ? (collective ? "write_at_all" : "write_at") : (collective ? "read_at_all" : "read_at"));
}

/*
 * The I/O backends: one table of MPI-IO calls per implementation, chosen
 * per file, so the same checkpoint code runs on ferry and on the host MPI's
 * own MPI-IO (benchmarks compare them side by side). Views are etype and
 * filetype MPI_BYTE; big-endian values come from the implementation's
 * external32 conversion where it is trusted (ferry__ckpt_io_t.converts),
 * else from swapping the blocks in place. Each backend is its functions
 * written out, via_ferry_* and via_host_*: the library call with the
 * file's handle (f->ff or f->mf). FERRY_CKPT_DATAREP=native forces the swaps
 * on ferry too (to compare the two).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"

/* ferry's MPI-IO (ferry_File_*, the handle f->ff): converts to external32 while it packs, and its
 * collective calls end in one agreement. */
static int via_ferry_open(MPI_Comm c, const char *path, int amode, MPI_Info info, ferry__ckpt_file_t *f)
{
    return ferry_File_open(c, path, amode, info, &f->ff);
}

static int via_ferry_close(ferry__ckpt_file_t *f)
{
    return ferry_File_close(&f->ff);
}

static int via_ferry_set_view(ferry__ckpt_file_t *f, MPI_Datatype ft, const char *datarep)
{
    return ferry_File_set_view(f->ff, 0, MPI_BYTE, ft, datarep, MPI_INFO_NULL);
}

static int via_ferry_write(ferry__ckpt_file_t *f, const void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return ferry_File_write(f->ff, b, n, t, st);
}

static int via_ferry_write_all(ferry__ckpt_file_t *f, const void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return ferry_File_write_all(f->ff, b, n, t, st);
}

static int via_ferry_read(ferry__ckpt_file_t *f, void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return ferry_File_read(f->ff, b, n, t, st);
}

static int via_ferry_read_all(ferry__ckpt_file_t *f, void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return ferry_File_read_all(f->ff, b, n, t, st);
}

static int via_ferry_write_at(ferry__ckpt_file_t *f, MPI_Offset o, const void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return ferry_File_write_at(f->ff, o, b, n, t, st);
}

static int via_ferry_write_at_all(ferry__ckpt_file_t *f, MPI_Offset o, const void *b, int n, MPI_Datatype t,
                                  MPI_Status *st)
{
    return ferry_File_write_at_all(f->ff, o, b, n, t, st);
}

static int via_ferry_read_at(ferry__ckpt_file_t *f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return ferry_File_read_at(f->ff, o, b, n, t, st);
}

static int via_ferry_read_at_all(ferry__ckpt_file_t *f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return ferry_File_read_at_all(f->ff, o, b, n, t, st);
}

static int via_ferry_set_size(ferry__ckpt_file_t *f, MPI_Offset s)
{
    return ferry_File_set_size(f->ff, s);
}

static int via_ferry_get_size(ferry__ckpt_file_t *f, MPI_Offset *s)
{
    return ferry_File_get_size(f->ff, s);
}

static int via_ferry_sync(ferry__ckpt_file_t *f)
{
    return ferry_File_sync(f->ff);
}

static const ferry__ckpt_io_t ferry_backend = {
    .name = "ferry",
    .converts = 1,
    .agrees = 1,
    .untrusted = 0,
    .open = via_ferry_open,
    .close = via_ferry_close,
    .set_view = via_ferry_set_view,
    .write = via_ferry_write,
    .write_all = via_ferry_write_all,
    .read = via_ferry_read,
    .read_all = via_ferry_read_all,
    .write_at = via_ferry_write_at,
    .write_at_all = via_ferry_write_at_all,
    .read_at = via_ferry_read_at,
    .read_at_all = via_ferry_read_at_all,
    .set_size = via_ferry_set_size,
    .get_size = via_ferry_get_size,
    .sync = via_ferry_sync,
};

/* The host MPI's own MPI-IO (MPI_File_*, the handle f->mf): swapped in place, its collective calls
 * agreed here, its writes checked (ferry__ckpt_io_t.untrusted). */
static int via_host_open(MPI_Comm c, const char *path, int amode, MPI_Info info, ferry__ckpt_file_t *f)
{
    return MPI_File_open(c, path, amode, info, &f->mf);
}

static int via_host_close(ferry__ckpt_file_t *f)
{
    return MPI_File_close(&f->mf);
}

static int via_host_set_view(ferry__ckpt_file_t *f, MPI_Datatype ft, const char *datarep)
{
    return MPI_File_set_view(f->mf, 0, MPI_BYTE, ft, datarep, MPI_INFO_NULL);
}

static int via_host_write(ferry__ckpt_file_t *f, const void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return MPI_File_write(f->mf, b, n, t, st);
}

static int via_host_write_all(ferry__ckpt_file_t *f, const void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return MPI_File_write_all(f->mf, b, n, t, st);
}

static int via_host_read(ferry__ckpt_file_t *f, void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return MPI_File_read(f->mf, b, n, t, st);
}

static int via_host_read_all(ferry__ckpt_file_t *f, void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return MPI_File_read_all(f->mf, b, n, t, st);
}

static int via_host_write_at(ferry__ckpt_file_t *f, MPI_Offset o, const void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return MPI_File_write_at(f->mf, o, b, n, t, st);
}

static int via_host_write_at_all(ferry__ckpt_file_t *f, MPI_Offset o, const void *b, int n, MPI_Datatype t,
                                 MPI_Status *st)
{
    return MPI_File_write_at_all(f->mf, o, b, n, t, st);
}

static int via_host_read_at(ferry__ckpt_file_t *f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return MPI_File_read_at(f->mf, o, b, n, t, st);
}

static int via_host_read_at_all(ferry__ckpt_file_t *f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *st)
{
    return MPI_File_read_at_all(f->mf, o, b, n, t, st);
}

static int via_host_set_size(ferry__ckpt_file_t *f, MPI_Offset s)
{
    return MPI_File_set_size(f->mf, s);
}

static int via_host_get_size(ferry__ckpt_file_t *f, MPI_Offset *s)
{
    return MPI_File_get_size(f->mf, s);
}

static int via_host_sync(ferry__ckpt_file_t *f)
{
    return MPI_File_sync(f->mf);
}

static const ferry__ckpt_io_t host_backend = {
    .name = "MPI",
    .converts = 0,
    .agrees = 0,
    .untrusted = 1,
    .open = via_host_open,
    .close = via_host_close,
    .set_view = via_host_set_view,
    .write = via_host_write,
    .write_all = via_host_write_all,
    .read = via_host_read,
    .read_all = via_host_read_all,
    .write_at = via_host_write_at,
    .write_at_all = via_host_write_at_all,
    .read_at = via_host_read_at,
    .read_at_all = via_host_read_at_all,
    .set_size = via_host_set_size,
    .get_size = via_host_get_size,
    .sync = via_host_sync,
};

const ferry__ckpt_io_t *ferry__ckpt_io_get(int which)
{
    return which == FERRY_CKPT_IO_HOST ? &host_backend : &ferry_backend;
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
    return ferry__error_set(cls, "ferry_ckpt: %s (%s MPI-IO): %s%s%s%s", op, f->io == &host_backend ? "host" : "ferry",
                            cause, named ? "" : " (file '", named ? "" : f->path, named ? "" : "')");
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
    return ferry__error_set(
        write ? MPI_ERR_NO_SPACE : MPI_ERR_IO,
        "ferry_ckpt: a short %s%s: %s moved %lld of %lld bytes and returned success (%s MPI-IO, file '%s')",
        write ? "write" : "read", write ? " (is the device full?)" : "", op, (long long)got, (long long)want,
        f->io == &host_backend ? "host" : "ferry", f->path);
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

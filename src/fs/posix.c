/*
 * The POSIX driver: open/pread/pwrite/fsync/ftruncate/posix_fallocate.
 *
 * This file holds ferry's only loop over partial transfers and EINTR, and
 * the only place errno is read after a file-system call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "error/error.h"
#include "fs/fs.h"
#include "fs/fs_int.h"

/* Linux transfers at most 0x7ffff000 bytes per call; asking for less keeps
 * every platform's ssize_t happy. */
enum { POSIX_MAX_TRANSFER = 1 << 30 };

static int real_open(const char *path, int flags, mode_t mode)
{
    return open(path, flags, mode);
}

static int real_fallocate(int fd, off_t offset, off_t len)
{
    return posix_fallocate(fd, offset, len);
}

static int real_lock(int fd, int cmd, struct flock *lock)
{
    return fcntl(fd, cmd, lock);
}

/* posix_fadvise, plus FERRY_POSIX_WRITEBACK: start writing the range's dirty
 * pages back without waiting (Linux sync_file_range; elsewhere nothing). */
static int real_advise(int fd, off_t offset, off_t len, int advice)
{
    if (advice != FERRY_POSIX_WRITEBACK) return posix_fadvise(fd, offset, len, advice);
#ifdef SYNC_FILE_RANGE_WRITE
    return sync_file_range(fd, offset, len, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : errno;
#else
    return 0;
#endif
}

#define REAL_SYSCALLS                                                                                          \
    {real_open, pread, pwrite, fsync, ftruncate, real_fallocate, unlink, real_lock, real_advise, lseek}
const ferry__posix_syscalls_t ferry__posix_real_syscalls = REAL_SYSCALLS;
ferry__posix_syscalls_t ferry__posix_syscalls = REAL_SYSCALLS;
ferry__posix_syscalls_t ferry__posix_below_trace = REAL_SYSCALLS;
#undef REAL_SYSCALLS

typedef struct posix_file {
    ferry__fs_file_t base;
    int fd;
    int client_caches; /* a network client's page cache (coherence.c): dropped after locks and at sync */
    int direct_fd;     /* such a client's file opened O_DIRECT for the reads inside locks, or -1 */
    atomic_int locks_held;     /* data ranges this open file holds locked (not marks) */
    atomic_int direct_refused; /* the client refused an O_DIRECT read: buffered reads after a drop */
    _Atomic(char *) bounce;    /* read_direct's kept buffer (allocation as ferry__malloc gave it), or NULL */
} posix_file_t;

static int fd_of(ferry__fs_file_t *file)
{
    return ((posix_file_t *)file)->fd;
}

static int client_caches(ferry__fs_file_t *file)
{
    return ((posix_file_t *)file)->client_caches;
}

static int os_error(int err, const char *op, const char *path)
{
    return ferry__error_set(ferry__fs_errno_class(err), "ferry: %s '%s': %s", op, path, strerror(err));
}

/* O_CREAT without O_EXCL never fails with EEXIST on a local file system;
 * through a network client it can, when another client created the name
 * between this client's lookup and its create (GlusterFS, every rank
 * opening a new container: tools/cluster-faults). The file is there: the
 * open is tried again, a few times. */
enum { CREATE_RACE_TRIES = 4 };

static int open_once(const char *path, int oflags, int *fd)
{
    int creates = (oflags & (O_CREAT | O_EXCL)) == O_CREAT;
    for (int tries = 1;; tries++) {
        do *fd = ferry__posix_syscalls.open(path, oflags, 0666);
        while (*fd < 0 && errno == EINTR);
        if (*fd >= 0 || errno != EEXIST || !creates || tries == CREATE_RACE_TRIES) break;
    }
    return *fd < 0 ? os_error(errno, "open", path) : 0;
}

/* On a caching network client the creating open is opened again without
 * O_CREAT: GlusterFS 10 gives the open that creates a file a page-cached
 * handle even where its client is mounted for direct I/O, and that handle
 * then read other nodes' bytes stale (docs/cluster.md); a second open
 * starts from the server's view like every other rank's. */
static int open_fresh(const char *path, int oflags, int *fd, int *caches)
{
    FERRY_TRY(open_once(path, oflags, fd));
    *caches = ferry__fs_client_caches(*fd);
    if (!*caches || !(oflags & O_CREAT)) return 0;
    int created = *fd;
    int rc = open_once(path, oflags & ~(O_CREAT | O_EXCL), fd);
    close(created);
    return rc;
}

/* A caching client's pages cannot be trusted inside a byte-range lock even
 * just after dropping them: the kernel skips pages another process of this
 * node has locked at that moment (its read or write of a neighbouring range
 * in flight through the same page), and such a read can finish after the
 * drop with bytes another node was still writing (coherence.c). Reads inside
 * locks therefore bypass the cache through a second, O_DIRECT descriptor. */
static int open_direct(const char *path, int flags, int caches)
{
    if (!caches || !(flags & FERRY_FS_READ)) return -1;
    int fd;
    do fd = ferry__posix_syscalls.open(path, O_RDONLY | O_DIRECT | O_CLOEXEC, 0);
    while (fd < 0 && errno == EINTR);
    return fd; /* -1 (no O_DIRECT there): dropped pages only, as before */
}

static int posix_open(const char *path, int flags, ferry__fs_file_t **file)
{
    int oflags = O_CLOEXEC;
    if ((flags & FERRY_FS_READ) && (flags & FERRY_FS_WRITE)) oflags |= O_RDWR;
    else if (flags & FERRY_FS_WRITE) oflags |= O_WRONLY;
    else oflags |= O_RDONLY;
    if (flags & FERRY_FS_CREATE) oflags |= O_CREAT;
    if (flags & FERRY_FS_EXCL) oflags |= O_EXCL;
    int fd, caches = 0;
    ferry__fs_layers_from_environment();
    FERRY_TRY(open_fresh(path, oflags, &fd, &caches));
    /* The kernel refuses to open a directory for writing (EISDIR); only a
     * read-only open needs the check (one system call fewer per writer,
     * which a container opened by every rank of a job multiplies). */
    struct stat st = {0};
    if (!(flags & FERRY_FS_WRITE) && (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode))) {
        int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
        close(fd);
        return os_error(err, "open", path);
    }
    posix_file_t *pf = ferry__calloc(1, sizeof *pf);
    char *owned_path = ferry__strdup(path);
    if (!pf || !owned_path) {
        close(fd);
        ferry__free(pf);
        ferry__free(owned_path);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: open '%s': out of memory", path);
    }
    pf->base.ops = &ferry__fs_posix;
    pf->base.path = owned_path;
    pf->fd = fd;
    pf->client_caches = caches;
    pf->direct_fd = open_direct(path, flags, caches);
    *file = &pf->base;
    return 0;
}

static int posix_close(ferry__fs_file_t *file)
{
    int rc = 0;
    if (((posix_file_t *)file)->direct_fd >= 0) (void)close(((posix_file_t *)file)->direct_fd);
    ferry__free(atomic_load(&((posix_file_t *)file)->bounce));
    if (close(fd_of(file)) != 0 && errno != EINTR) rc = os_error(errno, "close", file->path);
    ferry__free(file->path);
    ferry__free(file);
    return rc;
}

static int posix_remove(const char *path)
{
    if (ferry__posix_syscalls.unlink(path) != 0) return os_error(errno, "delete", path);
    return 0;
}

/* Whether a read goes through the O_DIRECT descriptor: while this open file
 * holds a lock on data (another thread's read then goes direct too: only
 * fresher), unless the client refused such a read. */
static int reads_direct(posix_file_t *pf)
{
    return pf->direct_fd >= 0 && !atomic_load(&pf->direct_refused) && atomic_load(&pf->locks_held) > 0;
}

/* O_DIRECT wants offsets, lengths and memory aligned (GlusterFS's bricks
 * refuse anything else with EINVAL): whole pages into an aligned bounce
 * buffer sized to the read, at most a megabyte at a time. 0, or the errno
 * of the failed read. */
enum { DIRECT_ALIGN = 4096, DIRECT_CHUNK = 1 << 20 };

/* Every locked read needs a bounce buffer: the open file keeps one, which a
 * thread takes whole (another thread reading at once allocates its own, and
 * the one returned second is freed). */
static char *take_bounce(posix_file_t *pf)
{
    char *raw = atomic_exchange(&pf->bounce, NULL);
    return raw ? raw : ferry__malloc(DIRECT_CHUNK + DIRECT_ALIGN);
}

static void give_back_bounce(posix_file_t *pf, char *raw)
{
    char *none = NULL;
    if (!atomic_compare_exchange_strong(&pf->bounce, &none, raw)) ferry__free(raw);
}

static int read_direct(posix_file_t *pf, char *buf, size_t len, MPI_Offset offset, size_t *done)
{
    const size_t cap = DIRECT_CHUNK;
    char *raw = take_bounce(pf);
    if (!raw) return ENOMEM;
    char *bounce = raw + (DIRECT_ALIGN - (uintptr_t)raw % DIRECT_ALIGN) % DIRECT_ALIGN;
    int err = 0;
    *done = 0;
    while (*done < len) {
        MPI_Offset at = offset + (MPI_Offset)*done, start = at / DIRECT_ALIGN * DIRECT_ALIGN;
        size_t skip = (size_t)(at - start), rest = len - *done + skip;
        size_t want = rest < cap ? (rest + DIRECT_ALIGN - 1) / DIRECT_ALIGN * DIRECT_ALIGN : cap;
        ssize_t got;
        do got = ferry__posix_syscalls.pread(pf->direct_fd, bounce, want, (off_t)start);
        while (got < 0 && errno == EINTR);
        if (got < 0) err = errno;
        if (got <= (ssize_t)skip) break; /* an error, or end of file */
        size_t n = (size_t)got - skip < len - *done ? (size_t)got - skip : len - *done;
        memcpy(buf + *done, bounce + skip, n);
        *done += n;
    }
    give_back_bounce(pf, raw);
    return err;
}

/* The client refused an O_DIRECT read: buffered reads of freshly dropped
 * pages from now on. */
static void refuse_direct(posix_file_t *pf, MPI_Offset offset, size_t len)
{
    atomic_store(&pf->direct_refused, 1);
    ferry__fs_drop_cached(pf->fd, offset, (MPI_Offset)len);
}

static int read_once(ferry__fs_file_t *file, void *buf, size_t len, MPI_Offset offset, size_t *done)
{
    posix_file_t *pf = (posix_file_t *)file;
    if (reads_direct(pf)) {
        int err = read_direct(pf, buf, len, offset, done);
        if (err == 0) return 0;
        if (err != EINVAL && err != ENOMEM) return os_error(err, "read", file->path);
        refuse_direct(pf, offset, len);
    }
    size_t total = 0;
    while (total < len) {
        size_t want = len - total < POSIX_MAX_TRANSFER ? len - total : POSIX_MAX_TRANSFER;
        ssize_t got = ferry__posix_syscalls.pread(fd_of(file), (char *)buf + total, want, (off_t)(offset + (MPI_Offset)total));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return os_error(errno, "read", file->path);
        if (got == 0) break;
        total += (size_t)got;
    }
    *done = total;
    return 0;
}

/* On a caching client a short read may end where this client believes
 * the file ends while another node has written past it (even inside a
 * byte-range lock: a read-modify-write would then write zeros over its
 * bytes). The server's size decides; the client learns it from the same
 * round trip, unless a write of this node is growing the file at that
 * moment, so the rest is asked again, waiting a little longer each time. */
enum { SIZE_TRIES = 40, FIRST_WAIT_US = 50, LONGEST_WAIT_US = 100000 };

static int read_to_server_end(ferry__fs_file_t *file, char *buf, size_t len, MPI_Offset offset, size_t *done)
{
    long wait_us = FIRST_WAIT_US;
    for (int tries = 0; *done < len; tries++) {
        MPI_Offset end = ferry__fs_server_size(fd_of(file)), at = offset + (MPI_Offset)*done;
        if (end <= at) return 0; /* the server's end too (or it cannot tell: -1) */
        if (tries == SIZE_TRIES)
            return ferry__error_set(MPI_ERR_IO,
                                    "ferry: read '%s': the client ends the file at %lld, its server at %lld, and "
                                    "kept doing so for %d tries (about 3 s)",
                                    file->path, (long long)at, (long long)end, SIZE_TRIES);
        if (tries > 0) {
            struct timespec pause = {.tv_sec = 0, .tv_nsec = wait_us * 1000};
            nanosleep(&pause, NULL);
            wait_us = wait_us * 2 < LONGEST_WAIT_US ? wait_us * 2 : LONGEST_WAIT_US;
        }
        size_t more = 0;
        FERRY_TRY(read_once(file, buf + *done, len - *done, at, &more));
        *done += more;
    }
    return 0;
}

static int posix_pread(ferry__fs_file_t *file, void *buf, size_t len, MPI_Offset offset, size_t *done)
{
    FERRY_TRY(read_once(file, buf, len, offset, done));
    if (*done == len || !client_caches(file)) return 0;
    return read_to_server_end(file, buf, len, offset, done);
}

static int posix_pwrite(ferry__fs_file_t *file, const void *buf, size_t len, MPI_Offset offset)
{
    size_t total = 0;
    while (total < len) {
        size_t want = len - total < POSIX_MAX_TRANSFER ? len - total : POSIX_MAX_TRANSFER;
        ssize_t put = ferry__posix_syscalls.pwrite(fd_of(file), (const char *)buf + total, want, (off_t)(offset + (MPI_Offset)total));
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) return os_error(errno, "write", file->path);
        if (put == 0) return os_error(ENOSPC, "write", file->path);
        total += (size_t)put;
    }
    return 0;
}

static int posix_sync(ferry__fs_file_t *file)
{
    int rc;
    do rc = ferry__posix_syscalls.fsync(fd_of(file));
    while (rc != 0 && errno == EINTR);
    if (rc != 0) return os_error(errno, "sync", file->path);
    /* The other half of sync-barrier-sync: what other nodes flushed is read fresh. */
    if (client_caches(file)) ferry__fs_drop_cached(fd_of(file), 0, 0);
    return 0;
}

static int posix_resize(ferry__fs_file_t *file, MPI_Offset size)
{
    int rc;
    do rc = ferry__posix_syscalls.ftruncate(fd_of(file), (off_t)size);
    while (rc != 0 && errno == EINTR);
    return rc != 0 ? os_error(errno, "set_size", file->path) : 0;
}

static int posix_allocate(ferry__fs_file_t *file, MPI_Offset size)
{
    if (size == 0) return 0;
    int err;
    do err = ferry__posix_syscalls.fallocate(fd_of(file), 0, (off_t)size);
    while (err == EINTR);
    return err != 0 ? os_error(err, "preallocate", file->path) : 0;
}

static int posix_size(ferry__fs_file_t *file, MPI_Offset *size)
{
    /* On a caching client another node may have grown the file since this client last asked. */
    MPI_Offset server = client_caches(file) ? ferry__fs_server_size(fd_of(file)) : -1;
    if (server >= 0) return *size = server, 0;
    struct stat st;
    if (fstat(fd_of(file), &st) != 0) return os_error(errno, "get_size", file->path);
    *size = (MPI_Offset)st.st_size;
    return 0;
}

/* A local or memory file system: the kernel's call and copy (the constants the
 * cost models were tuned with). A network client: a call, a lock and a byte
 * cross to the storage server and back; measured through tools/cluster's
 * GlusterFS clients (docs/cluster.md: 4 KiB reads and writes 123-134 us,
 * lock and unlock 185 us, 1.5-2.1 ns per byte in 64 MiB transfers). */
static void posix_costs(ferry__fs_layout_t *layout)
{
    int remote = layout->client_caches;
    layout->call_seconds = remote ? 130e-6 : 3.0e-6;
    layout->byte_seconds = remote ? 1.6e-9 : 0.1e-9;
    layout->lock_seconds = remote ? 185e-6 : 1.0e-6;
}

static int posix_layout(ferry__fs_file_t *file, ferry__fs_layout_t *layout)
{
    struct stat st;
    if (fstat(fd_of(file), &st) != 0) return os_error(errno, "layout", file->path);
    layout->block_size = st.st_blksize > 0 ? (MPI_Offset)st.st_blksize : 4096;
    layout->stripe_size = layout->block_size;
    layout->stripe_count = 1;
    struct statfs fs;
    int have_fs = fstatfs(fd_of(file), &fs) == 0;
    layout->memory_backed = have_fs && (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
    layout->client_caches = client_caches(file);
    snprintf(layout->kind, sizeof layout->kind, "%s", layout->memory_backed ? "memory" : "local");
    if (layout->client_caches) snprintf(layout->kind, sizeof layout->kind, "network client");
    posix_costs(layout);
    /* The name's prefix chose the layout code (names.c); without one, statfs does. */
    if (file->kind != FERRY_FS_KIND_UNIX) ferry__fs_network_layout(fd_of(file), file->path, file->kind, layout);
    return 0;
}

/* Open-file-description locks belong to the open file, not the process,
 * so two threads of one rank exclude each other too; plain POSIX locks
 * where the kernel predates them. */
#ifdef F_OFD_SETLKW
enum { LOCK_WAIT = F_OFD_SETLKW, LOCK_PROBE = F_OFD_GETLK };
#else
enum { LOCK_WAIT = F_SETLKW, LOCK_PROBE = -1 }; /* process locks cannot tell one open file from another */
#endif

static int lock_call(ferry__fs_file_t *file, int cmd, struct flock *lock, const char *op)
{
    int rc;
    do rc = ferry__posix_syscalls.lock(fd_of(file), cmd, lock);
    while (rc != 0 && errno == EINTR);
    if (rc == 0) return 0;
    int err = errno;
    if (err == ENOLCK || err == EOPNOTSUPP || err == EINVAL || err == ENOSYS)
        return ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION, "ferry: lock '%s': the file system refuses locks: %s",
                                file->path, strerror(err));
    return os_error(err, op, file->path);
}

static int posix_range_lock(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset len, short type)
{
    struct flock lock = {.l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)offset, .l_len = (off_t)len};
    return lock_call(file, LOCK_WAIT, &lock, type == F_UNLCK ? "unlock" : "lock");
}

/* Inside the lock the range is read fresh: the previous holder's writes
 * reached the server before it unlocked, and reads go direct (open_direct)
 * or, where the client refuses that, through dropped pages. A mark covers
 * no data; marks alone lie at FERRY_FS_LEASE_BASE and beyond. */
static int posix_lock(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset len, int mode)
{
    FERRY_TRY(posix_range_lock(file, offset, len, mode == FERRY_FS_LOCK_WRITE ? F_WRLCK : F_RDLCK));
    if (!client_caches(file) || mode == FERRY_FS_LOCK_MARK || offset >= FERRY_FS_LEASE_BASE) return 0;
    atomic_fetch_add(&((posix_file_t *)file)->locks_held, 1);
    ferry__fs_drop_cached(fd_of(file), offset, len);
    return 0;
}

static int posix_unlock(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset len)
{
    int rc = posix_range_lock(file, offset, len, F_UNLCK);
    if (client_caches(file) && offset < FERRY_FS_LEASE_BASE)
        atomic_fetch_sub(&((posix_file_t *)file)->locks_held, 1);
    return rc;
}

static int posix_probe(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset len, int mode, int *held)
{
    *held = 0;
    if (LOCK_PROBE < 0)
        return ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION, "ferry: lock '%s': no open-file-description locks",
                                file->path);
    struct flock lock = {.l_type = mode == FERRY_FS_LOCK_WRITE ? F_WRLCK : F_RDLCK, .l_whence = SEEK_SET,
                         .l_start = (off_t)offset, .l_len = (off_t)len};
    FERRY_TRY(lock_call(file, LOCK_PROBE, &lock, "probe lock"));
    *held = lock.l_type != F_UNLCK;
    return 0;
}

static void posix_advise(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset len, int advice)
{
    int kernel_advice = advice == FERRY_FS_WILLNEED    ? POSIX_FADV_WILLNEED
                        : advice == FERRY_FS_WRITEBACK ? FERRY_POSIX_WRITEBACK
                                                       : POSIX_FADV_DONTNEED;
    (void)ferry__posix_syscalls.advise(fd_of(file), (off_t)offset, (off_t)len, kernel_advice);
}

/* SEEK_DATA, then SEEK_HOLE from there (end of file counts as a hole). A
 * file system that cannot tell (EINVAL) or any other failure: data. A
 * caching client may place the end of file where it last heard it was
 * (read_to_server_end): there the server decides. */
static void posix_data_region(ferry__fs_file_t *file, MPI_Offset offset, MPI_Offset *start, MPI_Offset *end)
{
    *start = offset;
    *end = INT64_MAX;
#ifdef SEEK_DATA
    off_t data = ferry__posix_syscalls.seek(fd_of(file), (off_t)offset, SEEK_DATA);
    if (data < 0) { /* ENXIO: no data at or after offset, unless only this client's size says so */
        if (errno == ENXIO && !(client_caches(file) && ferry__fs_server_size(fd_of(file)) > offset))
            *start = INT64_MAX;
        return;
    }
    off_t hole = ferry__posix_syscalls.seek(fd_of(file), data, SEEK_HOLE);
    *start = (MPI_Offset)data;
    if (hole > data) *end = (MPI_Offset)hole;
#endif
}

const ferry__fs_ops_t ferry__fs_posix = {
    .name = "posix",
    .open = posix_open,
    .close = posix_close,
    .remove = posix_remove,
    .pread = posix_pread,
    .pwrite = posix_pwrite,
    .sync = posix_sync,
    .resize = posix_resize,
    .allocate = posix_allocate,
    .size = posix_size,
    .layout = posix_layout,
    .lock = posix_lock,
    .unlock = posix_unlock,
    .probe = posix_probe,
    .advise = posix_advise,
    .data_region = posix_data_region,
};

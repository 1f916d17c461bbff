/*
 * Clients that cache what another node changes.
 *
 * A network file system's client (FUSE, NFS, SMB, 9P) keeps a file's pages
 * in its own kernel's page cache, and another node's write does not
 * invalidate them: a read there can return bytes the file no longer holds.
 * Local and memory file systems have one cache for every process; Lustre
 * and GPFS revoke a client's pages through their lock managers. MPI-IO
 * promises fresh bytes only after sync, or inside a byte-range lock (atomic
 * mode, a read-modify-write), so those are where the POSIX driver drops
 * this client's pages of the range and reads past them (O_DIRECT, posix.c:
 * a drop skips pages another process of the node has locked for I/O in
 * flight, which may then hold another node's half-written bytes); writes
 * need nothing as long as the client writes through (GlusterFS and NFS
 * without write-back caching, docs/cluster.md).
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fs/fs_int.h"

/* statfs f_type values (linux/magic.h lacks some of them). */
enum {
    FUSE_MAGIC = 0x65735546,
    NFS_MAGIC = 0x6969,
    SMB2_MAGIC = 0xFE534D42,
    CIFS_MAGIC = 0xFF534D42,
    V9FS_MAGIC = 0x01021997,
};

static atomic_int assume_caching; /* ferry__fs_assume_caching_client: tests on a local file system */

void ferry__fs_assume_caching_client(int on)
{
    atomic_store(&assume_caching, on);
}

int ferry__fs_client_caches(int fd)
{
    if (atomic_load(&assume_caching)) return 1;
    struct statfs fs;
    if (fstatfs(fd, &fs) != 0) return 0;
    switch ((unsigned long)fs.f_type & 0xffffffffUL) {
    case FUSE_MAGIC:
    case NFS_MAGIC:
    case SMB2_MAGIC:
    case CIFS_MAGIC:
    case V9FS_MAGIC: return 1;
    default: return 0;
    }
}

/* Whole pages around the range: the kernel keeps the partial pages at its
 * ends, which may hold stale bytes of it. */
void ferry__fs_drop_cached(int fd, MPI_Offset offset, MPI_Offset len)
{
    long page = sysconf(_SC_PAGESIZE);
    MPI_Offset mask = (MPI_Offset)(page > 0 ? page : 4096) - 1;
    MPI_Offset start = offset & ~mask;
    MPI_Offset end = len > 0 && offset + len <= INT64_MAX - mask ? (offset + len + mask) & ~mask : 0;
    (void)ferry__posix_syscalls.advise(fd, (off_t)start, (off_t)(end > start ? end - start : 0),
                                       POSIX_FADV_DONTNEED);
}

/* A client answers fstat, and ends reads, with the size it last heard of:
 * FUSE mounted with attribute-timeout=0 still trusts it until the clock's
 * next tick, and skips a size the server reports while a write of this node
 * is growing the file. A statx that forces a round trip asks the server. */
MPI_Offset ferry__fs_server_size(int fd)
{
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, STATX_SIZE, &sx) != 0) return -1;
    return (MPI_Offset)sx.stx_size;
}

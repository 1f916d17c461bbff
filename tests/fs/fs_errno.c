/*
 * errno -> error class: the whole table (ferry__fs_errno_class), then every
 * mapping this machine can produce for real, through ferry_File_* on every
 * rank, with a message that names the file and the OS error:
 *   ENOENT, EEXIST, EISDIR, ENOTDIR, ENAMETOOLONG, ELOOP, ETXTBSY, ENXIO
 *   (-> MPI_ERR_IO), ENOSPC (/dev/full and a 1 MiB tmpfs), EROFS (a
 *   read-only tmpfs), EACCES and EPERM (root drops its file-system uid with
 *   setfsuid, which also drops CAP_DAC_OVERRIDE).
 * Parts the sandbox cannot set up (mount, setfsuid) are skipped with a
 * printed reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ferry_test.h"
#include "fs/fs.h"

static void table(void)
{
    static const struct {
        int err, cls;
    } expect[] = {
        {ENOENT, MPI_ERR_NO_SUCH_FILE}, {EACCES, MPI_ERR_ACCESS},     {EPERM, MPI_ERR_ACCESS},
        {ENOSPC, MPI_ERR_NO_SPACE},     {EDQUOT, MPI_ERR_QUOTA},      {EROFS, MPI_ERR_READ_ONLY},
        {EEXIST, MPI_ERR_FILE_EXISTS},  {ENAMETOOLONG, MPI_ERR_BAD_FILE}, {ENOTDIR, MPI_ERR_BAD_FILE},
        {EISDIR, MPI_ERR_BAD_FILE},     {ELOOP, MPI_ERR_BAD_FILE},    {EIO, MPI_ERR_IO},
        {ENXIO, MPI_ERR_IO},            {EINVAL, MPI_ERR_IO},         {EBADF, MPI_ERR_IO},
        {EFBIG, MPI_ERR_IO},            {0, MPI_ERR_IO},
    };
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
        if (ferry__fs_errno_class(expect[i].err) != expect[i].cls)
            ft_fail(__FILE__, __LINE__, "errno %d (%s) maps to class %d, expected %d", expect[i].err,
                    strerror(expect[i].err), ferry__fs_errno_class(expect[i].err), expect[i].cls);
    }
}

/* Open must fail on every rank with cls, the message naming path and the OS error. */
static void open_fails(const char *path, int amode, int cls, int err)
{
    ferry_File fh = (ferry_File)&fh;
    int rc = ferry_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh);
    ft_expect_fail(__FILE__, __LINE__, path, rc, cls, path);
    if (err) ft_expect_fail(__FILE__, __LINE__, path, rc, cls, strerror(err));
    FT_CHECK(fh == FERRY_FILE_NULL);
}

static void make_file(const char *path, mode_t mode)
{
    if (ft_rank == 0) {
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, mode);
        FT_CHECK(fd >= 0);
        FT_EQ(write(fd, "0123456789", 10), 10);
        close(fd);
        FT_EQ(chmod(path, mode), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void names(void)
{
    const char *dir = ft_scratch_dir();
    const char *file = ft_path("plain");
    make_file(file, 0644);
    open_fails(ft_path("missing"), MPI_MODE_RDWR, MPI_ERR_NO_SUCH_FILE, ENOENT);
    open_fails(ft_path("no-such-dir/f"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_ERR_NO_SUCH_FILE, ENOENT);
    open_fails(file, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_ERR_FILE_EXISTS, EEXIST);
    open_fails(dir, MPI_MODE_RDWR, MPI_ERR_BAD_FILE, EISDIR);
    open_fails(dir, MPI_MODE_RDONLY, MPI_ERR_BAD_FILE, EISDIR);
    open_fails(ft_path("plain/x"), MPI_MODE_RDONLY, MPI_ERR_BAD_FILE, ENOTDIR);
    char longname[400];
    memset(longname, 'n', 300);
    longname[300] = '\0';
    /* Messages are cut at MPI_MAX_ERROR_STRING (256 on Open MPI): look for the start of the path only. */
    ferry_File fh = (ferry_File)&fh;
    FT_FAILS_NAMING(MPI_ERR_BAD_FILE, dir,
                    ferry_File_open(MPI_COMM_WORLD, ft_path(longname), MPI_MODE_CREATE | MPI_MODE_RDWR,
                                    MPI_INFO_NULL, &fh));
    FT_CHECK(fh == FERRY_FILE_NULL);
    const char *loop_a = ft_path("loop-a"), *loop_b = ft_path("loop-b");
    if (ft_rank == 0) {
        FT_EQ(symlink(loop_b, loop_a), 0);
        FT_EQ(symlink(loop_a, loop_b), 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    open_fails(loop_a, MPI_MODE_RDONLY, MPI_ERR_BAD_FILE, ELOOP);
    FT_FAILS_NAMING(MPI_ERR_NO_SUCH_FILE, "missing", ferry_File_delete(ft_path("missing"), MPI_INFO_NULL));
    FT_FAILS_NAMING(MPI_ERR_BAD_FILE, "plain/x", ferry_File_delete(ft_path("plain/x"), MPI_INFO_NULL));
}

/* Writing a running executable: ETXTBSY -> MPI_ERR_FILE_IN_USE. */
static void busy(void)
{
    char self[512];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        ft_skip("ETXTBSY: cannot read /proc/self/exe");
        return;
    }
    self[n] = '\0';
    open_fails(self, MPI_MODE_WRONLY, MPI_ERR_FILE_IN_USE, ETXTBSY);
}

/* Opening a Unix socket: ENXIO, which has no class of its own -> MPI_ERR_IO. */
static void other_errors(void)
{
    const char *path = ft_path("socket");
    int sock = -1;
    if (ft_rank == 0) {
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        if (strlen(path) < sizeof addr.sun_path) {
            strcpy(addr.sun_path, path);
            sock = socket(AF_UNIX, SOCK_STREAM, 0);
            if (sock >= 0 && bind(sock, (struct sockaddr *)&addr, sizeof addr) != 0) {
                close(sock);
                sock = -1;
            }
        }
    }
    int made = sock >= 0;
    MPI_Bcast(&made, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!made) {
        ft_skip("ENXIO: cannot bind a Unix socket at %s", path);
        return;
    }
    open_fails(path, MPI_MODE_RDONLY, MPI_ERR_IO, ENXIO);
    if (sock >= 0) close(sock);
}

static void no_space_dev_full(void)
{
    if (access("/dev/full", W_OK) != 0) {
        ft_skip("ENOSPC: no /dev/full");
        return;
    }
    ferry_File fh;
    char buf[4096] = {0};
    FT_OK(ferry_File_open(MPI_COMM_WORLD, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    FT_FAILS_NAMING(MPI_ERR_NO_SPACE, "/dev/full", ferry_File_write_at(fh, 0, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_FAILS_NAMING(MPI_ERR_NO_SPACE, strerror(ENOSPC),
                    ferry_File_write_all(fh, buf, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Offset pos = -1;
    FT_OK(ferry_File_get_position(fh, &pos));
    FT_EQ(pos, 0); /* a failed write does not move the pointer */
    FT_OK(ferry_File_close(&fh));
}

/* rank 0 mounts a tmpfs at dir; returns 1 on every rank if it worked. */
static int mount_tmpfs(const char *dir, unsigned long flags, const char *options)
{
    int ok = 1;
    if (ft_rank == 0) {
        mkdir(dir, 0755);
        ok = mount("ferry-test", dir, "tmpfs", flags, options) == 0;
        if (!ok) ft_skip("mount -t tmpfs -o %s: %s", options, strerror(errno));
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return ok;
}

static void unmount(const char *dir)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0 && umount(dir) != 0) ft_fail(__FILE__, __LINE__, "umount %s: %s", dir, strerror(errno));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void no_space_tmpfs(void)
{
    const char *dir = ft_path("small");
    if (!mount_tmpfs(dir, 0, "size=1m")) return;
    char path[600];
    snprintf(path, sizeof path, "%s/f", dir);
    ferry_File fh;
    enum { N = 2 << 20 };
    char *buf = calloc(1, N);
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_FAILS_NAMING(MPI_ERR_NO_SPACE, path, ferry_File_preallocate(fh, N));
    int rc = ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * N, buf, N, MPI_BYTE, MPI_STATUS_IGNORE);
    ft_expect_fail(__FILE__, __LINE__, "write_at_all on a full tmpfs", rc, MPI_ERR_NO_SPACE, NULL);
    FT_OK(ferry_File_close(&fh));
    free(buf);
    unmount(dir);
}

static void read_only_fs(void)
{
    const char *dir = ft_path("ro");
    if (!mount_tmpfs(dir, 0, "size=1m")) return;
    char path[600], fresh[600];
    snprintf(path, sizeof path, "%s/existing", dir);
    snprintf(fresh, sizeof fresh, "%s/new", dir);
    make_file(path, 0644);
    int ok = 1;
    if (ft_rank == 0 && mount("ferry-test", dir, "tmpfs", MS_REMOUNT | MS_RDONLY, "size=1m") != 0) {
        ft_skip("EROFS: remount read-only: %s", strerror(errno));
        ok = 0;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ok) {
        open_fails(fresh, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_ERR_READ_ONLY, EROFS);
        open_fails(path, MPI_MODE_RDWR, MPI_ERR_READ_ONLY, EROFS);
        FT_FAILS_NAMING(MPI_ERR_READ_ONLY, path, ferry_File_delete(path, MPI_INFO_NULL));
        ferry_File fh; /* reading still works */
        FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        char back[10];
        FT_OK(ferry_File_read_at_all(fh, 0, back, 10, MPI_BYTE, MPI_STATUS_IGNORE));
        FT_EQ_MEM(back, "0123456789", 10);
        FT_OK(ferry_File_close(&fh));
    }
    unmount(dir);
}

/* As root, setfsuid to an unprivileged uid drops CAP_DAC_OVERRIDE for
 * file-system checks on this thread, which is the thread ferry opens from. */
static void permissions(void)
{
    if (geteuid() != 0) {
        ft_skip("EACCES/EPERM: needs root to switch the file-system uid");
        return;
    }
    const char *dir = ft_scratch_dir();
    const char *secret = ft_path("secret");
    const char *sticky = ft_path("sticky"), *victim = ft_path("sticky/victim");
    if (ft_rank == 0) {
        FT_EQ(chmod(dir, 0755), 0);
        FT_EQ(mkdir(sticky, 01777), 0);
        FT_EQ(chmod(sticky, 01777), 0);
    }
    make_file(secret, 0600);
    make_file(victim, 0644);
    setfsuid(65534);
    if (setfsuid((uid_t)-1) != 65534) {
        ft_skip("EACCES/EPERM: setfsuid is not permitted");
        return;
    }
    open_fails(secret, MPI_MODE_RDONLY, MPI_ERR_ACCESS, EACCES);
    open_fails(victim, MPI_MODE_WRONLY, MPI_ERR_ACCESS, EACCES);
    /* Unlinking another user's file in a sticky directory: EPERM. */
    int rc = ferry_File_delete(victim, MPI_INFO_NULL);
    ft_expect_fail(__FILE__, __LINE__, "delete in a sticky directory", rc, MPI_ERR_ACCESS, victim);
    ft_expect_fail(__FILE__, __LINE__, "delete in a sticky directory", rc, MPI_ERR_ACCESS, strerror(EPERM));
    setfsuid(0);
    FT_EQ(setfsuid((uid_t)-1), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    FT_CHECK(access(victim, F_OK) == 0);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    table();
    names();
    busy();
    other_errors();
    no_space_dev_full();
    no_space_tmpfs();
    read_only_fs();
    permissions();
    return ft_finish();
}

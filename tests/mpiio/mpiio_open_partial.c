/*
 * Open failing on only some ranks (MPI-3.1 13.2.1 makes open collective):
 * every rank must return an error -- the failing rank its own class and
 * message, the others the failing rank's class with a message naming that
 * rank and its file -- no rank may hang, and no rank may keep a file
 * descriptor. The same for other collectives that fail on one rank.
 * Runs on 3 ranks so a failure can sit in the middle.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ferry_test.h"
#include "fs/fs.h"

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int n = 0;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* Opens `path` (this rank's) with `amode` on every rank; expects failure with
 * my_cls on this rank. `failer` is the lowest failing rank; non-failing ranks
 * must name it and `failer_needle`. */
static void expect_open_failure(const char *path, int amode, int my_cls, int failing, int failer,
                                const char *failer_needle)
{
    int before = open_fds();
    ferry_File fh = (ferry_File)&fh;
    int rc = ferry_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh);
    FT_CHECK(fh == FERRY_FILE_NULL);
    if (failing) {
        ft_expect_fail(__FILE__, __LINE__, path, rc, my_cls, path);
    } else {
        char rank_text[32];
        snprintf(rank_text, sizeof rank_text, "rank %d", failer);
        ft_expect_fail(__FILE__, __LINE__, path, rc, my_cls, rank_text);
        ft_expect_fail(__FILE__, __LINE__, path, rc, my_cls, failer_needle);
    }
    FT_EQ(open_fds(), before);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    FT_CHECK(ft_size >= 3);
    const char *good = ft_path("good");
    const char *dir = ft_path("a-directory");
    const char *missing = ft_path("no-dir/file");
    if (ft_rank == 0) FT_EQ(mkdir(dir, 0755), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    const int rw_create = MPI_MODE_CREATE | MPI_MODE_RDWR;

    /* Rank 1 names a directory. Rank 0 created 'good' and removes it again: a failed open leaves no new file. */
    expect_open_failure(ft_rank == 1 ? dir : good, rw_create, MPI_ERR_BAD_FILE, ft_rank == 1, 1, "a-directory");
    FT_CHECK(access(good, F_OK) != 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0) fclose(fopen(good, "w"));
    MPI_Barrier(MPI_COMM_WORLD);
    /* The last rank names a file in a missing directory; the file exists for the others, and stays. */
    expect_open_failure(ft_rank == ft_size - 1 ? missing : good, MPI_MODE_RDWR, MPI_ERR_NO_SUCH_FILE,
                        ft_rank == ft_size - 1, ft_size - 1, "no-dir/file");
    FT_CHECK(access(good, F_OK) == 0);
    /* Rank 0, the creator, fails to create; nobody else may create or open anything. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0) unlink(good);
    MPI_Barrier(MPI_COMM_WORLD);
    expect_open_failure(ft_rank == 0 ? missing : good, rw_create, MPI_ERR_NO_SUCH_FILE, ft_rank == 0, 0,
                        "no-dir/file");
    FT_CHECK(access(good, F_OK) != 0);
    /* Rank 1 alone passes an illegal amode. */
    expect_open_failure(good, ft_rank == 1 ? MPI_MODE_RDONLY | MPI_MODE_CREATE : rw_create, MPI_ERR_AMODE,
                        ft_rank == 1, 1, "amode");
    /* Two ranks fail differently: each keeps its own class, the others get the lowest failing rank's. */
    if (ft_rank == 1)
        expect_open_failure(dir, rw_create, MPI_ERR_BAD_FILE, 1, 1, NULL);
    else if (ft_rank == 2)
        expect_open_failure(missing, rw_create, MPI_ERR_NO_SUCH_FILE, 1, 1, NULL);
    else
        expect_open_failure(good, rw_create, MPI_ERR_BAD_FILE, 0, 1, "a-directory");
    /* The file rank 0 created is not there for rank 1 (a storage server died with its only copy:
     * GlusterFS answers ENOENT): a lost file is an I/O error, not a wrong name (cluster-faults,
     * brick-kill/ckpt at 4 nodes). */
    FT_EQ(ferry__fs_fault_arm("open:1:ENOENT@1"), 0);
    expect_open_failure(good, rw_create, MPI_ERR_IO, ft_rank == 1, 1, "does not find it");
    ferry__fs_fault_disarm();
    FT_CHECK(access(good, F_OK) != 0);
    /* A NULL file name on one rank. */
    expect_open_failure(ft_rank == 1 ? NULL : good, rw_create, MPI_ERR_BAD_FILE, ft_rank == 1, 1, "file name");

    /* After all that, a normal open works and leaves nothing behind. */
    int before = open_fds();
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, good, rw_create, MPI_INFO_NULL, &fh));
    int value = ft_rank;
    FT_OK(ferry_File_write_at_all(fh, ft_rank * 4, &value, 1, MPI_INT, MPI_STATUS_IGNORE));

    /* Collective data access failing on one rank fails on all of them. */
    int rc = ferry_File_write_at_all(fh, ft_rank == 1 ? -4 : ft_rank * 4, &value, 1, MPI_INT, MPI_STATUS_IGNORE);
    ft_expect_fail(__FILE__, __LINE__, "write_at_all", rc, MPI_ERR_ARG, ft_rank == 1 ? "negative" : "rank 1");
    rc = ferry_File_read_all(fh, &value, ft_rank == 2 ? -1 : 1, MPI_INT, MPI_STATUS_IGNORE);
    ft_expect_fail(__FILE__, __LINE__, "read_all", rc, MPI_ERR_COUNT, ft_rank == 2 ? "count" : "rank 2");
    MPI_Offset pos = -1;
    FT_OK(ferry_File_get_position(fh, &pos));
    FT_EQ(pos, 0);
    rc = ferry_File_set_view(fh, ft_rank == 0 ? -1 : 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    ft_expect_fail(__FILE__, __LINE__, "set_view", rc, MPI_ERR_ARG, ft_rank == 0 ? "displacement" : "rank 0");
    MPI_Datatype etype, filetype;
    MPI_Offset disp = -1;
    char rep[MPI_MAX_DATAREP_STRING];
    FT_OK(ferry_File_get_view(fh, &disp, &etype, &filetype, rep)); /* the view did not change on any rank */
    FT_EQ(disp, 0);
    FT_CHECK(etype == MPI_BYTE && filetype == MPI_BYTE);
    MPI_Offset size_before = -1, size_after = -2;
    FT_OK(ferry_File_get_size(fh, &size_before));
    rc = ferry_File_set_size(fh, ft_rank == 2 ? -5 : 100);
    ft_expect_fail(__FILE__, __LINE__, "set_size", rc, MPI_ERR_ARG, ft_rank == 2 ? "negative" : "rank 2");
    rc = ferry_File_preallocate(fh, ft_rank == 1 ? -5 : 1000);
    ft_expect_fail(__FILE__, __LINE__, "preallocate", rc, MPI_ERR_ARG, ft_rank == 1 ? "negative" : "rank 1");
    FT_OK(ferry_File_get_size(fh, &size_after));
    FT_EQ(size_after, size_before); /* a failed collective resize changed nothing */
    /* seek_shared: the negative result of a relative seek is found on rank 0 alone (which reads the pointer). */
    rc = ferry_File_seek_shared(fh, -1, MPI_SEEK_CUR);
    ft_expect_fail(__FILE__, __LINE__, "seek_shared", rc, MPI_ERR_ARG, ft_rank == 0 ? "negative" : "rank 0");

    for (int r = 0; r < ft_size; r++) {
        FT_OK(ferry_File_read_at(fh, r * 4, &value, 1, MPI_INT, MPI_STATUS_IGNORE));
        FT_EQ(value, r);
    }
    FT_OK(ferry_File_close(&fh));
    FT_EQ(open_fds(), before);
    return ft_finish();
}

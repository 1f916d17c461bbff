/*
 * Collective calls where the file system fails on some ranks only: every
 * rank must return an error (the failing rank its own class and cause, the
 * others the same class and a message naming the failing rank), nobody
 * hangs, and the file handle stays usable. Also: short transfers and EINTR
 * are absorbed by the transfer loop without changing a byte.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"
#include "fs/fs.h"

enum { BLOCK = 1 << 16 };

/* Checks the agreed outcome of a collective that failed on failing_rank. */
static void expect_agreed_failure(int code, int cls, int failing_rank, const char *path_part)
{
    FT_CHECK(code != MPI_SUCCESS);
    FT_EQ(ft_class(code), cls);
    if (ft_rank == failing_rank) {
        if (!strstr(ft_message, path_part)) ft_fail(__FILE__, __LINE__, "message lacks the file: %s", ft_message);
    } else {
        char who[32];
        snprintf(who, sizeof who, "rank %d", failing_rank);
        if (!strstr(ft_message, who)) ft_fail(__FILE__, __LINE__, "message does not name %s: %s", who, ft_message);
    }
}

static void test_write_all_fails_on_one_rank(void)
{
    const char *path = ft_path("write_all");
    char *buf = malloc(BLOCK);
    ft_fill(buf, BLOCK, ft_seed);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_OK(ferry__fs_fault_arm("write:1:ENOSPC@1"));
    int rc = ft_capture(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * BLOCK, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    expect_agreed_failure(rc, MPI_ERR_NO_SPACE, 1, "write_all");
    /* The handle still works: the same collective now succeeds everywhere. */
    FT_OK(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * BLOCK, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    /* Individual pointer: a failed collective leaves it in place on every rank. */
    FT_OK(ferry__fs_fault_arm("write:1:EIO@0"));
    rc = ft_capture(ferry_File_write_all(fh, buf, 16, MPI_BYTE, MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    expect_agreed_failure(rc, MPI_ERR_IO, 0, "write_all");
    MPI_Offset position = -1;
    FT_OK(ferry_File_get_position(fh, &position));
    FT_EQ(position, 0);
    FT_OK(ferry_File_close(&fh));
    free(buf);
}

static void test_read_all_fails_on_last_rank(void)
{
    const char *path = ft_path("read_all");
    char *buf = malloc(BLOCK);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * BLOCK, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    int last = ft_size - 1;
    char spec[64];
    snprintf(spec, sizeof spec, "read:1:EIO@%d", last);
    FT_OK(ferry__fs_fault_arm(spec));
    int rc = ft_capture(ferry_File_read_at_all(fh, (MPI_Offset)ft_rank * BLOCK, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    expect_agreed_failure(rc, MPI_ERR_IO, last, "read_all");
    FT_OK(ferry_File_close(&fh));
    free(buf);
}

/* Early ranks (contiguous, at least cb_buffer_size) fail before the call's
 * inputs are gathered: the gather carries the class, the call still ends
 * everywhere with the agreed error, and the handle stays usable. */
static void test_early_transfers_fail_on_one_rank(void)
{
    const char *path = ft_path("early");
    char *buf = malloc(BLOCK);
    ft_fill(buf, BLOCK, ft_seed ^ 3);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "65536");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    FT_OK(ferry__fs_fault_arm("write:1:EIO@1"));
    int rc = ft_capture(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * BLOCK, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    expect_agreed_failure(rc, MPI_ERR_IO, 1, "early");
    FT_OK(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * BLOCK, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    /* The failed call's other ranks had moved their bytes: a collective error leaves the file undefined. */
    FT_EQ(ft_info_number(fh, "ferry_stats_coll_early_bytes"), ft_rank == 1 ? BLOCK : 2 * BLOCK);
    int last = ft_size - 1;
    char spec[64];
    snprintf(spec, sizeof spec, "read:1:ENOSPC@%d", last);
    FT_OK(ferry__fs_fault_arm(spec));
    rc = ft_capture(ferry_File_read_at_all(fh, (MPI_Offset)ft_rank * BLOCK, buf, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    expect_agreed_failure(rc, MPI_ERR_NO_SPACE, last, "early");
    FT_OK(ferry_File_close(&fh));
    free(buf);
}

static void test_open_fails_on_one_rank(void)
{
    const char *path = ft_path("open");
    ferry_File fh = (ferry_File)&fh; /* must come back FERRY_FILE_NULL */
    FT_OK(ferry__fs_fault_arm("open:1:EACCES@0"));
    int rc = ft_capture(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    ferry__fs_fault_disarm();
    expect_agreed_failure(rc, MPI_ERR_ACCESS, 0, "open");
    FT_CHECK(fh == FERRY_FILE_NULL);
    /* Rank 0 creates first; a non-zero rank failing afterwards fails everyone too. */
    FT_OK(ferry__fs_fault_arm("open:1:ENOMEM@1"));
    rc = ft_capture(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    ferry__fs_fault_disarm();
    if (ft_size > 1) {
        expect_agreed_failure(rc, MPI_ERR_NO_MEM, 1, "open");
        FT_CHECK(fh == FERRY_FILE_NULL);
    } else {
        FT_OK(rc);
        FT_OK(ferry_File_close(&fh));
    }
}

static void test_sync_and_set_size_fail(void)
{
    const char *path = ft_path("sync");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_OK(ferry__fs_fault_arm("sync:1:EIO@0"));
    int rc = ft_capture(ferry_File_sync(fh));
    ferry__fs_fault_disarm();
    expect_agreed_failure(rc, MPI_ERR_IO, 0, "sync");
    FT_OK(ferry__fs_fault_arm("resize:1:EROFS"));
    rc = ft_capture(ferry_File_set_size(fh, 100));
    ferry__fs_fault_disarm();
    expect_agreed_failure(rc, MPI_ERR_READ_ONLY, 0, "set_size");
    FT_OK(ferry__fs_fault_arm("allocate:1:EDQUOT"));
    rc = ft_capture(ferry_File_preallocate(fh, 100));
    ferry__fs_fault_disarm();
    expect_agreed_failure(rc, MPI_ERR_QUOTA, 0, "preallocate");
    FT_OK(ferry_File_close(&fh));
}

/* Short transfers and EINTR on every call: the loop finishes the job. */
static void test_short_and_interrupted_transfers(void)
{
    const char *path = ft_path("short");
    enum { N = 3 * BLOCK + 17 };
    char *out = malloc(N), *in = malloc(N);
    ft_fill(out, N, ft_seed ^ 7);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_OK(ferry__fs_fault_arm("write:1+:short;read:1:EINTR;read:2+:short;sync:1:EINTR"));
    MPI_Status status;
    FT_OK(ferry_File_write_at_all(fh, (MPI_Offset)ft_rank * N, out, N, MPI_BYTE, &status));
    FT_OK(ferry_File_sync(fh));
    FT_OK(ferry_File_read_at_all(fh, (MPI_Offset)ft_rank * N, in, N, MPI_BYTE, &status));
    ferry__fs_fault_disarm();
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    FT_EQ(count, N);
    FT_EQ_MEM(in, out, N);
    FT_OK(ferry_File_close(&fh));
    free(out);
    free(in);
}

static void test_bad_spec_is_rejected(void)
{
    FT_FAILS(MPI_ERR_ARG, ferry__fs_fault_arm("frobnicate:1"));
    FT_FAILS(MPI_ERR_ARG, ferry__fs_fault_arm("write:0"));
    FT_FAILS(MPI_ERR_ARG, ferry__fs_fault_arm("write:1:ENOTANERRNO"));
    ferry__fs_fault_disarm();
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    test_write_all_fails_on_one_rank();
    test_read_all_fails_on_last_rank();
    test_early_transfers_fail_on_one_rank();
    test_open_fails_on_one_rank();
    test_sync_and_set_size_fail();
    test_short_and_interrupted_transfers();
    test_bad_spec_is_rejected();
    return ft_finish();
}

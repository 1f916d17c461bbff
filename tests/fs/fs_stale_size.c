/*
 * A read that ends early on a caching network client (issue 27): the client
 * may end a read where it last heard the file ended while the server's file
 * is longer (tools/cluster's GlusterFS clients did, inside a read-modify-
 * write's lock, and zeros went over another node's bytes). On a file treated
 * as on such a client (ferry__fs_assume_caching_client), a read the fault
 * injector ends at 0 bytes ("stale") must come back whole: a plain read
 * with its full count, a sieving write's window keeping the bytes of its
 * holes, the size as the server has it, a two-phase window's "no data
 * from here on" (SEEK_DATA's ENXIO) only where the server's file ends; and
 * a client that never catches up gives MPI_ERR_IO naming both ends, never
 * a short count.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include "ferry_test.h"
#include "fs/fs.h"

enum { BYTES = 64 * 1024, BLOCK = 8 };

static ferry_File open_filled(const char *name, char *pattern)
{
    ferry_File fh;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "enable");
    FT_OK(ferry_File_open(MPI_COMM_SELF, ft_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    ft_fill(pattern, BYTES, ft_seed);
    FT_OK(ferry_File_write_at(fh, 0, pattern, BYTES, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_sync(fh));
    return fh;
}

static void test_plain_read(void)
{
    static char pattern[BYTES], back[BYTES];
    ferry_File fh = open_filled("stale_read", pattern);
    MPI_Status status;
    int count = -1;
    FT_OK(ferry__fs_fault_arm("read:1:stale"));
    FT_OK(ferry_File_read_at(fh, 0, back, BYTES, MPI_BYTE, &status));
    ferry__fs_fault_disarm();
    MPI_Get_count(&status, MPI_BYTE, &count);
    FT_EQ(count, BYTES);
    FT_EQ_MEM(back, pattern, BYTES);
    MPI_Offset size = -1;
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, BYTES);
    FT_OK(ferry_File_close(&fh));
}

/* Every other 8-byte block rewritten through a view: sieving reads the
 * window, patches the blocks and writes the window back; the holes' bytes
 * must survive a window read that ended at 0. */
static void test_sieving_write(void)
{
    static char pattern[BYTES], mine[BYTES / 2], back[BYTES];
    ferry_File fh = open_filled("stale_sieve", pattern);
    MPI_Datatype vec, view;
    FT_OK(MPI_Type_vector(1, BLOCK, 2 * BLOCK, MPI_BYTE, &vec));
    FT_OK(MPI_Type_create_resized(vec, 0, 2 * BLOCK, &view));
    FT_OK(MPI_Type_commit(&view));
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, view, "native", MPI_INFO_NULL));
    memset(mine, 0x5a, sizeof mine);
    FT_OK(ferry__fs_fault_arm("read:1:stale"));
    FT_OK(ferry_File_write_at(fh, 0, mine, BYTES / 2, MPI_BYTE, MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    FT_CHECK(ft_info_number(fh, "ferry_stats_sieve_extra_bytes") > 0); /* it read a window */
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_read_at(fh, 0, back, BYTES, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < BYTES; i++)
        if (back[i] != ((i / BLOCK) % 2 ? pattern[i] : 0x5a))
            ft_fail(__FILE__, __LINE__, "byte %d: %d, not %d", i, back[i], (i / BLOCK) % 2 ? pattern[i] : 0x5a);
    FT_OK(ferry_File_close(&fh));
    MPI_Type_free(&view);
    MPI_Type_free(&vec);
}

static void test_never_catches_up(void)
{
    static char pattern[BYTES], back[BYTES];
    ferry_File fh = open_filled("stale_always", pattern);
    FT_OK(ferry_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    FT_OK(ferry__fs_fault_arm("read:1+:stale"));
    int rc = ft_capture(ferry_File_read_at(fh, 0, back, BYTES, MPI_BYTE, MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    FT_EQ(ft_class(rc), MPI_ERR_IO);
    FT_CHECK(strstr(ft_message, "the client ends the file at 0, its server at 65536") != NULL);
    FT_OK(ferry_File_close(&fh));
}

/* ENXIO from SEEK_DATA (injected: the number 6) below the server's end of file is data; past it, none. */
static void test_data_region(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s", ft_path("stale_region"));
    ferry__fs_file_t *f = NULL;
    FT_EQ(ferry__fs_open(path, FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, &f), 0);
    static char data[BYTES];
    FT_EQ(ferry__fs_pwrite(f, NULL, data, BYTES, 0), 0);
    MPI_Offset start, end;
    FT_EQ(ENXIO, 6);
    FT_EQ(ferry__fs_fault_arm("seek:1+:6"), 0);
    ferry__fs_data_region(f, BYTES / 2, &start, &end);
    FT_EQ(start, BYTES / 2);
    FT_EQ(end, INT64_MAX);
    ferry__fs_data_region(f, 2 * BYTES, &start, &end);
    FT_EQ(start, INT64_MAX);
    ferry__fs_fault_disarm();
    FT_EQ(ferry__fs_close(f), 0);
    unlink(path);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    ferry__fs_assume_caching_client(1);
    test_plain_read();
    test_sieving_write();
    test_never_catches_up();
    test_data_region();
    ferry__fs_assume_caching_client(0);
    return ft_finish();
}

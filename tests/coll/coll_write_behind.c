/*
 * Write-behind (ferry_write_behind): a collective write whose part on a rank
 * reaches the threshold starts that part's writeback before the closing
 * agreement (statistics count the bytes); below the threshold, with the
 * hint at 0, and on memory-backed files nothing starts; a failing advise
 * call changes nothing; the bytes are right in every case. Both paths: each
 * rank's own transfer (contiguous blocks) and two-phase (interleaved views).
 */
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "ferry_test.h"
#include "fs/fs.h"

enum { BLOCK = 1 << 20, BLOCKS = 5 }; /* 5 MiB per rank: above the 4 MiB default */

static int in_memory(void)
{
    struct statfs fs;
    FT_CHECK(statfs(ft_scratch_dir(), &fs) == 0);
    return fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC;
}

/* Writes this rank's BLOCKS blocks (contiguous, or dealt round robin with
 * the other ranks' when interleaved), reads everything back, checks it and
 * returns the writeback bytes this rank started. */
static long long write_and_check(const char *name, int interleaved, const char *key, const char *value)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (key) MPI_Info_set(info, (char *)key, (char *)value);
    if (interleaved) MPI_Info_set(info, "romio_cb_write", "enable");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path(name), MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Datatype block, filetype;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)BLOCK * ft_size, &filetype);
    MPI_Type_commit(&filetype);
    MPI_Offset disp = interleaved ? (MPI_Offset)ft_rank * BLOCK : (MPI_Offset)ft_rank * BLOCK * BLOCKS;
    FT_OK(ferry_File_set_view(fh, disp, MPI_BYTE, interleaved ? filetype : MPI_BYTE, "native", info));
    size_t mine = (size_t)BLOCK * BLOCKS;
    char *out = malloc(mine), *in = malloc(mine * (size_t)ft_size);
    ft_fill(out, mine, ft_seed + (uint64_t)ft_rank);
    FT_OK(ferry_File_write_all(fh, out, (int)mine, MPI_BYTE, MPI_STATUS_IGNORE));
    long long started = ft_info_number(fh, "ferry_stats_writeback_bytes");
    FT_OK(ferry_File_sync(fh));
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info));
    FT_OK(ferry_File_read_at_all(fh, 0, in, (int)(mine * (size_t)ft_size), MPI_BYTE, MPI_STATUS_IGNORE));
    for (int r = 0; r < ft_size; r++) {
        ft_fill(out, mine, ft_seed + (uint64_t)r);
        for (int b = 0; b < BLOCKS; b++) {
            size_t at = interleaved ? ((size_t)b * ft_size + r) * BLOCK : ((size_t)r * BLOCKS + b) * BLOCK;
            if (memcmp(in + at, out + (size_t)b * BLOCK, BLOCK) != 0)
                ft_fail(__FILE__, __LINE__, "%s: rank %d's block %d differs", name, r, b);
        }
    }
    FT_OK(ferry_File_close(&fh));
    MPI_Type_free(&block);
    MPI_Type_free(&filetype);
    MPI_Info_free(&info);
    free(out);
    free(in);
    return started;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    int memory = in_memory();
    if (ft_rank == 0 && memory) printf("coll_write_behind: %s is in memory: expecting no write-behind\n", ft_scratch_dir());
    long long mine = (long long)BLOCK * BLOCKS;

    /* Own transfers: each rank's whole range. */
    FT_EQ(write_and_check("own", 0, NULL, NULL), memory ? 0 : mine);
    FT_EQ(write_and_check("own_off", 0, "ferry_write_behind", "0"), 0);
    FT_EQ(write_and_check("own_below", 0, "ferry_write_behind", "8m"), 0);

    /* Two-phase: every aggregator's windows, the whole file over all ranks. */
    long long started = write_and_check("twophase", 1, NULL, NULL), total = 0;
    MPI_Allreduce(&started, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    FT_EQ(total, memory ? 0 : mine * ft_size);
    FT_EQ(write_and_check("twophase_off", 1, "ferry_write_behind", "0"), 0);

    /* Advice is advisory: a failing sync_file_range changes nothing. */
    FT_EQ(ferry__fs_fault_arm("advise:1+:EIO"), 0);
    FT_EQ(write_and_check("advise_fails", 0, NULL, NULL), memory ? 0 : mine);
    ferry__fs_fault_disarm();
    return ft_finish();
}

/*
 * Round trips: every rank writes its stream (random length, random write
 * sizes from 1 byte to several chunks, seeks back, holes, flushes), the
 * container is closed, then read back three ways: by the same ranks
 * (ferry_container_open_read), serially by rank 0 (every stream, any
 * position), and checked by verify; chunk alignment is checked in the file.
 * Configurations: one file, contiguous rank groups, one file per node;
 * block sizes 512 and the file system's; data checksums on, off and by
 * default (on); small and default buffers.
 */
#include <stdlib.h>

#include "container_model.h"
#include "ferry_test.h"

typedef struct config {
    int files;
    MPI_Offset block_size;
    int checksums;
    size_t buffer_size;
    size_t max_length, max_piece;
} config_t;

static void write_container(const char *path, const config_t *cfg, const ct_model_t *mine, uint64_t *state)
{
    ferry_container_params_t p = {0};
    p.block_size = cfg->block_size;
    p.files = cfg->files;
    p.data_checksums = cfg->checksums;
    p.buffer_size = cfg->buffer_size;
    /* Each rank its own chunk size: 0 (default), or 1 byte to 3 blocks. */
    uint64_t pick = ft_rand(state) % 4;
    p.chunk_size = pick == 0 && cfg->block_size ? 0 : 1 + (MPI_Offset)(ft_rand(state) % (3 * 4096));
    ferry_container_t c;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    ct_write(c, mine, 5);
    ferry_container_info_t info;
    FT_OK(ferry_container_info(c, &info));
    FT_EQ(info.length, mine->length);
    FT_EQ(info.stream, ft_rank);
    FT_EQ(info.streams, ft_size);
    FT_EQ(info.data_checksums, cfg->checksums != FERRY_CONTAINER_CHECKSUMS_OFF); /* on by default */
    FT_OK(ferry_container_close(&c));
    FT_CHECK(c == NULL);
}

static void check_serially(const char *path, const config_t *cfg)
{
    ferry_container_set_t set;
    int streams, files, complete;
    FT_OK(ferry_container_serial_open(path, 0, &set));
    FT_OK(ferry_container_serial_describe(set, &streams, &files, &complete));
    FT_EQ(streams, ft_size);
    FT_EQ(complete, 1);
    if (cfg->files > 0) FT_EQ(files, cfg->files < ft_size ? cfg->files : ft_size);
    for (int s = 0; s < streams; s++) {
        ct_model_t m;
        ct_model(ft_seed, s, cfg->max_length, cfg->max_piece, &m);
        ct_check_serial(set, s, &m);
    }
    ct_check_alignment(set);
    FT_OK(ferry_container_serial_close(&set));
    ferry_container_check_t check = {0};
    FT_OK(ferry_container_verify(path, &check));
    FT_EQ(check.problems, 0);
}

static void run(const config_t *cfg, int round)
{
    char name[64];
    snprintf(name, sizeof name, "roundtrip%d.ctr", round);
    const char *path = ft_path(name);
    uint64_t state = ft_seed + (uint64_t)round * 7919 + (uint64_t)ft_rank;
    ct_model_t mine;
    ct_model(ft_seed, ft_rank, cfg->max_length, cfg->max_piece, &mine);
    write_container(path, cfg, &mine, &state);
    if (ft_rank == 0) check_serially(path, cfg);
    ferry_container_t c;
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    ct_check_read(c, &mine);
    size_t done;
    char byte;
    FT_FAILS(MPI_ERR_READ_ONLY, ferry_container_write(c, "x", 1, &done));
    FT_OK(ferry_container_read(c, &byte, 1, &done));
    FT_EQ(done, 0);
    FT_OK(ferry_container_close(&c));
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const config_t configs[] = {
        {1, 512, 1, 100, 20000, 3000},
        {2, 512, FERRY_CONTAINER_CHECKSUMS_OFF, 0, 20000, 3000},
        {FERRY_CONTAINER_FILE_PER_NODE, 1024, 1, 4096, 50000, 9000},
        {3, 0, 1, 0, 300000, 100000},
        {0, 4096, 0, 1, 30000, 20000},
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) run(&configs[i], (int)i);
    return ft_finish();
}

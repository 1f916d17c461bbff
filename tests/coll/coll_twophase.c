/*
 * Two-phase collective I/O, byte for byte against a brute-force image of
 * the file, for every domain strategy, with windows forced tiny
 * (cb_buffer_size 8 KiB), fewer and more aggregators than ranks, ranks
 * with nothing to write, noncontiguous memory, holes inside the written
 * range (they keep their old bytes), holes past the old end of file (they
 * read back as zeros) and reads past the end of file. Then faults: an I/O
 * error on one aggregator in one window ends the call on every rank.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ferry_test.h"
#include "fs/fs.h"

enum { BLOCK = 24, ROUNDS = 1500, OLD = 0xAA };

typedef struct setting {
    const char *name;
    const char *keys[6][2];
    const char *strategy; /* expected prefix of ferry_stats_strategy */
} setting_t;

static const setting_t settings[] = {
    {"even, 1 aggregator", {{"ferry_cb_strategy", "even"}, {"cb_nodes", "1"}}, "two-phase even"},
    {"even, 2 aggregators", {{"ferry_cb_strategy", "even"}, {"cb_nodes", "2"}}, "two-phase even"},
    {"even, more aggregators than ranks", {{"ferry_cb_strategy", "even"}, {"cb_nodes", "64"}}, "two-phase even"},
    {"block_cyclic", {{"ferry_cb_strategy", "block_cyclic"}, {"IBM_io_buffer_size", "4096"}, {"cb_nodes", "3"}},
     "two-phase block_cyclic"},
    {"stripe_group k=1", {{"ferry_cb_strategy", "stripe_group"}, {"striping_unit", "4096"}, {"striping_factor", "4"}},
     "two-phase stripe_group"},
    {"stripe_group k=2",
     {{"ferry_cb_strategy", "stripe_group"}, {"striping_unit", "8192"}, {"striping_factor", "6"},
      {"ferry_cb_group_size", "2"}},
     "two-phase stripe_group"},
    {"one aggregator per node", {{"romio_cb_write", "enable"}, {"romio_cb_read", "enable"}, {"cb_config_list", "*:1"}},
     "two-phase"},
    {"auto", {{NULL, NULL}}, ""},
};

/* Rank r's view: blocks of BLOCK bytes, rank r's k-th at disp + k * stride. */
typedef struct pattern {
    MPI_Offset disp, stride;
    int gap;       /* blocks of nobody's between rounds */
    int memory_gaps; /* memory is a vector with holes */
    int idle_rank; /* this rank writes nothing (-1: none) */
} pattern_t;

static MPI_Offset block_offset(const pattern_t *p, int rank, MPI_Offset k)
{
    return p->disp + (MPI_Offset)rank * BLOCK + k * p->stride;
}

static MPI_Info make_info(const setting_t *s)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "8192");
    for (int i = 0; i < 6 && s->keys[i][0]; i++) MPI_Info_set(info, (char *)s->keys[i][0], (char *)s->keys[i][1]);
    return info;
}

static void set_view(ferry_File fh, const pattern_t *p)
{
    MPI_Datatype block, tile;
    MPI_Type_contiguous(BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)p->stride, &tile);
    MPI_Type_commit(&tile);
    FT_OK(ferry_File_set_view(fh, p->disp + (MPI_Offset)ft_rank * BLOCK, MPI_BYTE, tile, "native", MPI_INFO_NULL));
    MPI_Type_free(&tile);
    MPI_Type_free(&block);
}

/* Memory: the data back to back, or each block followed by a BLOCK-byte hole. */
static MPI_Datatype memory_type(const pattern_t *p, MPI_Count *count)
{
    MPI_Datatype type = MPI_BYTE;
    *count = (MPI_Count)ROUNDS * BLOCK;
    if (p->memory_gaps) {
        MPI_Type_vector(ROUNDS, BLOCK, 2 * BLOCK, MPI_BYTE, &type);
        MPI_Type_commit(&type);
        *count = 1;
    }
    if (ft_rank == p->idle_rank) *count = 0;
    return type;
}

static unsigned char data_byte(int rank, MPI_Offset k, int i)
{
    return (unsigned char)(rank * 61 + k * 7 + i + 1);
}

static void fill_memory(const pattern_t *p, unsigned char *mem)
{
    for (MPI_Offset k = 0; k < ROUNDS; k++)
        for (int i = 0; i < BLOCK; i++) mem[k * BLOCK * (p->memory_gaps ? 2 : 1) + i] = data_byte(ft_rank, k, i);
}

/* The file after the collective write on a file of `old_size` OLD bytes. */
static unsigned char *expected_image(const pattern_t *p, MPI_Offset old_size, MPI_Offset *size)
{
    *size = old_size;
    for (int r = 0; r < ft_size; r++) {
        MPI_Offset end = block_offset(p, r, ROUNDS - 1) + BLOCK;
        if (r != p->idle_rank && end > *size) *size = end;
    }
    unsigned char *image = calloc((size_t)*size, 1);
    memset(image, OLD, (size_t)old_size);
    for (int r = 0; r < ft_size; r++)
        for (MPI_Offset k = 0; r != p->idle_rank && k < ROUNDS; k++)
            for (int i = 0; i < BLOCK; i++) image[block_offset(p, r, k) + i] = data_byte(r, k, i);
    return image;
}

static void check_file(const char *path, const unsigned char *image, MPI_Offset size)
{
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char *got = malloc((size_t)size + 1);
    int fd = open(path, O_RDONLY);
    FT_CHECK(fd >= 0);
    FT_EQ(pread(fd, got, (size_t)size + 1, 0), (ssize_t)size);
    close(fd);
    FT_EQ_MEM(got, image, (size_t)size);
    free(got);
}

static void check_strategy(ferry_File fh, const char *prefix)
{
    const char *value = ft_info_string(fh, "ferry_stats_strategy");
    if (strncmp(value, prefix, strlen(prefix)) != 0)
        ft_fail(__FILE__, __LINE__, "strategy '%s', expected '%s...'", value, prefix);
}

static void run_case(const setting_t *s, const pattern_t *p, MPI_Offset old_size)
{
    const char *path = ft_path("twophase");
    if (ft_rank == 0) {
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        unsigned char *old = malloc((size_t)old_size + 1);
        memset(old, OLD, (size_t)old_size);
        FT_EQ(write(fd, old, (size_t)old_size), (ssize_t)old_size);
        close(fd);
        free(old);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Info info = make_info(s);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    set_view(fh, p);
    MPI_Count count;
    MPI_Datatype type = memory_type(p, &count);
    size_t mem_size = (size_t)ROUNDS * BLOCK * 2;
    unsigned char *mem = calloc(mem_size, 1), *back = malloc(mem_size);
    fill_memory(p, mem);
    MPI_Status st;
    FT_OK(ferry_File_write_at_all_c(fh, 0, mem, count, type, &st));
    MPI_Count bytes = -1;
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    FT_EQ(bytes, ft_rank == p->idle_rank ? 0 : (MPI_Count)ROUNDS * BLOCK);
    check_strategy(fh, s->strategy);
    MPI_Offset size;
    unsigned char *image = expected_image(p, old_size, &size);
    check_file(path, image, size);
    /* Read back through the view; the bytes the memory type skips stay as they were. */
    memset(back, 0x5C, mem_size);
    if (p->memory_gaps)
        for (size_t i = 0; i < mem_size; i++) mem[i] = (i / BLOCK) % 2 ? 0x5C : mem[i];
    FT_OK(ferry_File_read_at_all_c(fh, 0, back, count, type, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    FT_EQ(bytes, ft_rank == p->idle_rank ? 0 : (MPI_Count)ROUNDS * BLOCK);
    if (ft_rank != p->idle_rank) FT_EQ_MEM(back, mem, p->memory_gaps ? mem_size - BLOCK : (size_t)ROUNDS * BLOCK);
    /* Past the end of file: every rank asks for two rounds more than exist and gets the rest. */
    MPI_Offset rounds_left = 5;
    FT_OK(ferry_File_read_at_all(fh, (ROUNDS - rounds_left) * BLOCK, back, (int)(rounds_left + 2) * BLOCK, MPI_BYTE, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    MPI_Offset last_end = block_offset(p, ft_size - 1, ROUNDS - 1) + BLOCK;
    if (p->idle_rank == ft_size - 1) last_end = block_offset(p, ft_size - 2, ROUNDS - 1) + BLOCK;
    MPI_Offset expect = 0; /* blocks of this rank that start below the end of file */
    for (MPI_Offset k = ROUNDS - rounds_left; k < ROUNDS + 2; k++)
        if (block_offset(p, ft_rank, k) < size) expect += block_offset(p, ft_rank, k) + BLOCK <= size ? BLOCK : size - block_offset(p, ft_rank, k);
    FT_EQ(bytes, (MPI_Count)expect);
    (void)last_end;
    if (type != MPI_BYTE) MPI_Type_free(&type);
    FT_OK(ferry_File_close(&fh));
    free(image);
    free(mem);
    free(back);
}

static void test_faults(void)
{
    const char *path = ft_path("twophase_fault");
    setting_t s = {"even, 2 aggregators", {{"ferry_cb_strategy", "even"}, {"cb_nodes", "2"}}, "two-phase even"};
    pattern_t p = {0, (MPI_Offset)BLOCK * ft_size, 0, 0, -1};
    MPI_Info info = make_info(&s);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    set_view(fh, &p);
    unsigned char *mem = calloc((size_t)ROUNDS * BLOCK, 1);
    /* Aggregators are ranks 0 and 1 (one node): the k-th window write of each fails in turn (ENOSPC keeps its class). */
    for (int k = 1; k <= 3; k++)
        for (int agg = 0; agg < 2; agg++) {
            char spec[48], who[16];
            snprintf(spec, sizeof spec, "write:%d:ENOSPC@%d", k, agg);
            snprintf(who, sizeof who, "rank %d", agg);
            if (getenv("FERRY_TEST_VERBOSE")) fprintf(stderr, "rank %d: fault %s\n", ft_rank, spec);
            FT_OK(ferry__fs_fault_arm(spec));
            int rc = ft_capture(ferry_File_write_at_all(fh, 0, mem, ROUNDS * BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
            ferry__fs_fault_disarm();
            FT_EQ(ft_class(rc), MPI_ERR_NO_SPACE);
            if (ft_rank != agg && !strstr(ft_message, who)) ft_fail(__FILE__, __LINE__, "message: %s", ft_message);
        }
    if (getenv("FERRY_TEST_VERBOSE")) fprintf(stderr, "rank %d: short and EINTR\n", ft_rank);
    /* Short transfers and interruptions are absorbed: the call succeeds. */
    FT_OK(ferry__fs_fault_arm("write:1+:short;read:1:EINTR"));
    FT_OK(ferry_File_write_at_all(fh, 0, mem, ROUNDS * BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_read_at_all(fh, 0, mem, ROUNDS * BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    int rc;
    /* The handle still works, and a read whose aggregator fails ends everywhere too. */
    FT_OK(ferry_File_write_at_all(fh, 0, mem, ROUNDS * BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry__fs_fault_arm("read:1:EIO@0"));
    rc = ft_capture(ferry_File_read_at_all(fh, 0, mem, ROUNDS * BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    FT_EQ(ft_class(rc), MPI_ERR_IO);
    if (ft_rank != 0 && !strstr(ft_message, "rank 0")) ft_fail(__FILE__, __LINE__, "message: %s", ft_message);
    /* A bad argument on one rank: that rank's class, the others name it, nobody writes. */
    rc = ft_capture(ferry_File_write_at_all(fh, ft_rank == 2 ? -1 : 0, mem, 8, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ(ft_class(rc), MPI_ERR_ARG);
    FT_OK(ferry_File_close(&fh));
    free(mem);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    MPI_Offset tiled = (MPI_Offset)BLOCK * ft_size;
    const pattern_t patterns[] = {
        {0, tiled, 0, 0, -1},                  /* ranks tile the file: no read needed */
        {100, tiled + 3 * BLOCK, 3, 0, -1},    /* holes between rounds keep their bytes */
        {7, tiled, 0, 1, 1},                   /* noncontiguous memory, rank 1 idle */
    };
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++)
        for (size_t j = 0; j < sizeof patterns / sizeof patterns[0]; j++) {
            if (ft_rank == 0 && getenv("FERRY_TEST_VERBOSE")) printf("%s, pattern %zu\n", settings[i].name, j);
            run_case(&settings[i], &patterns[j], 5000); /* old contents end inside the written range */
        }
    if (ft_size >= 3) test_faults();
    return ft_finish();
}

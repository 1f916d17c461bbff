/*
 * A container writer (and checker) for the script tests: the tools, the
 * Python reader and kill -9 recovery. Streams follow container_model.h
 * under FERRY_TEST_SEED, so the checker and the scripts know every byte.
 *
 *   container_writer write PATH FILES BLOCK MAX_LENGTH [EXPECT_DIR]
 *       (MPI) every rank writes its stream; with EXPECT_DIR each rank also
 *       writes its stream's bytes to EXPECT_DIR/expected.<rank, 6 digits>
 *   container_writer crash PATH LEDGER_DIR
 *       (MPI) every rank writes pieces forever (until killed), flushing
 *       often; after each flush it records the flushed length in
 *       LEDGER_DIR/ledger.<rank>; LEDGER_DIR/pid.<rank> holds its pid and
 *       LEDGER_DIR/ready.<rank> appears after its first flush
 *   container_writer check-recovered PATH LEDGER_DIR STREAMS
 *       (serial) every stream holds at least the length its ledger names,
 *       and exactly the model's bytes up to its length
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container_model.h"
#include "ferry_test.h"

enum { CRASH_LENGTH = 64 << 20, CRASH_PIECE = 100000 };

static void write_expected(const char *dir, const ct_model_t *m)
{
    char name[1024];
    unsigned char *bytes = malloc(m->length + 1);
    ct_expected(m, bytes);
    snprintf(name, sizeof name, "%s/expected.%06d", dir, ft_rank);
    FILE *f = fopen(name, "wb");
    FT_CHECK(f && fwrite(bytes, 1, m->length, f) == m->length && fclose(f) == 0);
    free(bytes);
}

static int mode_write(int argc, char **argv)
{
    if (argc < 6) ft_fail(__FILE__, __LINE__, "usage: write PATH FILES BLOCK MAX_LENGTH [EXPECT_DIR]");
    ferry_container_params_t p = {0};
    p.files = atoi(argv[3]);
    p.block_size = atoll(argv[4]);
    p.chunk_size = 1 + ft_rank * 1500;
    p.data_checksums = 1;
    ferry_container_modes_t modes = {.buddy = getenv("CONTAINER_WRITER_BUDDY") != NULL}; /* container_python */
    ct_model_t m;
    ct_model(ft_seed, ft_rank, (size_t)atoll(argv[5]), 40000, &m);
    ferry_container_t c;
    FT_OK(ferry_container_open_write_modes(MPI_COMM_WORLD, argv[2], &p, &modes, &c));
    ct_write(c, &m, 4);
    FT_OK(ferry_container_close(&c));
    if (argc > 6) write_expected(argv[6], &m);
    return ft_finish();
}

static void put_number(const char *dir, const char *what, long long value)
{
    char name[1024], text[32];
    snprintf(name, sizeof name, "%s/%s.%d", dir, what, ft_rank);
    int n = snprintf(text, sizeof text, "%lld\n", value);
    int fd = open(name, O_WRONLY | O_CREAT, 0644);
    FT_CHECK(fd >= 0 && pwrite(fd, text, (size_t)n, 0) == n && ftruncate(fd, n) == 0 && close(fd) == 0);
}

static int mode_crash(int argc, char **argv)
{
    if (argc < 4) ft_fail(__FILE__, __LINE__, "usage: crash PATH LEDGER_DIR");
    ferry_container_params_t p = {0};
    p.block_size = 4096;
    p.chunk_size = 4096 * (1 + ft_rank % 3);
    p.data_checksums = 1; /* recover recomputes those of chunks no flush recorded */
    ct_model_t m;
    ct_model(ft_seed, ft_rank, CRASH_LENGTH, CRASH_PIECE, &m);
    m.length = CRASH_LENGTH;
    m.hole_start = m.hole_end = 0;
    unsigned char *bytes = malloc(m.length);
    ct_expected(&m, bytes);
    put_number(argv[3], "pid", (long long)getpid());
    ferry_container_t c;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, argv[2], &p, &c));
    uint64_t state = m.seed;
    for (size_t pos = 0, flushes = 0; pos < m.length;) {
        size_t len = 1 + (size_t)(ft_rand(&state) % CRASH_PIECE), done = 0;
        if (len > m.length - pos) len = m.length - pos;
        FT_OK(ferry_container_write(c, bytes + pos, len, &done));
        pos += done;
        usleep(2000); /* about 50 MB/s: the kill finds the writers busy */
        if (ft_rand(&state) % 3) continue;
        FT_OK(ferry_container_flush(c));
        put_number(argv[3], "ledger", (long long)pos);
        if (++flushes == 1) put_number(argv[3], "ready", 1);
    }
    pause(); /* wait for the kill */
    return 1;
}

static long long get_number(const char *dir, const char *what, int rank)
{
    char name[1024];
    long long value = -1;
    snprintf(name, sizeof name, "%s/%s.%d", dir, what, rank);
    FILE *f = fopen(name, "r");
    if (f && fscanf(f, "%lld", &value) != 1) value = -1;
    if (f) fclose(f);
    return value;
}

static int mode_check(int argc, char **argv)
{
    if (argc < 5) ft_fail(__FILE__, __LINE__, "usage: check-recovered PATH LEDGER_DIR STREAMS");
    ferry_container_set_t set;
    FT_OK(ferry_container_serial_open(argv[2], 0, &set));
    for (int s = 0; s < atoi(argv[4]); s++) {
        ct_model_t m;
        ct_model(ft_seed, s, CRASH_LENGTH, CRASH_PIECE, &m);
        ferry_container_info_t info;
        FT_OK(ferry_container_serial_stream(set, s, &info));
        long long flushed = get_number(argv[3], "ledger", s);
        printf("stream %d: %lld bytes flushed (ledger), %lld recovered\n", s, flushed, (long long)info.length);
        FT_CHECK(flushed >= 0 && info.length >= flushed && info.length <= CRASH_LENGTH);
        m.length = (size_t)info.length;
        m.hole_start = m.hole_end = 0;
        ct_check_serial(set, s, &m);
    }
    FT_OK(ferry_container_serial_close(&set));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "check-recovered") == 0) {
        const char *env = getenv("FERRY_TEST_SEED");
        ft_seed = env ? strtoull(env, NULL, 0) : 0;
        return mode_check(argc, argv);
    }
    ft_init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "write") == 0) return mode_write(argc, argv);
    if (argc > 1 && strcmp(argv[1], "crash") == 0) return mode_crash(argc, argv);
    ft_fail(__FILE__, __LINE__, "unknown mode");
    return 2;
}

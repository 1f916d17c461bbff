/*
 * Damaged containers give errors, never crashes or hangs: every byte of
 * the metadata flipped in turn, the file cut at many lengths, a newer
 * major version (refused, naming it) and a newer minor one (read), the
 * completion record wiped (incomplete: refused, readable with the flag,
 * recoverable), not a container at all, no file; a flipped data or trailer
 * byte is found by verify. Rank 0 does the serial part; the parallel opens
 * must fail on every rank alike.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container_model.h"
#include "ferry_test.h"

enum { MAX_LENGTH = 20000, MAX_PIECE = 4000, BLOCK = 512 };

static unsigned char *slurp(const char *path, size_t *len)
{
    struct stat st;
    FT_CHECK(stat(path, &st) == 0);
    unsigned char *bytes = malloc((size_t)st.st_size + 1);
    int fd = open(path, O_RDONLY);
    FT_CHECK(fd >= 0 && read(fd, bytes, (size_t)st.st_size) == st.st_size && close(fd) == 0);
    *len = (size_t)st.st_size;
    return bytes;
}

static void spit(const char *path, const unsigned char *bytes, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    FT_CHECK(fd >= 0 && write(fd, bytes, len) == (ssize_t)len && close(fd) == 0);
}

/* CRC-32C bit by bit: an oracle independent of the library's. */
static uint32_t crc32c(const unsigned char *p, size_t len)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < len; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
}

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void reseal_superblock(unsigned char *b)
{
    uint32_t c = crc32c(b, 252);
    for (int i = 0; i < 4; i++) b[252 + i] = (unsigned char)(c >> (8 * i));
}

/* Opens a damaged copy serially: an error of a file class, or success. */
static int try_open(const char *path, int flags)
{
    ferry_container_set_t set;
    int rc = ferry_container_serial_open(path, flags, &set);
    if (rc == MPI_SUCCESS) {
        int streams, files, complete;
        FT_OK(ferry_container_serial_describe(set, &streams, &files, &complete));
        for (int s = 0; s < streams; s++) {
            unsigned char buf[256];
            size_t done;
            int r = ferry_container_serial_read(set, s, 0, buf, sizeof buf, &done);
            FT_CHECK(r == MPI_SUCCESS || r == MPI_ERR_BAD_FILE);
        }
        FT_OK(ferry_container_serial_close(&set));
        return 0;
    }
    FT_CHECK(rc == MPI_ERR_BAD_FILE || rc == MPI_ERR_UNSUPPORTED_OPERATION || rc == MPI_ERR_NO_MEM);
    FT_CHECK(strstr(ferry_container_error_message(), "ferry container") != NULL);
    return rc;
}

static void flip_every_metadata_byte(const unsigned char *good, size_t len, const char *copy)
{
    unsigned char *bad = malloc(len);
    size_t metadata = 1024 + 32 * 3 + 4; /* superblock .. end of a 3-stream table at most */
    for (size_t at = 0; at < metadata && at < len; at++) {
        memcpy(bad, good, len);
        bad[at] ^= 0x5a;
        spit(copy, bad, len);
        int rc = try_open(copy, 0);
        if (at < 256 || (at >= 512 && at < 576)) FT_CHECK(rc != 0); /* every superblock and completion byte counts */
        try_open(copy, FERRY_CONTAINER_INCOMPLETE_OK);
        ferry_container_check_t check = {0};
        (void)ferry_container_verify(copy, &check);
    }
    free(bad);
}

static void cut_at_many_lengths(const unsigned char *good, size_t len, const char *copy)
{
    const size_t cuts[] = {0, 1, 7, 8, 100, 255, 256, 300, 511, 512, 575, 576, 1023, 1024, 1100, 1536, len / 3,
                           len / 2, len - 100, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        if (cuts[i] >= len) continue;
        spit(copy, good, cuts[i]);
        FT_CHECK(try_open(copy, 0) != 0);
        try_open(copy, FERRY_CONTAINER_INCOMPLETE_OK);
        MPI_Offset bytes;
        int was_complete;
        (void)ferry_container_recover(copy, &bytes, &was_complete);
    }
}

static void versions(const unsigned char *good, size_t len, const char *copy)
{
    unsigned char *b = malloc(len);
    memcpy(b, good, len);
    put16(b + 8, 2);
    reseal_superblock(b);
    spit(copy, b, len);
    FT_EQ(try_open(copy, 0), MPI_ERR_UNSUPPORTED_OPERATION);
    FT_CHECK(strstr(ferry_container_error_message(), "format 2.0 is newer than this reader (1.x)") != NULL);
    put16(b + 8, 1);
    put16(b + 10, 7); /* a newer minor version reads */
    reseal_superblock(b);
    spit(copy, b, len);
    FT_EQ(try_open(copy, 0), 0);
    free(b);
}

static void incomplete(const unsigned char *good, size_t len, const char *copy)
{
    unsigned char *b = malloc(len);
    memcpy(b, good, len);
    memset(b + 512, 0, 64);
    spit(copy, b, len);
    FT_EQ(try_open(copy, 0), MPI_ERR_BAD_FILE);
    FT_CHECK(strstr(ferry_container_error_message(), "ferry-container recover") != NULL);
    ferry_container_set_t set;
    FT_OK(ferry_container_serial_open(copy, FERRY_CONTAINER_INCOMPLETE_OK, &set));
    for (int s = 0; s < ft_size; s++) { /* every byte was flushed at close */
        ct_model_t m;
        ct_model(ft_seed, s, MAX_LENGTH, MAX_PIECE, &m);
        ct_check_serial(set, s, &m);
    }
    FT_OK(ferry_container_serial_close(&set));
    free(b);
}

/* A closed container whose end table or completion record is damaged, or
 * whose last byte is cut off: readers refuse it (naming the end table and
 * recover), verify counts it, and recover restores every stream from the
 * chunk trailers (issue 29 item 4: it refused these). */
static void end_table_damaged(const unsigned char *good, size_t len, const char *copy)
{
    size_t end_size = 32 + 16 * (size_t)ft_size + 4; /* the end table is the file's last bytes */
    for (int how = 0; how < 4; how++) {
        unsigned char *b = malloc(len);
        memcpy(b, good, len);
        size_t cut = how == 1 ? 1 : 0;
        if (how == 0) b[len - end_size + 20] ^= 0x40;              /* a reserved byte: the CRC fails */
        if (how == 2) b[len - 1] ^= 0x01;                          /* the end table's own CRC */
        if (how == 3) b[512 + 17] ^= 0x08;                         /* the completion record's end offset */
        spit(copy, b, len - cut);
        free(b);
        FT_EQ(try_open(copy, 0), MPI_ERR_BAD_FILE);
        FT_CHECK(strstr(ferry_container_error_message(), "ferry-container recover") != NULL);

        ferry_container_check_t check = {0};
        MPI_Offset bytes;
        int was_complete = 1;
        FT_OK(ferry_container_recover(copy, &bytes, &was_complete));
        FT_EQ(was_complete, 0);
        FT_OK(ferry_container_verify(copy, &check));
        ferry_container_set_t set;
        FT_OK(ferry_container_serial_open(copy, 0, &set));
        MPI_Offset total = 0;
        for (int s = 0; s < ft_size; s++) {
            ct_model_t m;
            ct_model(ft_seed, s, MAX_LENGTH, MAX_PIECE, &m);
            ct_check_serial(set, s, &m);
            total += (MPI_Offset)m.length;
        }
        FT_EQ(bytes, total);
        FT_OK(ferry_container_serial_close(&set));
    }
}

static void verify_finds_flips(const unsigned char *good, size_t len, const char *copy)
{
    ferry_container_set_t set;
    FT_OK(ferry_container_serial_open(copy, 0, &set)); /* copy holds the good file again */
    for (int s = 0; s < ft_size; s++) {
        ferry_container_info_t info;
        int file;
        MPI_Offset offset, used;
        FT_OK(ferry_container_serial_stream(set, s, &info));
        if (info.chunks == 0) continue;
        FT_OK(ferry_container_serial_chunk(set, s, info.chunks - 1, &file, &offset, &used));
        for (int trailer = 0; trailer < 2; trailer++) {
            unsigned char *b = malloc(len);
            memcpy(b, good, len);
            b[offset + (trailer ? info.chunk_capacity + 30 : used / 2)] ^= 1;
            spit(copy, b, len);
            ferry_container_check_t check = {0};
            FT_EQ(ferry_container_verify(copy, &check), MPI_ERR_BAD_FILE);
            FT_EQ(check.problems, 1);
            free(b);
        }
        spit(copy, good, len);
    }
    FT_OK(ferry_container_serial_close(&set));
}

static void serial_part(const char *path)
{
    size_t len;
    unsigned char *good = slurp(path, &len);
    const char *copy = ft_path("copy.ctr");
    flip_every_metadata_byte(good, len, copy);
    cut_at_many_lengths(good, len, copy);
    versions(good, len, copy);
    incomplete(good, len, copy);
    end_table_damaged(good, len, copy);
    spit(copy, good, len);
    verify_finds_flips(good, len, copy);
    spit(copy, (const unsigned char *)"just some text, not a container", 31);
    FT_EQ(try_open(copy, 0), MPI_ERR_BAD_FILE);
    FT_CHECK(strstr(ferry_container_error_message(), "not a ferry container") != NULL);
    ferry_container_set_t set;
    FT_EQ(ferry_container_serial_open(ft_path("missing.ctr"), 0, &set), MPI_ERR_NO_SUCH_FILE);
    free(good);
}

static void parallel_part(const char *path)
{
    ferry_container_t c;
    const char *copy = ft_path("copy.ctr");
    if (ft_rank == 0) {
        size_t len;
        unsigned char *b = slurp(path, &len);
        b[20] ^= 1; /* the container id: superblock checksum */
        spit(copy, b, len);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    FT_FAILS_NAMING(MPI_ERR_BAD_FILE, "checksum", ferry_container_open_read(MPI_COMM_WORLD, copy, &c));
    FT_FAILS(MPI_ERR_NO_SUCH_FILE, ferry_container_open_read(MPI_COMM_WORLD, ft_path("missing.ctr"), &c));
    if (ft_rank == 0) {
        size_t len;
        unsigned char *b = slurp(path, &len);
        memset(b + 512, 0, 64);
        spit(copy, b, len);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    FT_FAILS_NAMING(MPI_ERR_BAD_FILE, "incomplete", ferry_container_open_read(MPI_COMM_WORLD, copy, &c));
    FT_CHECK(c == NULL);
}

/* A chunk larger than a checked reader's cache (16 MiB of data) is checked
 * once, the first time any of it is read: a flipped byte fails every read
 * of it, again when retried; intact, it reads back exactly. */
static void large_chunk(void)
{
    enum { BIG = (17 << 20) + 1234 };
    const char *path = ft_path("large.ctr"), *copy = ft_path("large-bad.ctr");
    size_t len = ft_rank == 0 ? BIG : 1000, done;
    unsigned char *bytes = malloc(BIG), *got = malloc(BIG);
    ft_fill(bytes, len, ft_seed + 99 + (uint64_t)ft_rank);
    ferry_container_params_t p = {0};
    p.block_size = BLOCK;
    p.chunk_size = ft_rank == 0 ? BIG + 64 : 0;
    p.data_checksums = 1;
    ferry_container_t c;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    FT_OK(ferry_container_write(c, bytes, len, &done));
    FT_OK(ferry_container_close(&c));
    if (ft_rank == 0) {
        size_t size;
        unsigned char *file = slurp(path, &size);
        ferry_container_set_t set;
        int index;
        MPI_Offset at, used;
        FT_OK(ferry_container_serial_open(path, 0, &set));
        FT_OK(ferry_container_serial_chunk(set, 0, 0, &index, &at, &used));
        FT_OK(ferry_container_serial_read(set, 0, 5, got, 100, &done)); /* from the middle: checked whole */
        FT_EQ_MEM(got, bytes + 5, 100);
        FT_OK(ferry_container_serial_close(&set));
        file[at + used - 3] ^= 0x20; /* near the end: a read at the start must still see it */
        spit(copy, file, size);
        free(file);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, copy, &c));
    for (int again = 0; again < 2 && ft_rank == 0; again++)
        FT_FAILS_NAMING(MPI_ERR_IO, "stream 0 chunk 0", ferry_container_read(c, got, 4096, &done));
    FT_OK(ferry_container_close(&c));
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    for (size_t pos = 0; pos < len; pos += done) FT_OK(ferry_container_read(c, got + pos, 3 << 20, &done));
    FT_EQ_MEM(got, bytes, len);
    FT_OK(ferry_container_close(&c));
    free(bytes);
    free(got);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *path = ft_path("good.ctr");
    ferry_container_params_t p = {0};
    p.block_size = BLOCK;
    p.chunk_size = 600 + 500 * ft_rank;
    p.data_checksums = 1;
    ct_model_t m;
    ct_model(ft_seed, ft_rank, MAX_LENGTH, MAX_PIECE, &m);
    ferry_container_t c;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    ct_write(c, &m, 4);
    FT_OK(ferry_container_close(&c));
    if (ft_rank == 0) serial_part(path);
    MPI_Barrier(MPI_COMM_WORLD);
    parallel_part(path);
    large_chunk();
    return ft_finish();
}

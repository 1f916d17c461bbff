/*
 * The C readers of damaged checksummed containers (issue 29): each case is
 * a copy of one container with a byte flipped (container_damage.py makes
 * them); every reader must either fail or return exactly the stream's
 * bytes, never a wrong byte with success. Readers: the serial API (each
 * rank its own stream and the next, from 0 in random pieces and from a
 * random position), the parallel open (each rank its own stream, in random
 * pieces) and the mapped open (each rank the next rank's stream). An
 * incomplete case (completion record wiped) is read serially with
 * FERRY_CONTAINER_INCOMPLETE_OK, where a stream may come back shorter (its
 * newest trailer damaged) but never with a wrong byte; the parallel opens
 * must refuse it.
 *
 * usage: container_damage DIR
 *   DIR/expected.<stream, 6 digits>: each stream's bytes;
 *   DIR/cases: one line per case, "<container path> <0 complete | 1 incomplete>".
 * Prints, per reader, how many reads returned the stream and how many failed.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_container.h"
#include "ferry_test.h"

enum { READER_SERIAL, READER_PARALLEL, READER_MAPPED, READERS };
static const char *reader_names[READERS] = {"serial", "parallel", "mapped"};
static long long outcomes[READERS][2]; /* [reader][0 returned the stream, 1 failed] */

typedef struct expected {
    unsigned char *bytes;
    size_t length;
} expected_t;

static expected_t load_expected(const char *dir, int stream)
{
    char name[1024];
    expected_t e = {NULL, 0};
    snprintf(name, sizeof name, "%s/expected.%06d", dir, stream);
    FILE *f = fopen(name, "rb");
    FT_CHECK(f != NULL);
    FT_CHECK(fseek(f, 0, SEEK_END) == 0);
    e.length = (size_t)ftell(f);
    rewind(f);
    e.bytes = malloc(e.length + 1);
    FT_CHECK(e.bytes && fread(e.bytes, 1, e.length, f) == e.length);
    fclose(f);
    return e;
}

/* Bytes [pos, pos + done) came back with success: they must be the stream's. */
static void check_bytes(const char *what, const char *path, const expected_t *e, size_t pos, const void *got,
                        size_t done)
{
    if (pos + done > e->length || memcmp(got, e->bytes + pos, done) != 0)
        ft_fail(__FILE__, __LINE__, "%s read of %s returned wrong bytes with success at [%zu, %zu) (length %zu)",
                what, path, pos, pos + done, e->length);
}

static size_t piece(uint64_t *state)
{
    return 1 + (size_t)(ft_rand(state) % (ft_rand(state) % 2 ? 300 : 9000));
}

/* Reads stream serially from 0 in random pieces, then from a random place; 0 or the failing class. */
static int serial_stream(ferry_container_set_t set, int stream, const expected_t *e, const char *path,
                         uint64_t *state, int incomplete)
{
    unsigned char *got = malloc(e->length + 9001);
    ferry_container_info_t info;
    size_t pos = 0, done = 1;
    int rc = ferry_container_serial_stream(set, stream, &info);
    if (rc == MPI_SUCCESS && (incomplete ? (size_t)info.length > e->length : (size_t)info.length != e->length))
        ft_fail(__FILE__, __LINE__, "serial: %s says stream %d is %lld bytes, it is %zu", path, stream,
                (long long)info.length, e->length);
    while (rc == MPI_SUCCESS && done > 0) {
        rc = ferry_container_serial_read(set, stream, (MPI_Offset)pos, got, piece(state), &done);
        if (rc == MPI_SUCCESS) check_bytes("serial", path, e, pos, got, done);
        pos += rc == MPI_SUCCESS ? done : 0;
    }
    if (rc == MPI_SUCCESS && pos != (size_t)info.length)
        ft_fail(__FILE__, __LINE__, "serial: %s stream %d ended at %zu of %lld", path, stream, pos,
                (long long)info.length);
    size_t at = e->length ? (size_t)(ft_rand(state) % e->length) : 0;
    if (rc == MPI_SUCCESS) rc = ferry_container_serial_read(set, stream, (MPI_Offset)at, got, 9000, &done);
    if (rc == MPI_SUCCESS) check_bytes("serial", path, e, at, got, done);
    free(got);
    return rc;
}

static void serial_readers(const char *path, int incomplete, const expected_t *mine, const expected_t *next,
                           uint64_t *state)
{
    ferry_container_set_t set;
    int rc = ferry_container_serial_open(path, incomplete ? FERRY_CONTAINER_INCOMPLETE_OK : 0, &set);
    if (rc == MPI_SUCCESS) {
        int rc_mine = serial_stream(set, ft_rank, mine, path, state, incomplete);
        int rc_next = serial_stream(set, (ft_rank + 1) % ft_size, next, path, state, incomplete);
        rc = rc_mine ? rc_mine : rc_next;
        FT_OK(ferry_container_serial_close(&set));
    }
    if (rc != MPI_SUCCESS) FT_CHECK(strstr(ferry_container_error_message(), "ferry container") != NULL);
    outcomes[READER_SERIAL][rc != MPI_SUCCESS]++;
}

/* Reads the open handle's stream in random pieces; 0 or the failing code. */
static int parallel_stream(ferry_container_t c, const expected_t *e, const char *path, const char *what,
                           uint64_t *state)
{
    unsigned char *got = malloc(e->length + 9001);
    size_t pos = 0, done = 1;
    int rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && done > 0) {
        rc = ft_capture(ferry_container_read(c, got, piece(state), &done));
        if (rc == MPI_SUCCESS) check_bytes(what, path, e, pos, got, done);
        pos += rc == MPI_SUCCESS ? done : 0;
    }
    if (rc == MPI_SUCCESS && pos != e->length)
        ft_fail(__FILE__, __LINE__, "%s: %s ended at %zu of %zu", what, path, pos, e->length);
    if (rc != MPI_SUCCESS) FT_CHECK(strstr(ft_message, "stream") != NULL);
    free(got);
    return rc;
}

static void parallel_readers(const char *path, int incomplete, const expected_t *mine, const expected_t *next,
                             uint64_t *state)
{
    ferry_container_t c;
    int rc = ferry_container_open_read(MPI_COMM_WORLD, path, &c);
    if (incomplete) FT_CHECK(rc != MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        rc = parallel_stream(c, mine, path, "parallel", state);
        FT_OK(ferry_container_close(&c));
    }
    outcomes[READER_PARALLEL][rc != MPI_SUCCESS]++;
    int stream = (ft_rank + 1) % ft_size;
    rc = ferry_container_open_mapped(MPI_COMM_WORLD, path, &stream, 1, &c);
    if (incomplete) FT_CHECK(rc != MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        rc = parallel_stream(c, next, path, "mapped", state);
        FT_OK(ferry_container_close(&c));
    }
    outcomes[READER_MAPPED][rc != MPI_SUCCESS]++;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    if (argc < 2) ft_fail(__FILE__, __LINE__, "usage: container_damage DIR");
    char list[1024], path[1024];
    snprintf(list, sizeof list, "%s/cases", argv[1]);
    FILE *cases = fopen(list, "r");
    FT_CHECK(cases != NULL);
    expected_t mine = load_expected(argv[1], ft_rank), next = load_expected(argv[1], (ft_rank + 1) % ft_size);
    uint64_t state = ft_seed + (uint64_t)ft_rank;
    int incomplete;
    while (fscanf(cases, "%1023s %d", path, &incomplete) == 2) {
        serial_readers(path, incomplete, &mine, &next, &state);
        parallel_readers(path, incomplete, &mine, &next, &state);
    }
    fclose(cases);
    long long total[READERS][2];
    MPI_Reduce(outcomes, total, READERS * 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    for (int r = 0; r < READERS && ft_rank == 0; r++)
        printf("container_damage: %s reads: %lld returned the stream, %lld failed, 0 wrong\n", reader_names[r],
               total[r][0], total[r][1]);
    free(mine.bytes);
    free(next.bytes);
    return ft_finish();
}

/*
 * stdio FILEs over container streams (ferry_container_fopen): the same
 * stdio code run on a task-local file made with fopen and on a container
 * stream gives the same bytes, byte for byte (fprintf, fputs, fputc,
 * fwrite, fseek back and overwrite, "a" mode), and reads back the same
 * values (fgets, fscanf, fread, fgetc, ftell, fseek, feof), also from a
 * mapped handle with one FILE per stream; ferry_container_flush and
 * ferry_container_close push what stdio still buffers; a FILE outliving
 * its container fails with EBADF and fcloses cleanly; a full disk reaches
 * the FILE as ENOSPC with the container's message; bad modes and modes the
 * handle cannot do are refused.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "container_model.h"
#include "ferry_test.h"
#include "fs/fs.h"

enum { BLOB = 70000 };

/* The program under test: writes a text-and-binary stream with stdio. */
static void write_with_stdio(FILE *f, const unsigned char *blob)
{
    for (int i = 0; i < 500; i++) FT_CHECK(fprintf(f, "rank %d line %d value %.6f\n", ft_rank, i, i * 0.25) > 0);
    FT_CHECK(fputs("-- binary follows --\n", f) >= 0);
    FT_EQ(fwrite(blob, 1, BLOB, f), BLOB);
    long end = ftell(f);
    FT_CHECK(end > BLOB);
    char head[32];
    FT_EQ(fseek(f, snprintf(head, sizeof head, "rank %d ", ft_rank), SEEK_SET), 0); /* overwrite "line" of line 0 */
    FT_CHECK(fputs("LINE", f) >= 0);
    FT_EQ(fseek(f, 0, SEEK_END), 0);
    FT_EQ(ftell(f), end);
    FT_CHECK(fputc('!', f) == '!');
}

/* The reader under test: what it makes of such a stream, as one number. */
static uint64_t read_with_stdio(FILE *f, const unsigned char *blob)
{
    char line[128];
    uint64_t sum = 0;
    int rank, i;
    double value;
    FT_CHECK(fscanf(f, "rank %d LINE %d value %lf\n", &rank, &i, &value) == 3);
    FT_EQ(rank, ft_rank);
    for (int n = 1; n < 500; n++) {
        FT_CHECK(fgets(line, sizeof line, f) != NULL);
        sum = sum * 31 + strlen(line) + (uint64_t)line[strlen(line) - 2];
    }
    FT_CHECK(fgets(line, sizeof line, f) != NULL && strcmp(line, "-- binary follows --\n") == 0);
    long at = ftell(f);
    unsigned char *got = malloc(BLOB);
    FT_EQ(fread(got, 1, BLOB, f), BLOB);
    FT_EQ_MEM(got, blob, BLOB);
    FT_EQ(fgetc(f), '!');
    FT_EQ(fgetc(f), EOF);
    FT_CHECK(feof(f));
    FT_EQ(fseek(f, at + 100, SEEK_SET), 0);
    FT_EQ(fgetc(f), blob[100]);
    FT_EQ(fseek(f, -1, SEEK_END), 0);
    FT_EQ(fgetc(f), '!');
    free(got);
    return sum;
}

static unsigned char *slurp_file(const char *name, size_t *len)
{
    FILE *f = fopen(name, "rb");
    FT_CHECK(f != NULL);
    unsigned char *bytes = malloc(1 << 20);
    *len = fread(bytes, 1, 1 << 20, f);
    fclose(f);
    return bytes;
}

static void same_bytes(const char *path, const char *task_local)
{
    ferry_container_t c;
    size_t len, done;
    unsigned char *want = slurp_file(task_local, &len), *got = malloc(len + 1);
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    FT_OK(ferry_container_read(c, got, len + 1, &done));
    FT_EQ(done, len);
    FT_EQ_MEM(got, want, len);
    FT_OK(ferry_container_close(&c));
    free(want);
    free(got);
}

static void stdio_round_trip(const char *path, const unsigned char *blob)
{
    char task_local[700];
    snprintf(task_local, sizeof task_local, "%s.tasklocal.%d", path, ft_rank);
    FILE *plain = fopen(task_local, "w");
    write_with_stdio(plain, blob);
    FT_EQ(fclose(plain), 0);
    ferry_container_params_t p = {0};
    p.chunk_size = 5000; /* the text and the blob cross many chunks */
    ferry_container_t c;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    FILE *f = ferry_container_fopen(c, "w");
    FT_CHECK(f != NULL);
    write_with_stdio(f, blob);
    FT_EQ(fclose(f), 0);
    FT_OK(ferry_container_close(&c));
    same_bytes(path, task_local);
    plain = fopen(task_local, "r");
    uint64_t want = read_with_stdio(plain, blob);
    fclose(plain);
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    f = ferry_container_fopen(c, "rb");
    FT_CHECK(f != NULL);
    FT_EQ(read_with_stdio(f, blob), want);
    FT_EQ(fclose(f), 0);
    FT_OK(ferry_container_close(&c));
}

/* Appending, flushing through the container, and a FILE left open at close. */
static void flush_append_and_close(const char *path)
{
    ferry_container_t c;
    ferry_container_info_t info;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, NULL, &c));
    FILE *f = ferry_container_fopen(c, "w");
    FT_CHECK(fputs("first\n", f) >= 0);
    FT_OK(ferry_container_flush(c)); /* pushes stdio's buffer too */
    FT_OK(ferry_container_info(c, &info));
    FT_EQ(info.length, 6);
    FT_EQ(fclose(f), 0);
    f = ferry_container_fopen(c, "a"); /* from the end whatever the position */
    FT_OK(ferry_container_seek(c, 0, MPI_SEEK_SET));
    FILE *g = ferry_container_fopen(c, "a");
    FT_CHECK(fputs("second\n", g) >= 0);
    FT_EQ(fclose(g), 0);
    FT_CHECK(fprintf(f, "rank %d\n", ft_rank) > 0); /* still buffered at close */
    FT_OK(ferry_container_close(&c));
    errno = 0;
    fputs("late\n", f); /* buffered by stdio: the failure shows at the flush */
    FT_CHECK(fflush(f) == EOF && errno == EBADF);
    fclose(f); /* frees it; its error flag makes the return value EOF or 0 */
    char want[64], got[64];
    int n = snprintf(want, sizeof want, "first\nsecond\nrank %d\n", ft_rank);
    size_t done;
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    FT_OK(ferry_container_read(c, got, sizeof got, &done));
    FT_EQ(done, n);
    FT_EQ_MEM(got, want, (size_t)n);
    FT_OK(ferry_container_close(&c));
}

/* A mapped reader of two streams, one FILE each, read alternately. */
static void mapped_files(const char *path)
{
    ferry_container_t c;
    int streams[2] = {ft_rank, (ft_rank + 1) % ft_size};
    char a[64], b[64], want[64];
    FT_OK(ferry_container_open_mapped(MPI_COMM_WORLD, path, streams, 2, &c));
    FILE *f0 = ferry_container_fopen(c, "r");
    FT_OK(ferry_container_select(c, 1));
    FILE *f1 = ferry_container_fopen(c, "r");
    FT_OK(ferry_container_select(c, 0));
    for (int line = 0; line < 3; line++) {
        FT_CHECK(fgets(a, sizeof a, f0) != NULL && fgets(b, sizeof b, f1) != NULL);
        if (line == 2) {
            snprintf(want, sizeof want, "rank %d\n", streams[0]);
            FT_CHECK(strcmp(a, want) == 0);
            snprintf(want, sizeof want, "rank %d\n", streams[1]);
            FT_CHECK(strcmp(b, want) == 0);
        }
    }
    FT_EQ(fclose(f0), 0);
    FT_EQ(fclose(f1), 0);
    FT_OK(ferry_container_close(&c));
}

static void refusals(const char *path)
{
    ferry_container_t c;
    FT_CHECK(ferry_container_fopen(NULL, "w") == NULL && errno == EINVAL);
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    FT_CHECK(ferry_container_fopen(c, "w") == NULL && strstr(ferry_container_error_message(), "opened for reading"));
    FT_CHECK(ferry_container_fopen(c, "r+") == NULL && errno == EINVAL);
    FT_CHECK(ferry_container_fopen(c, "x") == NULL && errno == EINVAL);
    FT_CHECK(ferry_container_fopen(c, NULL) == NULL && errno == EINVAL);
    FT_OK(ferry_container_close(&c));
    int none = 0;
    FT_OK(ferry_container_open_mapped(MPI_COMM_WORLD, path, &none, 0, &c));
    FT_CHECK(ferry_container_fopen(c, "r") == NULL && strstr(ferry_container_error_message(), "no stream"));
    FT_OK(ferry_container_close(&c));
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, ft_path("refusals.ctr"), NULL, &c));
    FT_CHECK(ferry_container_fopen(c, "r") == NULL && strstr(ferry_container_error_message(), "opened for writing"));
    FT_OK(ferry_container_close(&c));
}

/* A full disk under fprintf: ENOSPC on the FILE, the container's message, the stream keeps its prefix. */
static void full_disk(const char *path, const unsigned char *blob)
{
    ferry_container_t c;
    ferry_container_params_t p = {0};
    p.buffer_size = 4096;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    FILE *f = ferry_container_fopen(c, "w");
    FT_EQ(fwrite(blob, 1, 20000, f), 20000);
    FT_OK(ferry_container_flush(c)); /* stdio's buffer and the stream's: these bytes are safe */
    if (ft_rank == 0) FT_OK(ferry__fs_fault_arm("write:1+:ENOSPC@0"));
    errno = 0;
    int wrote = (int)fwrite(blob, 1, BLOB, f), flushed = fflush(f);
    if (ft_rank == 0) {
        FT_CHECK(wrote < BLOB || flushed == EOF);
        FT_CHECK(ferror(f) && errno == ENOSPC);
        FT_CHECK(strstr(ferry_container_error_message(), "No space left") != NULL);
        FT_CHECK(strstr(ferry_container_error_message(), "rank 0") != NULL);
    }
    ferry__fs_fault_disarm();
    fclose(f);
    FT_OK(ferry_container_close(&c));
    ferry_container_info_t info;
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    FT_OK(ferry_container_info(c, &info));
    FT_EQ(info.write_failed, ft_rank == 0);
    FT_CHECK(info.length >= 20000);
    FT_OK(ferry_container_close(&c));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    unsigned char *blob = malloc(BLOB);
    ft_fill(blob, BLOB, ft_seed + (uint64_t)ft_rank);
    stdio_round_trip(ft_path("stdio.ctr"), blob);
    flush_append_and_close(ft_path("append.ctr"));
    mapped_files(ft_path("append.ctr"));
    refusals(ft_path("append.ctr"));
    full_disk(ft_path("full.ctr"), blob);
    free(blob);
    return ft_finish();
}

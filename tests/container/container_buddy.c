/*
 * Buddy copies (ferry_container_modes_t.buddy, issue 29): a container written with buddy
 * copies in 1 to 4 files (contiguous rank groups) is read back byte-exact
 * in parallel (each rank its stream) and serially (every stream) after
 * one of its primary files is deleted, and again after one is damaged (its
 * superblock, so it fails its checks); the serial set and verify name the
 * file the buddy copy stood in for, and verify counts it as a problem. The
 * buddy set read as a container of its own holds every stream; so with one
 * file per node (on the cluster in a box: one node's file lost). Deleting a
 * primary file and its buddy copy makes the parallel and the serial open
 * fail on every rank with an error naming the lost streams, never data.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container_model.h"
#include "ferry_test.h"

enum { MAX_LENGTH = 40000, MAX_PIECE = 5000 };

static void write_buddy(const char *path, int files)
{
    ferry_container_params_t p = {0};
    p.files = files;
    p.block_size = 512;
    p.chunk_size = 512 * (1 + ft_rank % 4);
    ferry_container_modes_t modes = {.buddy = 1};
    ferry_container_t c;
    FT_OK(ferry_container_open_write_modes(MPI_COMM_WORLD, path, &p, &modes, &c));
    ct_model_t mine;
    ct_model(ft_seed, ft_rank, MAX_LENGTH, MAX_PIECE, &mine);
    ct_write(c, &mine, 4);
    FT_OK(ferry_container_close(&c));
}

static void name_of(char *out, size_t len, const char *path, int buddy, int k)
{
    if (buddy) snprintf(out, len, k ? "%s.buddy.%06d" : "%s.buddy", path, k);
    else snprintf(out, len, k ? "%s.%06d" : "%s", path, k);
}

/* Rank 0 removes (or, damage = 1, flips a superblock byte of) a file of the set or of its buddy set. */
static void spoil(const char *path, int buddy, int k, int damage)
{
    if (ft_rank == 0) {
        char name[800];
        name_of(name, sizeof name, path, buddy, k);
        if (!damage) {
            FT_EQ(unlink(name), 0);
        } else {
            FILE *f = fopen(name, "r+b");
            FT_CHECK(f != NULL);
            fseek(f, 40, SEEK_SET);
            int byte = fgetc(f);
            fseek(f, 40, SEEK_SET);
            fputc(byte ^ 0x10, f);
            fclose(f);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void collect_problem(void *arg, const char *problem)
{
    if (strstr(problem, "buddy copy")) ++*(int *)arg;
}

/* Rank 0: every stream of the set at path serially; notes and verify when a copy stood in. */
static void check_serially(const char *path, int copies_expected)
{
    ferry_container_set_t set;
    FT_OK(ferry_container_serial_open(path, 0, &set));
    for (int s = 0; s < ft_size; s++) {
        ct_model_t m;
        ct_model(ft_seed, s, MAX_LENGTH, MAX_PIECE, &m);
        ct_check_serial(set, s, &m);
    }
    const char *notes = ferry_container_serial_notes(set);
    FT_EQ(strstr(notes, "read from the buddy copy") != NULL, copies_expected > 0);
    FT_OK(ferry_container_serial_close(&set));
    int named = 0;
    ferry_container_check_t check = {.report = collect_problem, .arg = &named};
    int rc = ferry_container_verify(path, &check);
    FT_EQ(ft_class(rc), copies_expected ? MPI_ERR_BAD_FILE : MPI_SUCCESS);
    FT_EQ(named, copies_expected);
}

static void check_all(const char *path, int copies_expected)
{
    ferry_container_t c;
    ct_model_t mine;
    ct_model(ft_seed, ft_rank, MAX_LENGTH, MAX_PIECE, &mine);
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    ct_check_read(c, &mine);
    FT_OK(ferry_container_close(&c));
    if (ft_rank == 0) check_serially(path, copies_expected);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The buddy set alone is a container holding every stream. */
static void check_buddy_set(const char *path)
{
    char name[800];
    name_of(name, sizeof name, path, 1, 0);
    if (ft_rank == 0) check_serially(name, 0);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A primary file and its buddy copy both gone: every rank's open fails naming the file's first stream. */
static void check_lost(const char *path, int files, int first_stream)
{
    char first[32];
    snprintf(first, sizeof first, "stream(s) %d", first_stream);
    ferry_container_t c = NULL;
    int rc = ft_capture(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    FT_CHECK(rc != MPI_SUCCESS && c == NULL);
    if (files == 1) { /* nothing of the container is left to name its streams: the missing file it is */
        FT_EQ(ft_class(rc), MPI_ERR_NO_SUCH_FILE);
    } else if (ft_rank == 0) {
        if (getenv("FERRY_CONTAINER_VERBOSE")) fprintf(stderr, "lost (parallel): %s\n", ft_message);
        FT_CHECK(strstr(ft_message, first) && strstr(ft_message, "cannot be read") && strstr(ft_message, "buddy"));
        ferry_container_set_t set = NULL;
        FT_CHECK(ferry_container_serial_open(path, 0, &set) != MPI_SUCCESS && set == NULL);
        FT_CHECK(strstr(ferry_container_error_message(), first) != NULL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The files a container of this job gets with `files` (FERRY_CONTAINER_FILE_PER_NODE: one per node,
 * numbered by their lowest rank), and the first stream of file k. */
static int file_count(int files, int k, int *first_stream)
{
    if (files != FERRY_CONTAINER_FILE_PER_NODE) {
        int n = files < ft_size ? files : ft_size;
        *first_stream = (int)(((long long)k * ft_size + n - 1) / n);
        return n;
    }
    MPI_Comm node;
    int leader = ft_rank, n = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ft_rank, MPI_INFO_NULL, &node);
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    int *leaders = malloc((size_t)ft_size * sizeof *leaders);
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < ft_size; r++)
        if (leaders[r] == r && n++ == k) *first_stream = r;
    free(leaders);
    return n;
}

/* Written with buddy copies; read whole; primary file k deleted, then damaged, then deleted with its copy. */
static void run(int files, int which, int round)
{
    char name[32];
    snprintf(name, sizeof name, "buddy%d.ctr", round);
    char path[600];
    snprintf(path, sizeof path, "%s", ft_path(name));
    int first_stream = 0, n = file_count(files, 0, &first_stream), k = which < 0 ? n - 1 : which;
    file_count(files, k, &first_stream);
    write_buddy(path, files);
    check_all(path, 0);
    check_buddy_set(path);
    spoil(path, 0, k, 0);
    check_all(path, 1); /* primary file k deleted */
    write_buddy(path, files);
    spoil(path, 0, k, 1);
    check_all(path, 1); /* primary file k damaged */
    write_buddy(path, files);
    spoil(path, 0, k, 0);
    spoil(path, 1, (k + 1) % n, 0);
    check_lost(path, n, first_stream);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    int round = 0;
    for (int files = 1; files <= 4 && files <= ft_size; files++) {
        run(files, 0, round++);
        if (files > 1) run(files, -1, round++);
    }
    /* One file per node: on the cluster in a box (tests/cluster), one node's file is lost. */
    run(FERRY_CONTAINER_FILE_PER_NODE, -1, round++);
    return ft_finish();
}

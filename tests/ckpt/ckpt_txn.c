/*
 * Transactions and integrity: the newest K checkpoints are kept; a flipped
 * byte fails verify (in the data, or in the header: the step), a truncated file is incomplete, and restart falls
 * back to the previous checkpoint with a message; a crashed write's
 * leftover temporary file changes nothing, and a commit removes the set's
 * leftover temporary files; a corrupt header is an error,
 * not a crash. Memory: steer and stack hold metadata only, gather's root
 * the largest global array, kept from one write to the next.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "ckpt_cases.h"

enum { N = 384 };

static ferry_ckpt_t make_set(const char *name, int strategy, ckpt_case_var_t *v)
{
    cc_set_t s = {.base = ft_path(name), .opt = {.strategy = strategy}, .keep = 2, .type = MPI_DOUBLE, .n = N, .halo = 2,
                  .seed = 99, .var = "eta"};
    return cc_make_set(&s, v);
}

/* Rank 0 changes the file: flips a byte near the end, or truncates it. */
static void damage(const char *path, int truncate_it)
{
    if (ft_rank == 0) {
        struct stat st;
        FT_CHECK(stat(path, &st) == 0);
        int fd = open(path, O_RDWR);
        unsigned char b;
        FT_CHECK(fd >= 0);
        if (truncate_it) FT_CHECK(ftruncate(fd, st.st_size - 100) == 0);
        else {
            FT_CHECK(pread(fd, &b, 1, st.st_size - 13) == 1);
            b ^= 0x10;
            FT_CHECK(pwrite(fd, &b, 1, st.st_size - 13) == 1);
        }
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void restart_expect(ferry_ckpt_t ck, ckpt_case_var_t *v, long long step, int fallbacks)
{
    ferry_ckpt_info_t info;
    memset(v->buf, 0x5A, v->bytes);
    FT_OK(ferry_ckpt_restart(ck, (void *[]){v->buf}, &info));
    FT_EQ(info.step, step);
    FT_EQ(info.fallbacks, fallbacks);
    cc_check(v, 0, step);
}

static void keep_flip_truncate(void)
{
    ckpt_case_var_t v;
    ferry_ckpt_t ck = make_set("keep", FERRY_CKPT_STEER, &v);
    char path[4200];
    for (long long step = 1; step <= 4; step++) {
        cc_fill(&v, 0, step);
        FT_OK(ferry_ckpt_write(ck, step, step * 10.0, (void *[]){v.buf}));
    }
    for (long long step = 1; step <= 4; step++) {
        FT_OK(ferry_ckpt_path(ck, step, path, sizeof path));
        FT_EQ(cc_exists(path), step >= 3); /* keep = 2 */
    }
    FT_OK(ferry_ckpt_path(ck, 4, path, sizeof path));
    FT_OK(ferry_ckpt_verify(MPI_COMM_WORLD, path));
    damage(path, 0);
    FT_FAILS_NAMING(MPI_ERR_IO, "fails its checksum", ferry_ckpt_verify(MPI_COMM_WORLD, path));
    restart_expect(ck, &v, 3, 1);
    /* A fresh step 4, then truncated: incomplete. */
    cc_fill(&v, 0, 4);
    FT_OK(ferry_ckpt_write(ck, 4, 40.0, (void *[]){v.buf}));
    damage(path, 1);
    FT_FAILS_NAMING(MPI_ERR_IO, "incomplete", ferry_ckpt_verify(MPI_COMM_WORLD, path));
    restart_expect(ck, &v, 3, 1);
    /* A fresh step 4 whose header says step 6: the data checksums cannot see it, the header's does. */
    FT_OK(ferry_ckpt_write(ck, 4, 40.0, (void *[]){v.buf}));
    cc_set_header_step(path, 4, 4 ^ 2);
    FT_FAILS_NAMING(MPI_ERR_IO, "fails its header checksum", ferry_ckpt_verify(MPI_COMM_WORLD, path));
    restart_expect(ck, &v, 3, 1);
    free(v.buf);
    FT_OK(ferry_ckpt_free(&ck));
}

static void leftover_and_corrupt_header(void)
{
    ckpt_case_var_t v;
    ferry_ckpt_t ck = make_set("left", FERRY_CKPT_STACK, &v);
    char path[4200], tmp[4300], failed[4300];
    cc_fill(&v, 0, 5);
    FT_OK(ferry_ckpt_write(ck, 5, 0.0, (void *[]){v.buf}));
    FT_OK(ferry_ckpt_path(ck, 4, path, sizeof path));
    snprintf(failed, sizeof failed, "%s.tmp", path);
    FT_OK(ferry_ckpt_path(ck, 6, path, sizeof path));
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    /* a crashed write of step 6: junk under the temporary name; and what a failed write of step 4
     * could not remove (its storage server was down: tools/cluster-faults) */
    for (int i = 0; i < 2 && ft_rank == 0; i++) {
        FILE *f = fopen(i ? failed : tmp, "w");
        fprintf(f, "CDF\005 junk");
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    restart_expect(ck, &v, 5, 0);
    cc_fill(&v, 0, 6);
    FT_OK(ferry_ckpt_write(ck, 6, 0.0, (void *[]){v.buf}));
    FT_CHECK(!cc_exists(tmp));
    FT_CHECK(!cc_exists(failed)); /* the commit removed it */
    restart_expect(ck, &v, 6, 0);
    if (ft_rank == 0) { /* the header's magic */
        int fd = open(path, O_WRONLY);
        FT_CHECK(pwrite(fd, "XDF", 3, 0) == 3);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    FT_FAILS_NAMING(MPI_ERR_IO, "not a CDF-2 or CDF-5", ferry_ckpt_verify(MPI_COMM_WORLD, path));
    restart_expect(ck, &v, 5, 1);
    free(v.buf);
    FT_OK(ferry_ckpt_free(&ck));
}

/* Peak memory of the module per strategy, against the global array's size: gather's root holds the
 * global array; steer and stack stage the rank's own block (once, kept for the next write), or
 * hold metadata only when the stage limit is below it (ferry_ckpt_stage_limit 0). */
static void memory(void)
{
    const long long global_bytes = (long long)N * N * 8;
    for (int k = 0; k < 4; k++) {
        int strategy = k < 3 ? k : FERRY_CKPT_STEER, unstaged = k == 3;
        ckpt_case_var_t v;
        if (unstaged) setenv("FERRY_CKPT_STAGE_LIMIT", "0", 1);
        ferry_ckpt_t ck = make_set("mem", strategy, &v);
        unsetenv("FERRY_CKPT_STAGE_LIMIT");
        cc_fill(&v, 0, 1);
        FT_OK(ferry_ckpt_write(ck, 1, 0.0, (void *[]){v.buf}));
        FT_OK(ferry_ckpt_write(ck, 2, 0.0, (void *[]){v.buf})); /* the staging buffer is reused */
        long long peak = ferry_ckpt_peak_memory(ck), block = (long long)(v.count[0] * v.count[1]) * 8;
        if (ft_rank == 0) printf("ckpt_txn: strategy %d%s: rank 0 peak %lld bytes (block %lld, global array %lld)\n", strategy,
                                 unstaged ? " unstaged" : "", peak, block, global_bytes);
        if (strategy == FERRY_CKPT_GATHER && ft_rank == 0) FT_CHECK(peak >= global_bytes && peak < global_bytes + 65536);
        else if (strategy == FERRY_CKPT_GATHER || unstaged) FT_CHECK(peak < 65536);
        else FT_CHECK(peak >= block && peak < block + 65536);
        free(v.buf);
        FT_OK(ferry_ckpt_free(&ck));
    }
}

static long long page_faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (long long)u.ru_minflt + u.ru_majflt;
}

/* Gather's root keeps its global array between writes: the second write takes no page fault per 4 KiB
 * of it even when the allocator gave the freed memory back to the system between the writes (glibc
 * trims the heap when other large frees leave enough at its top, e.g. the host MPI-IO's collective
 * buffers; malloc_trim here). An 8 MiB array is 2048 pages; a re-allocated one faults them all. */
static void gather_root_kept(void)
{
    ckpt_case_var_t v;
    cc_set_t s = {.base = ft_path("root"),
                  .opt = {.strategy = FERRY_CKPT_GATHER},
                  .type = MPI_DOUBLE,
                  .n = 1024,
                  .halo = 1,
                  .seed = 7,
                  .var = "temp"};
    ferry_ckpt_t ck = cc_make_set(&s, &v);
    cc_fill(&v, 0, 1);
    FT_OK(ferry_ckpt_write(ck, 1, 0.0, (void *[]){v.buf}));
    cc_fill(&v, 0, 2); /* frees the first buffer */
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    long long faults = page_faults();
    FT_OK(ferry_ckpt_write(ck, 2, 0.0, (void *[]){v.buf}));
    faults = page_faults() - faults;
    if (ft_rank == 0) printf("ckpt_txn: gather, second write of an 8 MiB array: %lld page faults on rank 0\n", faults);
    if (ft_rank == 0) FT_CHECK(faults < 1024);
    restart_expect(ck, &v, 2, 0); /* the kept array's bytes of the first write are gone */
    free(v.buf);
    FT_OK(ferry_ckpt_free(&ck));
}

/* Bad input: clear errors on every rank, never a crash or a hang. */
static void errors(void)
{
    ckpt_case_var_t v;
    ferry_ckpt_t ck = make_set("err", FERRY_CKPT_STEER, &v);
    cc_fill(&v, 0, 1);
    FT_FAILS_NAMING(MPI_ERR_NO_SUCH_FILE, "no valid checkpoint", ferry_ckpt_restart(ck, (void *[]){v.buf}, NULL));
    FT_FAILS_NAMING(MPI_ERR_NO_SUCH_FILE, "/nonexistent-dir/x.nc.tmp",
                    ferry_ckpt_write_file(ck, "/nonexistent-dir/x.nc", 1, 0.0, (void *[]){v.buf}));
    FT_FAILS_NAMING(MPI_ERR_ARG, "negative", ferry_ckpt_write(ck, -1, 0.0, (void *[]){v.buf}));
    int dims[1] = {0}, id;
    MPI_Offset start[1] = {0}, count[1] = {1 << 20};
    ferry_ckpt_var_t bad = {.name = "big", .type = MPI_DOUBLE, .ndims = 1, .dimids = dims, .start = start, .count = count};
    FT_FAILS_NAMING(MPI_ERR_ARG, "outside", ferry_ckpt_def_var(ck, &bad, &id));
    count[0] = 1;
    bad.type = MPI_C_BOOL;
    FT_FAILS(MPI_ERR_TYPE, ferry_ckpt_def_var(ck, &bad, &id));
    FT_OK(ferry_ckpt_write(ck, 1, 0.0, (void *[]){v.buf}));
    ferry_ckpt_free(&ck);
    /* The same name declared as another type: restart and read say which (not "no valid checkpoint"). */
    ferry_ckpt_options_t o = {0};
    FT_OK(ferry_ckpt_create(MPI_COMM_WORLD, ft_path("err"), &o, &ck));
    v.type = MPI_FLOAT;
    cc_define(ck, &v, "eta", &id);
    FT_FAILS_NAMING(MPI_ERR_TYPE, "is double in", ferry_ckpt_restart(ck, (void *[]){v.buf}, NULL));
    char path[4200];
    FT_OK(ferry_ckpt_path(ck, 1, path, sizeof path));
    FT_FAILS_NAMING(MPI_ERR_TYPE, "is double in", ferry_ckpt_read_file(ck, path, (void *[]){v.buf}, NULL));
    free(v.buf);
    ferry_ckpt_free(&ck);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    errors();
    keep_flip_truncate();
    leftover_and_corrupt_header();
    memory();
    gather_root_kept();
    return ft_finish();
}

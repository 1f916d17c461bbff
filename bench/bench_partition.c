/*
 * ferry-bench partition: the file partitioning benchmark of seed 000
 * (section 2.1): every rank writes small records at random places of its
 * own partition of one shared file, one independent write_at per record,
 * with and without MPI_MODE_UNIQUE_OPEN.
 *
 * Rank r owns [r * --bytes, (r + 1) * --bytes), cut into record slots of
 * --record bytes; it writes --records of its slots, chosen and ordered by a
 * seeded shuffle (different per rank), so neighbouring writes land close
 * together but never in order. GPFS gave this pattern its partitioning mode
 * (no distributed locking of shared blocks); in MPI-IO the nearest promise
 * an application can make is MPI_MODE_UNIQUE_OPEN (no other open of the
 * file, anywhere). Contenders, each on a fresh file in rotating order: the
 * host's MPI-IO and ferry, each without and with the mode. A timed run
 * covers open, the writes, sync and close; the writes alone are timed too.
 * Each rank then reads its partition back and checks every record.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { WRITERS = 4, MAX_REPS = BENCH_MAX_REPS };

typedef struct partition_config {
    bench_common_t common;
    long long bytes;   /* partition per rank */
    long long record;  /* bytes per record */
    long long records; /* written per rank; 0: a quarter of the slots */
    unsigned long long seed;
} partition_config_t;

static const partition_config_t partition_defaults = {.common = {.dir = "/dev/shm", .reps = 3},
                                                      .bytes = 4 << 20, .record = 512, .seed = 1998};

static const cli_option_t partition_options[] = {
    BENCH_OPTION_DIR(partition_config_t),
    {"bytes", 0, CLI_SIZE, offsetof(partition_config_t, bytes), 4096, 1 << 30, NULL, "partition bytes per rank"},
    {"record", 0, CLI_SIZE, offsetof(partition_config_t, record), 4, 1 << 20, NULL,
     "bytes per record, a multiple of 4 dividing --bytes"},
    {"records", 0, CLI_SIZE, offsetof(partition_config_t, records), 1, 1 << 24, NULL,
     "records per rank (default: a quarter of the slots)"},
    {"seed", 0, CLI_U64, offsetof(partition_config_t, seed), 0, 1.8e19, NULL, "seed of the slots' shuffle"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

const cli_spec_t bench_partition_spec = {
    "ferry-bench partition", "mpiexec -n <ranks> ferry-bench partition [options]",
    "seed 000's file partitioning: small records at random in each rank's own partition, one write_at each, "
    "with and without MPI_MODE_UNIQUE_OPEN (host MPI-IO, ferry)",
    partition_options, bench_shared_options, sizeof(partition_config_t), &partition_defaults, NULL, 0};

static const struct {
    const char *name;
    int ferry, unique;
} writers[WRITERS] = {
    {"host", 0, 0},
    {"host unique_open", 0, 1},
    {"ferry", 1, 0},
    {"ferry unique_open", 1, 1},
};

typedef struct partition_run {
    const partition_config_t *cfg;
    int *slots;     /* the slots this rank writes, in writing order */
    long long n;    /* how many */
    char *record;   /* one record's bytes */
    const char *path;
    double seconds[2][WRITERS][MAX_REPS]; /* [writes alone, open to close] */
    int failed;
} partition_run_t;

static MPI_Offset slot_offset(const partition_run_t *run, long long i)
{
    const partition_config_t *cfg = run->cfg;
    return (MPI_Offset)cfg->common.rank * cfg->bytes + (MPI_Offset)run->slots[i] * cfg->record;
}

static void fill_record(const partition_run_t *run, MPI_Offset at)
{
    for (long long w = 0; w < run->cfg->record / 4; w++) {
        uint32_t v = bench_word_at(at + 4 * w);
        memcpy(run->record + 4 * w, &v, 4);
    }
}

/* One writer: open, the records, sync; returns the class of the first failure. */
static int write_records(partition_run_t *run, int w, double *writes_seconds)
{
    int amode = MPI_MODE_CREATE | MPI_MODE_WRONLY | (writers[w].unique ? MPI_MODE_UNIQUE_OPEN : 0);
    MPI_File host = MPI_FILE_NULL;
    ferry_File fh = FERRY_FILE_NULL;
    int rc = writers[w].ferry ? ferry_File_open(MPI_COMM_WORLD, run->path, amode, MPI_INFO_NULL, &fh)
                              : MPI_File_open(MPI_COMM_WORLD, run->path, amode, MPI_INFO_NULL, &host);
    if (rc != MPI_SUCCESS) return rc; /* open agrees: every rank returns here */
    bench_barrier();
    double start = bench_now();
    for (long long i = 0; rc == MPI_SUCCESS && i < run->n; i++) {
        MPI_Offset at = slot_offset(run, i);
        fill_record(run, at);
        int len = (int)run->cfg->record;
        rc = writers[w].ferry ? ferry_File_write_at(fh, at, run->record, len, MPI_BYTE, MPI_STATUS_IGNORE)
                              : MPI_File_write_at(host, at, run->record, len, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    *writes_seconds = bench_now() - start;
    int sync_rc = writers[w].ferry ? ferry_File_sync(fh) : MPI_File_sync(host);
    int close_rc = writers[w].ferry ? ferry_File_close(&fh) : MPI_File_close(&host);
    return rc != MPI_SUCCESS ? rc : sync_rc != MPI_SUCCESS ? sync_rc : close_rc;
}

/* Every record of this rank is in the file (pread of the partition). */
static int partition_ok(const partition_run_t *run)
{
    const partition_config_t *cfg = run->cfg;
    char *part = malloc((size_t)cfg->bytes);
    int fd = open(run->path, O_RDONLY), ok = part && fd >= 0;
    off_t base = (off_t)cfg->common.rank * cfg->bytes;
    ok = ok && pread(fd, part, (size_t)cfg->bytes, base) >= 0;
    for (long long i = 0; ok && i < run->n; i++) {
        MPI_Offset at = slot_offset(run, i);
        fill_record(run, at);
        ok = memcmp(part + (at - base), run->record, (size_t)cfg->record) == 0;
    }
    if (fd >= 0) close(fd);
    free(part);
    return ok;
}

static void write_once(partition_run_t *run, int w, int rep)
{
    bench_barrier();
    double start = bench_now(), writes = 0;
    int rc = write_records(run, w, &writes);
    double mine[2] = {writes, bench_now() - start}, slowest[2];
    MPI_Allreduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    run->seconds[0][w][rep] = slowest[0];
    run->seconds[1][w][rep] = slowest[1];
    int bad = rc != MPI_SUCCESS || !partition_ok(run), any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad) fprintf(stderr, "ferry-bench partition: %s failed or wrote wrong records on rank %d\n", writers[w].name,
                     run->cfg->common.rank);
    run->failed |= any;
}

static void run_reps(partition_run_t *run, const char *dir)
{
    const partition_config_t *cfg = run->cfg;
    for (int rep = 0; rep < cfg->common.reps; rep++) {
        for (int k = 0; k < WRITERS; k++) {
            int w = (k + rep) % WRITERS;
            char path[600];
            snprintf(path, sizeof path, "%s/w%d.%d", dir, w, rep);
            run->path = path;
            write_once(run, w, rep);
            if (cfg->common.rank == 0) unlink(path);
        }
        bench_progress(&cfg->common, NULL, rep);
    }
}

static void print_table(partition_config_t *cfg, partition_run_t *run)
{
    int reps = cfg->common.reps;
    double mib = (double)run->n * (double)cfg->record * cfg->common.nprocs / (1 << 20);
    printf("ferry-bench partition: %d ranks, %lld records of %lld B per rank at random in its %.1f MiB partition, "
           "one write_at each, dir %s, median of %d\n",
           cfg->common.nprocs, run->n, cfg->record, (double)cfg->bytes / (1 << 20), cfg->common.dir, reps);
    printf("%-20s %9s %12s %7s %9s %7s\n", "contender", "MiB/s", "records/s", "vs host", "MiB/s all", "vs host");
    bench_row_t *rows[2] = {bench_row(&cfg->common, "the writes alone", "random records", "write", "MiB/s"),
                            bench_row(&cfg->common, "open to close", "random records", "write", "MiB/s")};
    bench_row_extra(rows[0], "record_bytes", (double)cfg->record);
    double h = mib / bench_median(run->seconds[0][0], reps), hw = mib / bench_median(run->seconds[1][0], reps);
    for (int w = 0; w < WRITERS; w++) {
        double v = mib / bench_median(run->seconds[0][w], reps), vw = mib / bench_median(run->seconds[1][w], reps);
        printf("%-20s %9.2f %12.0f %7.2f %9.2f %7.2f\n", writers[w].name, v, v * (1 << 20) / (double)cfg->record,
               v / h, vw, vw / hw);
        bench_row_value(rows[0], writers[w].name, v);
        bench_row_value(rows[1], writers[w].name, vw);
    }
    if (run->failed) printf("ferry-bench partition: FAILED (see errors above)\n");
}

/* This rank's slots: the first n of a shuffle seeded by the seed and the rank. */
static int choose_slots(partition_run_t *run)
{
    const partition_config_t *cfg = run->cfg;
    long long slots = cfg->bytes / cfg->record;
    run->n = cfg->records ? cfg->records : slots / 4;
    if (run->n < 1) run->n = 1;
    if (cfg->record % 4 || cfg->bytes % cfg->record || run->n > slots) return 2;
    run->slots = malloc((size_t)slots * sizeof *run->slots);
    run->record = malloc((size_t)cfg->record);
    if (!run->slots || !run->record) return 1;
    for (long long i = 0; i < slots; i++) run->slots[i] = (int)i;
    bench_shuffle(run->slots, slots, cfg->seed * 1000003ULL + (unsigned long long)cfg->common.rank + 1);
    return 0;
}

int ferry_bench_partition(int argc, char **argv)
{
    partition_config_t cfg;
    int rc = bench_parse(&bench_partition_spec, argc, argv, &cfg);
    if (rc != CLI_RUN) return rc;
    static partition_run_t run;
    memset(&run, 0, sizeof run);
    run.cfg = &cfg;
    rc = choose_slots(&run);
    if (rc == 2 && cfg.common.rank == 0)
        fprintf(stderr, "ferry-bench partition: --record must be a multiple of 4 dividing --bytes, and --records "
                        "at most the slots\n");
    const char *dir = rc ? NULL : bench_make_dir(cfg.common.dir, "partition");
    if (dir) run_reps(&run, dir);
    if (dir && cfg.common.rank == 0) print_table(&cfg, &run);
    bench_remove_dir(dir);
    free(run.slots);
    free(run.record);
    int finished = bench_finish(&cfg.common, rc || !dir || run.failed);
    return rc == 2 ? 2 : finished;
}

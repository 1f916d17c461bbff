/*
 * A collective write never rewrites a byte it does not cover (issue 13).
 *
 * The file (256 KiB) is cut into blocks dealt round-robin to the ranks.
 * Ranks 0..P-2 write their blocks with a two-phase collective write
 * (forced), so every aggregator window has holes: the blocks of rank P-1,
 * which at the same time writes them with independent write_at calls, one
 * per block, in an order shuffled per round and spread over the time the
 * collective took the round before. MPI-3.1 13.6.1 promises that these
 * non-overlapping accesses do not interfere, so after every round the file
 * (read with plain pread, not through ferry) must hold every rank's bytes of
 * that round. Rounds cycle through:
 *   - below / past the old end of file (odd rounds truncate the file first,
 *     where an aggregator must not write zeros over the racer's blocks);
 *   - one aggregator / every writer aggregating (mode one: rank P-1's own
 *     collective lane is then an aggregator beside its application thread,
 *     two threads of one process, one byte-range lock owner in the kernel);
 *   - 256-byte blocks in 8 KiB windows (aggregators read, patch and write
 *     back their windows: the sieving counter grows below the old end of
 *     file) / 32 KiB blocks in one 256 KiB window (few pieces: below the
 *     old end of file written one by one, the holes untouched, nothing read;
 *     past it the cost model may patch, reading what the racer wrote).
 *
 * usage: coll_racing_writer one|two [rounds]
 *   one  one handle on MPI_COMM_WORLD, MPI_THREAD_MULTIPLE: ranks 0..P-2
 *        iwrite_at_all their blocks, rank P-1 joins with count 0 and writes
 *        its blocks while the collective is pending;
 *   two  two handles: ranks 0..P-2 write_at_all on a handle of their own
 *        communicator, rank P-1 writes through an MPI_COMM_SELF handle.
 * rounds defaults to 100 (FERRY_RACE_ROUNDS overrides). The end prints the
 * bytes lost below and past the old end of file (and fails unless both are
 * 0). With FERRY_FAULT=write:1+:slow every write takes 1 ms more, which
 * widens each read-modify-write: the same losses in fewer rounds, and two
 * threads of one rank racing (mode one, every rank aggregating) get caught.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ferry_test.h"

enum { SPAN = 256 << 10, SMALL_BLOCK = 256, LARGE_BLOCK = 32 << 10 };

typedef struct race {
    int one_handle;     /* mode "one" */
    int racer;          /* rank P-1 */
    MPI_Comm writers;   /* ranks 0..P-2 (mode two), MPI_COMM_NULL on the racer */
    ferry_File coll;    /* the collective handle (the racer's too in mode one) */
    ferry_File own;     /* the racer's MPI_COMM_SELF handle (mode two) */
    const char *path;
    int block;          /* this round's block size */
    unsigned char *data; /* this rank's blocks of the round, back to back */
    int *order;          /* the racer's block order */
    double pace;         /* the writers' last collective took this long: the racer spreads its writes over it */
    long long lost[2];   /* bytes lost: rounds below / past the old end of file */
    int unpatched;       /* small-block rounds below the old end of file that read nothing back */
    int patched_large;   /* large-block rounds below the old end of file that read something back */
    int costly_calls;    /* a network client (get_info ferry_fs_client_cache): a file-system call costs a
                            round trip, and the cost model rightly patches large-block windows too */
} race_t;

static unsigned char value(int round, int block, int byte)
{
    return (unsigned char)(round * 31 + block * 7 + byte + 1);
}

static int my_blocks(const race_t *r)
{
    return SPAN / r->block / ft_size;
}

/* Block i belongs to rank i % P; `rank`'s k-th block is block k * P + rank. */
static void fill_blocks(const race_t *r, int round)
{
    for (int k = 0; k < my_blocks(r); k++)
        for (int b = 0; b < r->block; b++) r->data[k * r->block + b] = value(round, k * ft_size + ft_rank, b);
}

/* Two-phase whatever the cost model thinks; windows a third of the buffer. */
static MPI_Info collective_hints(int aggregators, int block)
{
    MPI_Info info;
    char nodes[16];
    snprintf(nodes, sizeof nodes, "%d", aggregators);
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "cb_buffer_size", block == SMALL_BLOCK ? "24576" : "786432");
    MPI_Info_set(info, "cb_nodes", nodes);
    MPI_Info_set(info, "cb_config_list", "*:*");
    return info;
}

/* The writers' view: their blocks, every P-th block from block `rank`; the
 * racer's (mode one): bytes. Collective on the handle, with the hints. */
static void set_round_view(race_t *r, int aggregators)
{
    MPI_Info info = collective_hints(aggregators, r->block);
    MPI_Datatype blocks = MPI_BYTE;
    if (ft_rank != r->racer) {
        MPI_Type_vector(my_blocks(r), r->block, r->block * ft_size, MPI_BYTE, &blocks);
        MPI_Type_commit(&blocks);
    }
    MPI_Offset disp = ft_rank == r->racer ? 0 : (MPI_Offset)ft_rank * r->block;
    FT_OK(ferry_File_set_view(r->coll, disp, MPI_BYTE, blocks, "native", info));
    if (blocks != MPI_BYTE) MPI_Type_free(&blocks);
    MPI_Info_free(&info);
}

static void open_handles(race_t *r)
{
    int writer = ft_rank != r->racer;
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR;
    if (r->one_handle) {
        FT_OK(ferry_File_open(MPI_COMM_WORLD, r->path, amode, MPI_INFO_NULL, &r->coll));
        return;
    }
    MPI_Comm_split(MPI_COMM_WORLD, writer ? 0 : MPI_UNDEFINED, ft_rank, &r->writers);
    if (writer) FT_OK(ferry_File_open(r->writers, r->path, amode, MPI_INFO_NULL, &r->coll));
    MPI_Barrier(MPI_COMM_WORLD); /* the file exists */
    if (!writer) FT_OK(ferry_File_open(MPI_COMM_SELF, r->path, MPI_MODE_RDWR, MPI_INFO_NULL, &r->own));
}

static int network_client(const race_t *r)
{
    int found = 0, mine = 0, any = 0;
    ferry_File fh = r->coll != FERRY_FILE_NULL ? r->coll : r->own;
    const char *cache = ft_info_lookup(fh, "ferry_fs_client_cache", &found);
    mine = found && strcmp(cache, "none") != 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

static void shuffle(int *order, int n, uint64_t *state)
{
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(ft_rand(state) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* The racer's blocks, one independent write each, spread evenly over the
 * time the writers' collective took last round (so that they meet its
 * windows wherever those are). */
static void race_blocks(race_t *r, int round)
{
    uint64_t state = ft_seed + (uint64_t)round;
    int n = my_blocks(r);
    shuffle(r->order, n, &state);
    ferry_File fh = r->one_handle ? r->coll : r->own;
    double start = MPI_Wtime();
    for (int i = 0; i < n; i++) {
        while (MPI_Wtime() - start < r->pace * i / n) continue;
        int k = r->order[i];
        MPI_Offset at = ((MPI_Offset)k * ft_size + r->racer) * r->block;
        FT_OK(ferry_File_write_at(fh, at, r->data + k * r->block, r->block, MPI_BYTE, MPI_STATUS_IGNORE));
    }
}

static void write_round(race_t *r, int round)
{
    int count = ft_rank == r->racer ? 0 : my_blocks(r) * r->block;
    if (r->one_handle) {
        MPI_Request req;
        FT_OK(ferry_File_iwrite_at_all(r->coll, 0, r->data, count, MPI_BYTE, &req));
        if (ft_rank == r->racer) race_blocks(r, round);
        FT_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else if (ft_rank == r->racer) {
        race_blocks(r, round);
    } else {
        FT_OK(ferry_File_write_at_all(r->coll, 0, r->data, count, MPI_BYTE, MPI_STATUS_IGNORE));
    }
}

/* Rank 0 reads the file with pread and counts the bytes that are not this round's
 * (its client's cached pages dropped first: on a network client, tools/cluster, they
 * may be older than what the other nodes wrote). */
static long long lost_bytes(const race_t *r, int round)
{
    if (ft_rank != 0) return 0;
    static unsigned char file[SPAN];
    int fd = open(r->path, O_RDONLY);
    FT_CHECK(fd >= 0);
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ssize_t got = pread(fd, file, SPAN, 0);
    close(fd);
    long long lost = 0;
    for (int i = 0; i < SPAN / r->block; i++) {
        int bad = 0;
        for (int b = 0; b < r->block; b++) {
            long at = (long)i * r->block + b;
            bad += at >= got || file[at] != value(round, i, b);
        }
        if (bad && lost == 0) {
            printf("round %d: block %d (rank %d's) has %d wrong bytes of %d\n", round, i, i % ft_size, bad, r->block);
            fflush(stdout);
        }
        lost += bad;
    }
    return lost;
}

/* Bytes the aggregators read back to patch windows (all ranks' sum). */
static long long patched_bytes(const race_t *r)
{
    long long mine = r->coll != FERRY_FILE_NULL ? ft_info_number(r->coll, "ferry_stats_sieve_extra_bytes") : 0;
    long long all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

static void run_round(race_t *r, int round)
{
    int past_end = round % 2, everyone = round / 2 % 2, small = round / 4 % 2 == 0;
    r->block = small ? SMALL_BLOCK : LARGE_BLOCK;
    if (past_end && ft_rank == 0) FT_EQ(truncate(r->path, 0), 0);
    if (r->coll != FERRY_FILE_NULL) set_round_view(r, everyone ? ft_size : 1);
    fill_blocks(r, round);
    long long patched = patched_bytes(r);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime(), took;
    write_round(r, round);
    took = ft_rank == r->racer ? 0 : MPI_Wtime() - start;
    MPI_Allreduce(&took, &r->pace, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    r->lost[past_end] += lost_bytes(r, round);
    patched = patched_bytes(r) - patched;
    r->unpatched += !past_end && small && round > 0 && patched == 0;
    r->patched_large += !small && !past_end && patched > 0;
}

static void close_handles(race_t *r)
{
    if (r->coll != FERRY_FILE_NULL) FT_OK(ferry_File_close(&r->coll));
    if (r->own != FERRY_FILE_NULL) FT_OK(ferry_File_close(&r->own));
    if (r->writers != MPI_COMM_NULL) MPI_Comm_free(&r->writers);
}

int main(int argc, char **argv)
{
    race_t r = {.one_handle = argc > 1 && strcmp(argv[1], "one") == 0, .writers = MPI_COMM_NULL,
                .coll = FERRY_FILE_NULL, .own = FERRY_FILE_NULL};
    int provided = ft_init_thread(&argc, &argv, r.one_handle ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE);
    if (r.one_handle && provided != MPI_THREAD_MULTIPLE) {
        ft_skip("MPI_THREAD_MULTIPLE not provided (got level %d)", provided);
        return ft_finish();
    }
    FT_CHECK(ft_size >= 2 && SPAN % (LARGE_BLOCK * ft_size) == 0);
    const char *env = getenv("FERRY_RACE_ROUNDS");
    int rounds = env ? atoi(env) : argc > 2 ? atoi(argv[2]) : 100;
    r.racer = ft_size - 1;
    r.path = ft_path("race");
    r.data = malloc(SPAN);
    r.order = malloc(sizeof *r.order * (SPAN / SMALL_BLOCK));
    open_handles(&r);
    r.costly_calls = network_client(&r);
    for (int round = 0; round < rounds; round++) run_round(&r, round);
    close_handles(&r);
    MPI_Bcast(r.lost, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD); /* every rank fails on a loss first */
    if (ft_rank == 0)
        printf("%s handle%s, %d ranks, %d rounds: %lld bytes lost below the old end of file, %lld past it\n",
               r.one_handle ? "one" : "two", r.one_handle ? "" : "s", ft_size, rounds, r.lost[0], r.lost[1]);
    fflush(stdout);
    FT_EQ(r.lost[0] + r.lost[1], 0);
    FT_EQ(r.unpatched, 0);
    if (!r.costly_calls) FT_EQ(r.patched_large, 0);
    free(r.data);
    free(r.order);
    return ft_finish();
}

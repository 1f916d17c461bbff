/*
 * Leases (issue 31 item 1, src/fs/lease.c): plain writes take no lock once
 * their open file holds a lease, and read-modify-writes never rewrite a
 * hole that a lease holder may be writing.
 *
 *   no locks       every rank writes small records into its own partition of
 *                  a file opened on MPI_COMM_WORLD; after the first write,
 *                  every byte-range lock system call fails (fault
 *                  injection), and the records still go in (before leases,
 *                  each write locked: the second one failed);
 *   sieving        rank 1 writes records into the holes of rank 0's view
 *                  through its own MPI_COMM_SELF handle and keeps its lease;
 *                  rank 0's data-sieving write (forced) must then write its
 *                  pieces one by one (nothing read back); after rank 1 syncs,
 *                  which ends its lease, rank 0 sieves again; every byte of
 *                  both ends up in the file;
 *   protocol       the fs layer between two open files (one per rank): a
 *                  read-modify-write lock sees the other's lease; a lease is
 *                  refused while the other holds a read-modify-write lock
 *                  (the plain write then waits for that lock instead);
 *   drain          two threads of one open file: a read-modify-write lock
 *                  waits for the lock-free write in flight under the file's
 *                  lease (the kernel cannot tell the threads apart).
 */
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ferry_test.h"
#include "fs/fs.h"

enum { RECORD = 512, RECORDS = 64, PIECE = 16, PIECES = 64 };
static const double HOLD = 0.2; /* seconds a lock or a lock-free write is held on purpose */

static void pause_for(double seconds)
{
    struct timespec ts = {0, (long)(seconds * 1e9)};
    nanosleep(&ts, NULL);
}

static void test_no_locks_under_lease(void)
{
    ferry_File fh;
    const char *path = ft_path("records");
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    char records[RECORDS][RECORD], back[RECORD];
    MPI_Offset base = (MPI_Offset)ft_rank * RECORDS * RECORD;
    for (int i = 0; i < RECORDS; i++) ft_fill(records[i], RECORD, ft_seed + (uint64_t)(ft_rank * RECORDS + i));
    FT_OK(ferry_File_write_at(fh, base, records[0], RECORD, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry__fs_fault_arm("lock:1+:EIO"));
    for (int i = RECORDS - 1; i > 0; i--) /* backwards: no help from order */
        FT_OK(ferry_File_write_at(fh, base + (MPI_Offset)i * RECORD, records[i], RECORD, MPI_BYTE,
                                  MPI_STATUS_IGNORE));
    ferry__fs_fault_disarm();
    FT_OK(ferry_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < RECORDS; i++) {
        FT_OK(ferry_File_read_at(fh, base + (MPI_Offset)i * RECORD, back, RECORD, MPI_BYTE, MPI_STATUS_IGNORE));
        FT_EQ_MEM(back, records[i], RECORD);
    }
    FT_OK(ferry_File_close(&fh));
}

/* Rank 0's pieces: PIECE bytes at every other PIECE-byte slot. */
static ferry_File open_pieces(const char *path)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", "enable");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Datatype pieces;
    FT_OK(MPI_Type_vector(PIECES, PIECE, 2 * PIECE, MPI_BYTE, &pieces));
    FT_OK(MPI_Type_commit(&pieces));
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, pieces, "native", info));
    MPI_Type_free(&pieces);
    MPI_Info_free(&info);
    return fh;
}

static void fill_file(char *file, int round)
{
    for (int k = 0; k < 2 * PIECES; k++) ft_fill(file + k * PIECE, PIECE, ft_seed + (uint64_t)(round * 1000 + k));
}

/* Round `round`: rank 1 writes the holes (odd slots), one write each, keeping
 * its lease unless `end_lease`; then rank 0 writes its pieces (even slots) in
 * one sieving call and returns the bytes it read back to patch. */
static long long write_round(ferry_File fh, int round, int end_lease)
{
    char file[2 * PIECES * PIECE], mine[PIECES * PIECE];
    fill_file(file, round);
    if (ft_rank == 1) {
        for (int k = 1; k < 2 * PIECES; k += 2)
            FT_OK(ferry_File_write_at(fh, (MPI_Offset)k * PIECE, file + k * PIECE, PIECE, MPI_BYTE,
                                      MPI_STATUS_IGNORE));
        if (end_lease) FT_OK(ferry_File_sync(fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long long read_back = 0;
    if (ft_rank == 0) {
        for (int k = 0; k < PIECES; k++) memcpy(mine + k * PIECE, file + 2 * k * PIECE, PIECE);
        long long before = ft_info_number(fh, "ferry_stats_sieve_extra_bytes");
        FT_OK(ferry_File_write_at(fh, 0, mine, PIECES * PIECE, MPI_BYTE, MPI_STATUS_IGNORE));
        read_back = ft_info_number(fh, "ferry_stats_sieve_extra_bytes") - before;
        char back[sizeof file];
        int fd = open(ft_path("holes"), O_RDONLY);
        FT_CHECK(fd >= 0);
        FT_EQ(pread(fd, back, sizeof back, 0), (ssize_t)sizeof back);
        close(fd);
        FT_EQ_MEM(back, file, sizeof file);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return read_back;
}

static void test_lease_refuses_sieving(void)
{
    const char *path = ft_path("holes");
    ferry_File fh = FERRY_FILE_NULL;
    if (ft_rank == 0) fh = open_pieces(path);
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 1) FT_OK(ferry_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    long long leased = write_round(fh, 0, 0);
    long long after_sync = write_round(fh, 1, 1);
    if (ft_rank == 0) {
        FT_EQ(leased, 0);         /* rank 1's lease: pieces one by one, nothing read back */
        FT_CHECK(after_sync > 0); /* no lease: sieved */
    }
    if (fh != FERRY_FILE_NULL) FT_OK(ferry_File_close(&fh));
}

/* The fs layer between two open files of the file, one per rank. */
static void test_protocol(void)
{
    const char *path = ft_path("protocol");
    ferry__fs_file_t *f = NULL;
    if (ft_rank == 0) FT_OK(ferry__fs_open(path, FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, &f));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 1) FT_OK(ferry__fs_open(path, FERRY_FS_READ | FERRY_FS_WRITE, &f));
    ferry__fs_guard_t guard;
    int leased = -1;
    /* 1. Rank 1 leases; rank 0's read-modify-write lock sees it. */
    if (ft_rank == 1) {
        FT_OK(ferry__fs_guard_write(f, 100, 10, &guard));
        FT_EQ(guard.how, FERRY_FS_GUARD_LEASE);
        FT_OK(ferry__fs_unguard_write(f, &guard));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0) {
        FT_OK(ferry__fs_lock_rmw(f, 0, 4096, &leased));
        FT_EQ(leased, 1);
        FT_OK(ferry__fs_unlock(f, 0, 4096));
        FT_OK(ferry__fs_lock_rmw(f, 2 << 20, 4096, &leased)); /* other granules are free */
        FT_EQ(leased, 0);
        FT_OK(ferry__fs_unlock(f, 2 << 20, 4096));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* 2. Rank 1's sync ends its lease; rank 0 locks for a read-modify-write and holds it;
     * rank 1's next plain write gets no lease and waits for the lock. */
    if (ft_rank == 1) FT_OK(ferry__fs_sync(f));
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0) {
        FT_OK(ferry__fs_lock_rmw(f, 0, 4096, &leased));
        FT_EQ(leased, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0) {
        pause_for(HOLD);
        FT_OK(ferry__fs_unlock(f, 0, 4096));
    } else if (ft_rank == 1) {
        double start = MPI_Wtime();
        FT_OK(ferry__fs_guard_write(f, 100, 10, &guard));
        double waited = MPI_Wtime() - start;
        FT_EQ(guard.how, FERRY_FS_GUARD_LOCK);
        if (waited < HOLD / 2) ft_fail(__FILE__, __LINE__, "the plain write did not wait for the lock (%.3f s)", waited);
        FT_OK(ferry__fs_unguard_write(f, &guard));
    }
    if (f) FT_OK(ferry__fs_close(f));
}

typedef struct drain {
    ferry__fs_file_t *f;
    double unguarded_at;
} drain_t;

/* A lock-free write that takes HOLD seconds. */
static void *slow_lock_free_write(void *arg)
{
    drain_t *d = arg;
    ferry__fs_guard_t guard;
    FT_OK(ferry__fs_guard_write(d->f, 0, 10, &guard));
    FT_EQ(guard.how, FERRY_FS_GUARD_LEASE);
    pause_for(HOLD);
    d->unguarded_at = MPI_Wtime();
    FT_OK(ferry__fs_unguard_write(d->f, &guard));
    return NULL;
}

static void test_drain(void)
{
    if (ft_rank != 0) return;
    drain_t d = {NULL, 0};
    FT_OK(ferry__fs_open(ft_path("drain"), FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, &d.f));
    ferry__fs_guard_t guard; /* take the lease first, so that the thread goes lock-free at once */
    FT_OK(ferry__fs_guard_write(d.f, 0, 10, &guard));
    FT_OK(ferry__fs_unguard_write(d.f, &guard));
    pthread_t writer;
    FT_EQ(pthread_create(&writer, NULL, slow_lock_free_write, &d), 0);
    pause_for(HOLD / 4);
    int leased = -1;
    FT_OK(ferry__fs_lock_rmw(d.f, 0, 4096, &leased));
    double locked_at = MPI_Wtime();
    FT_EQ(leased, 0);
    FT_OK(ferry__fs_unlock(d.f, 0, 4096));
    pthread_join(writer, NULL);
    if (locked_at < d.unguarded_at)
        ft_fail(__FILE__, __LINE__, "the read-modify-write locked %.3f s before the lock-free write ended",
                d.unguarded_at - locked_at);
    FT_OK(ferry__fs_close(d.f));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    FT_CHECK(ft_size >= 2);
    test_no_locks_under_lease();
    test_lease_refuses_sieving();
    test_protocol();
    test_drain();
    return ft_finish();
}

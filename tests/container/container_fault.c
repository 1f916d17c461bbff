/*
 * File-system failures (fs fault injection): a full disk in the middle of
 * one rank's writes fails that rank's write, names the container, the rank
 * and the cause, and leaves every other stream intact; the failing stream
 * keeps what it wrote before the failure (its flushes included) and is
 * marked in the end table. Short writes and interruptions are absorbed. A
 * failure of the root's end table write fails close on every rank and
 * leaves a container recover completes. So does a writer whose close-time
 * flush fails (its node's file-system client died: tools/cluster-faults'
 * client-kill/container): the root must not complete the container with a
 * length that writer's chunk trailers do not record.
 */
#include <stdlib.h>
#include <string.h>

#include "container_model.h"
#include "ferry_test.h"
#include "fs/fs.h"

enum { LENGTH = 200000, PIECE = 3000 };

static void write_bytes(ferry_container_t c, const unsigned char *bytes, size_t from, size_t to, size_t *written,
                        int *failed_at_call)
{
    for (size_t pos = from; pos < to && !*failed_at_call;) {
        size_t len = to - pos < PIECE ? to - pos : PIECE, done = 0;
        int rc = ft_capture(ferry_container_write(c, bytes + pos, len, &done));
        pos += done;
        *written = pos;
        if (rc == MPI_SUCCESS) continue;
        FT_EQ(ft_class(rc), MPI_ERR_NO_SPACE);
        FT_CHECK(strstr(ft_message, "rank 1") && strstr(ft_message, "No space left") && strstr(ft_message, "full.ctr"));
        if (getenv("FERRY_CONTAINER_VERBOSE")) printf("rank 1 sees: %s\n", ft_message);
        *failed_at_call = 1;
    }
}

/* Every stream but rank 1's whole; rank 1's between its flushed and its written length, marked or
 * not (recover clears the marks); every byte right. */
static void check_streams(const char *path, const unsigned char *all, size_t failed_length, size_t flushed,
                          int marked)
{
    ferry_container_set_t set;
    FT_OK(ferry_container_serial_open(path, 0, &set));
    unsigned char *got = malloc(LENGTH);
    for (int s = 0; s < ft_size; s++) {
        ferry_container_info_t info;
        size_t done;
        FT_OK(ferry_container_serial_stream(set, s, &info));
        if (s == 1) {
            FT_EQ(info.write_failed, marked);
            FT_CHECK((size_t)info.length >= flushed && (size_t)info.length <= failed_length);
        } else {
            FT_EQ(info.length, LENGTH);
            FT_EQ(info.write_failed, 0);
        }
        FT_OK(ferry_container_serial_read(set, s, 0, got, LENGTH, &done));
        FT_EQ(done, info.length);
        FT_EQ_MEM(got, all + (size_t)s * LENGTH, done);
    }
    free(got);
    FT_OK(ferry_container_serial_close(&set));
    ferry_container_check_t check = {0};
    FT_OK(ferry_container_verify(path, &check));
}

static void full_disk_on_rank_1(const unsigned char *all)
{
    const char *path = ft_path("full.ctr");
    ferry_container_params_t p = {0};
    p.block_size = 4096;
    p.chunk_size = 20000;
    p.buffer_size = 5000;
    ferry_container_t c;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    const unsigned char *mine = all + (size_t)ft_rank * LENGTH;
    size_t written = 0, flushed = 0;
    int failed = 0;
    write_bytes(c, mine, 0, LENGTH / 4, &written, &failed);
    FT_OK(ferry_container_flush(c));
    flushed = written;
    if (ft_rank == 1) FT_OK(ferry__fs_fault_arm("write:9+:ENOSPC@1"));
    write_bytes(c, mine, written, LENGTH, &written, &failed);
    FT_EQ(failed, ft_rank == 1);
    if (ft_rank == 1) {
        size_t done;
        FT_FAILS_NAMING(MPI_ERR_NO_SPACE, "earlier write", ferry_container_write(c, mine, 1, &done));
        ferry__fs_fault_disarm();
    }
    FT_OK(ferry_container_close(&c));
    size_t bounds[2] = {written, flushed};
    MPI_Bcast(bounds, 2, MPI_UNSIGNED_LONG, 1 % ft_size, MPI_COMM_WORLD);
    if (ft_rank == 0) check_streams(path, all, bounds[0], bounds[1], 1);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Half-done and interrupted system calls are the fs layer's to finish. */
static void short_and_interrupted(const unsigned char *all)
{
    const char *path = ft_path("short.ctr");
    ferry_container_t c;
    size_t done;
    FT_OK(ferry__fs_fault_arm(ft_rank % 2 ? "write:1+:short" : "write:2:EINTR;read:1+:short"));
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, NULL, &c));
    FT_OK(ferry_container_write(c, all + (size_t)ft_rank * LENGTH, LENGTH, &done));
    FT_OK(ferry_container_close(&c));
    FT_OK(ferry_container_open_read(MPI_COMM_WORLD, path, &c));
    unsigned char *got = malloc(LENGTH);
    FT_OK(ferry_container_read(c, got, LENGTH, &done));
    FT_EQ(done, LENGTH);
    FT_EQ_MEM(got, all + (size_t)ft_rank * LENGTH, LENGTH);
    FT_OK(ferry_container_close(&c));
    ferry__fs_fault_disarm();
    free(got);
}

/* The root's end table write fails (an I/O error, a full disk): close fails
 * everywhere, naming recover, and recover completes it with every byte
 * (docs/container.md: what a full disk at close leaves). */
static void root_fails_at_close(const unsigned char *all, const char *fault, int cls)
{
    const char *path = ft_path("root.ctr");
    ferry_container_t c;
    size_t done;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, NULL, &c));
    FT_OK(ferry_container_write(c, all + (size_t)ft_rank * LENGTH, LENGTH, &done));
    FT_OK(ferry_container_flush(c));
    if (ft_rank == 0) FT_OK(ferry__fs_fault_arm(fault));
    int rc = ft_capture(ferry_container_close(&c));
    FT_FAILS_NAMING(cls, "rank 0", rc);
    FT_CHECK(strstr(ft_message, "'ferry-container recover' completes the container") != NULL);
    ferry__fs_fault_disarm();
    FT_CHECK(c == NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0) {
        MPI_Offset bytes;
        int was_complete;
        FT_OK(ferry_container_recover(path, &bytes, &was_complete));
        FT_EQ(was_complete, 0);
        FT_EQ(bytes, (MPI_Offset)LENGTH * ft_size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 1's writes and syncs fail from its close on, after it wrote bytes past
 * its last flush (written straight through): close fails on every rank, the
 * container stays incomplete (and verifies up to every flush), and recover gives every stream back, rank 1's
 * with at least its flushed bytes, all of them right. */
static void member_fails_at_close(const unsigned char *all)
{
    const char *path = ft_path("member.ctr");
    ferry_container_params_t p = {.chunk_size = 20000, .buffer_size = 5000};
    ferry_container_t c;
    size_t done;
    const unsigned char *mine = all + (size_t)ft_rank * LENGTH;
    FT_OK(ferry_container_open_write(MPI_COMM_WORLD, path, &p, &c));
    FT_OK(ferry_container_write(c, mine, LENGTH / 2, &done));
    FT_OK(ferry_container_flush(c));
    FT_OK(ferry_container_write(c, mine + LENGTH / 2, LENGTH / 2, &done));
    if (ft_rank == 1) FT_OK(ferry__fs_fault_arm("write:1+:EIO@1;sync:1+:EIO@1"));
    FT_FAILS_NAMING(MPI_ERR_IO, "member.ctr", ferry_container_close(&c));
    ferry__fs_fault_disarm();
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0) {
        ferry_container_check_t check = {0};
        FT_OK(ferry_container_verify(path, &check)); /* up to each stream's last flush */
        FT_EQ(check.incomplete, 1);
        MPI_Offset bytes;
        int was_complete;
        FT_OK(ferry_container_recover(path, &bytes, &was_complete));
        FT_EQ(was_complete, 0);
        check_streams(path, all, LENGTH, LENGTH / 2, 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    unsigned char *all = malloc((size_t)LENGTH * ft_size);
    ft_fill(all, (size_t)LENGTH * ft_size, ft_seed);
    full_disk_on_rank_1(all);
    short_and_interrupted(all);
    root_fails_at_close(all, "write:1:EIO@0", MPI_ERR_IO);
    root_fails_at_close(all, "write:1:ENOSPC@0", MPI_ERR_NO_SPACE);
    member_fails_at_close(all);
    free(all);
    return ft_finish();
}

/*
 * ferry-container dump: what a container holds and what it costs on disk,
 * next to what the same streams would cost as one file per stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "ferry_container.h"

int ferry_container_tool_dump(ferry_container_set_t set, const char *path, int chunks);

typedef struct disk_use {
    long long size, allocated; /* apparent and allocated bytes of the physical files */
} disk_use_t;

static void file_name(const char *path, int k, char *name, size_t len)
{
    if (k == 0) snprintf(name, len, "%s", path);
    else snprintf(name, len, "%s.%06d", path, k);
}

static const char *how(int complete)
{
    return complete == 1 ? "complete (closed by its writers)" : complete == 2 ? "complete (rebuilt by recover)"
                                                                               : "INCOMPLETE (never closed)";
}

static void dump_files(ferry_container_set_t set, const char *path, int files, disk_use_t *use)
{
    for (int k = 0; k < files; k++) {
        ferry_container_file_info_t fi;
        char name[4096];
        struct stat st;
        ferry_container_serial_file(set, k, &fi);
        file_name(path, k, name, sizeof name);
        if (stat(name, &st) == 0) {
            use->size += (long long)st.st_size;
            use->allocated += (long long)st.st_blocks * 512;
        }
        printf("file %d: %s, format %d.%d, %s, %d streams, %lld bytes, block %lld, data from %lld, rows of %lld "
               "bytes: %lld\n", k, name, fi.major, fi.minor, how(fi.complete), fi.streams, (long long)fi.size,
               (long long)fi.block_size, (long long)fi.data_start, (long long)fi.row_size, (long long)fi.rows);
    }
}

static void dump_chunks(ferry_container_set_t set, const ferry_container_info_t *info)
{
    for (MPI_Offset b = 0; b < info->chunks; b++) {
        int file;
        MPI_Offset offset, used;
        ferry_container_serial_chunk(set, info->stream, b, &file, &offset, &used);
        printf("  chunk %lld: file %d offset %lld used %lld\n", (long long)b, file, (long long)offset,
               (long long)used);
    }
}

/* Prints every stream; returns the stream bytes and what they would
 * allocate as task-local files (whole blocks each). */
static long long dump_streams(ferry_container_set_t set, int streams, int chunks, long long *task_local)
{
    long long bytes = 0;
    printf("%8s %5s %12s %8s %14s %7s\n", "stream", "file", "chunk_size", "chunks", "length", "usage");
    for (int s = 0; s < streams; s++) {
        ferry_container_info_t info;
        ferry_container_serial_stream(set, s, &info);
        double room = (double)info.chunks * (double)info.chunk_size;
        printf("%8d %5d %12lld %8lld %14lld %6.1f%%%s\n", s, info.file_index, (long long)info.chunk_size,
               (long long)info.chunks, (long long)info.length, room > 0 ? 100.0 * (double)info.length / room : 100.0,
               info.write_failed ? "  (a write failed)" : "");
        if (chunks) dump_chunks(set, &info);
        bytes += info.length;
        *task_local += (info.length + 4095) / 4096 * 4096;
    }
    return bytes;
}

int ferry_container_tool_dump(ferry_container_set_t set, const char *path, int chunks)
{
    int streams, files, complete;
    disk_use_t use = {0, 0};
    long long task_local = 0;
    ferry_container_serial_describe(set, &streams, &files, &complete);
    printf("container %s: %d streams in %d file%s, %s\n", path, streams, files, files == 1 ? "" : "s",
           complete ? "complete" : "INCOMPLETE");
    dump_files(set, path, files, &use);
    long long bytes = dump_streams(set, streams, chunks, &task_local);
    printf("stream bytes: %lld; container: %lld bytes in %d file%s, %lld allocated (overhead %.1f%%); "
           "as task-local files: %d files, %lld bytes allocated in 4 KiB blocks (overhead %.1f%%)\n",
           bytes, use.size, files, files == 1 ? "" : "s", use.allocated,
           bytes ? 100.0 * (double)(use.allocated - bytes) / (double)bytes : 0.0, streams, task_local,
           bytes ? 100.0 * (double)(task_local - bytes) / (double)bytes : 0.0);
    if (complete) return 0;
    printf("INCOMPLETE: the lengths above are what the last flushes recorded; 'ferry-container recover %s' "
           "completes the container with them\n", path);
    return 3;
}

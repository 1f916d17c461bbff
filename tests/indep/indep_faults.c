/*
 * Fault matrices over independent noncontiguous I/O (one rank, so every
 * system call is this process's): for k = 1, 2, ... make the k-th read or
 * write system call fail, or the k-th allocation, until the operation goes
 * through untouched. Every failure must come back as the right error class,
 * and no byte outside the call's own segments may change, whichever call
 * failed (a data-sieving write must never write back a window it could not
 * read). Run under ASan this also proves the error paths leak nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ferry_test.h"
#include "fs/fs.h"

enum { BLOCK = 8, STRIDE = 24, BLOCKS = 600, FILE_SIZE = STRIDE * BLOCKS + 64, DISP = 16 };

static char pattern[FILE_SIZE], data[BLOCK * BLOCKS];

static void reset_file(const char *path)
{
    FILE *f = fopen(path, "wb");
    FT_CHECK(f && fwrite(pattern, 1, FILE_SIZE, f) == FILE_SIZE);
    fclose(f);
}

static int inside_call(long offset)
{
    long rel = offset - DISP;
    return rel >= 0 && rel < STRIDE * BLOCKS && rel % STRIDE < BLOCK;
}

/* Bytes outside the call are the pattern; inside, either old or new data. */
static void check_file(const char *path, int must_be_complete, int k, const char *what)
{
    char file[FILE_SIZE];
    FILE *f = fopen(path, "rb");
    FT_CHECK(f && fread(file, 1, FILE_SIZE, f) == FILE_SIZE);
    fclose(f);
    for (long i = 0; i < FILE_SIZE; i++) {
        char written = inside_call(i) ? data[((i - DISP) / STRIDE) * BLOCK + (i - DISP) % STRIDE] : pattern[i];
        if (!inside_call(i) && file[i] != pattern[i])
            ft_fail(__FILE__, __LINE__, "%s failing at %d: byte %ld outside the call changed", what, k, i);
        if (inside_call(i) && file[i] != written && (must_be_complete || file[i] != pattern[i]))
            ft_fail(__FILE__, __LINE__, "%s failing at %d: byte %ld holds neither old nor new data", what, k, i);
    }
}

static ferry_File open_view(const char *path, MPI_Datatype view, const char *ds)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", (char *)ds);
    MPI_Info_set(info, "romio_ds_read", (char *)ds);
    MPI_Info_set(info, "ind_wr_buffer_size", "4096");
    MPI_Info_set(info, "ind_rd_buffer_size", "4096");
    MPI_Info_set(info, "ferry_pack_buffer_size", "4096");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, info, &fh));
    FT_OK(ferry_File_set_view(fh, DISP, MPI_BYTE, view, "native", info));
    MPI_Info_free(&info);
    return fh;
}

/* A noncontiguous memory type too, so staging is exercised. */
static MPI_Datatype memory_type(void)
{
    MPI_Datatype t;
    FT_OK(MPI_Type_vector(BLOCKS, BLOCK, BLOCK + 4, MPI_BYTE, &t));
    FT_OK(MPI_Type_commit(&t));
    return t;
}

static void write_matrix(const char *path, MPI_Datatype view, const char *ds, const char *op, int expected_class)
{
    MPI_Datatype mem = memory_type();
    char *memory = calloc(BLOCKS, BLOCK + 4);
    for (int i = 0; i < BLOCKS; i++) memcpy(memory + i * (BLOCK + 4), data + i * BLOCK, BLOCK);
    for (int k = 1;; k++) {
        FT_CHECK(k < 10000);
        reset_file(path);
        ferry_File fh = open_view(path, view, ds);
        char spec[64];
        snprintf(spec, sizeof spec, "%s:%d:EIO", op, k);
        if (strcmp(op, "alloc") == 0) ferry__alloc_fail_after(k);
        else FT_OK(ferry__fs_fault_arm(spec));
        int rc = ferry_File_write_at(fh, 0, memory, 1, mem, MPI_STATUS_IGNORE);
        ferry__alloc_fail_after(0);
        ferry__fs_fault_disarm();
        FT_OK(ferry_File_close(&fh));
        if (rc != MPI_SUCCESS && ft_class(rc) != expected_class)
            ft_fail(__FILE__, __LINE__, "%s (%s) failing at %d: class %d, want %d", op, ds, k, ft_class(rc),
                    expected_class);
        check_file(path, rc == MPI_SUCCESS, k, op);
        if (rc == MPI_SUCCESS) break;
    }
    free(memory);
    MPI_Type_free(&mem);
}

static void read_matrix(const char *path, MPI_Datatype view, const char *ds, const char *op, int expected_class)
{
    MPI_Datatype mem = memory_type();
    char *memory = calloc(BLOCKS, BLOCK + 4);
    reset_file(path);
    for (int k = 1;; k++) {
        FT_CHECK(k < 10000);
        ferry_File fh = open_view(path, view, ds);
        char spec[64];
        snprintf(spec, sizeof spec, "%s:%d:EIO", op, k);
        if (strcmp(op, "alloc") == 0) ferry__alloc_fail_after(k);
        else FT_OK(ferry__fs_fault_arm(spec));
        MPI_Status status;
        int rc = ferry_File_read_at(fh, 0, memory, 1, mem, &status);
        ferry__alloc_fail_after(0);
        ferry__fs_fault_disarm();
        FT_OK(ferry_File_close(&fh));
        if (rc != MPI_SUCCESS && ft_class(rc) != expected_class)
            ft_fail(__FILE__, __LINE__, "%s (%s) failing at %d: class %d, want %d", op, ds, k, ft_class(rc),
                    expected_class);
        if (rc == MPI_SUCCESS) {
            for (int i = 0; i < BLOCKS; i++)
                FT_EQ_MEM(memory + i * (BLOCK + 4), pattern + DISP + (long)i * STRIDE, BLOCK);
            break;
        }
    }
    free(memory);
    MPI_Type_free(&mem);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    ft_fill(pattern, FILE_SIZE, ft_seed);
    ft_fill(data, sizeof data, ft_seed + 1);
    char name[32];
    snprintf(name, sizeof name, "faults.%d", ft_rank);
    const char *path = ft_path(name);
    MPI_Datatype vec, view;
    FT_OK(MPI_Type_vector(1, BLOCK, STRIDE, MPI_BYTE, &vec));
    FT_OK(MPI_Type_create_resized(vec, 0, STRIDE, &view));
    FT_OK(MPI_Type_commit(&view));
    static const char *const modes[2] = {"enable", "disable"};
    for (int m = 0; m < 2; m++) {
        write_matrix(path, view, modes[m], "write", MPI_ERR_IO);
        write_matrix(path, view, modes[m], "read", MPI_ERR_IO);
        write_matrix(path, view, modes[m], "alloc", MPI_ERR_NO_MEM);
        read_matrix(path, view, modes[m], "read", MPI_ERR_IO);
        read_matrix(path, view, modes[m], "alloc", MPI_ERR_NO_MEM);
    }
    MPI_Type_free(&view);
    MPI_Type_free(&vec);
    return ft_finish();
}

/*
 * Reads into noncontiguous memory of long pieces go from the sieving
 * window straight into memory (datatype/copy.c), and vectored rounds
 * unpack their own bytes. Checked byte for byte against a model, with
 * sieving forced on and off, pieces of memory and file that do not line
 * up, a read that ends past the end of file, and memory gaps untouched.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

enum { MEM_BLOCK = 300, MEM_STRIDE = 450, FILE_BLOCK = 700, FILE_STRIDE = 1400, BLOCKS = 200, GAP = 0x77 };

static void read_case(const char *path, const char *ds, MPI_Offset file_size)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_read", (char *)ds);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, info, &fh));
    MPI_Info_free(&info);
    MPI_Datatype block, view, mem;
    MPI_Type_contiguous(FILE_BLOCK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, FILE_STRIDE, &view);
    MPI_Type_commit(&view);
    MPI_Type_vector(BLOCKS, MEM_BLOCK, MEM_STRIDE, MPI_BYTE, &mem);
    MPI_Type_commit(&mem);
    FT_OK(ferry_File_set_view(fh, 13, MPI_BYTE, view, "native", MPI_INFO_NULL));
    size_t span = (size_t)(BLOCKS - 1) * MEM_STRIDE + MEM_BLOCK;
    unsigned char *buf = malloc(span), *want = malloc(span);
    memset(buf, GAP, span);
    memset(want, GAP, span);
    MPI_Offset skip = 333; /* starts inside a file block */
    MPI_Offset got_expect = 0;
    for (MPI_Offset k = 0; k < (MPI_Offset)BLOCKS * MEM_BLOCK; k++) {
        MPI_Offset r = skip + k, off = 13 + (r / FILE_BLOCK) * FILE_STRIDE + r % FILE_BLOCK;
        if (off >= file_size) break;
        want[(k / MEM_BLOCK) * MEM_STRIDE + k % MEM_BLOCK] = (unsigned char)(off * 7 + 1);
        got_expect++;
    }
    MPI_Status st;
    FT_OK(ferry_File_read_at(fh, skip, buf, 1, mem, &st));
    MPI_Count got = -1;
    MPI_Get_elements_x(&st, MPI_BYTE, &got);
    FT_EQ(got, got_expect);
    FT_EQ_MEM(buf, want, span);
    FT_OK(ferry_File_close(&fh));
    MPI_Type_free(&view);
    MPI_Type_free(&block);
    MPI_Type_free(&mem);
    free(buf);
    free(want);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    if (ft_rank == 0) {
        const char *path = ft_path("typed_copy");
        MPI_Offset sizes[2] = {1 << 20, 60000}; /* all of it, and a file ending inside the read */
        for (int i = 0; i < 2; i++) {
            unsigned char *bytes = malloc((size_t)sizes[i]);
            for (MPI_Offset off = 0; off < sizes[i]; off++) bytes[off] = (unsigned char)(off * 7 + 1);
            FILE *f = fopen(path, "wb");
            FT_EQ(fwrite(bytes, 1, (size_t)sizes[i], f), (size_t)sizes[i]);
            fclose(f);
            free(bytes);
            read_case(path, "enable", sizes[i]);
            read_case(path, "disable", sizes[i]);
            read_case(path, "automatic", sizes[i]);
        }
    }
    return ft_finish();
}

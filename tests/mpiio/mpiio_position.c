/*
 * File positions (MPI-3.1 13.3, 13.4.3): seek with SET/CUR/END, negative
 * and overflowing results rejected with MPI_ERR_ARG and the pointer left
 * alone, get_position after every kind of access (including short reads),
 * get_byte_offset, and views with a displacement and MPI_INT /
 * contiguous-of-MPI_INT etypes and filetypes moving offsets, checked
 * against the bytes in the file; get_view returns what set_view set.
 */
#include <stdint.h>
#include <string.h>

#include "ferry_test.h"

static MPI_Offset position(ferry_File fh)
{
    MPI_Offset pos = -1;
    FT_OK(ferry_File_get_position(fh, &pos));
    return pos;
}

static MPI_Offset byte_offset(ferry_File fh, MPI_Offset off)
{
    MPI_Offset disp = -1;
    FT_OK(ferry_File_get_byte_offset(fh, off, &disp));
    return disp;
}

static void default_view(ferry_File fh, const char *path)
{
    enum { N = 100 };
    unsigned char data[N], back[N];
    ft_fill(data, N, ft_seed);
    if (ft_rank == 0) FT_OK(ferry_File_write_at(fh, 0, data, N, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_EQ(position(fh), 0);
    FT_OK(ferry_File_seek(fh, 10 + ft_rank, MPI_SEEK_SET));
    FT_EQ(position(fh), 10 + ft_rank);
    FT_OK(ferry_File_seek(fh, 5, MPI_SEEK_CUR));
    FT_EQ(position(fh), 15 + ft_rank);
    FT_FAILS_NAMING(MPI_ERR_ARG, path, ferry_File_seek(fh, -16 - ft_rank, MPI_SEEK_CUR));
    FT_EQ(position(fh), 15 + ft_rank); /* unchanged by the failed seek */
    FT_OK(ferry_File_seek(fh, -15 - ft_rank, MPI_SEEK_CUR));
    FT_EQ(position(fh), 0);
    FT_OK(ferry_File_seek(fh, 0, MPI_SEEK_END));
    FT_EQ(position(fh), N);
    FT_OK(ferry_File_seek(fh, -3, MPI_SEEK_END));
    FT_EQ(position(fh), N - 3);
    FT_OK(ferry_File_seek(fh, 1000, MPI_SEEK_END)); /* past EOF is allowed */
    FT_EQ(position(fh), N + 1000);
    FT_FAILS_NAMING(MPI_ERR_ARG, path, ferry_File_seek(fh, -N - 1, MPI_SEEK_END));
    FT_FAILS_NAMING(MPI_ERR_ARG, path, ferry_File_seek(fh, -1, MPI_SEEK_SET));
    FT_FAILS_NAMING(MPI_ERR_ARG, path, ferry_File_seek(fh, 0, 12345));
    FT_OK(ferry_File_seek(fh, INT64_MAX, MPI_SEEK_SET));
    FT_FAILS_NAMING(MPI_ERR_ARG, path, ferry_File_seek(fh, 1, MPI_SEEK_CUR));
    FT_EQ(position(fh), INT64_MAX);

    /* Reads and writes move the pointer by what they moved. */
    FT_OK(ferry_File_seek(fh, 90, MPI_SEEK_SET));
    MPI_Status st;
    FT_OK(ferry_File_read(fh, back, 20, MPI_BYTE, &st)); /* short: 10 bytes */
    FT_EQ(position(fh), N);
    FT_EQ_MEM(back, data + 90, 10);
    FT_OK(ferry_File_read(fh, back, 20, MPI_BYTE, &st)); /* at EOF: nothing */
    FT_EQ(position(fh), N);
    FT_OK(ferry_File_seek(fh, 4 * ft_rank, MPI_SEEK_SET));
    FT_OK(ferry_File_read_all(fh, back, 2, MPI_INT, &st));
    FT_EQ(position(fh), 4 * ft_rank + 8);
    FT_EQ_MEM(back, data + 4 * ft_rank, 8);
    FT_OK(ferry_File_read_at(fh, 0, back, 50, MPI_BYTE, &st)); /* explicit offsets leave it alone */
    FT_EQ(position(fh), 4 * ft_rank + 8);
    FT_OK(ferry_File_seek(fh, N + 8 * ft_rank, MPI_SEEK_SET));
    FT_OK(ferry_File_write_all(fh, data, 1, MPI_DOUBLE, &st));
    FT_EQ(position(fh), N + 8 * ft_rank + 8);
    MPI_Request req;
    FT_OK(ferry_File_iwrite(fh, data, 0, MPI_BYTE, &req));
    FT_OK(MPI_Wait(&req, &st));
    FT_EQ(position(fh), N + 8 * ft_rank + 8);
    FT_EQ(byte_offset(fh, 77), 77);
    FT_FAILS_NAMING(MPI_ERR_ARG, path, ferry_File_get_byte_offset(fh, -1, &(MPI_Offset){0}));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset size = 0;
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, N + 8 * ft_size);
    MPI_Barrier(MPI_COMM_WORLD); /* before the next phase's set_size shrinks the file */
}

/* filetype_ints == 0: the filetype is want_etype itself; otherwise contiguous(filetype_ints, MPI_INT). */
static void check_view(ferry_File fh, MPI_Offset want_disp, MPI_Datatype want_etype, int filetype_ints)
{
    MPI_Offset disp = -1;
    MPI_Datatype etype, filetype;
    char rep[MPI_MAX_DATAREP_STRING] = "";
    FT_OK(ferry_File_get_view(fh, &disp, &etype, &filetype, rep));
    FT_EQ(disp, want_disp);
    FT_CHECK(etype == want_etype);
    FT_CHECK(strcmp(rep, "native") == 0);
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(filetype, &ni, &na, &nd, &combiner);
    if (filetype_ints == 0) {
        FT_CHECK(filetype == want_etype);
    } else {
        /* A derived filetype comes back as a new handle describing the same
         * type, possibly as duplicates of it (MPI_COMBINER_DUP). */
        while (combiner == MPI_COMBINER_DUP) {
            MPI_Datatype inner;
            MPI_Type_get_contents(filetype, 0, 0, 1, NULL, NULL, &inner);
            MPI_Type_free(&filetype);
            filetype = inner;
            MPI_Type_get_envelope(filetype, &ni, &na, &nd, &combiner);
        }
        FT_EQ(combiner, MPI_COMBINER_CONTIGUOUS);
        int count = 0;
        MPI_Aint unused_a;
        MPI_Datatype inner;
        MPI_Type_get_contents(filetype, 1, 0, 1, &count, &unused_a, &inner);
        FT_EQ(count, filetype_ints);
        FT_CHECK(inner == MPI_INT);
        MPI_Type_free(&filetype);
    }
}

static void int_views(ferry_File fh, const char *path)
{
    enum { DISP = 100 };
    FT_OK(ferry_File_set_size(fh, 0));
    FT_OK(ferry_File_seek(fh, 7, MPI_SEEK_SET));
    FT_OK(ferry_File_set_view(fh, DISP, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    check_view(fh, DISP, MPI_INT, 0);
    FT_EQ(position(fh), 0); /* set_view resets the pointer */
    FT_EQ(byte_offset(fh, 0), DISP);
    FT_EQ(byte_offset(fh, 5), DISP + 20);
    FT_EQ(byte_offset(fh, (MPI_Offset)1 << 40), DISP + ((MPI_Offset)1 << 42));
    FT_FAILS_NAMING(MPI_ERR_ARG, path, ferry_File_get_byte_offset(fh, INT64_MAX / 2, &(MPI_Offset){0}));

    /* Rank r writes ints r*10 .. r*10+2 through its pointer, then one at offset 100 + r. */
    int vals[3] = {ft_rank * 10, ft_rank * 10 + 1, ft_rank * 10 + 2};
    FT_OK(ferry_File_seek(fh, 3 * ft_rank, MPI_SEEK_SET));
    FT_OK(ferry_File_write_all(fh, vals, 3, MPI_INT, MPI_STATUS_IGNORE));
    FT_EQ(position(fh), 3 * ft_rank + 3);
    FT_OK(ferry_File_write_at(fh, 20 + ft_rank, &vals[0], 1, MPI_INT, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_seek(fh, 0, MPI_SEEK_END));
    FT_EQ(position(fh), 20 + ft_size); /* in etypes past the displacement */
    FT_OK(ferry_File_seek(fh, -1, MPI_SEEK_END));
    int last = -1;
    FT_OK(ferry_File_read(fh, &last, 1, MPI_INT, MPI_STATUS_IGNORE));
    FT_EQ(last, (ft_size - 1) * 10);
    FT_EQ(position(fh), 20 + ft_size);
    /* A memory type that is not a whole number of etypes is refused. */
    char two[2];
    FT_FAILS_NAMING(MPI_ERR_TYPE, path, ferry_File_write(fh, two, 2, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ(position(fh), 20 + ft_size);

    /* The bytes are where the view put them. */
    MPI_Datatype block;
    MPI_Type_contiguous(4, MPI_INT, &block);
    MPI_Type_commit(&block);
    FT_OK(ferry_File_set_view(fh, DISP + 8, MPI_INT, block, "native", MPI_INFO_NULL));
    MPI_Type_free(&block); /* the file keeps its own reference */
    check_view(fh, DISP + 8, MPI_INT, 4);
    FT_EQ(byte_offset(fh, 3), DISP + 8 + 12);
    int x = -1;
    FT_OK(ferry_File_read_at(fh, 0, &x, 1, MPI_INT, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    check_view(fh, 0, MPI_BYTE, 0);
    for (int r = 0; r < ft_size; r++) {
        int back[3];
        FT_OK(ferry_File_read_at(fh, DISP + 12 * r, back, 3, MPI_INT, MPI_STATUS_IGNORE));
        for (int k = 0; k < 3; k++) FT_EQ(back[k], r * 10 + k);
        FT_OK(ferry_File_read_at(fh, DISP + 4 * (20 + r), back, 1, MPI_INT, MPI_STATUS_IGNORE));
        FT_EQ(back[0], r * 10);
    }
    int second = -1;
    FT_OK(ferry_File_read_at(fh, DISP + 8, &second, 1, MPI_INT, MPI_STATUS_IGNORE));
    FT_EQ(x, second); /* offset 0 of the second view is byte DISP + 8 */
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *path = ft_path("positions");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    default_view(fh, path);
    int_views(fh, path);
    FT_OK(ferry_File_close(&fh));
    return ft_finish();
}

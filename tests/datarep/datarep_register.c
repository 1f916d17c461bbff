/*
 * ferry_Register_datarep (MPI-3.1 13.5.3): a user representation that
 * stores MPI_INT as 8 big-endian bytes (a file extent other than the
 * native size) round-trips through pack/unpack, whole and in windows;
 * the conversion functions see (userbuf, datatype, count, position) as the
 * standard describes; file layouts and extents follow dtype_file_extent_fn;
 * MPI_CONVERSION_FN_NULL moves native bytes; errors: MPI_ERR_DUP_DATAREP
 * for any defined name, MPI_ERR_ARG for bad names, MPI_ERR_CONVERSION when
 * a conversion function fails; a file written through a view in the
 * representation holds what the write function produced; the large-count
 * registration (ferry_Register_datarep_c) converts the same.
 */
#include <string.h>

#include "datarep/datarep.h"
#include "ferry_test.h"

/* Where the ints of the test's datatypes are: per element, item j at
 * offsets[j]; elements `extent` apart. */
typedef struct state {
    int per_elem;
    MPI_Aint offsets[8], extent;
    int calls, fail;
    MPI_Offset first_position;
} state_t;

static char *item(void *userbuf, const state_t *st, MPI_Offset idx)
{
    return (char *)userbuf + idx / st->per_elem * st->extent + st->offsets[idx % st->per_elem];
}

static int write_wide(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position, void *extra)
{
    state_t *st = extra;
    if (st->fail) return MPI_ERR_OTHER;
    if (st->calls++ == 0) st->first_position = position;
    for (int k = 0; k < count; k++) {
        int v;
        memcpy(&v, item(userbuf, st, position + k), sizeof v);
        uint64_t w = (uint64_t)(int64_t)v;
        for (int b = 7; b >= 0; b--, w >>= 8) ((unsigned char *)filebuf)[8 * k + b] = (unsigned char)w;
    }
    return MPI_SUCCESS;
}

static int read_wide(void *userbuf, MPI_Datatype type, int count, void *filebuf, MPI_Offset position, void *extra)
{
    state_t *st = extra;
    if (st->calls++ == 0) st->first_position = position;
    for (int k = 0; k < count; k++) {
        uint64_t w = 0;
        for (int b = 0; b < 8; b++) w = w << 8 | ((unsigned char *)filebuf)[8 * k + b];
        int v = (int)(int64_t)w;
        memcpy(item(userbuf, st, position + k), &v, sizeof v);
    }
    return MPI_SUCCESS;
}

static int extent_wide(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    int size;
    MPI_Type_size(type, &size);
    *extent = type == MPI_INT ? 8 : size;
    return MPI_SUCCESS;
}

static int extent_native(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    int size;
    MPI_Type_size(type, &size);
    *extent = size;
    return MPI_SUCCESS;
}

static void expect_wide(const int *values, int n, unsigned char *file)
{
    for (int i = 0; i < n; i++) {
        uint64_t w = (uint64_t)(int64_t)values[i];
        for (int b = 7; b >= 0; b--, w >>= 8) file[8 * i + b] = (unsigned char)w;
    }
}

static void test_registration(state_t *st)
{
    char longname[MPI_MAX_DATAREP_STRING + 1];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    FT_OK(ferry_Register_datarep("ferry-wide", read_wide, write_wide, extent_wide, st));
    FT_FAILS(MPI_ERR_DUP_DATAREP, ferry_Register_datarep("ferry-wide", read_wide, write_wide, extent_wide, st));
    FT_FAILS(MPI_ERR_DUP_DATAREP, ferry_Register_datarep("external32", NULL, NULL, extent_native, NULL));
    FT_FAILS(MPI_ERR_DUP_DATAREP, ferry_Register_datarep("native", NULL, NULL, extent_native, NULL));
    FT_FAILS(MPI_ERR_DUP_DATAREP, ferry_Register_datarep("internal", NULL, NULL, extent_native, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_Register_datarep(longname, NULL, NULL, extent_native, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_Register_datarep("", NULL, NULL, extent_native, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_Register_datarep("ferry-noextent", NULL, NULL, NULL, NULL));
    FT_FAILS_NAMING(MPI_ERR_DUP_DATAREP, "already defined",
                    ferry_Register_datarep("ferry-wide", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent_wide,
                                           NULL));
    FT_OK(ferry_Register_datarep("ferry-null", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent_native, NULL));
    FT_OK(ferry_Register_datarep("ferry-null-wide", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent_wide,
                                 NULL));
}

static void test_contiguous(const ferry__datarep_t *wide, state_t *st)
{
    int values[6] = {1, -2, 300000, -400000, 0x7fffffff, (int)0x80000000}, back[6] = {0};
    unsigned char want[48], file[48];
    *st = (state_t){.per_elem = 1, .offsets = {0}, .extent = sizeof(int)};
    expect_wide(values, 6, want);
    MPI_Count size;
    FT_EQ(ferry__datarep_size(wide, MPI_INT, &size), 0);
    FT_EQ(size, 8);
    FT_EQ(ferry__datarep_pack(wide, &(ferry__datarep_memory_t){(void *)values, 6, MPI_INT}, 0, file, 48), 0);
    FT_EQ_MEM(file, want, 48);
    FT_EQ(st->first_position, 0);
    for (MPI_Count skip = 0; skip < 48; skip += 5) { /* windows cutting items */
        MPI_Count len = 48 - skip < 13 ? 48 - skip : 13;
        memset(file, 0, sizeof file);
        st->calls = 0;
        FT_EQ(ferry__datarep_pack(wide, &(ferry__datarep_memory_t){(void *)values, 6, MPI_INT}, skip, file, len), 0);
        FT_EQ_MEM(file, want + skip, (size_t)len);
    }
    st->calls = 0;
    FT_EQ(ferry__datarep_pack(wide, &(ferry__datarep_memory_t){(void *)values, 6, MPI_INT}, 16, file, 32), 0);
    FT_EQ(st->first_position, 2); /* position counts items of the tiled datatype */
    FT_EQ(ferry__datarep_unpack(wide, want, 48, &(ferry__datarep_memory_t){back, 6, MPI_INT}, 0), 0);
    FT_EQ_MEM(back, values, sizeof values);
    memset(back, 0, sizeof back);
    for (MPI_Count pos = 0; pos < 48;) { /* read windows cut where items start */
        MPI_Count end = pos + 13 < 48 ? pos + 13 : 48;
        FT_EQ(ferry__datarep_item_floor(wide, MPI_INT, 6, end, &end), 0);
        FT_EQ(ferry__datarep_unpack(wide, want + pos, end - pos, &(ferry__datarep_memory_t){back, 6, MPI_INT}, pos), 0);
        pos = end;
    }
    FT_EQ_MEM(back, values, sizeof values);
    memset(back, 0, sizeof back);
    ferry__datarep_stream_t *stream; /* ascending windows cutting items: whole via the stream's carry */
    FT_EQ(ferry__datarep_stream_open(wide, &(ferry__datarep_memory_t){back, 6, MPI_INT}, &stream), 0);
    for (MPI_Count pos = 0; pos < 48; pos += 5)
        FT_EQ(ferry__datarep_stream_unpack(stream, want + pos, 48 - pos < 5 ? 48 - pos : 5, pos), 0);
    ferry__datarep_stream_close(stream);
    FT_EQ_MEM(back, values, sizeof values);
}

/* Every split of the stream into ascending windows (1 byte to the whole,
 * cutting items anywhere), and two conversions fed alternately on one
 * thread: each stream keeps its own cut item, so both come out whole (a
 * per-thread carry, before issue 14, lost both items an interleaving cut). */
static void test_streams_interleaved(const ferry__datarep_t *wide, state_t *st)
{
    int values[6] = {7, -8, 9000, -10000, 0x12345678, -1}, other[6] = {-1, 2, -3, 4, -5, 6};
    unsigned char want[48], want_other[48];
    *st = (state_t){.per_elem = 1, .offsets = {0}, .extent = sizeof(int)};
    expect_wide(values, 6, want);
    expect_wide(other, 6, want_other);
    for (MPI_Count step = 1; step <= 48; step++) {
        int back[6] = {0}, back_other[6] = {0};
        ferry__datarep_stream_t *a, *b;
        FT_EQ(ferry__datarep_stream_open(wide, &(ferry__datarep_memory_t){back, 6, MPI_INT}, &a), 0);
        FT_EQ(ferry__datarep_stream_open(wide, &(ferry__datarep_memory_t){back_other, 6, MPI_INT}, &b), 0);
        for (MPI_Count pos = 0; pos < 48; pos += step) {
            MPI_Count len = 48 - pos < step ? 48 - pos : step;
            FT_EQ(ferry__datarep_stream_unpack(a, want + pos, len, pos), 0);
            FT_EQ(ferry__datarep_stream_unpack(b, want_other + pos, len, pos), 0);
        }
        ferry__datarep_stream_close(a);
        ferry__datarep_stream_close(b);
        FT_EQ_MEM(back, values, sizeof values);
        FT_EQ_MEM(back_other, other, sizeof other);
    }
}

static void test_derived(const ferry__datarep_t *wide, state_t *st)
{
    MPI_Datatype vec, layout;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int mem[8] = {10, 0, 0, 11, 12, 0, 0, 13}, back[8] = {0}, values[4] = {10, 11, 12, 13}, at[4] = {0, 3, 4, 7};
    MPI_Aint lb, ext;
    MPI_Type_get_extent(vec, &lb, &ext);
    *st = (state_t){.per_elem = 2, .offsets = {0, 3 * sizeof(int)}, .extent = ext};
    unsigned char want[32], file[32];
    expect_wide(values, 4, want);
    FT_EQ(ferry__datarep_pack(wide, &(ferry__datarep_memory_t){(void *)mem, 2, vec}, 0, file, 32), 0);
    FT_EQ_MEM(file, want, 32);
    FT_EQ(ferry__datarep_unpack(wide, want, 32, &(ferry__datarep_memory_t){back, 2, vec}, 0), 0);
    for (int i = 0; i < 4; i++) FT_EQ(back[at[i]], values[i]); /* elements 4 ints apart */
    MPI_Count extent;
    FT_EQ(ferry__datarep_extent(wide, vec, &extent), 0);
    FT_EQ(extent, 4 * 8); /* (stride 3 + 1 block) ints of file extent 8 */
    FT_EQ(ferry__datarep_file_layout(wide, vec, &layout), 0);
    MPI_Count size;
    MPI_Type_size_x(layout, &size);
    FT_EQ(size, 16);
    MPI_Type_free(&layout);
    FT_EQ(ferry__datarep_extent(wide, MPI_DOUBLE, &extent), 0);
    FT_EQ(extent, (MPI_Count)sizeof(double));
    st->fail = 1;
    FT_EQ(ferry__datarep_pack(wide, &(ferry__datarep_memory_t){(void *)mem, 2, vec}, 0, file, 32), MPI_ERR_CONVERSION);
    st->fail = 0;
    MPI_Type_free(&vec);
}

static void test_no_conversion(void)
{
    const ferry__datarep_t *null, *null_wide;
    double d[3] = {1.5, -2.25, 3e300}, back[3];
    unsigned char file[24];
    FT_EQ(ferry__datarep_find("ferry-null", &null), 0);
    FT_EQ(ferry__datarep_find("ferry-null-wide", &null_wide), 0);
    FT_EQ(ferry__datarep_pack(null, &(ferry__datarep_memory_t){(void *)d, 3, MPI_DOUBLE}, 0, file, 24), 0);
    FT_EQ_MEM(file, d, 24); /* "using the native data representation" */
    FT_EQ(ferry__datarep_unpack(null, file, 24, &(ferry__datarep_memory_t){back, 3, MPI_DOUBLE}, 0), 0);
    FT_EQ_MEM(back, d, 24);
    int v[2] = {1, 2};
    FT_EQ(ferry__datarep_pack(null_wide, &(ferry__datarep_memory_t){(void *)v, 2, MPI_INT}, 0, file, 16), MPI_ERR_CONVERSION);
}

/* Through a file view: the file holds what the write function wrote. */
static void test_file_view(state_t *st)
{
    int values[6] = {5, -6, 7, -8, 9, -10}, back[6] = {0};
    unsigned char want[48], raw[48];
    *st = (state_t){.per_elem = 1, .offsets = {0}, .extent = sizeof(int)};
    expect_wide(values, 6, want);
    ferry_File fh;
    MPI_Offset size;
    MPI_Aint extent;
    FT_OK(ferry_File_open(MPI_COMM_SELF, ft_path("wide"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    FT_OK(ferry_File_set_view(fh, 0, MPI_INT, MPI_INT, "ferry-wide", MPI_INFO_NULL));
    FT_OK(ferry_File_get_type_extent(fh, MPI_INT, &extent));
    FT_EQ(extent, 8);
    FT_OK(ferry_File_write_at(fh, 0, values, 6, MPI_INT, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_get_size(fh, &size));
    FT_EQ(size, 48);
    FT_OK(ferry_File_read_at(fh, 0, back, 6, MPI_INT, MPI_STATUS_IGNORE));
    FT_EQ_MEM(back, values, sizeof values);
    FT_OK(ferry_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_read_at(fh, 0, raw, 48, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_EQ_MEM(raw, want, 48);
    FT_OK(ferry_File_close(&fh));
}

/* The large-count registration (MPI_Register_datarep_c): the same
 * representation through conversion functions taking MPI_Count, on every
 * host (ferry offers it whatever the host's MPI version). */
static int write_wide_c(void *userbuf, MPI_Datatype type, MPI_Count count, void *filebuf, MPI_Offset position,
                        void *extra)
{
    return write_wide(userbuf, type, (int)count, filebuf, position, extra);
}

static int read_wide_c(void *userbuf, MPI_Datatype type, MPI_Count count, void *filebuf, MPI_Offset position,
                       void *extra)
{
    return read_wide(userbuf, type, (int)count, filebuf, position, extra);
}

static void test_large_count(state_t *st)
{
    const ferry__datarep_t *wide_c, *null_c;
    int values[5] = {3, -1, 1 << 30, -(1 << 30), 77}, back[5] = {0};
    unsigned char want[40], file[40];
    *st = (state_t){.per_elem = 1, .offsets = {0}, .extent = sizeof(int)};
    expect_wide(values, 5, want);
    FT_OK(ferry_Register_datarep_c("ferry-wide-c", read_wide_c, write_wide_c, extent_wide, st));
    FT_FAILS(MPI_ERR_DUP_DATAREP, ferry_Register_datarep_c("ferry-wide-c", NULL, NULL, extent_wide, st));
    FT_OK(ferry_Register_datarep_c("ferry-null-c", NULL, NULL, extent_native, NULL));
    FT_EQ(ferry__datarep_find("ferry-wide-c", &wide_c), 0);
    FT_EQ(ferry__datarep_find("ferry-null-c", &null_c), 0);
    FT_EQ(ferry__datarep_pack(wide_c, &(ferry__datarep_memory_t){(void *)values, 5, MPI_INT}, 0, file, 40), 0);
    FT_EQ_MEM(file, want, 40);
    FT_EQ(ferry__datarep_unpack(wide_c, want, 40, &(ferry__datarep_memory_t){back, 5, MPI_INT}, 0), 0);
    FT_EQ_MEM(back, values, sizeof values);
    FT_CHECK(st->calls == 2);
    FT_EQ(ferry__datarep_pack(null_c, &(ferry__datarep_memory_t){(void *)values, 5, MPI_INT}, 0, file, 20), 0);
    FT_EQ_MEM(file, values, 20); /* native bytes */
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    static state_t st;
    const ferry__datarep_t *wide;
    FT_EQ(ferry__datarep_find("ferry-wide", &wide), MPI_ERR_UNSUPPORTED_DATAREP);
    test_registration(&st);
    FT_EQ(ferry__datarep_find("ferry-wide", &wide), 0);
    FT_CHECK(!ferry__datarep_is_native(wide));
    test_contiguous(wide, &st);
    test_derived(wide, &st);
    test_streams_interleaved(wide, &st);
    test_no_conversion();
    test_file_view(&st);
    test_large_count(&st);
    return ft_finish();
}

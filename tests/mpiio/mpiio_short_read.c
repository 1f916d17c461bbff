/*
 * Short reads at end of file (MPI-3.1 13.4.1, 3.2.5, 4.1.11): the status of a
 * read that hits EOF answers MPI_Get_count with the number of whole
 * datatype elements (MPI_UNDEFINED when the bytes end inside one) and
 * MPI_Get_elements/_x with the number of whole basic elements; reads
 * entirely past EOF report 0; only the bytes read are stored, and the
 * individual file pointer moves by what was read. Every read form is used:
 * read_at, read_at_all, read, read_all, iread_at, iread, and the _c forms.
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

enum { FILE_BYTES = 40, SENTINEL = 0x5a, HOST_DEFINED = -3 };

typedef enum { READ_AT, READ_AT_ALL, READ, READ_ALL, IREAD_AT, IREAD, READ_AT_C, READ_ALL_C, N_FORMS } form_t;

static const char *form_names[] = {"read_at", "read_at_all", "read", "read_all", "iread_at", "iread", "read_at_c",
                                   "read_all_c"};

static unsigned char file_bytes[FILE_BYTES];

static int do_read(ferry_File fh, form_t form, MPI_Offset off, void *buf, int count, MPI_Datatype type,
                   MPI_Status *st)
{
    MPI_Request req;
    int rc;
    if (form == READ || form == READ_ALL || form == IREAD || form == READ_ALL_C) {
        rc = ferry_File_seek(fh, off, MPI_SEEK_SET);
        if (rc != MPI_SUCCESS) return rc;
    }
    switch (form) {
    case READ_AT: return ferry_File_read_at(fh, off, buf, count, type, st);
    case READ_AT_ALL: return ferry_File_read_at_all(fh, off, buf, count, type, st);
    case READ: return ferry_File_read(fh, buf, count, type, st);
    case READ_ALL: return ferry_File_read_all(fh, buf, count, type, st);
    case IREAD_AT:
        rc = ferry_File_iread_at(fh, off, buf, count, type, &req);
        return rc == MPI_SUCCESS ? MPI_Wait(&req, st) : rc;
    case IREAD:
        rc = ferry_File_iread(fh, buf, count, type, &req);
        return rc == MPI_SUCCESS ? MPI_Wait(&req, st) : rc;
    case READ_AT_C: return ferry_File_read_at_c(fh, off, buf, count, type, st);
    case READ_ALL_C: return ferry_File_read_all_c(fh, buf, count, type, st);
    default: return MPI_ERR_ARG;
    }
}

/* One case: read `count` of `type` at `off`; `got` bytes come back, which land
 * at the memory offsets listed in `where` (got entries: byte i of the stream
 * at buf[where[i]]). Expect count/elements answers. */
typedef struct read_case {
    const char *name;
    MPI_Datatype type;
    int count;
    MPI_Offset off;
    int got;
    int expect_count, expect_elements;
    size_t span; /* bytes of memory the (count, type) buffer spans */
} read_case_t;

static void stream_offsets(MPI_Datatype type, int count, size_t span, int *where, int max)
{
    /* Pack a buffer holding its own byte indices to learn the stream order. */
    unsigned char *mem = malloc(span);
    int *index = malloc(span * sizeof *index);
    for (size_t i = 0; i < span; i++) index[i] = (int)i;
    int size = 0;
    MPI_Pack_size(count, type, MPI_COMM_SELF, &size);
    /* Stream byte k comes from memory byte where[k]: find it by packing
     * marker patterns (one byte index bit at a time). */
    for (int k = 0; k < max; k++) where[k] = 0;
    unsigned char *packed = malloc((size_t)size + 1);
    for (int bit = 0; (1u << bit) < span; bit++) {
        for (size_t i = 0; i < span; i++) mem[i] = (unsigned char)((index[i] >> bit) & 1);
        int pos = 0;
        MPI_Pack(mem, count, type, packed, size, &pos, MPI_COMM_SELF);
        for (int k = 0; k < max && k < pos; k++) where[k] |= packed[k] << bit;
    }
    free(packed);
    free(index);
    free(mem);
}

static void check_case(ferry_File fh, form_t form, const read_case_t *c)
{
    unsigned char *buf = malloc(c->span);
    memset(buf, SENTINEL, c->span);
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int rc = do_read(fh, form, c->off, buf, c->count, c->type, &st);
    if (rc != MPI_SUCCESS) ft_fail(__FILE__, __LINE__, "%s %s: %s", form_names[form], c->name, ft_errstr(rc));
    int count = -2, elements = -2;
    MPI_Count elements_x = -2;
    MPI_Get_count(&st, c->type, &count);
    MPI_Get_elements(&st, c->type, &elements);
    MPI_Get_elements_x(&st, c->type, &elements_x);
    /* Bytes ending inside a basic element of a derived type: Open MPI
     * answers MPI_UNDEFINED, MPICH 4.0 the whole elements before it. Both
     * come from the host's reading of the byte count ferry stored. */
    int ok_elements = c->expect_elements == HOST_DEFINED
                          ? (elements == MPI_UNDEFINED || elements == c->got / 4) && elements_x == elements
                          : elements == c->expect_elements && elements_x == c->expect_elements;
    if (count != c->expect_count || !ok_elements)
        ft_fail(__FILE__, __LINE__, "%s %s: count %d elements %d elements_x %lld, expected %d and %d",
                form_names[form], c->name, count, elements, (long long)elements_x, c->expect_count,
                c->expect_elements);
    MPI_Count bytes = -1;
    MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
    FT_EQ(bytes, c->got);
    /* The bytes read are where the type puts them; nothing else changed. */
    int *where = calloc((size_t)c->got + 1, sizeof *where);
    stream_offsets(c->type, c->count, c->span, where, c->got);
    unsigned char *expect = malloc(c->span);
    memset(expect, SENTINEL, c->span);
    for (int k = 0; k < c->got; k++) expect[where[k]] = file_bytes[c->off + k];
    FT_EQ_MEM(buf, expect, c->span);
    if (form == READ || form == READ_ALL || form == IREAD || form == READ_ALL_C) {
        MPI_Offset pos = -1;
        FT_OK(ferry_File_get_position(fh, &pos));
        FT_EQ(pos, c->off + c->got);
    }
    free(expect);
    free(where);
    free(buf);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    ft_fill(file_bytes, FILE_BYTES, ft_seed);
    const char *path = ft_path("short");
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    if (ft_rank == 0) FT_OK(ferry_File_write_at(fh, 0, file_bytes, FILE_BYTES, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_File_sync(fh));

    /* struct { int a; double b; } with a 4-byte hole: size 12, extent 16. */
    MPI_Datatype pair, vec;
    int blocklens[2] = {1, 1};
    MPI_Aint displs[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, blocklens, displs, types, &pair);
    MPI_Type_commit(&pair);
    /* 3 blocks of 2 ints, stride 4 ints: size 24, extent 40. */
    MPI_Type_vector(3, 2, 4, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    const int U = MPI_UNDEFINED;
    const read_case_t cases[] = {
        /* name         type        count off  got  count elements span */
        {"int exact", MPI_INT, 10, 0, 40, 10, 10, 40},
        {"int short", MPI_INT, 20, 0, 40, 10, 10, 80},
        {"int partial", MPI_INT, 20, 2, 38, U, U, 80},
        {"int at EOF", MPI_INT, 5, FILE_BYTES, 0, 0, 0, 20},
        {"int past EOF", MPI_INT, 5, 1000, 0, 0, 0, 20},
        {"byte short", MPI_BYTE, 100, 30, 10, 10, 10, 100},
        {"double partial", MPI_DOUBLE, 6, 0, 40, 5, 5, 48},
        {"double split", MPI_DOUBLE, 6, 4, 36, U, U, 48},
        {"struct short", pair, 5, 0, 40, U, 7, 80},
        {"struct whole", pair, 5, 4, 36, 3, 6, 80},
        {"struct past EOF", pair, 2, 64, 0, 0, 0, 32},
        {"vector short", vec, 3, 0, 40, U, 10, 120},
        {"vector partial int", vec, 3, 2, 38, U, HOST_DEFINED, 120},
        {"zero count", MPI_INT, 0, 0, 0, 0, 0, 4},
    };
    for (int form = 0; form < N_FORMS; form++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(fh, (form_t)form, &cases[i]);
    MPI_Type_free(&pair);
    MPI_Type_free(&vec);
    FT_OK(ferry_File_close(&fh));
    return ft_finish();
}

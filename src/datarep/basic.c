/*
 * Predefined datatypes in external32 (MPI-3.1 13.5.2, table 13.2) and the
 * conversions of their scalars.
 *
 * File sizes come from the standard's table, native sizes from the host, so
 * MPI_LONG (8 bytes here) is 4 big-endian bytes in the file, MPI_WCHAR
 * (wchar_t, 4 bytes) is 2: a value that does not fit the file size is an
 * MPI_ERR_CONVERSION when writing (the standard's advice: "only the least
 * significant bytes are moved ... no conversion errors if the data range is
 * within the range of the smaller size integer"). Pair types (MPI_DOUBLE_INT
 * ...) are the sum of their parts, as a struct would be. long double is IEEE
 * binary128 in the file: x87 80-bit extended values widen exactly and are
 * rounded to nearest even when read (scalar.c converts).
 */
#include <float.h>
#include <string.h>

#include "datarep/datarep_int.h"
#include "error/error.h"

enum { C = FERRY__DR_COPY, F = FERRY__DR_SWAP, I = FERRY__DR_INT, U = FERRY__DR_UINT, B = FERRY__DR_BOOL,
       L = FERRY__DR_LDOUBLE };

/* One row: the type, then (conversion, file bytes, scalars) of each part;
 * native sizes are the host's. FLOAT-like rows use SWAP; INT/UINT rows
 * become SWAP when the native size equals the file size. */
typedef struct row {
    MPI_Datatype type;
    unsigned char conv0, fsize0, count0, conv1, fsize1;
} row_t;

static const row_t *table(size_t *n)
{
    static const row_t rows[] = {
        {MPI_CHAR, C, 1, 1, 0, 0}, {MPI_SIGNED_CHAR, C, 1, 1, 0, 0}, {MPI_UNSIGNED_CHAR, C, 1, 1, 0, 0},
        {MPI_BYTE, C, 1, 1, 0, 0}, {MPI_PACKED, C, 1, 1, 0, 0}, {MPI_WCHAR, U, 2, 1, 0, 0},
        {MPI_SHORT, I, 2, 1, 0, 0}, {MPI_UNSIGNED_SHORT, U, 2, 1, 0, 0}, {MPI_INT, I, 4, 1, 0, 0},
        {MPI_UNSIGNED, U, 4, 1, 0, 0}, {MPI_LONG, I, 4, 1, 0, 0}, {MPI_UNSIGNED_LONG, U, 4, 1, 0, 0},
        {MPI_LONG_LONG_INT, I, 8, 1, 0, 0}, {MPI_LONG_LONG, I, 8, 1, 0, 0},
        {MPI_UNSIGNED_LONG_LONG, U, 8, 1, 0, 0}, {MPI_FLOAT, F, 4, 1, 0, 0}, {MPI_DOUBLE, F, 8, 1, 0, 0},
        {MPI_LONG_DOUBLE, L, 16, 1, 0, 0}, {MPI_C_BOOL, B, 1, 1, 0, 0}, {MPI_INT8_T, I, 1, 1, 0, 0},
        {MPI_INT16_T, I, 2, 1, 0, 0}, {MPI_INT32_T, I, 4, 1, 0, 0}, {MPI_INT64_T, I, 8, 1, 0, 0},
        {MPI_UINT8_T, U, 1, 1, 0, 0}, {MPI_UINT16_T, U, 2, 1, 0, 0}, {MPI_UINT32_T, U, 4, 1, 0, 0},
        {MPI_UINT64_T, U, 8, 1, 0, 0}, {MPI_AINT, I, 8, 1, 0, 0}, {MPI_COUNT, I, 8, 1, 0, 0},
        {MPI_OFFSET, I, 8, 1, 0, 0}, {MPI_C_COMPLEX, F, 4, 2, 0, 0}, {MPI_C_FLOAT_COMPLEX, F, 4, 2, 0, 0},
        {MPI_C_DOUBLE_COMPLEX, F, 8, 2, 0, 0}, {MPI_C_LONG_DOUBLE_COMPLEX, L, 16, 2, 0, 0},
        {MPI_CXX_BOOL, B, 1, 1, 0, 0}, {MPI_CXX_FLOAT_COMPLEX, F, 4, 2, 0, 0},
        {MPI_CXX_DOUBLE_COMPLEX, F, 8, 2, 0, 0}, {MPI_CXX_LONG_DOUBLE_COMPLEX, L, 16, 2, 0, 0},
        {MPI_FLOAT_INT, F, 4, 1, I, 4}, {MPI_DOUBLE_INT, F, 8, 1, I, 4}, {MPI_LONG_INT, I, 4, 1, I, 4},
        {MPI_SHORT_INT, I, 2, 1, I, 4}, {MPI_LONG_DOUBLE_INT, L, 16, 1, I, 4}, {MPI_2INT, I, 4, 2, 0, 0},
        {MPI_CHARACTER, C, 1, 1, 0, 0}, {MPI_LOGICAL, B, 4, 1, 0, 0}, {MPI_INTEGER, I, 4, 1, 0, 0},
        {MPI_REAL, F, 4, 1, 0, 0}, {MPI_DOUBLE_PRECISION, F, 8, 1, 0, 0}, {MPI_COMPLEX, F, 4, 2, 0, 0},
        {MPI_DOUBLE_COMPLEX, F, 8, 2, 0, 0}, {MPI_2REAL, F, 4, 2, 0, 0}, {MPI_2DOUBLE_PRECISION, F, 8, 2, 0, 0},
        {MPI_2INTEGER, I, 4, 2, 0, 0},
#ifdef MPI_INTEGER1
        {MPI_INTEGER1, I, 1, 1, 0, 0},
#endif
#ifdef MPI_INTEGER2
        {MPI_INTEGER2, I, 2, 1, 0, 0},
#endif
#ifdef MPI_INTEGER4
        {MPI_INTEGER4, I, 4, 1, 0, 0},
#endif
#ifdef MPI_INTEGER8
        {MPI_INTEGER8, I, 8, 1, 0, 0},
#endif
#ifdef MPI_INTEGER16
        {MPI_INTEGER16, I, 16, 1, 0, 0},
#endif
#ifdef MPI_REAL2
        {MPI_REAL2, F, 2, 1, 0, 0},
#endif
#ifdef MPI_REAL4
        {MPI_REAL4, F, 4, 1, 0, 0},
#endif
#ifdef MPI_REAL8
        {MPI_REAL8, F, 8, 1, 0, 0},
#endif
#ifdef MPI_REAL16
        {MPI_REAL16, F, 16, 1, 0, 0}, /* Fortran REAL*16 is binary128 already */
#endif
#ifdef MPI_COMPLEX4
        {MPI_COMPLEX4, F, 2, 2, 0, 0},
#endif
#ifdef MPI_COMPLEX8
        {MPI_COMPLEX8, F, 4, 2, 0, 0},
#endif
#ifdef MPI_COMPLEX16
        {MPI_COMPLEX16, F, 8, 2, 0, 0},
#endif
#ifdef MPI_COMPLEX32
        {MPI_COMPLEX32, F, 16, 2, 0, 0},
#endif
    };
    *n = sizeof rows / sizeof rows[0];
    return rows;
}

/* The part's native scalar size and final conversion; MPI_ERR_CONVERSION if
 * the pair of sizes is not one we convert. */
static int settle(ferry__dr_part_t *p, MPI_Count msize)
{
    p->msize = (unsigned char)msize;
    if (p->conv == C && msize != p->fsize) p->conv = U;
    if ((p->conv == I || p->conv == U) && msize == p->fsize) p->conv = msize == 1 ? C : F;
    if (p->conv == F && msize != p->fsize) return MPI_ERR_CONVERSION;
    if ((p->conv == I || p->conv == U || p->conv == B) && (msize > 8 || p->fsize > 8)) return MPI_ERR_CONVERSION;
    if (p->conv == L && (!ferry__dr_ldouble_supported() || msize != (MPI_Count)sizeof(long double)))
        return MPI_ERR_CONVERSION;
    if (p->conv == L && LDBL_MANT_DIG == 113) p->conv = F;
    return 0;
}

/* MPI-3.1 17.1.9: external32 sizes of MPI_Type_create_f90_* types, from (p, r). */
static int f90_row(ferry__dr_contents_t *c, row_t *row)
{
    MPI_Count p = c->ni > 0 ? c->ints[0] : 0, r = c->ni > 1 ? c->ints[1] : 0;
    *row = (row_t){MPI_DATATYPE_NULL, F, 4, 1, 0, 0};
    if (c->combiner == MPI_COMBINER_F90_INTEGER) {
        r = p; /* one argument: r */
        row->conv0 = I;
        row->fsize0 = r > 18 ? 16 : r > 9 ? 8 : r > 4 ? 4 : r > 2 ? 2 : 1;
        return r > 38 ? MPI_ERR_CONVERSION : 0;
    }
    row->fsize0 = (p > 15 || r > 307) ? 16 : (p > 6 || r > 37) ? 8 : 4;
    if (row->fsize0 == 16 && p <= 18 && r <= 4931 && LDBL_MANT_DIG == 64) row->conv0 = L; /* x87 kind */
    row->count0 = c->combiner == MPI_COMBINER_F90_COMPLEX ? 2 : 1;
    return (p > 33 || r > 4931) ? MPI_ERR_CONVERSION : 0;
}

static int find_row(MPI_Datatype type, int combiner, row_t *row)
{
    if (combiner != MPI_COMBINER_NAMED) {
        ferry__dr_contents_t c;
        int rc = ferry__dr_contents_get(type, &c);
        if (rc == 0) rc = f90_row(&c, row);
        ferry__datatype_contents_release(&c);
        return rc;
    }
    size_t n;
    const row_t *rows = table(&n);
    for (size_t i = 0; i < n; i++)
        if (rows[i].type != MPI_DATATYPE_NULL && rows[i].type == type) {
            *row = rows[i];
            return 0;
        }
    return MPI_ERR_TYPE;
}

static int type_error(int cls, MPI_Datatype type, const char *rep)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    MPI_Type_get_name(type, name, &len);
    return ferry__error_set(cls, "ferry: data representation '%s' cannot represent predefined datatype %s", rep,
                            len > 0 ? name : "(unnamed)");
}

static int external32_basic(const ferry__datarep_t *rep, MPI_Datatype type, int combiner, ferry__dr_basic_t *b)
{
    row_t row;
    int cls = find_row(type, combiner, &row);
    if (cls) return type_error(cls, type, rep->name);
    b->nparts = row.conv1 ? 2 : 1;
    b->part[0] = (ferry__dr_part_t){row.conv0, 0, row.fsize0, row.count0};
    b->part[1] = (ferry__dr_part_t){row.conv1, 0, row.fsize1, 1};
    MPI_Count tail = b->nparts == 2 ? (MPI_Count)sizeof(int) : 0;
    if (b->msize <= tail || (b->msize - tail) % row.count0) return type_error(MPI_ERR_TYPE, type, rep->name);
    cls = settle(&b->part[0], (b->msize - tail) / row.count0);
    if (cls == 0 && b->nparts == 2) cls = settle(&b->part[1], tail);
    if (cls) return type_error(cls, type, rep->name);
    b->fsize = (MPI_Count)row.fsize0 * row.count0 + (b->nparts == 2 ? row.fsize1 : 0);
    return 0;
}

int ferry__dr_basic(const ferry__datarep_t *rep, MPI_Datatype type, int combiner, ferry__dr_basic_t *b)
{
    memset(b, 0, sizeof *b);
    b->type = type;
    if (MPI_Type_size_x(type, &b->msize) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: invalid predefined datatype");
    b->fsize = b->msize;
    if (rep->kind == FERRY__DR_NATIVE) return 0;
    if (rep->kind == FERRY__DR_EXTERNAL32) return external32_basic(rep, type, combiner, b);
    MPI_Aint extent = 0;
    int code = rep->extent_fn(type, &extent, rep->extra_state);
    if (code != MPI_SUCCESS || extent < 0)
        return ferry__error_set(MPI_ERR_CONVERSION, "ferry: data representation '%s': dtype_file_extent_fn failed",
                                rep->name);
    b->fsize = extent;
    return 0;
}

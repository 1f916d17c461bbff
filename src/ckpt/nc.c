/*
 * The netCDF classic header (docs/format/netcdf.md): encoder and decoder of
 * CDF-2 and CDF-5 headers (record variables only in series files: one
 * dimension of length 0, each record variable's first).
 *
 *   header  = magic numrecs dim_list gatt_list var_list
 *   magic   = 'C' 'D' 'F' 2|5
 *   lists   = tag(4 bytes) nelems [items], or ABSENT (zero tag, zero nelems)
 *   sizes   = NON_NEG: 4 bytes in CDF-2, 8 in CDF-5; begin: 8 bytes in both
 *   names, attribute values: padded with zeros to 4 bytes
 * All integers big-endian.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

enum { TAG_DIMENSION = 0x0A, TAG_VARIABLE = 0x0B, TAG_ATTRIBUTE = 0x0C, MAX_VAR_DIMS = 64 };

int ferry__ckpt_nc_type_size(int type)
{
    switch (type) {
    case NC_BYTE: case NC_CHAR: return 1;
    case NC_SHORT: return 2;
    case NC_INT: case NC_FLOAT: return 4;
    case NC_DOUBLE: case NC_INT64: return 8;
    default: return 0;
    }
}

const char *ferry__ckpt_nc_type_name(int type)
{
    static const char *names[] = {"?", "byte", "char", "short", "int", "float", "double", "?", "?", "?", "int64"};
    return type >= 0 && type <= NC_INT64 ? names[type] : "?";
}

int ferry__ckpt_nc_nctype(MPI_Datatype type)
{
    if (type == MPI_SIGNED_CHAR) return NC_BYTE;
    if (type == MPI_SHORT) return NC_SHORT;
    if (type == MPI_INT) return NC_INT;
    if (type == MPI_FLOAT) return NC_FLOAT;
    if (type == MPI_DOUBLE) return NC_DOUBLE;
    if (type == MPI_LONG_LONG || type == MPI_INT64_T) return NC_INT64;
    return 0;
}

/* ---- names ---- */

/* Bytes of the valid UTF-8 sequence at p (1 for ASCII), or 0: overlong forms, surrogates and code
 * points above U+10FFFF are invalid, as netCDF-C's validator has them. A NUL ends any sequence. */
static int utf8_length(const unsigned char *p)
{
    unsigned c = p[0];
    int n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    uint32_t code = n > 1 ? c & (0x7Fu >> n) : c;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        code = code << 6 | (p[i] & 0x3Fu);
    }
    if ((n == 3 && code < 0x800) || (n == 4 && (code < 0x10000 || code > 0x10FFFF)) ||
        (code >= 0xD800 && code <= 0xDFFF))
        return 0;
    return n;
}

const char *ferry__ckpt_nc_name_problem(const char *name)
{
    const unsigned char *p = (const unsigned char *)name;
    if (!name || !p[0]) return "is empty";
    int alnum = (p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= '0' && p[0] <= '9');
    if (!alnum && p[0] != '_' && p[0] < 0x80) return "must begin with a letter, a digit, '_' or a multibyte character";
    size_t at = 0;
    unsigned last = 0;
    while (p[at]) {
        int n = utf8_length(p + at);
        if (!n) return "is not valid UTF-8";
        if (n == 1 && (p[at] < 0x20 || p[at] == 0x7F)) return "holds a control character";
        if (n == 1 && p[at] == '/') return "holds a '/'";
        last = p[at];
        at += (size_t)n;
        if (at > FERRY__CKPT_NC_MAX_NAME) return "is longer than 256 bytes";
    }
    if (last == ' ') return "ends in a space";
    return NULL;
}

/* ---- encoding ---- */

void ferry__ckpt_bytes_put(ferry__ckpt_bytes_t *b, const void *p, size_t n)
{
    if (b->failed) return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n) cap *= 2;
        unsigned char *q = ferry__realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void ferry__ckpt_bytes_put_be(ferry__ckpt_bytes_t *b, uint64_t v, int size)
{
    unsigned char out[8];
    for (int i = 0; i < size; i++) out[i] = (unsigned char)(v >> (8 * (size - 1 - i)));
    ferry__ckpt_bytes_put(b, out, (size_t)size);
}

static void put_pad(ferry__ckpt_bytes_t *b, size_t n)
{
    static const unsigned char zeros[4];
    ferry__ckpt_bytes_put(b, zeros, (4 - n % 4) % 4);
}

static void put_name(ferry__ckpt_bytes_t *b, const char *name, int nsize)
{
    size_t n = strlen(name);
    ferry__ckpt_bytes_put_be(b, n, nsize);
    ferry__ckpt_bytes_put(b, name, n);
    put_pad(b, n);
}

static void put_atts(ferry__ckpt_bytes_t *b, const ferry__ckpt_nc_atts_t *atts, int nsize)
{
    ferry__ckpt_bytes_put_be(b, atts->count ? TAG_ATTRIBUTE : 0, 4);
    ferry__ckpt_bytes_put_be(b, (uint64_t)atts->count, nsize);
    for (int i = 0; i < atts->count; i++) {
        const ferry__ckpt_nc_att_t *a = &atts->atts[i];
        size_t bytes = (size_t)a->nelems * (size_t)ferry__ckpt_nc_type_size(a->type);
        put_name(b, a->name, nsize);
        ferry__ckpt_bytes_put_be(b, (uint64_t)a->type, 4);
        ferry__ckpt_bytes_put_be(b, (uint64_t)a->nelems, nsize);
        ferry__ckpt_bytes_put(b, a->values, bytes);
        put_pad(b, bytes);
    }
}

static void put_var(ferry__ckpt_bytes_t *b, const ferry__ckpt_nc_var_t *v, int nsize)
{
    put_name(b, v->name, nsize);
    ferry__ckpt_bytes_put_be(b, (uint64_t)v->ndims, nsize);
    for (int d = 0; d < v->ndims; d++) ferry__ckpt_bytes_put_be(b, (uint64_t)v->dimids[d], nsize);
    put_atts(b, &v->atts, nsize);
    ferry__ckpt_bytes_put_be(b, (uint64_t)v->type, 4);
    ferry__ckpt_bytes_put_be(b, (uint64_t)v->vsize, nsize);
    ferry__ckpt_bytes_put_be(b, (uint64_t)v->begin, 8);
}

int ferry__ckpt_nc_encode(const ferry__ckpt_nc_t *nc, ferry__ckpt_bytes_t *b)
{
    int nsize = nc->version == 5 ? 8 : 4;
    ferry__ckpt_bytes_put(b, "CDF", 3);
    ferry__ckpt_bytes_put_be(b, (uint64_t)nc->version, 1);
    ferry__ckpt_bytes_put_be(b, (uint64_t)nc->numrecs, nsize);
    ferry__ckpt_bytes_put_be(b, nc->ndims ? TAG_DIMENSION : 0, 4);
    ferry__ckpt_bytes_put_be(b, (uint64_t)nc->ndims, nsize);
    for (int i = 0; i < nc->ndims; i++) {
        put_name(b, nc->dims[i].name, nsize);
        ferry__ckpt_bytes_put_be(b, (uint64_t)nc->dims[i].len, nsize);
    }
    put_atts(b, &nc->gatts, nsize);
    ferry__ckpt_bytes_put_be(b, nc->nvars ? TAG_VARIABLE : 0, 4);
    ferry__ckpt_bytes_put_be(b, (uint64_t)nc->nvars, nsize);
    for (int i = 0; i < nc->nvars; i++) put_var(b, &nc->vars[i], nsize);
    return b->failed ? ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for a %zu-byte header", b->cap) : 0;
}

/* Appends an attribute with n values of type from values, big-endian already (be) or native. */
static int add_att(ferry__ckpt_nc_atts_t *atts, const char *name, int type, int64_t n, const void *values, int be)
{
    int size = ferry__ckpt_nc_type_size(type);
    ferry__ckpt_nc_att_t *grown = ferry__realloc(atts->atts, (size_t)(atts->count + 1) * sizeof *grown);
    if (!grown) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for attribute %s", name);
    atts->atts = grown;
    ferry__ckpt_nc_att_t *a = &grown[atts->count];
    a->name = ferry__strdup(name);
    a->type = type;
    a->nelems = n;
    a->at = -1;
    a->values = ferry__malloc((size_t)n * (size_t)size + 1);
    if (!a->name || !a->values) {
        ferry__free(a->name);
        ferry__free(a->values);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for attribute %s", name);
    }
    atts->count++;
    const uint16_t one = 1;
    int swap = !be && *(const unsigned char *)&one == 1;
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *src = (const unsigned char *)values + i * size;
        for (int k = 0; k < size; k++) a->values[i * size + k] = src[swap ? size - 1 - k : k];
    }
    return 0;
}

int ferry__ckpt_nc_add_att(ferry__ckpt_nc_atts_t *atts, const char *name, int type, int64_t n, const void *native)
{
    return add_att(atts, name, type, n, native, 0);
}

int ferry__ckpt_nc_add_att_be(ferry__ckpt_nc_atts_t *atts, const char *name, int type, int64_t n, const void *be)
{
    return add_att(atts, name, type, n, be, 1);
}

/* ---- decoding ---- */

typedef struct cursor {
    const unsigned char *p;
    size_t len, at;
    int nsize;
    int truncated, corrupt;
    char why[160];
} cursor_t;

static uint64_t get_be(cursor_t *c, int size)
{
    if (c->truncated || c->corrupt) return 0;
    if (c->at + (size_t)size > c->len) {
        c->truncated = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < size; i++) v = v << 8 | c->p[c->at + (size_t)i];
    c->at += (size_t)size;
    return v;
}

static void corrupt(cursor_t *c, const char *why)
{
    if (!c->corrupt && !c->truncated) snprintf(c->why, sizeof c->why, "%s at byte %zu", why, c->at);
    c->corrupt = 1;
}

/* A count that must lie in [0, max]; 0 after an error. */
static int64_t get_count(cursor_t *c, int64_t max, const char *what)
{
    uint64_t v = get_be(c, c->nsize);
    if (v > (uint64_t)max) {
        corrupt(c, what);
        return 0;
    }
    return (int64_t)v;
}

static const unsigned char *get_bytes(cursor_t *c, size_t n)
{
    size_t padded = n + (4 - n % 4) % 4;
    if (c->truncated || c->corrupt) return NULL;
    if (c->at + padded > c->len) {
        c->truncated = 1;
        return NULL;
    }
    const unsigned char *p = c->p + c->at;
    c->at += padded;
    return p;
}

static char *get_name(cursor_t *c)
{
    int64_t n = get_count(c, FERRY__CKPT_NC_MAX_NAME, "a name longer than 256 bytes");
    const unsigned char *p = get_bytes(c, (size_t)n);
    if (!p) return NULL;
    char *name = ferry__malloc((size_t)n + 1);
    if (!name) {
        corrupt(c, "no memory");
        return NULL;
    }
    memcpy(name, p, (size_t)n);
    name[n] = '\0';
    return name;
}

static int64_t get_list_header(cursor_t *c, uint64_t want_tag, int64_t max, const char *what)
{
    uint64_t tag = get_be(c, 4);
    int64_t n = get_count(c, max, what);
    if (tag != want_tag && !(tag == 0 && n == 0)) corrupt(c, "a list tag that is neither the expected one nor ABSENT");
    return n;
}

static void get_atts(cursor_t *c, ferry__ckpt_nc_atts_t *atts)
{
    int64_t n = get_list_header(c, TAG_ATTRIBUTE, 1 << 16, "more than 65536 attributes");
    atts->atts = n ? ferry__calloc((size_t)n, sizeof *atts->atts) : NULL;
    if (n && !atts->atts) return corrupt(c, "no memory");
    for (int64_t i = 0; i < n && !c->corrupt && !c->truncated; i++, atts->count++) {
        ferry__ckpt_nc_att_t *a = &atts->atts[i];
        a->name = get_name(c);
        a->type = (int)get_be(c, 4);
        int size = ferry__ckpt_nc_type_size(a->type);
        if (!size) corrupt(c, "an attribute type ferry does not read");
        a->nelems = get_count(c, ((int64_t)1 << 31) / (size ? size : 1), "an attribute beyond 2 GiB");
        const unsigned char *p = get_bytes(c, (size_t)a->nelems * (size_t)size);
        a->at = p ? (int64_t)(p - c->p) : -1;
        a->values = p ? ferry__malloc((size_t)a->nelems * (size_t)size + 1) : NULL;
        if (a->values) memcpy(a->values, p, (size_t)a->nelems * (size_t)size);
    }
}

static void get_var(cursor_t *c, const ferry__ckpt_nc_t *nc, ferry__ckpt_nc_var_t *v)
{
    v->name = get_name(c);
    v->ndims = (int)get_count(c, MAX_VAR_DIMS, "a variable of more than 64 dimensions");
    v->dimids = ferry__calloc((size_t)v->ndims + 1, sizeof *v->dimids);
    if (!v->dimids) return corrupt(c, "no memory");
    for (int d = 0; d < v->ndims; d++)
        v->dimids[d] = (int)get_count(c, nc->ndims - 1, "a dimension id beyond the list");
    get_atts(c, &v->atts);
    v->type = (int)get_be(c, 4);
    if (!c->truncated && !ferry__ckpt_nc_type_size(v->type)) corrupt(c, "a variable type ferry does not read");
    v->vsize = (int64_t)get_be(c, c->nsize);
    v->begin = (int64_t)get_be(c, 8);
    if (v->begin < 0 || v->vsize < 0) corrupt(c, "a negative variable offset or size");
}

static void get_header(cursor_t *c, ferry__ckpt_nc_t *nc)
{
    const unsigned char *magic = c->len >= 4 ? c->p : NULL;
    if (!magic) {
        c->truncated = 1;
        return;
    }
    if (memcmp(magic, "CDF", 3) != 0 || (magic[3] != 2 && magic[3] != 5))
        return corrupt(c, "not a CDF-2 or CDF-5 file");
    nc->version = magic[3];
    c->nsize = nc->version == 5 ? 8 : 4;
    c->at = 4;
    nc->numrecs = (int64_t)get_be(c, c->nsize);
    if (nc->numrecs < 0 || nc->numrecs == (c->nsize == 4 ? 0xFFFFFFFFll : -1)) corrupt(c, "a streaming record count");
    int64_t n = get_list_header(c, TAG_DIMENSION, 1 << 16, "more than 65536 dimensions");
    nc->dims = ferry__calloc((size_t)n + 1, sizeof *nc->dims);
    for (int64_t i = 0; i < n && nc->dims && !c->corrupt && !c->truncated; i++, nc->ndims++) {
        nc->dims[i].name = get_name(c);
        nc->dims[i].len = get_count(c, INT64_MAX, "a dimension length");
    }
    get_atts(c, &nc->gatts);
    n = get_list_header(c, TAG_VARIABLE, 1 << 16, "more than 65536 variables");
    nc->vars = ferry__calloc((size_t)n + 1, sizeof *nc->vars);
    for (int64_t i = 0; i < n && nc->vars && !c->corrupt && !c->truncated; i++, nc->nvars++)
        get_var(c, nc, &nc->vars[i]);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first invalid or repeated name of a list (kind: "dimension", ...), as a message in why. */
static int check_list(const char **names, int n, const char *kind, char *why, size_t len)
{
    for (int i = 0; i < n; i++) {
        const char *problem = ferry__ckpt_nc_name_problem(names[i]);
        if (problem) return snprintf(why, len, "the %s name '%.64s' %s", kind, names[i], problem), 1;
    }
    qsort(names, (size_t)n, sizeof *names, by_name);
    for (int i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) return snprintf(why, len, "two %ss named '%.64s'", kind, names[i]), 1;
    return 0;
}

static int check_atts(const ferry__ckpt_nc_atts_t *atts, const char **names, char *why, size_t len)
{
    for (int i = 0; i < atts->count; i++) names[i] = atts->atts[i].name;
    return check_list(names, atts->count, "attribute", why, len);
}

/* The record dimension: at most one, and only as a variable's first dimension. */
static int check_record_dim(const ferry__ckpt_nc_t *nc, char *why, size_t len)
{
    int records = 0;
    for (int i = 0; i < nc->ndims; i++) records += nc->dims[i].len == 0;
    for (int i = 0; i < nc->nvars && records <= 1; i++)
        for (int d = 1; d < nc->vars[i].ndims; d++)
            if (nc->dims[nc->vars[i].dimids[d]].len == 0)
                return snprintf(why, len, "variable '%.64s' has the record dimension after its first",
                                nc->vars[i].name),
                       1;
    return records > 1 ? snprintf(why, len, "%d record dimensions", records), 1 : 0;
}

/* What netCDF-C refuses to open or define: invalid names, two dimensions, two variables or two
 * attributes of one list with one name, a misplaced record dimension. 0, or MPI_ERR_IO with a message. */
static int check_names(const ferry__ckpt_nc_t *nc)
{
    int most = nc->ndims > nc->nvars ? nc->ndims : nc->nvars, bad = 0;
    for (int i = 0; i < nc->nvars; i++) most = nc->vars[i].atts.count > most ? nc->vars[i].atts.count : most;
    most = nc->gatts.count > most ? nc->gatts.count : most;
    const char **names = ferry__malloc((size_t)most * sizeof *names + 1);
    char why[200] = "";
    if (!names) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory to check a header's names");
    for (int i = 0; i < nc->ndims; i++) names[i] = nc->dims[i].name;
    bad = check_list(names, nc->ndims, "dimension", why, sizeof why) || check_atts(&nc->gatts, names, why, sizeof why);
    for (int i = 0; i < nc->nvars && !bad; i++) names[i] = nc->vars[i].name;
    bad = bad || check_list(names, nc->nvars, "variable", why, sizeof why);
    for (int i = 0; i < nc->nvars && !bad; i++) bad = check_atts(&nc->vars[i].atts, names, why, sizeof why);
    bad = bad || check_record_dim(nc, why, sizeof why);
    ferry__free(names);
    return bad ? ferry__error_set(MPI_ERR_IO, "ferry_ckpt: invalid netCDF header: %s", why) : 0;
}

int ferry__ckpt_nc_decode(const unsigned char *buf, size_t len, ferry__ckpt_nc_t *out, size_t *used)
{
    cursor_t c = {.p = buf, .len = len, .nsize = 4};
    memset(out, 0, sizeof *out);
    get_header(&c, out);
    *used = c.at;
    if (c.truncated && !c.corrupt) {
        ferry__ckpt_nc_free(out);
        return MPI_ERR_TRUNCATE;
    }
    if (c.corrupt) {
        ferry__ckpt_nc_free(out);
        return ferry__error_set(MPI_ERR_IO, "ferry_ckpt: corrupt netCDF header: %s", c.why);
    }
    int cls = check_names(out);
    if (cls) ferry__ckpt_nc_free(out);
    return cls;
}

void ferry__ckpt_nc_free_atts(ferry__ckpt_nc_atts_t *atts)
{
    for (int i = 0; i < atts->count; i++) {
        ferry__free(atts->atts[i].name);
        ferry__free(atts->atts[i].values);
    }
    ferry__free(atts->atts);
    atts->atts = NULL;
    atts->count = 0;
}

void ferry__ckpt_nc_free(ferry__ckpt_nc_t *nc)
{
    for (int i = 0; nc->dims && i < nc->ndims; i++) ferry__free(nc->dims[i].name);
    for (int i = 0; nc->vars && i < nc->nvars; i++) {
        ferry__free(nc->vars[i].name);
        ferry__free(nc->vars[i].dimids);
        ferry__ckpt_nc_free_atts(&nc->vars[i].atts);
    }
    ferry__ckpt_nc_free_atts(&nc->gatts);
    ferry__free(nc->dims);
    ferry__free(nc->vars);
    memset(nc, 0, sizeof *nc);
}

/*
 * The file a checkpoint write produces: the netCDF model of its header and
 * where every variable's data begin.
 *
 *   [header][index variables (stack only)][pad][var 0][pad][var 1]...
 *
 * The header is encoded twice: once to learn its length (every value in it
 * has a fixed width, so step, time and checksums never change it), once
 * with the offsets. Data variables begin at multiples of the alignment (the
 * file-system block), so the header never grows into them and each
 * variable starts on a block. Stacked files add dimensions ferry_rank,
 * ferry_dim<n> and <v>_stacked and index variables <v>_start, <v>_count
 * (ferry_rank, ferry_dim<n>) and <v>_offset (ferry_rank).
 */
#include <stdio.h>
#include <string.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

static const char *strategy_names[] = {"steer", "stack", "gather"};

static int add_text(ferry__ckpt_nc_atts_t *atts, const char *name, const char *text)
{
    return ferry__ckpt_nc_add_att(atts, name, NC_CHAR, (int64_t)strlen(text), text);
}

/* Integers as NC_INT64 (CDF-5) or NC_INT (CDF-2, which has no 64-bit type). */
static int add_ints(ferry__ckpt_nc_atts_t *atts, int version, const char *name, const int64_t *v, int64_t n)
{
    if (version == 5) return ferry__ckpt_nc_add_att(atts, name, NC_INT64, n, v);
    int32_t *narrow = ferry__malloc((size_t)n * sizeof *narrow + 1);
    if (!narrow) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for attribute %s", name);
    int cls = 0;
    for (int64_t i = 0; i < n && !cls; i++) {
        if (v[i] < INT32_MIN || v[i] > INT32_MAX)
            cls =
                ferry__error_set(MPI_ERR_ARG, "ferry_ckpt: %s = %lld does not fit CDF-2's 32-bit integers (use CDF-5)",
                                 name, (long long)v[i]);
        narrow[i] = (int32_t)v[i];
    }
    if (!cls) cls = ferry__ckpt_nc_add_att(atts, name, NC_INT, n, narrow);
    ferry__free(narrow);
    return cls;
}

static int add_dim(ferry__ckpt_nc_t *nc, const char *name, int64_t len)
{
    ferry__ckpt_nc_dim_t *grown = ferry__realloc(nc->dims, (size_t)(nc->ndims + 1) * sizeof *grown);
    if (!grown) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for dimension %s", name);
    nc->dims = grown;
    grown[nc->ndims].name = ferry__strdup(name);
    grown[nc->ndims].len = len;
    return grown[nc->ndims++].name ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory");
}

static int find_dim(const ferry__ckpt_nc_t *nc, const char *name)
{
    for (int i = 0; i < nc->ndims; i++)
        if (strcmp(nc->dims[i].name, name) == 0) return i;
    return -1;
}

/* A new variable (dims by id) at the end of the list; *out points at it. */
static int add_var(ferry__ckpt_nc_t *nc, const char *name, int type, int ndims, const int *dimids,
                   ferry__ckpt_nc_var_t **out)
{
    ferry__ckpt_nc_var_t *grown = ferry__realloc(nc->vars, (size_t)(nc->nvars + 1) * sizeof *grown);
    if (!grown) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for variable %s", name);
    nc->vars = grown;
    ferry__ckpt_nc_var_t *v = &grown[nc->nvars];
    memset(v, 0, sizeof *v);
    v->name = ferry__strdup(name);
    v->dimids = ferry__malloc((size_t)(ndims + 1) * sizeof *v->dimids);
    if (!v->name || !v->dimids) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for variable %s", name);
    nc->nvars++;
    memcpy(v->dimids, dimids, (size_t)ndims * sizeof *dimids);
    v->ndims = ndims;
    v->type = type;
    *out = v;
    return 0;
}

static int global_atts(ferry_ckpt_t ck, ferry__ckpt_nc_t *nc, long long step, double time)
{
    int64_t nranks = ck->nprocs, st = step;
    FERRY_TRY(ferry__ckpt_copy_atts(&ck->gatts, &nc->gatts)); /* the user's first: title, history, Conventions, ... */
    FERRY_TRY(add_text(&nc->gatts, "ferry_version", FERRY_VERSION_STRING));
    FERRY_TRY(ferry__ckpt_nc_add_att(&nc->gatts, "ferry_nranks", NC_INT, 1, &(int32_t){(int32_t)nranks}));
    FERRY_TRY(add_ints(&nc->gatts, nc->version, "ferry_step", &st, 1));
    FERRY_TRY(ferry__ckpt_nc_add_att(&nc->gatts, "ferry_time", NC_DOUBLE, 1, &time));
    FERRY_TRY(add_text(&nc->gatts, "ferry_strategy", strategy_names[ck->strategy]));
    FERRY_TRY(add_text(&nc->gatts, "ferry_transfers", ck->independent ? "independent" : "collective"));
    FERRY_TRY(add_text(&nc->gatts, "ferry_io", ck->io_kind == FERRY_CKPT_IO_HOST ? "host" : "ferry"));
    return add_text(&nc->gatts, FERRY__CKPT_HEADER_CHECKSUM,
                    "0000000000000000"); /* sealed last (ferry__ckpt_header_seal) */
}

/* Dimensions of the stacked layout for v; ids of (ferry_rank, ferry_dim<n>) and <v>_stacked. */
static int stack_dims(ferry_ckpt_t ck, ferry__ckpt_nc_t *nc, const ferry__ckpt_var_t *v, int table[2], int *stacked)
{
    char name[300];
    if (find_dim(nc, "ferry_rank") < 0) FERRY_TRY(add_dim(nc, "ferry_rank", ck->nprocs));
    snprintf(name, sizeof name, "ferry_dim%d", v->ndims);
    if (find_dim(nc, name) < 0) FERRY_TRY(add_dim(nc, name, v->ndims));
    table[0] = find_dim(nc, "ferry_rank");
    table[1] = find_dim(nc, name);
    snprintf(name, sizeof name, "%s_stacked", v->name);
    FERRY_TRY(add_dim(nc, name, v->offsets[ck->nprocs]));
    *stacked = nc->ndims - 1;
    return 0;
}

static int index_vars(ferry_ckpt_t ck, ferry__ckpt_nc_t *nc, const ferry__ckpt_var_t *v, int *stacked)
{
    int table[2], itype = nc->version == 5 ? NC_INT64 : NC_INT;
    char name[300];
    ferry__ckpt_nc_var_t *out;
    FERRY_TRY(stack_dims(ck, nc, v, table, stacked));
    snprintf(name, sizeof name, "%s_start", v->name);
    FERRY_TRY(add_var(nc, name, itype, 2, table, &out));
    snprintf(name, sizeof name, "%s_count", v->name);
    FERRY_TRY(add_var(nc, name, itype, 2, table, &out));
    snprintf(name, sizeof name, "%s_offset", v->name);
    return add_var(nc, name, itype, 1, table, &out);
}

/* Every rank's start then count in v's own dimensions: [rank][2 * ndims]. */
static int64_t *decomposition(ferry_ckpt_t ck, const ferry__ckpt_var_t *v)
{
    int nd = v->ndims, lead = FERRY__CKPT_D - nd;
    int64_t *out = ferry__malloc((size_t)ck->nprocs * 2 * (size_t)nd * sizeof *out + 1);
    for (int r = 0; out && r < ck->nprocs; r++)
        for (int d = 0; d < nd; d++) {
            out[(size_t)r * 2 * nd + d] = v->blocks[r * 2 * FERRY__CKPT_D + lead + d];
            out[(size_t)r * 2 * nd + nd + d] = v->blocks[r * 2 * FERRY__CKPT_D + FERRY__CKPT_D + lead + d];
        }
    return out;
}

static int data_var_atts(ferry_ckpt_t ck, ferry__ckpt_nc_t *nc, ferry__ckpt_nc_var_t *out, const ferry__ckpt_var_t *v,
                         uint64_t sum)
{
    char hex[17], dims[1100] = "";
    int64_t shape[FERRY__CKPT_D];
    ferry__ckpt_hex(sum, hex);
    FERRY_TRY(ferry__ckpt_copy_atts(&v->atts, &out->atts)); /* the user's first: long_name, units, _FillValue, ... */
    if (v->mask) FERRY_TRY(add_text(&out->atts, "ferry_mask", v->mask));
    FERRY_TRY(add_text(&out->atts, "ferry_checksum", hex));
    if (ck->strategy != FERRY_CKPT_STACK) {
        int64_t *table = decomposition(ck, v);
        if (!table)
            return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for the decomposition of %s", v->name);
        int cls = add_ints(&out->atts, nc->version, "ferry_decomposition", table, (int64_t)ck->nprocs * 2 * v->ndims);
        ferry__free(table);
        return cls;
    }
    for (int d = 0; d < v->ndims; d++) {
        shape[d] = v->global[FERRY__CKPT_D - v->ndims + d];
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%s", d ? " " : "", ck->dims[v->dimids[d]].name);
    }
    FERRY_TRY(add_text(&out->atts, "ferry_global_dims", dims));
    return add_ints(&out->atts, nc->version, "ferry_global_shape", shape, v->ndims);
}

static int build_model(ferry_ckpt_t ck, const uint64_t *sums, long long step, double time, ferry__ckpt_nc_t *nc)
{
    for (int i = 0; i < ck->ndims; i++) FERRY_TRY(add_dim(nc, ck->dims[i].name, ck->dims[i].len));
    FERRY_TRY(global_atts(ck, nc, step, time));
    int *stacked = ferry__calloc((size_t)ck->nvars + 1, sizeof *stacked), cls = 0;
    if (!stacked) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory");
    for (int i = 0; i < ck->nvars && !cls && ck->strategy == FERRY_CKPT_STACK; i++)
        cls = index_vars(ck, nc, &ck->vars[i], &stacked[i]);
    for (int i = 0; i < ck->nvars && !cls; i++) {
        const ferry__ckpt_var_t *v = &ck->vars[i];
        ferry__ckpt_nc_var_t *out;
        int one = ck->strategy == FERRY_CKPT_STACK;
        cls = add_var(nc, v->name, v->nctype, one ? 1 : v->ndims, one ? &stacked[i] : v->dimids, &out);
        if (!cls) cls = data_var_atts(ck, nc, out, v, sums ? sums[i] : 0);
    }
    ferry__free(stacked);
    return cls;
}

/* A series file (issue 30): dimensions time (the record dimension), ferry_var and ferry_hex; global
 * attributes that stay the same from record to record; record variables time(time),
 * ferry_step(time), ferry_checksum(time, ferry_var, ferry_hex) (each data variable's checksum in
 * the record, 16 hex digits) and the data variables, time first. */
static int series_model(ferry_ckpt_t ck, ferry__ckpt_nc_t *nc)
{
    int rec[3], ids[FERRY__CKPT_D + 1];
    ferry__ckpt_nc_var_t *out;
    for (int i = 0; i < ck->ndims; i++) FERRY_TRY(add_dim(nc, ck->dims[i].name, ck->dims[i].len));
    FERRY_TRY(add_dim(nc, "time", 0));
    FERRY_TRY(add_dim(nc, "ferry_var", ck->nvars));
    FERRY_TRY(add_dim(nc, "ferry_hex", 16));
    for (int k = 0; k < 3; k++) rec[k] = nc->ndims - 3 + k;
    FERRY_TRY(ferry__ckpt_copy_atts(&ck->gatts, &nc->gatts));
    FERRY_TRY(add_text(&nc->gatts, "ferry_version", FERRY_VERSION_STRING));
    FERRY_TRY(add_text(&nc->gatts, "ferry_series", "time"));
    FERRY_TRY(add_text(&nc->gatts, FERRY__CKPT_HEADER_CHECKSUM, "0000000000000000"));
    FERRY_TRY(add_var(nc, "time", NC_DOUBLE, 1, rec, &out));
    FERRY_TRY(ferry__ckpt_copy_atts(&ck->time_atts, &out->atts)); /* units "days since ...", calendar, ... */
    FERRY_TRY(add_var(nc, "ferry_step", nc->version == 5 ? NC_INT64 : NC_INT, 1, rec, &out));
    FERRY_TRY(add_var(nc, "ferry_checksum", NC_CHAR, 3, rec, &out));
    for (int i = 0; i < ck->nvars; i++) {
        const ferry__ckpt_var_t *v = &ck->vars[i];
        ids[0] = rec[0];
        memcpy(ids + 1, v->dimids, (size_t)v->ndims * sizeof *ids);
        FERRY_TRY(add_var(nc, v->name, v->nctype, v->ndims + 1, ids, &out));
        FERRY_TRY(ferry__ckpt_copy_atts(&v->atts, &out->atts));
        if (v->mask) FERRY_TRY(add_text(&out->atts, "ferry_mask", v->mask));
    }
    return 0;
}

static int64_t round_up(int64_t x, int64_t to)
{
    return (x + to - 1) / to * to;
}

/* vsize and begin of every variable: index variables right after the header,
 * data variables each at the next multiple of the alignment. */
static int place(ferry_ckpt_t ck, ferry__ckpt_nc_t *nc, int64_t header_len, ferry__ckpt_layout_t *layout)
{
    int64_t at = header_len;
    int first_data = nc->nvars - ck->nvars;
    for (int i = 0; i < nc->nvars; i++) {
        ferry__ckpt_nc_var_t *v = &nc->vars[i];
        int64_t bytes = ferry__ckpt_nc_var_bytes(nc, v);
        v->vsize = round_up(bytes, 4);
        if (nc->version == 2 && v->vsize > (int64_t)UINT32_MAX - 3)
            return ferry__error_set(MPI_ERR_ARG,
                                    "ferry_ckpt: variable %s has %lld bytes: CDF-2 holds under 4 GiB (use CDF-5)",
                                    v->name, (long long)bytes);
        if (i == first_data && !ck->series) layout->region_len = round_up(at, ck->align);
        if (i >= first_data && !ck->series) at = round_up(at, ck->align);
        if (i == 0 && ck->series) at = layout->region_len = round_up(at, ck->align); /* records contiguous after it */
        v->begin = at;
        if (i >= first_data) layout->begin[i - first_data] = at;
        at += v->vsize;
    }
    if (first_data == nc->nvars) layout->region_len = round_up(at, 4);
    layout->total = ck->series ? layout->region_len : at; /* a series file holds no record yet */
    layout->recsize = ck->series ? at - layout->region_len : 0;
    return 0;
}

static int check_cdf2_dims(const ferry__ckpt_nc_t *nc)
{
    for (int i = 0; nc->version == 2 && i < nc->ndims; i++)
        if (nc->dims[i].len > INT32_MAX)
            return ferry__error_set(MPI_ERR_ARG,
                                    "ferry_ckpt: dimension %s of length %lld is too long for CDF-2 (use CDF-5)",
                                    nc->dims[i].name, (long long)nc->dims[i].len);
    return 0;
}

/* The values of v's index variables (start, count, offset) into region at their begins. */
static void put_index(ferry_ckpt_t ck, const ferry__ckpt_nc_t *nc, int first, const ferry__ckpt_var_t *v,
                      unsigned char *region)
{
    int size = nc->version == 5 ? 8 : 4, lead = FERRY__CKPT_D - v->ndims;
    ferry__ckpt_bytes_t out = {0};
    for (int which = 0; which < 2; which++) {
        out.len = 0;
        for (int r = 0; r < ck->nprocs; r++)
            for (int d = 0; d < v->ndims; d++)
                ferry__ckpt_bytes_put_be(
                    &out, (uint64_t)v->blocks[r * 2 * FERRY__CKPT_D + which * FERRY__CKPT_D + lead + d], size);
        if (!out.failed) memcpy(region + nc->vars[first + which].begin, out.p, out.len);
    }
    out.len = 0;
    for (int r = 0; r < ck->nprocs; r++) ferry__ckpt_bytes_put_be(&out, (uint64_t)v->offsets[r], size);
    if (!out.failed) memcpy(region + nc->vars[first + 2].begin, out.p, out.len);
    ferry__free(out.p);
}

/* The header checksum over the finished region, found where the decoder puts its value. */
static int seal_region(ferry__ckpt_layout_t *layout, size_t header_len)
{
    ferry__ckpt_nc_t decoded;
    size_t used = 0;
    int cls = ferry__ckpt_nc_decode(layout->region, header_len, &decoded, &used);
    if (cls) {
        char why[300];
        snprintf(why, sizeof why, "%s", cls == MPI_ERR_TRUNCATE ? "truncated" : ferry__error_message());
        return ferry__error_set(MPI_ERR_INTERN, "ferry_ckpt: the header it encoded does not decode (%s)", why);
    }
    ferry__ckpt_header_seal(&decoded, layout->region, ferry__ckpt_header_covered(&decoded, (int64_t)used));
    ferry__ckpt_nc_free(&decoded);
    return 0;
}

static int fill_region(ferry_ckpt_t ck, ferry__ckpt_layout_t *layout, const ferry__ckpt_bytes_t *header)
{
    layout->region = ferry__ckpt_alloc(ck, (size_t)layout->region_len);
    if (!layout->region) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for a %lld-byte header",
                                                 (long long)layout->region_len);
    memset(layout->region, 0, (size_t)layout->region_len);
    memcpy(layout->region, header->p, header->len);
    for (int i = 0; ck->strategy == FERRY_CKPT_STACK && i < ck->nvars; i++)
        put_index(ck, &layout->nc, 3 * i, &ck->vars[i], layout->region);
    return seal_region(layout, header->len);
}

int ferry__ckpt_layout_build(ferry_ckpt_t ck, const uint64_t *sums, long long step, double time,
                             ferry__ckpt_layout_t *layout)
{
    ferry__ckpt_bytes_t header = {0};
    memset(layout, 0, sizeof *layout);
    layout->begin = ferry__ckpt_alloc(ck, (size_t)(ck->nvars + 1) * sizeof *layout->begin);
    if (!layout->begin) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory");
    layout->nc.version = ck->format == FERRY_CKPT_CDF2 ? 2 : 5;
    int cls = ck->series ? series_model(ck, &layout->nc) : build_model(ck, sums, step, time, &layout->nc);
    if (!cls) cls = check_cdf2_dims(&layout->nc);
    if (!cls) cls = ferry__ckpt_nc_encode(&layout->nc, &header);
    if (!cls) cls = place(ck, &layout->nc, (int64_t)header.len, layout);
    if (!cls) {
        header.len = 0;
        cls = ferry__ckpt_nc_encode(&layout->nc, &header);
    }
    if (!cls) cls = fill_region(ck, layout, &header);
    ferry__free(header.p);
    return cls;
}

void ferry__ckpt_layout_free(ferry_ckpt_t ck, ferry__ckpt_layout_t *layout)
{
    ferry__ckpt_nc_free(&layout->nc);
    ferry__ckpt_release(ck, layout->region, (size_t)layout->region_len);
    ferry__ckpt_release(ck, layout->begin, (size_t)(ck->nvars + 1) * sizeof *layout->begin);
    memset(layout, 0, sizeof *layout);
}

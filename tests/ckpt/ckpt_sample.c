/*
 * Writes sample checkpoints for the Python oracles (ckpt_oracle.py): every
 * strategy in CDF-5 and CDF-2, variables of 1 to 4 dimensions and several
 * types over an uneven decomposition, step 7, into the directory argv[1]
 * as <dir>/<strategy>_cdf<5|2>.000000000007.nc, and the same variables with
 * CF attributes as a series of steps 5 to 7 (<dir>/series_cdf<5|2>.nc).
 * Values: cc_value (the Python test computes the same formula).
 */
#include <stdlib.h>
#include <string.h>

#include "ckpt_cases.h"

enum { NVARS = 4 };

static void write_sample(const char *dir, int strategy, int format)
{
    static const char *names[] = {"steer", "stack", "gather"};
    static const MPI_Offset shapes[NVARS][4] = {{5, 9, 11}, {13, 7}, {29}, {3, 4, 5, 6}};
    static const int ndims[NVARS] = {3, 2, 1, 4};
    MPI_Datatype types[NVARS] = {MPI_DOUBLE, MPI_FLOAT, MPI_INT, MPI_SHORT};
    static const char *vnames[NVARS] = {"temp", "ssh", "count", "tke"};
    char base[700];
    snprintf(base, sizeof base, "%s/%s_cdf%d", dir, names[strategy], format == FERRY_CKPT_CDF2 ? 2 : 5);
    ferry_ckpt_options_t o = {.strategy = strategy, .format = format};
    ferry_ckpt_t ck;
    FT_OK(ferry_ckpt_create(MPI_COMM_WORLD, base, &o, &ck));
    ckpt_case_var_t v[NVARS];
    void *bufs[NVARS];
    for (int k = 0; k < NVARS; k++) {
        int id;
        memset(&v[k], 0, sizeof v[k]);
        v[k].ndims = ndims[k];
        v[k].halo = 2;
        v[k].type = types[k];
        memcpy(v[k].global, shapes[k], sizeof shapes[k]);
        cc_block(ndims[k], v[k].global, ft_rank, ft_size, 12345 + (uint64_t)k, v[k].start, v[k].count);
        cc_define(ck, &v[k], vnames[k], &id);
        cc_fill(&v[k], k, 7);
        bufs[k] = v[k].buf;
    }
    FT_OK(ferry_ckpt_write(ck, 7, 3.5, bufs));
    for (int k = 0; k < NVARS; k++) free(v[k].buf);
    FT_OK(ferry_ckpt_free(&ck));
}

static void put_text(ferry_ckpt_t ck, int varid, const char *name, const char *text)
{
    FT_OK(ferry_ckpt_put_att(ck, varid, name, MPI_CHAR, (MPI_Offset)strlen(text), text));
}

/* CF attributes of the series sample (ckpt_oracle.py checks them through xarray). */
static void series_atts(ferry_ckpt_t ck)
{
    put_text(ck, FERRY_CKPT_GLOBAL, "title", "ferry checkpoint series sample");
    put_text(ck, FERRY_CKPT_GLOBAL, "history", "written by tests/ckpt/ckpt_sample");
    put_text(ck, FERRY_CKPT_GLOBAL, "Conventions", "CF-1.8");
    put_text(ck, FERRY_CKPT_TIME, "units", "days since 2000-01-01 00:00:00");
    put_text(ck, FERRY_CKPT_TIME, "calendar", "standard");
    put_text(ck, FERRY_CKPT_TIME, "long_name", "time");
}

/* Steps 5, 6, 7 (times 0.25, 1.25, 2.25 days) of the four variables as records of
 * <dir>/series_cdf<5|2>.nc, steered; temp and ssh have a _FillValue and rows no rank owns
 * (the last 2 of their second-to-last dimension), count has such rows without one. */
static void write_series(const char *dir, int format)
{
    static const MPI_Offset shapes[NVARS][4] = {{5, 9, 11}, {13, 7}, {29}, {3, 4, 5, 6}};
    static const int ndims[NVARS] = {3, 2, 1, 4}, holes[NVARS] = {2, 2, 4, 0};
    MPI_Datatype types[NVARS] = {MPI_DOUBLE, MPI_FLOAT, MPI_INT, MPI_SHORT};
    static const char *vnames[NVARS] = {"temp", "ssh", "count", "tke"}, *units[NVARS] = {"degC", "m", "1", "J kg-1"};
    char base[700];
    snprintf(base, sizeof base, "%s/series_cdf%d", dir, format == FERRY_CKPT_CDF2 ? 2 : 5);
    ferry_ckpt_options_t o = {.format = format, .series = 1};
    ferry_ckpt_t ck;
    FT_OK(ferry_ckpt_create(MPI_COMM_WORLD, base, &o, &ck));
    series_atts(ck);
    ckpt_case_var_t v[NVARS];
    void *bufs[NVARS];
    for (int k = 0; k < NVARS; k++) {
        int id, rows = ndims[k] >= 2 ? ndims[k] - 2 : 0; /* the dimension with rows no rank owns */
        memset(&v[k], 0, sizeof v[k]);
        v[k].ndims = ndims[k];
        v[k].halo = 1;
        v[k].type = types[k];
        memcpy(v[k].global, shapes[k], sizeof shapes[k]);
        v[k].global[rows] -= holes[k];
        cc_block(ndims[k], v[k].global, ft_rank, ft_size, 555 + (uint64_t)k, v[k].start, v[k].count);
        v[k].global[rows] += holes[k];
        cc_define(ck, &v[k], vnames[k], &id);
        put_text(ck, id, "units", units[k]);
        put_text(ck, id, "long_name", vnames[k]);
        if (k == 0) FT_OK(ferry_ckpt_put_att(ck, id, "_FillValue", MPI_DOUBLE, 1, &(double){-999.0}));
        if (k == 0) FT_OK(ferry_ckpt_put_att(ck, id, "valid_range", MPI_DOUBLE, 2, (double[]){-5.0, 40.0}));
        if (k == 1) FT_OK(ferry_ckpt_put_att(ck, id, "_FillValue", MPI_FLOAT, 1, &(float){1e20f}));
    }
    for (long long step = 5; step <= 7; step++) {
        for (int k = 0; k < NVARS; k++) {
            cc_fill(&v[k], k, step);
            bufs[k] = v[k].buf;
        }
        FT_OK(ferry_ckpt_write(ck, step, (double)step - 4.75, bufs));
    }
    for (int k = 0; k < NVARS; k++) free(v[k].buf);
    FT_OK(ferry_ckpt_free(&ck));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    FT_CHECK(argc >= 2);
    for (int strategy = 0; strategy < 3; strategy++)
        for (int format = 0; format < 2; format++) write_sample(argv[1], strategy, format);
    for (int format = 0; format < 2; format++) write_series(argv[1], format);
    return ft_finish();
}

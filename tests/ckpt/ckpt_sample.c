/*
 * Writes sample checkpoints for the Python oracles (ckpt_oracle.py): every
 * strategy in CDF-5 and CDF-2, variables of 1 to 4 dimensions and several
 * types over an uneven decomposition, step 7, into the directory argv[1]
 * as <dir>/<strategy>_cdf<5|2>.000000000007.nc. Values: cc_value (the
 * Python test computes the same formula).
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

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    FT_CHECK(argc >= 2);
    for (int strategy = 0; strategy < 3; strategy++)
        for (int format = 0; format < 2; format++) write_sample(argv[1], strategy, format);
    return ft_finish();
}

/* Decompositions, buffers and expected values of the checkpoint tests (ckpt_cases.h). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_cases.h"

int cc_esize(MPI_Datatype type)
{
    int size;
    MPI_Type_size(type, &size);
    return size;
}

void cc_value(MPI_Datatype type, long long idx, int var, long long step, void *out)
{
    long long k = idx * 1000003LL + var * 7919LL + step * 104729LL;
    if (type == MPI_DOUBLE) *(double *)out = (double)k * 0.37 + 1.0 / 3.0;
    else if (type == MPI_FLOAT) *(float *)out = (float)(k % 100000) * 0.5f + 0.25f;
    else if (type == MPI_INT) *(int *)out = (int)(k % 2000000011LL) - 1000;
    else if (type == MPI_SHORT) *(short *)out = (short)(k % 30011);
    else if (type == MPI_SIGNED_CHAR) *(signed char *)out = (signed char)(k % 127);
    else *(long long *)out = k * 2654435761LL;
}

void cc_block(int ndims, const MPI_Offset *global, int r, int nprocs, uint64_t seed, MPI_Offset *start,
              MPI_Offset *count)
{
    int lo = 0, hi = nprocs; /* ranks [lo, hi) share the box start/count */
    for (int d = 0; d < ndims; d++) {
        start[d] = 0;
        count[d] = global[d];
    }
    uint64_t state = seed;
    while (hi - lo > 1) {
        int d = 0, mid = lo + (hi - lo) / 2;
        for (int k = 1; k < ndims; k++)
            if (count[k] > count[d]) d = k;
        /* A random cut, allowed at either end so a side may be empty. */
        MPI_Offset cut = (MPI_Offset)(ft_rand(&state) % (uint64_t)(count[d] + 1));
        if (seed % 4 == 0 && lo == 0 && hi == nprocs) cut = 0; /* one seed in four: the first ranks own nothing */
        if (r < mid) {
            count[d] = cut;
            hi = mid;
        } else {
            start[d] += cut;
            count[d] -= cut;
            lo = mid;
        }
    }
}

static size_t mem_elems(const ckpt_case_var_t *v, MPI_Offset *mem)
{
    size_t n = 1;
    for (int d = 0; d < v->ndims; d++) {
        mem[d] = v->count[d] + 2 * v->halo;
        n *= (size_t)mem[d];
    }
    return n;
}

/* Calls fn on every interior point: its buffer element and global index. */
static void each_point(const ckpt_case_var_t *v, void (*fn)(const ckpt_case_var_t *, unsigned char *, long long, void *),
                       void *arg)
{
    MPI_Offset mem[4], i[4] = {0};
    mem_elems(v, mem);
    for (int d = 0; d < v->ndims; d++)
        if (v->count[d] == 0) return;
    int es = cc_esize(v->type);
    for (;;) {
        long long off = 0, g = 0;
        for (int d = 0; d < v->ndims; d++) {
            off = off * mem[d] + i[d] + v->halo;
            g = g * v->global[d] + v->start[d] + i[d];
        }
        fn(v, (unsigned char *)v->buf + off * es, g, arg);
        int d = v->ndims - 1;
        while (d >= 0 && ++i[d] == v->count[d]) i[d--] = 0;
        if (d < 0) return;
    }
}

typedef struct point_arg {
    int var;
    long long step;
    long long bad;
} point_arg_t;

static void put_point(const ckpt_case_var_t *v, unsigned char *p, long long g, void *arg)
{
    point_arg_t *a = arg;
    cc_value(v->type, g, a->var, a->step, p);
}

static void check_point(const ckpt_case_var_t *v, unsigned char *p, long long g, void *arg)
{
    point_arg_t *a = arg;
    unsigned char want[8];
    cc_value(v->type, g, a->var, a->step, want);
    if (memcmp(p, want, (size_t)cc_esize(v->type)) != 0) {
        if (a->bad++ < 3) fprintf(stderr, "rank %d: variable %d point %lld differs\n", ft_rank, a->var, g);
    }
    memset(p, 0x5A, (size_t)cc_esize(v->type)); /* interior checked: the rest must be halo bytes */
}

void cc_fill(ckpt_case_var_t *v, int var, long long step)
{
    MPI_Offset mem[4];
    v->bytes = mem_elems(v, mem) * (size_t)cc_esize(v->type);
    free(v->buf);
    v->buf = malloc(v->bytes + 1);
    memset(v->buf, 0x5A, v->bytes);
    point_arg_t a = {var, step, 0};
    each_point(v, put_point, &a);
}

void cc_check(const ckpt_case_var_t *v, int var, long long step)
{
    point_arg_t a = {var, step, 0};
    each_point(v, check_point, &a);
    FT_EQ(a.bad, 0);
    for (size_t k = 0; k < v->bytes; k++)
        if (((unsigned char *)v->buf)[k] != 0x5A) ft_fail(__FILE__, __LINE__, "variable %d: halo byte %zu changed", var, k);
}

void cc_define(ferry_ckpt_t ck, ckpt_case_var_t *v, const char *name, int *varid)
{
    int dimids[4], halo[4];
    for (int d = 0; d < v->ndims; d++) {
        char dim[64];
        snprintf(dim, sizeof dim, "%s_d%d", name, d);
        FT_OK(ferry_ckpt_def_dim(ck, dim, v->global[d], &dimids[d]));
        halo[d] = v->halo;
    }
    ferry_ckpt_var_t d = {.name = name, .type = v->type, .ndims = v->ndims, .dimids = dimids, .start = v->start,
                          .count = v->count, .halo = halo, .units = "m"};
    FT_OK(ferry_ckpt_def_var(ck, &d, varid));
}

ferry_ckpt_t cc_make_set(const cc_set_t *s, ckpt_case_var_t *v)
{
    ferry_ckpt_options_t o = s->opt;
    char keep[32];
    snprintf(keep, sizeof keep, "%d", s->keep);
    MPI_Info_create(&o.info);
    if (s->keep) MPI_Info_set(o.info, "ferry_ckpt_keep", keep);
    ferry_ckpt_t ck;
    FT_OK(ferry_ckpt_create(MPI_COMM_WORLD, s->base, &o, &ck));
    MPI_Info_free(&o.info);
    memset(v, 0, sizeof *v);
    v->ndims = 2;
    v->halo = s->halo;
    v->type = s->type;
    v->global[0] = v->global[1] = s->n;
    cc_block(2, v->global, ft_rank, ft_size, s->seed, v->start, v->count);
    int id;
    cc_define(ck, v, s->var, &id);
    return ck;
}

int cc_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void cc_set_header_step(const char *path, long long step, long long to)
{
    if (ft_rank == 0) {
        static unsigned char head[1 << 16];
        int fd = open(path, O_RDWR);
        FT_CHECK(fd >= 0);
        ssize_t n = pread(fd, head, sizeof head, 0);
        const unsigned char *name = memmem(head, n > 0 ? (size_t)n : 0, "ferry_step", 10);
        FT_CHECK(name != NULL);
        /* The name padded to 12 bytes, its type and an 8-byte count come before the 8-byte value. */
        off_t at = (off_t)(name - head) + 12 + 4 + 8 + 7;
        FT_EQ(head[at], (unsigned char)step);
        unsigned char b = (unsigned char)to;
        FT_CHECK(pwrite(fd, &b, 1, at) == 1);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

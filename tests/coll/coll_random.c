/*
 * Collective writes and reads through random noncontiguous views, random
 * memory types and random collective hints, judged byte for byte by a
 * brute-force model, with the host's MPI-IO run on the same calls.
 *
 * Each case deals a tile of random blocks (1..48 bytes) to the ranks and
 * to nobody (holes), so the ranks' views interleave without overlapping;
 * rank r's filetype is an hindexed type of its blocks resized to the tile.
 * Every rank starts at a random etype offset and moves a random number of
 * elements of a random memory type (tests/oracle: types built with their
 * stream maps), some ranks nothing. The file starts with random old
 * contents of random length, so windows begin inside, across and past the
 * end of file. Hints: a random strategy (even, block_cyclic, stripe_group,
 * auto, independent), cb_buffer_size 8..64 KiB, cb_nodes 0..2P.
 *
 * Checked: ferry's file equals the model exactly (holes keep old bytes,
 * never-written bytes are zeros); the read returns the model's bytes for
 * the stream prefix below end of file, leaves every other memory byte
 * alone, and reports that prefix in its status. The host's file and reads
 * are compared with the model too; a host mismatch is counted and printed,
 * not failed (Open MPI 4.1's OMPIO leaves stale buffer bytes in holes past
 * the end of file, so host bytes past the old end are not judged).
 * FERRY_COLL_CASES (default 40) cases per run, seeded; FERRY_COLL_HOST=0
 * skips the host; FERRY_COLL_VERBOSE=1 prints where the host differs.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ferry_test.h"
#include "oracle_diff.h"

enum { MAX_BLOCKS = 24, SENTINEL = 0x5A };

typedef struct layout {
    int nblocks;
    MPI_Offset disp[MAX_BLOCKS], len[MAX_BLOCKS];
    int owner[MAX_BLOCKS]; /* -1: a hole */
    MPI_Offset extent, view_disp;
} layout_t;

typedef struct rank_plan {
    MPI_Offset size;   /* stream bytes per tile */
    MPI_Offset offset; /* etype (byte) offset of the call */
    MPI_Count count;   /* memory elements */
    MPI_Offset bytes;  /* count * type size */
} rank_plan_t;

static int pick(uint64_t *s, int n)
{
    return (int)(ft_rand(s) % (uint64_t)n);
}

static void deal_tile(layout_t *l, uint64_t *s)
{
    l->nblocks = ft_size + pick(s, MAX_BLOCKS - ft_size + 1);
    MPI_Offset at = 0;
    int order[MAX_BLOCKS];
    for (int b = 0; b < l->nblocks; b++) {
        l->disp[b] = at;
        l->len[b] = 1 + pick(s, 48);
        at += l->len[b];
        l->owner[b] = pick(s, ft_size + 1) - 1;
        order[b] = b;
    }
    for (int i = 0; i < ft_size; i++) { /* every rank owns at least one block, chosen at random */
        int j = i + pick(s, l->nblocks - i), b = order[j];
        order[j] = order[i];
        order[i] = b;
        l->owner[b] = i;
    }
    l->extent = at + pick(s, 3) * 8;
    l->view_disp = pick(s, 64);
}

static MPI_Offset tile_size_of(const layout_t *l, int r)
{
    MPI_Offset n = 0;
    for (int b = 0; b < l->nblocks; b++) n += l->owner[b] == r ? l->len[b] : 0;
    return n;
}

/* File offset of rank r's stream byte k. */
static MPI_Offset file_offset(const layout_t *l, int r, MPI_Offset k, MPI_Offset size)
{
    MPI_Offset tile = k / size, within = k % size;
    for (int b = 0; b < l->nblocks; b++) {
        if (l->owner[b] != r) continue;
        if (within < l->len[b]) return l->view_disp + tile * l->extent + l->disp[b] + within;
        within -= l->len[b];
    }
    return -1;
}

static MPI_Datatype filetype_of(const layout_t *l, int r)
{
    int lens[MAX_BLOCKS], n = 0;
    MPI_Aint disps[MAX_BLOCKS];
    for (int b = 0; b < l->nblocks; b++)
        if (l->owner[b] == r) lens[n] = (int)l->len[b], disps[n++] = (MPI_Aint)l->disp[b];
    MPI_Datatype blocks, tile;
    MPI_Type_create_hindexed(n, lens, disps, MPI_BYTE, &blocks);
    MPI_Type_create_resized(blocks, 0, (MPI_Aint)l->extent, &tile);
    MPI_Type_commit(&tile);
    MPI_Type_free(&blocks);
    return tile;
}

static MPI_Info random_hints(uint64_t *s, char *what, size_t cap)
{
    static const char *strategies[] = {"even", "block_cyclic", "stripe_group", "auto", "independent"};
    const char *strategy = strategies[pick(s, 5)];
    char buffer[16], nodes[16];
    snprintf(buffer, sizeof buffer, "%d", 8192 << pick(s, 4));
    snprintf(nodes, sizeof nodes, "%d", pick(s, 2 * ft_size + 1));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "ferry_cb_strategy", (char *)strategy);
    MPI_Info_set(info, "cb_buffer_size", buffer);
    MPI_Info_set(info, "cb_nodes", nodes);
    MPI_Info_set(info, "IBM_io_buffer_size", "4096");
    MPI_Info_set(info, "striping_unit", "4096");
    MPI_Info_set(info, "striping_factor", "3");
    snprintf(what, cap, "%s cb_buffer_size=%s cb_nodes=%s", strategy, buffer, nodes);
    return info;
}

/* Rank 0 writes `old` bytes of old contents to both files. */
static unsigned char *old_contents(const char *a, const char *b, MPI_Offset old, uint64_t seed)
{
    unsigned char *bytes = malloc((size_t)old + 1);
    ft_fill(bytes, (size_t)old, seed);
    for (int i = 0; ft_rank == 0 && i < 2; i++) {
        int fd = open(i ? b : a, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        FT_EQ(write(fd, bytes, (size_t)old), (ssize_t)old);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return bytes;
}

static unsigned char *read_whole(const char *path, MPI_Offset *size)
{
    int fd = open(path, O_RDONLY);
    *size = lseek(fd, 0, SEEK_END);
    unsigned char *bytes = malloc((size_t)*size + 1);
    FT_EQ(pread(fd, bytes, (size_t)*size, 0), (ssize_t)*size);
    close(fd);
    return bytes;
}

typedef struct one_case {
    layout_t l;
    rank_plan_t plan[64];
    od_type_t type;       /* this rank's memory type */
    unsigned char *mem;   /* this rank's memory: the span of (count, type) */
    MPI_Count mem_lo, mem_hi;
    char hints[96];
    int index;
} one_case_t;

static void plan_ranks(one_case_t *c, uint64_t *s)
{
    /* Every rank draws every rank's plan from the shared stream; only its own type is built. */
    for (int r = 0; r < ft_size; r++) {
        rank_plan_t *p = &c->plan[r];
        p->size = tile_size_of(&c->l, r);
        p->offset = pick(s, (int)(3 * p->size) + 1);
        uint64_t type_seed = ft_rand(s);
        int idle = pick(s, 6) == 0, elements = idle ? 0 : pick(s, 300);
        if (r == ft_rank) {
            uint64_t ts = type_seed;
            od_type_random(&c->type, &ts, pick(&ts, 4));
        }
        p->count = elements;
        p->bytes = 0; /* known once the type's size is: exchanged below */
    }
    MPI_Offset mine = c->plan[ft_rank].count * c->type.size, all[64];
    MPI_Allgather(&mine, 1, MPI_OFFSET, all, 1, MPI_OFFSET, MPI_COMM_WORLD);
    for (int r = 0; r < ft_size; r++) c->plan[r].bytes = all[r];
    od_type_span(&c->type, c->plan[ft_rank].count, &c->mem_lo, &c->mem_hi);
}

static unsigned char *model_after_write(const one_case_t *c, const unsigned char *old, MPI_Offset old_size,
                                        MPI_Offset *size, uint64_t data_seed)
{
    *size = old_size;
    for (int r = 0; r < ft_size; r++) {
        const rank_plan_t *p = &c->plan[r];
        if (p->bytes == 0) continue;
        MPI_Offset end = file_offset(&c->l, r, p->offset + p->bytes - 1, p->size) + 1;
        if (end > *size) *size = end;
    }
    unsigned char *m = calloc((size_t)*size + 1, 1);
    memcpy(m, old, (size_t)old_size);
    for (int r = 0; r < ft_size; r++) {
        const rank_plan_t *p = &c->plan[r];
        unsigned char *data = malloc((size_t)p->bytes + 1);
        ft_fill(data, (size_t)p->bytes, data_seed + (uint64_t)r);
        for (MPI_Offset k = 0; k < p->bytes; k++) m[file_offset(&c->l, r, p->offset + k, p->size)] = data[k];
        free(data);
    }
    return m;
}

/* This rank's memory holding its data stream (other bytes SENTINEL). */
static void fill_memory(one_case_t *c, uint64_t data_seed)
{
    const rank_plan_t *p = &c->plan[ft_rank];
    memset(c->mem, SENTINEL, (size_t)(c->mem_hi - c->mem_lo));
    unsigned char *data = malloc((size_t)p->bytes + 1);
    ft_fill(data, (size_t)p->bytes, data_seed + (uint64_t)ft_rank);
    for (MPI_Offset k = 0; k < p->bytes; k++) c->mem[od_type_byte(&c->type, k) - c->mem_lo] = data[k];
    free(data);
}

/* The host writes the same call, or the same stream through MPI_BYTE where
 * it mishandles the memory type (od_host_needs_bytes: ROMIO segfaults or
 * loops in write_at_all on types with a negative lower bound inside). */
static void host_write(const one_case_t *c, MPI_File hf, unsigned char *buf)
{
    const rank_plan_t *p = &c->plan[ft_rank];
    if (getenv("FERRY_COLL_VERBOSE"))
        fprintf(stderr, "rank %d case %d: host writes %lld x %s (lb %lld, extent %lld)\n", ft_rank, c->index,
                (long long)p->count, c->type.desc, (long long)c->type.lb, (long long)c->type.extent);
    if (!od_host_needs_bytes(&c->type)) {
        MPI_File_write_at_all(hf, p->offset, buf, (int)p->count, c->type.type, MPI_STATUS_IGNORE);
        return;
    }
    unsigned char *stream = malloc((size_t)p->bytes + 1);
    od_type_gather(&c->type, buf, p->bytes, stream);
    MPI_File_write_at_all(hf, p->offset, stream, (int)p->bytes, MPI_BYTE, MPI_STATUS_IGNORE);
    free(stream);
}

static int run_writes(one_case_t *c, const char *fa, const char *fb, MPI_Info info)
{
    const rank_plan_t *p = &c->plan[ft_rank];
    MPI_Datatype ft = filetype_of(&c->l, ft_rank);
    void *buf = c->mem - c->mem_lo;
    ferry_File fh;
    MPI_Status st;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, fa, MPI_MODE_RDWR, info, &fh));
    FT_OK(ferry_File_set_view(fh, c->l.view_disp, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_write_at_all_c(fh, p->offset, buf, p->count, c->type.type, &st));
    MPI_Count got = -1;
    MPI_Get_elements_x(&st, MPI_BYTE, &got);
    FT_EQ(got, p->bytes);
    FT_OK(ferry_File_close(&fh));
    MPI_File hf;
    int host_ok = getenv("FERRY_COLL_HOST") && !atoi(getenv("FERRY_COLL_HOST")) ? 0 : 1;
    host_ok = host_ok && MPI_File_open(MPI_COMM_WORLD, fb, MPI_MODE_RDWR, MPI_INFO_NULL, &hf) == MPI_SUCCESS;
    if (host_ok) {
        MPI_File_set_view(hf, c->l.view_disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
        host_write(c, hf, buf);
        MPI_File_close(&hf);
    }
    MPI_Type_free(&ft);
    return host_ok;
}

/* Reads a random count (often past end of file) through ferry; checks memory and status. */
static void check_read(one_case_t *c, const char *path, MPI_Info info, const unsigned char *model, MPI_Offset size,
                       uint64_t *s)
{
    rank_plan_t p = c->plan[ft_rank];
    MPI_Count count = pick(s, 400);
    MPI_Offset bytes = count * c->type.size, lo, hi;
    od_type_span(&c->type, count, &lo, &hi);
    unsigned char *mem = malloc((size_t)(hi - lo) + 1);
    memset(mem, SENTINEL, (size_t)(hi - lo));
    MPI_Datatype ft = filetype_of(&c->l, ft_rank);
    ferry_File fh;
    MPI_Status st;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    FT_OK(ferry_File_set_view(fh, c->l.view_disp, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_read_at_all_c(fh, p.offset, mem - lo, count, c->type.type, &st));
    FT_OK(ferry_File_close(&fh));
    MPI_Type_free(&ft);
    MPI_Offset below = 0; /* the stream prefix below end of file */
    while (below < bytes && file_offset(&c->l, ft_rank, p.offset + below, p.size) < size) below++;
    MPI_Count got = -1;
    MPI_Get_elements_x(&st, MPI_BYTE, &got);
    if (got != below) ft_fail(__FILE__, __LINE__, "case %d (%s): read %lld bytes, expected %lld", c->index, c->hints,
                              (long long)got, (long long)below);
    unsigned char *want = malloc((size_t)(hi - lo) + 1);
    memset(want, SENTINEL, (size_t)(hi - lo));
    for (MPI_Offset k = 0; k < below; k++)
        want[od_type_byte(&c->type, k) - lo] = model[file_offset(&c->l, ft_rank, p.offset + k, p.size)];
    if (memcmp(mem, want, (size_t)(hi - lo)) != 0)
        ft_fail(__FILE__, __LINE__, "case %d (%s, type %s): read data differ from the model", c->index, c->hints,
                c->type.desc);
    free(mem);
    free(want);
}

static int run_case(int index, uint64_t *s)
{
    one_case_t c;
    memset(&c, 0, sizeof c);
    c.index = index;
    deal_tile(&c.l, s);
    plan_ranks(&c, s);
    MPI_Info info = random_hints(s, c.hints, sizeof c.hints);
    MPI_Offset old_size = pick(s, 6000);
    uint64_t data_seed = ft_rand(s);
    const char *fa = ft_path("coll_random.ferry");
    char fb[600];
    snprintf(fb, sizeof fb, "%s", ft_path("coll_random.host"));
    unsigned char *old = old_contents(fa, fb, old_size, data_seed ^ 0x5555);
    c.mem = malloc((size_t)(c.mem_hi - c.mem_lo) + 1);
    fill_memory(&c, data_seed);
    int host_ran = run_writes(&c, fa, fb, info);
    MPI_Offset size, fsize, hsize;
    unsigned char *model = model_after_write(&c, old, old_size, &size, data_seed);
    unsigned char *got = read_whole(fa, &fsize);
    if (fsize != size || memcmp(got, model, (size_t)size) != 0) {
        MPI_Offset at = 0;
        while (at < size && at < fsize && got[at] == model[at]) at++;
        ft_fail(__FILE__, __LINE__, "case %d (%s): ferry's file differs from the model at byte %lld (size %lld vs %lld)",
                index, c.hints, (long long)at, (long long)fsize, (long long)size);
    }
    int host_differs = 0;
    if (host_ran) {
        unsigned char *h = read_whole(fb, &hsize);
        /* Judged only below the old end of file and in written bytes: past it the host's holes hold stale bytes. */
        host_differs = hsize != size || memcmp(h, model, (size_t)(old_size < size ? old_size : size)) != 0;
        if (host_differs && getenv("FERRY_COLL_VERBOSE") && ft_rank == 0) {
            MPI_Offset at = 0;
            while (at < size && at < hsize && h[at] == model[at]) at++;
            int writer = -1;
            for (int r = 0; r < ft_size && writer < 0; r++)
                for (MPI_Offset k = 0; k < c.plan[r].bytes && writer < 0; k++)
                    if (file_offset(&c.l, r, c.plan[r].offset + k, c.plan[r].size) == at) writer = r;
            printf("case %d (%s): host differs at byte %lld of %lld (host size %lld, old size %lld): 0x%02x vs 0x%02x, "
                   "written by rank %d (-1: a hole)\n",
                   index, c.hints, (long long)at, (long long)size, (long long)hsize, (long long)old_size,
                   at < hsize ? h[at] : 0, at < size ? model[at] : 0, writer);
        }
        free(h);
    }
    check_read(&c, fa, info, model, size, s);
    MPI_Info_free(&info);
    od_type_free(&c.type);
    free(c.mem);
    free(old);
    free(model);
    free(got);
    return host_differs;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    FT_CHECK(ft_size <= 64);
    uint64_t s = ft_seed;
    int cases = getenv("FERRY_COLL_CASES") ? atoi(getenv("FERRY_COLL_CASES")) : 40, host_differs = 0;
    for (int i = 0; i < cases; i++) host_differs += run_case(i, &s);
    if (ft_rank == 0 && host_differs)
        printf("coll_random: the host's file differed from the model in %d of %d cases (known host behaviour)\n",
               host_differs, cases);
    return ft_finish();
}

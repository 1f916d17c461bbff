/*
 * external32 over seeded random derived types built from every predefined
 * type: ferry's pack (whole and in windows that cut elements) against the
 * expected file stream computed by the test, and against the host's
 * MPI_Pack_external where the host gets the predefined types right; unpack
 * (whole, in windows cut anywhere for byte-local types, in windows cut at
 * ferry__datarep_item_floor otherwise) against the memory the native stream
 * gives, and against MPI_Unpack_external; sizes against
 * MPI_Pack_external_size; file layouts' sizes and extents against the
 * extent the generator derives from the standard (byte displacements kept,
 * element displacements scaled, byte alignment).
 *
 * Rank r draws FERRY_DR_ITERS (default 400) types from FERRY_TEST_SEED + r.
 */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "datarep/datarep.h"
#include "datarep_bases.h"
#include "datatype/datatype.h"
#include "ferry_test.h"
#include "oracle.h"

enum { MAX_ITEMS = 512, GUARD = 16 };

typedef struct gen {
    MPI_Datatype type;
    int n;      /* items per element */
    int *items; /* base index of each item in stream order */
    MPI_Count fext; /* expected external32 extent */
    MPI_Count flb;  /* expected external32 lower bound */
    int named;      /* a predefined type: not freed */
    int sticky;     /* has explicit lb/ub markers (resized, subarray): a struct's bounds are theirs (MPI-3.1 4.1) */
} gen_t;

static const ferry__datarep_t *ext32;
static int host_sticky; /* the host bounds a struct by its members' explicit markers (MPI-3.1 4.1.6); MPICH 4.0 does not */
static int usable[128], nusable;

static MPI_Count pick(uint64_t *s, MPI_Count lo, MPI_Count hi)
{
    return hi <= lo ? lo : lo + (MPI_Count)(ft_rand(s) % (uint64_t)(hi - lo + 1));
}

static void gen_free(gen_t *g)
{
    if (!g->named) MPI_Type_free(&g->type);
    free(g->items);
}

/* g's items repeated k times (whole elements). */
static int *repeat(const gen_t *g, int k)
{
    int *items = malloc(sizeof *items * (size_t)(g->n * k + 1));
    for (int j = 0; j < k; j++) memcpy(items + j * g->n, g->items, sizeof *items * (size_t)g->n);
    return items;
}

static MPI_Count mem_extent(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* Byte spacing that keeps copies of c apart in memory and in the file. */
static MPI_Count spacing(const gen_t *c)
{
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(c->type, &tlb, &text);
    return mem_extent(c->type) + tlb + text + c->flb + c->fext;
}

static void random_gen(uint64_t *s, int depth, gen_t *g);

static void make_base(uint64_t *s, gen_t *g)
{
    int b = usable[pick(s, 0, nusable - 1)];
    g->type = dr_bases[b].type;
    g->named = 1;
    g->n = 1;
    g->items = malloc(sizeof *g->items);
    g->items[0] = b;
    g->fext = dr_base_fsize(&dr_bases[b]);
    g->flb = 0;
}

/* A struct of 2-3 random members at increasing byte displacements. */
static void make_struct(uint64_t *s, int depth, gen_t *g)
{
    int n = (int)pick(s, 2, 3), lens[3], total = 0;
    MPI_Aint disps[3], at = (MPI_Aint)pick(s, 0, 8);
    MPI_Datatype types[3];
    gen_t m[3];
    MPI_Count flb = 0, fub = 0;
    int sticky = 0, bounded = 0;
    for (int i = 0; i < n; i++) {
        random_gen(s, depth - 1, &m[i]);
        sticky |= m[i].sticky && host_sticky;
    }
    for (int i = 0; i < n; i++) {
        lens[i] = (int)pick(s, 1, 2);
        disps[i] = at;
        types[i] = m[i].type;
        MPI_Count lo = disps[i] + m[i].flb, hi = lo + lens[i] * m[i].fext;
        if (!sticky || m[i].sticky) {
            flb = !bounded || lo < flb ? lo : flb;
            fub = !bounded || hi > fub ? hi : fub;
            bounded = 1;
        }
        at += (MPI_Aint)(lens[i] * spacing(&m[i]) + pick(s, 0, 8));
        total += m[i].n * lens[i];
    }
    MPI_Type_create_struct(n, lens, disps, types, &g->type);
    g->items = malloc(sizeof *g->items * (size_t)(total + 1));
    g->n = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < lens[i]; k++) {
            memcpy(g->items + g->n, m[i].items, sizeof *g->items * (size_t)m[i].n);
            g->n += m[i].n;
        }
    g->flb = flb;
    g->fext = fub - flb;
    g->sticky = sticky;
    for (int i = 0; i < n; i++) gen_free(&m[i]);
}

/* Vector-like constructors over child c: `count` blocks of `bl`. */
static void make_repeat(uint64_t *s, gen_t *c, gen_t *g)
{
    int count = (int)pick(s, 1, 3), bl = (int)pick(s, 1, 2), kind = (int)pick(s, 0, 8);
#if MPI_VERSION < 4
    if (kind == 8) kind = 1;
#endif
    MPI_Count ce = spacing(c), fe = c->fext;
    int blocks = count * bl;
    if (kind == 0) {
        MPI_Type_contiguous(blocks, c->type, &g->type);
        g->fext = blocks * fe;
    } else if (kind == 1 || kind == 8) {
        int stride = bl + (int)pick(s, 0, 2);
#if MPI_VERSION >= 4
        if (kind == 8) MPI_Type_vector_c(count, bl, stride, c->type, &g->type); /* large-count contents */
        else
#endif
            MPI_Type_vector(count, bl, stride, c->type, &g->type);
        g->fext = ((MPI_Count)(count - 1) * stride + bl) * fe;
    } else if (kind == 2) {
        MPI_Aint stride = (MPI_Aint)(bl * ce + pick(s, 0, 8));
        MPI_Type_create_hvector(count, bl, stride, c->type, &g->type);
        g->fext = (count - 1) * stride + bl * fe;
    } else if (kind == 3 || kind == 4) {
        int lens[3], disps[3], at = (int)pick(s, 0, 2);
        MPI_Aint hdisps[3], hat = (MPI_Aint)pick(s, 0, 8);
        blocks = 0;
        for (int i = 0; i < count; i++) {
            lens[i] = (int)pick(s, 1, 2), disps[i] = at, hdisps[i] = hat;
            at += lens[i] + (int)pick(s, 0, 2);
            hat += (MPI_Aint)(lens[i] * ce + pick(s, 0, 8));
            blocks += lens[i];
        }
        if (kind == 3) MPI_Type_indexed(count, lens, disps, c->type, &g->type);
        else MPI_Type_create_hindexed(count, lens, hdisps, c->type, &g->type);
        MPI_Count first = kind == 3 ? disps[0] * fe : hdisps[0];
        MPI_Count last = kind == 3 ? disps[count - 1] * fe : hdisps[count - 1];
        g->flb = first + c->flb;
        g->fext = last + lens[count - 1] * fe - first;
    } else if (kind == 5) {
        int sizes[2] = {(int)pick(s, 1, 3), (int)pick(s, 1, 3)}, subs[2], starts[2];
        for (int d = 0; d < 2; d++) subs[d] = (int)pick(s, 1, sizes[d]), starts[d] = (int)pick(s, 0, sizes[d] - subs[d]);
        MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, c->type, &g->type);
        blocks = subs[0] * subs[1];
        g->fext = (MPI_Count)sizes[0] * sizes[1] * fe;
    } else if (kind == 7) { /* 1-D darray, this rank 0 of 2-4 */
        int gsize = (int)pick(s, 1, 6), procs = (int)pick(s, 2, 4), cyclic = (int)pick(s, 0, 1);
        int distrib = cyclic ? MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_BLOCK;
        int darg = cyclic ? (int)pick(s, 1, 2) : MPI_DISTRIBUTE_DFLT_DARG;
        MPI_Type_create_darray(procs, 0, 1, &gsize, &distrib, &darg, &procs, MPI_ORDER_C, c->type, &g->type);
        int gs, cs;
        MPI_Type_size(g->type, &gs);
        MPI_Type_size(c->type, &cs);
        blocks = gs / cs;
        g->fext = gsize * fe;
    } else {
        MPI_Count pad = pick(s, 1, 8);
        MPI_Type_create_resized(c->type, 0, (MPI_Aint)(ce + pad), &g->type);
        blocks = 1;
        g->fext = ce + pad; /* bytes: kept as they are in the file */
    }
    if (kind < 3 || kind == 8) g->flb = c->flb; /* subarray, darray and resized (lb 0) set lb 0 */
    g->sticky = (kind >= 5 && kind <= 7) || c->sticky;
    g->items = repeat(c, blocks);
    g->n = c->n * blocks;
}

/* Resizes g when explicit markers (resized, subarray inside a struct) left
 * its extent short of its bytes, so copies never overlap in memory. */
static void cover(uint64_t *s, gen_t *g)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(g->type, &lb, &ext);
    MPI_Type_get_true_extent(g->type, &tlb, &text);
    if (tlb >= lb && tlb + text <= lb + ext) return;
    MPI_Datatype wide;
    MPI_Aint extent = tlb + text + (MPI_Aint)pick(s, 0, 8);
    MPI_Type_create_resized(g->type, 0, extent, &wide);
    MPI_Type_free(&g->type);
    g->type = wide;
    g->flb = 0;
    g->fext = extent; /* bytes, kept as they are in the file */
    g->sticky = 1;
}

static void random_gen(uint64_t *s, int depth, gen_t *g)
{
    memset(g, 0, sizeof *g);
    if (depth <= 0 || pick(s, 0, 3) == 0) {
        make_base(s, g);
        return;
    }
    if (pick(s, 0, 3) == 0) {
        make_struct(s, depth, g);
    } else {
        gen_t c;
        random_gen(s, depth - 1, &c);
        make_repeat(s, &c, g);
        gen_free(&c);
    }
    if (g->n > MAX_ITEMS) { /* too long: a base instead */
        gen_free(g);
        make_base(s, g);
        return;
    }
    cover(s, g);
    MPI_Type_commit(&g->type);
}

/* --- one subject: a type, a count, values */

typedef struct subject {
    gen_t g;
    MPI_Count count, msz, fsz;
    unsigned char *native, *file; /* the streams */
    size_t span;
    int host_ok, local;
    int index;
} subject_t;

static int host_notes;

static void host_note(const subject_t *t, const char *what)
{
    if (host_notes++ < 5)
        printf("rank %d: note: host %s differs from the standard on type #%d (first item %s)\n", ft_rank, what,
               t->index, dr_bases[t->g.items[0]].name);
}

/* Names the item holding file byte at, and its expected bytes. */
static void explain(const subject_t *t, MPI_Count at)
{
    MPI_Count f = 0;
    for (MPI_Count e = 0; e < t->count; e++)
        for (int k = 0; k < t->g.n; k++) {
            const dr_base_t *b = &dr_bases[t->g.items[k]];
            if (at >= f && at < f + dr_base_fsize(b)) {
                fprintf(stderr, "byte %lld is byte %lld of item %d (%s) of element %lld: %s\n", (long long)at,
                        (long long)(at - f), k, b->name, (long long)e, or_describe(t->g.type));
                return;
            }
            f += dr_base_fsize(b);
        }
}

static void fail_subject(const subject_t *t, const char *what, MPI_Count at)
{
    if (at >= 0 && at < t->fsz) explain(t, at);
    ft_fail(__FILE__, __LINE__, "type #%d (count %lld, %d items/element, first %s): %s at byte %lld", t->index,
            (long long)t->count, t->g.n, dr_bases[t->g.items[0]].name, what, (long long)at);
}

static MPI_Count diff_at(const unsigned char *a, const unsigned char *b, MPI_Count n)
{
    for (MPI_Count i = 0; i < n; i++)
        if (a[i] != b[i]) return i;
    return -1;
}

static void make_values(uint64_t *s, subject_t *t)
{
    t->msz = t->fsz = 0;
    t->host_ok = t->local = 1;
    for (int k = 0; k < t->g.n; k++) {
        const dr_base_t *b = &dr_bases[t->g.items[k]];
        t->msz += dr_base_msize(b), t->fsz += dr_base_fsize(b);
        t->host_ok &= !b->host_aborts && !b->host_wrong;
        t->local &= dr_base_local(b);
    }
    t->msz *= t->count, t->fsz *= t->count;
    t->native = malloc((size_t)t->msz + 1);
    t->file = malloc((size_t)t->fsz + 1);
    unsigned char *n = t->native, *f = t->file;
    for (MPI_Count e = 0; e < t->count; e++)
        for (int k = 0; k < t->g.n; k++) {
            const dr_base_t *b = &dr_bases[t->g.items[k]];
            dr_base_value(b, s, n, f);
            n += dr_base_msize(b), f += dr_base_fsize(b);
        }
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(t->g.type, &tlb, &text);
    t->span = (size_t)((t->count - 1) * mem_extent(t->g.type) + tlb + text);
}

/* A memory buffer of the subject's span, guards included, in a fixed pattern. */
static unsigned char *pattern(const subject_t *t)
{
    unsigned char *mem = malloc(t->span + 2 * GUARD);
    ft_fill(mem, t->span + 2 * GUARD, 42);
    return mem;
}

static void check_pack(const subject_t *t, const unsigned char *buf, uint64_t *s)
{
    unsigned char *out = malloc((size_t)t->fsz + 1);
    FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)buf, t->count, t->g.type}, 0, out, t->fsz), 0);
    MPI_Count at = diff_at(out, t->file, t->fsz);
    if (at >= 0) fail_subject(t, "pack differs from the expected file stream", at);
    for (int w = 0; w < 4; w++) {
        MPI_Count skip = pick(s, 0, t->fsz - 1), len = pick(s, 1, t->fsz - skip);
        memset(out, 0, (size_t)len);
        FT_EQ(ferry__datarep_pack(ext32, &(ferry__datarep_memory_t){(void *)buf, t->count, t->g.type}, skip, out, len),
              0);
        if ((at = diff_at(out, t->file + skip, len)) >= 0) fail_subject(t, "windowed pack differs", skip + at);
    }
    if (t->host_ok) {
        MPI_Aint pos = 0;
        int rc = dr_host_external(DR_HOST_PACK, buf, 0, t->count, t->g.type, out, (MPI_Aint)t->fsz, &pos);
        if (rc == MPI_SUCCESS && (pos != t->fsz || diff_at(out, t->file, t->fsz) >= 0)) host_note(t, "MPI_Pack_external");
    }
    free(out);
}

static void compare_mem(const subject_t *t, const unsigned char *a, const unsigned char *b, const char *what)
{
    MPI_Count at = diff_at(a, b, (MPI_Count)t->span + 2 * GUARD);
    if (at >= 0) fail_subject(t, what, at - GUARD);
}

/* Unpack in ascending windows, as a transfer reads: cut anywhere (elements
 * cut between windows come out whole), or where elements start
 * (ferry__datarep_item_floor). */
static void unpack_windows(const subject_t *t, unsigned char *buf, uint64_t *s, int at_items)
{
    ferry__datarep_stream_t *stream;
    FT_EQ(ferry__datarep_stream_open(ext32, &(ferry__datarep_memory_t){buf, t->count, t->g.type}, &stream), 0);
    MPI_Count pos = 0;
    while (pos < t->fsz) {
        MPI_Count end = pos + pick(s, 1, t->fsz - pos > 40 ? 40 : t->fsz - pos);
        if (at_items && end < t->fsz) {
            FT_EQ(ferry__datarep_item_floor(ext32, t->g.type, t->count, end, &end), 0);
            if (end <= pos) continue;
        }
        FT_EQ(ferry__datarep_stream_unpack(stream, t->file + pos, end - pos, pos), 0);
        pos = end;
    }
    ferry__datarep_stream_close(stream);
}

/* Out of order, only byte-local conversions can be stored in pieces. */
static void unpack_backwards(const subject_t *t, unsigned char *buf, uint64_t *s)
{
    MPI_Count end = t->fsz;
    while (end > 0) {
        MPI_Count pos = end - pick(s, 1, end);
        FT_EQ(ferry__datarep_unpack(ext32, t->file + pos, end - pos, &(ferry__datarep_memory_t){buf, t->count, t->g.type},
                                    pos),
              0);
        end = pos;
    }
}

/* Whether buf holds the subject's values, long double padding aside (a
 * host may leave the 6 unused bytes of an x87 long double as they were). */
static int same_values(const subject_t *t, const unsigned char *buf)
{
    unsigned char *got = malloc((size_t)t->msz + 1);
    FT_EQ(ferry__datatype_pack(buf, t->count, t->g.type, 0, got, t->msz), 0);
    const unsigned char *a = got, *b = t->native;
    int same = 1;
    for (MPI_Count e = 0; e < t->count; e++)
        for (int k = 0; k < t->g.n; k++) {
            const dr_base_t *base = &dr_bases[t->g.items[k]];
            for (int p = 0; p < base->nparts; p++)
                for (int c = 0; c < base->part[p].count; c++) {
                    int n = base->part[p].msize;
                    if (base->part[p].shape == 'q' && LDBL_MANT_DIG == 64) same &= !memcmp(a, b, 10);
                    else same &= !memcmp(a, b, (size_t)n);
                    a += n, b += n;
                }
        }
    free(got);
    return same;
}

static void check_unpack(const subject_t *t, const unsigned char *want, uint64_t *s)
{
    unsigned char *mem = pattern(t);
    FT_EQ(ferry__datarep_unpack(ext32, t->file, t->fsz, &(ferry__datarep_memory_t){mem + GUARD, t->count, t->g.type}, 0), 0);
    compare_mem(t, mem, want, "unpack differs from the native values");
    free(mem);
    for (int mode = 0; mode < 3; mode++) {
        if (mode == 2 && !t->local) break;
        mem = pattern(t);
        if (mode < 2) unpack_windows(t, mem + GUARD, s, mode);
        else unpack_backwards(t, mem + GUARD, s);
        compare_mem(t, mem, want, mode == 0 ? "unpack in windows cut anywhere differs" : mode == 1 ? "unpack in windows cut at elements differs" : "unpack in descending windows differs");
        free(mem);
    }
    if (t->host_ok) {
        mem = pattern(t);
        MPI_Aint pos = 0;
        int rc = dr_host_external(DR_HOST_UNPACK, t->file, (MPI_Aint)t->fsz, t->count, t->g.type, mem + GUARD, 0, &pos);
        if (rc == MPI_SUCCESS && !same_values(t, mem + GUARD)) host_note(t, "MPI_Unpack_external");
        free(mem);
    }
}

static void check_layout(const subject_t *t)
{
    MPI_Datatype layout;
    MPI_Count size, extent, lb, lext;
    FT_EQ(ferry__datarep_size(ext32, t->g.type, &size), 0);
    FT_EQ(size * t->count, t->fsz);
    if (t->host_ok) {
        MPI_Aint host = 0;
        if (dr_host_external(DR_HOST_SIZE, NULL, 0, t->count, t->g.type, NULL, 0, &host) == MPI_SUCCESS && host != t->fsz)
            host_note(t, "MPI_Pack_external_size");
    }
    FT_EQ(ferry__datarep_file_layout(ext32, t->g.type, &layout), 0);
    MPI_Type_size_x(layout, &size);
    MPI_Type_get_extent_x(layout, &lb, &lext);
    FT_EQ(size * t->count, t->fsz);
    if (lext != t->g.fext || lb != t->g.flb) {
        printf("type #%d: layout lb %lld extent %lld, expected lb %lld extent %lld: %s\n", t->index, (long long)lb,
               (long long)lext, (long long)t->g.flb, (long long)t->g.fext, or_describe(t->g.type));
        fail_subject(t, "file layout extent", 0);
    }
    FT_EQ(ferry__datarep_extent(ext32, t->g.type, &extent), 0);
    FT_EQ(extent, t->g.fext);
    MPI_Type_free(&layout);
}

static void run_subject(uint64_t *s, int index)
{
    subject_t t = {.index = index};
    random_gen(s, 3, &t.g);
    t.count = pick(s, 1, 3);
    make_values(s, &t);
    unsigned char *want = pattern(&t);
    FT_EQ(ferry__datatype_unpack(t.native, t.msz, want + GUARD, t.count, t.g.type, 0), 0);
    check_pack(&t, want + GUARD, s);
    check_unpack(&t, want, s);
    check_layout(&t);
    free(want);
    free(t.native);
    free(t.file);
    gen_free(&t.g);
}

/* Which predefined types this host has, and which it packs as the standard says. */
static void survey_markers(void)
{
    MPI_Datatype r, st;
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {0, 100};
    MPI_Type_create_resized(MPI_INT, 0, 8, &r);
    MPI_Datatype types[2] = {r, MPI_INT};
    MPI_Type_create_struct(2, lens, disps, types, &st);
    host_sticky = mem_extent(st) == 8;
    if (ft_rank == 0)
        printf("note: host struct bounds %s explicit markers of resized members (extent %lld)\n",
               host_sticky ? "follow" : "ignore", (long long)mem_extent(st));
    MPI_Type_free(&st);
    MPI_Type_free(&r);
}

static void survey_bases(uint64_t *s)
{
    for (int i = 0; i < dr_nbases; i++) {
        dr_base_t *b = &dr_bases[i];
        int size = 0;
        if (b->type == MPI_DATATYPE_NULL || MPI_Type_size(b->type, &size) != MPI_SUCCESS ||
            size != dr_base_msize(b))
            continue;
        usable[nusable++] = i;
        MPI_Count fsize;
        FT_EQ(ferry__datarep_size(ext32, b->type, &fsize), 0);
        if (fsize != dr_base_fsize(b))
            ft_fail(__FILE__, __LINE__, "%s: external32 size %lld, want %d", b->name, (long long)fsize, dr_base_fsize(b));
        if (b->host_aborts) {
            if (ft_rank == 0) printf("note: host MPI_Pack_external aborts on %s: not compared\n", b->name);
            continue;
        }
        unsigned char native[4 * 64], want[4 * 64], got[4 * 64] = {0};
        for (int k = 0; k < 4; k++) dr_base_value(b, s, native + k * dr_base_msize(b), want + k * dr_base_fsize(b));
        MPI_Aint pos = 0, hsize = 0;
        MPI_Pack_external_size("external32", 4, b->type, &hsize);
        int rc = MPI_Pack_external("external32", native, 4, b->type, got, sizeof got, &pos);
        b->host_wrong = rc != MPI_SUCCESS || hsize != 4 * dr_base_fsize(b) || pos != 4 * dr_base_fsize(b) ||
                        memcmp(got, want, (size_t)pos) != 0;
        if (b->host_wrong && ft_rank == 0)
            printf("note: host external32 of %s differs from MPI-3.1 13.5.2: size %ld/%ld, want %d bytes/item%s\n",
                   b->name, (long)hsize / 4, (long)pos / 4, dr_base_fsize(b),
                   (pos == 4 * dr_base_fsize(b) && memcmp(got, want, (size_t)pos)) ? ", other bytes" : "");
    }
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    FT_EQ(ferry__datarep_find("external32", &ext32), 0);
    uint64_t s = ft_seed + (uint64_t)ft_rank;
    survey_markers();
    survey_bases(&s);
    const char *env = getenv("FERRY_DR_ITERS");
    int iters = env ? atoi(env) : 400;
    for (int i = 0; i < iters; i++) run_subject(&s, i);
    printf("rank %d: %d random types; host differed from the standard %d times, trapped %d times\n", ft_rank, iters,
           host_notes, dr_host_traps);
    return ft_finish();
}

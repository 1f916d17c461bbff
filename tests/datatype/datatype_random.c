/*
 * Differential test of the datatype engine over seeded random types.
 *
 * Each rank builds FERRY_DT_ITERS (default 2500) random types from every
 * constructor and checks, against the host's MPI_Pack/MPI_Unpack and the
 * brute-force byte map (tests/oracle): typeinfo, whole and windowed pack,
 * whole and windowed unpack (types without overlap), offsets of stream
 * bytes, the segment cursor, and for monotone types bytes_below, ff_size
 * and ff_extent. Rank r draws its types from FERRY_TEST_SEED + r.
 */
#include <stdlib.h>
#include <string.h>

#include "datatype/datatype.h"
#include "ferry_test.h"
#include "oracle.h"

enum { GUARD = 16 };

typedef struct subject {
    MPI_Datatype type;
    MPI_Count count, size, n, lo, hi;
    MPI_Count *map;  /* byte map of count elements */
    char *mem, *buf; /* mem: the span plus guards; buf: the address passed as the MPI buffer */
    uint64_t *rng;
    int index;
} subject_t;

static int host_unpack_bugs, host_extent_bugs;

static MPI_Count pick(uint64_t *s, MPI_Count lo, MPI_Count hi)
{
    return hi <= lo ? lo : lo + (MPI_Count)(ft_rand(s) % (uint64_t)(hi - lo + 1));
}

static void fail_type(const subject_t *t, const char *what, long long got, long long want)
{
    ferry__datatype_dump(t->type, stderr);
    if (t->map) {
        fprintf(stderr, "host byte map:");
        for (MPI_Count i = 0; i < t->n && i < 48; i++) fprintf(stderr, " %lld", (long long)t->map[i]);
        fprintf(stderr, "\n");
    }
    ft_fail(__FILE__, __LINE__, "type #%d count %lld: %s: got %lld, want %lld; type %s", t->index,
            (long long)t->count, what, got, want, or_describe(t->type));
}

static void check_eq(const subject_t *t, const char *what, long long got, long long want)
{
    if (got != want) fail_type(t, what, got, want);
}

/* First differing byte index, or -1. */
static MPI_Count first_diff(const char *a, const char *b, MPI_Count len)
{
    for (MPI_Count i = 0; i < len; i++)
        if (a[i] != b[i]) return i;
    return -1;
}

static void check_mem(const subject_t *t, const char *what, const char *got, const char *want, MPI_Count len)
{
    MPI_Count at = first_diff(got, want, len);
    if (at >= 0) fail_type(t, what, at, -1);
}

static int cmp_count(const void *a, const void *b)
{
    MPI_Count x = *(const MPI_Count *)a, y = *(const MPI_Count *)b;
    return (x > y) - (x < y);
}

/* Whether no memory byte appears twice in the map of count elements. */
static int map_unique(const MPI_Count *map, MPI_Count n)
{
    MPI_Count *sorted = malloc((size_t)n * sizeof *sorted + 1);
    FT_CHECK(sorted);
    memcpy(sorted, map, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_count);
    int unique = 1;
    for (MPI_Count i = 1; i < n; i++) unique &= sorted[i] != sorted[i - 1];
    free(sorted);
    return unique;
}

/* MPI-3.1 4.1: element i of a buffer starts i * extent after buf. Returns 0
 * (and notes it) where the host's own MPI_Pack strides by something else. */
static int host_extent_consistent(MPI_Datatype type, MPI_Count size)
{
    MPI_Count lb, ext, *one = or_byte_map(type, 1), *two = one ? or_byte_map(type, 2) : NULL;
    MPI_Type_get_extent_x(type, &lb, &ext);
    if (!two) {
        static int noted;
        if (!noted++)
            fprintf(stderr, "note: host MPI_Pack crashed or read outside the true extent on %s\n", or_describe(type));
        free(one);
        return 0;
    }
    int ok = 1;
    for (MPI_Count i = 0; i < size; i++) ok &= two[size + i] == one[i] + ext && two[i] == one[i];
    if (!ok && host_extent_bugs++ == 0)
        fprintf(stderr, "note: host MPI_Pack places element 1 at %lld, not at the extent %lld, for %s\n",
                (long long)(two[size] - one[0]), (long long)ext, or_describe(type));
    free(one);
    free(two);
    return ok;
}

static void check_info(const subject_t *t, ferry__typeinfo_t *info)
{
    MPI_Count lb, ext, tlb, text;
    check_eq(t, "ferry__datatype_info", ferry__datatype_info(t->type, info), 0);
    MPI_Type_get_extent_x(t->type, &lb, &ext);
    MPI_Type_get_true_extent_x(t->type, &tlb, &text);
    check_eq(t, "size", info->size, t->size);
    check_eq(t, "extent", info->extent, ext);
    check_eq(t, "lb", info->lb, lb);
    check_eq(t, "true_lb", info->true_lb, tlb);
    check_eq(t, "true_extent", info->true_extent, text);
    if (t->size == 0) return;
    MPI_Count *one = or_byte_map(t->type, 1), *two = or_byte_map(t->type, 2);
    int contiguous = 1, increasing = 1;
    for (MPI_Count i = 0; i < t->size; i++) contiguous &= one[i] == tlb + i;
    for (MPI_Count i = 1; i < 2 * t->size; i++) increasing &= two[i] > two[i - 1];
    check_eq(t, "contiguous", info->contiguous, contiguous);
    check_eq(t, "monotone", info->monotone, increasing);
    if (info->nonoverlapping) check_eq(t, "nonoverlapping", map_unique(one, t->size), 1);
    free(one);
    free(two);
}

static void random_window(const subject_t *t, MPI_Count *skip, MPI_Count *len)
{
    *skip = pick(t->rng, 0, t->n - 1);
    *len = pick(t->rng, 0, 2) == 0 ? t->n - *skip : pick(t->rng, 0, t->n - *skip);
}

static void check_pack(const subject_t *t)
{
    char *ref = malloc((size_t)t->n), *out = malloc((size_t)t->n + 2 * GUARD);
    FT_CHECK(ref && out);
    int position = 0;
    FT_OK(MPI_Pack(t->buf, (int)t->count, t->type, ref, (int)t->n, &position, MPI_COMM_SELF));
    for (int w = 0; w < 9; w++) {
        MPI_Count skip = 0, len = t->n;
        if (w > 0) random_window(t, &skip, &len);
        memset(out, 0x5a, (size_t)t->n + 2 * GUARD);
        check_eq(t, "pack rc", ferry__datatype_pack(t->buf, t->count, t->type, skip, out + GUARD, len), 0);
        check_mem(t, "pack window vs MPI_Pack", out + GUARD, ref + skip, len);
        for (MPI_Count i = 0; i < GUARD; i++) {
            check_eq(t, "pack guard before", out[i], 0x5a);
            check_eq(t, "pack guard after", out[GUARD + len + i], 0x5a);
        }
    }
    free(ref);
    free(out);
}

/* Unpack: whole stream vs the host and the map, windows vs the map. */
static void check_unpack(subject_t *t)
{
    MPI_Count span = t->hi - t->lo + 2 * GUARD;
    char *stream = malloc((size_t)t->n), *pattern = malloc((size_t)span), *want = malloc((size_t)span);
    char *saved = t->mem;
    FT_CHECK(stream && pattern && want);
    ft_fill(stream, (size_t)t->n, ft_rand(t->rng));
    ft_fill(pattern, (size_t)span, ft_rand(t->rng));
    for (int w = 0; w < 5; w++) {
        MPI_Count skip = 0, len = t->n;
        if (w > 0) random_window(t, &skip, &len);
        memcpy(want, pattern, (size_t)span);
        or_naive_unpack(stream, t->map, skip, len, want + GUARD - t->lo);
        memcpy(t->mem, pattern, (size_t)span);
        check_eq(t, "unpack rc", ferry__datatype_unpack(stream, len, t->buf, t->count, t->type, skip), 0);
        check_mem(t, "unpack window vs byte map", t->mem, want, span);
        if (w > 0) continue;
        memcpy(t->mem, pattern, (size_t)span);
        int position = 0;
        FT_OK(MPI_Unpack(stream, (int)t->n, &position, t->buf, (int)t->count, t->type, MPI_COMM_SELF));
        if (first_diff(t->mem, want, span) >= 0 && host_unpack_bugs++ == 0)
            fprintf(stderr, "note: host MPI_Unpack disagrees with its own MPI_Pack byte map for %s\n",
                    or_describe(t->type));
    }
    t->mem = saved;
    free(stream);
    free(pattern);
    free(want);
}

static void check_offsets(const subject_t *t)
{
    for (MPI_Count k = 0; k < 24; k++) {
        MPI_Count i = t->n <= 24 ? k : pick(t->rng, 0, t->n - 1), off = -1;
        if (i >= t->n) break;
        check_eq(t, "offset rc", ferry__datatype_offset(t->type, i, &off), 0);
        check_eq(t, "offset of a stream byte", off, t->map[i]);
    }
}

static void check_segments(const subject_t *t)
{
    MPI_Count skip, len;
    random_window(t, &skip, &len);
    ferry__datatype_cursor_t cur;
    ferry__datatype_segment_t segs[4];
    ferry__datatype_cursor_init(&cur, t->type, skip, len);
    MPI_Count at = skip;
    int max = (int)pick(t->rng, 1, 4), n;
    do {
        check_eq(t, "segments rc", ferry__datatype_segments(&cur, segs, max, &n), 0);
        for (int s = 0; s < n; s++) {
            check_eq(t, "segment nonempty", segs[s].length > 0, 1);
            for (MPI_Count b = 0; b < segs[s].length; b++, at++)
                check_eq(t, "segment byte offset", segs[s].offset + b, t->map[at]);
            if (s > 0) check_eq(t, "segments merged", segs[s].offset != segs[s - 1].offset + segs[s - 1].length, 1);
        }
    } while (n > 0);
    check_eq(t, "segments cover the window", at, skip + len);
}

/* Monotone types: bytes_below, ff_size and ff_extent by scanning the map. */
static void check_monotone_navigation(const subject_t *t)
{
    for (int k = 0; k < 8; k++) {
        MPI_Count x = pick(t->rng, t->lo - 2, t->hi + 2), got = -1, want = 0;
        while (want < t->n && t->map[want] < x) want++;
        check_eq(t, "bytes_below rc", ferry__datatype_bytes_below(t->type, t->count, x, &got), 0);
        check_eq(t, "bytes_below", got, want);
        MPI_Count skip = pick(t->rng, 0, t->n - 1), size = pick(t->rng, 0, t->n - skip);
        check_eq(t, "ff_extent rc", ferry__datatype_ff_extent(t->type, skip, size, &got), 0);
        check_eq(t, "ff_extent", got, size == 0 ? 0 : t->map[skip + size - 1] + 1 - t->map[skip]);
        MPI_Count extent = pick(t->rng, 0, t->hi - t->map[skip] + 1);
        for (want = 0; skip + want < t->n && t->map[skip + want] < t->map[skip] + extent;) want++;
        check_eq(t, "ff_size rc", ferry__datatype_ff_size(t->type, skip, extent, &got), 0);
        if (skip + want < t->n) check_eq(t, "ff_size", got, want);
        else check_eq(t, "ff_size at least", got >= want, 1);
    }
}

/* Decodes (and so caches) the parts of a type before the type itself, so
 * its decoding reuses their trees. */
static void predecode_parts(MPI_Datatype type)
{
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED) return;
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    FT_CHECK(ints && aints && types);
    MPI_Type_get_contents(type, ni, na, nd, ints, aints, types);
    for (int i = 0; i < nd; i++) {
        ferry__typeinfo_t info;
        FT_EQ(ferry__datatype_info(types[i], &info), 0);
        or_type_free(&types[i]);
    }
    free(ints), free(aints), free(types);
}

static void check_type(MPI_Datatype type, int index, uint64_t *rng)
{
    subject_t t = {.type = type, .index = index, .rng = rng, .count = pick(rng, 0, 7) ? pick(rng, 1, 3) : pick(rng, 16, 40)};
    ferry__typeinfo_t info;
    MPI_Type_size_x(type, &t.size);
    if (t.size > 0 && !host_extent_consistent(type, t.size)) return;
    check_info(&t, &info);
    t.n = t.count * t.size;
    if (t.n == 0) return;
    or_span(type, t.count, &t.lo, &t.hi);
    t.map = or_byte_map(type, t.count);
    if (!t.map) return;
    t.mem = malloc((size_t)(t.hi - t.lo) + 2 * GUARD);
    FT_CHECK(t.mem);
    t.buf = ferry__datatype_at(t.mem, GUARD - t.lo);
    ft_fill(t.mem, (size_t)(t.hi - t.lo) + 2 * GUARD, ft_rand(rng));
    check_pack(&t);
    check_offsets(&t);
    check_segments(&t);
    if (map_unique(t.map, t.n)) check_unpack(&t);
    if (info.monotone) check_monotone_navigation(&t);
    free(t.map);
    free(t.mem);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    const char *env = getenv("FERRY_DT_ITERS");
    int iters = env ? atoi(env) : 2500, verbose = getenv("FERRY_DT_VERBOSE") ? atoi(getenv("FERRY_DT_VERBOSE")) : 0;
    uint64_t rng = ft_seed + (uint64_t)ft_rank;
    for (int i = 0; i < iters; i++) {
        MPI_Datatype type = or_random_type(&rng, 5);
        if (ft_rand(&rng) % 3 == 0) predecode_parts(type);
        if (verbose) fprintf(stderr, "type #%d: %s\n", i, or_describe(type));
        if (verbose > 1) or_probe(type, 0);
        check_type(type, i, &rng);
        or_type_free(&type);
    }
    if (host_unpack_bugs) fprintf(stderr, "note: %d host MPI_Unpack disagreements\n", host_unpack_bugs);
    if (or_host_crashes) fprintf(stderr, "note: %d types skipped for host crashes\n", or_host_crashes);
    if (or_host_strays) fprintf(stderr, "note: %d types skipped for host reads outside the true extent\n", or_host_strays);
    if (host_extent_bugs) fprintf(stderr, "note: %d types skipped for host extent bugs\n", host_extent_bugs);
    return ft_finish();
}

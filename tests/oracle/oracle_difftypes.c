/*
 * Memory datatypes for the I/O differential harness, each built together
 * with its stream map from the constructor's definition (MPI-3.1 4.1), so
 * the map does not depend on any MPI's pack code. Extents and lower bounds
 * of the pieces come from the host (MPI_Type_get_extent_x), which keeps
 * struct alignment padding out of this file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"
#include "oracle_diff.h"

static int pick(uint64_t *state, int n)
{
    return (int)(ft_rand(state) % (uint64_t)n);
}

static void finish(od_type_t *t)
{
    MPI_Type_commit(&t->type);
    MPI_Count size;
    MPI_Type_size_x(t->type, &size);
    MPI_Type_get_extent_x(t->type, &t->lb, &t->extent);
    if (size != t->size) ft_fail(__FILE__, __LINE__, "type %s: size %lld, map has %lld", t->desc, (long long)size,
                                 (long long)t->size);
}

void od_type_named(od_type_t *t, MPI_Datatype type)
{
    static const struct {
        MPI_Datatype type;
        const char *name;
    } names[] = {{MPI_BYTE, "BYTE"}, {MPI_SHORT, "SHORT"}, {MPI_INT, "INT"}, {MPI_DOUBLE, "DOUBLE"}};
    memset(t, 0, sizeof *t);
    t->type = type;
    MPI_Type_size_x(type, &t->size);
    MPI_Type_get_extent_x(type, &t->lb, &t->extent);
    t->map = malloc((size_t)t->size * sizeof *t->map);
    for (MPI_Count k = 0; k < t->size; k++) t->map[k] = k;
    snprintf(t->desc, sizeof t->desc, "?");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].type == type) snprintf(t->desc, sizeof t->desc, "%s", names[i].name);
}

/* Appends child's map placed at byte displacement `at` to t's map. */
static void place(od_type_t *t, const od_type_t *child, MPI_Count at)
{
    t->map = realloc(t->map, (size_t)(t->size + child->size) * sizeof *t->map);
    for (MPI_Count k = 0; k < child->size; k++) t->map[t->size + k] = at + child->map[k];
    t->size += child->size;
    t->negative_lb_inside |= child->negative_lb_inside;
}

static void make_vector(od_type_t *t, const od_type_t *c, uint64_t *state, int bytes_stride)
{
    int count = 1 + pick(state, 3), blocklen = 1 + pick(state, 3), gap = pick(state, 3);
    MPI_Aint stride_bytes = (MPI_Aint)(blocklen + gap) * c->extent + (bytes_stride ? pick(state, 4) : 0);
    if (bytes_stride)
        MPI_Type_create_hvector(count, blocklen, stride_bytes, c->type, &t->type);
    else
        MPI_Type_vector(count, blocklen, blocklen + gap, c->type, &t->type);
    for (int j = 0; j < count; j++)
        for (int k = 0; k < blocklen; k++) place(t, c, j * stride_bytes + k * c->extent);
    snprintf(t->desc, sizeof t->desc, "%s(%d,%d,%lld%s,%.150s)", bytes_stride ? "hvector" : "vector", count,
             blocklen, (long long)(bytes_stride ? stride_bytes : blocklen + gap), bytes_stride ? "B" : "", c->desc);
}

/* Blocks placed out of order: block j at slot perm[j] of 3 slots. */
static void make_indexed(od_type_t *t, const od_type_t *c, uint64_t *state)
{
    int n = 1 + pick(state, 3), lens[3], displs[3], slot[3] = {0, 1, 2};
    for (int i = 2; i > 0; i--) {
        int j = pick(state, i + 1), tmp = slot[i];
        slot[i] = slot[j];
        slot[j] = tmp;
    }
    int len = 1 + pick(state, 2);
    char *p = t->desc + snprintf(t->desc, sizeof t->desc, "indexed(");
    for (int j = 0; j < n; j++) {
        lens[j] = len;
        displs[j] = slot[j] * (len + 1);
        for (int k = 0; k < len; k++) place(t, c, (MPI_Count)(displs[j] + k) * c->extent);
        p += snprintf(p, 16, "%d@%d,", len, displs[j]);
    }
    MPI_Type_indexed(n, lens, displs, c->type, &t->type);
    snprintf(p, (size_t)(t->desc + sizeof t->desc - p), "%.150s)", c->desc);
}

/* { c1 at 0, c2 after c1 and a gap }, possibly followed by a trailing gap. */
static void make_struct(od_type_t *t, const od_type_t *c1, const od_type_t *c2, uint64_t *state)
{
    MPI_Aint d2 = (MPI_Aint)(c1->lb + c1->extent) + 8 * pick(state, 2);
    int lens[2] = {1, 1};
    MPI_Aint displs[2] = {0, d2 - (MPI_Aint)c2->lb};
    MPI_Datatype types[2] = {c1->type, c2->type};
    MPI_Type_create_struct(2, lens, displs, types, &t->type);
    place(t, c1, 0);
    place(t, c2, displs[1]);
    snprintf(t->desc, sizeof t->desc, "struct(%.90s@0,%.90s@%lld)", c1->desc, c2->desc, (long long)displs[1]);
}

/* Resized with a negative lower bound: elements start `shift` bytes before the data. */
static void make_resized(od_type_t *t, const od_type_t *c, uint64_t *state)
{
    MPI_Count tlb, textent;
    MPI_Type_get_true_extent_x(c->type, &tlb, &textent);
    MPI_Aint shift = 4 * (1 + pick(state, 2));
    MPI_Aint extent = (MPI_Aint)(tlb + textent) + shift + 4 * pick(state, 2);
    MPI_Type_create_resized(c->type, -shift, extent, &t->type);
    place(t, c, 0);
    t->negative_lb_inside = 1;
    snprintf(t->desc, sizeof t->desc, "resized(%.150s,lb=%lld,extent=%lld)", c->desc, (long long)-shift,
             (long long)extent);
}

static void random_type(od_type_t *t, uint64_t *state, int depth);

static int compare_counts(const void *a, const void *b)
{
    MPI_Count x = *(const MPI_Count *)a, y = *(const MPI_Count *)b;
    return (x > y) - (x < y);
}

/* Whether two stream bytes of one element share a memory byte. */
static int overlaps_itself(const od_type_t *t)
{
    MPI_Count *sorted = malloc((size_t)(t->size + 1) * sizeof *sorted);
    memcpy(sorted, t->map, (size_t)t->size * sizeof *sorted);
    qsort(sorted, (size_t)t->size, sizeof *sorted, compare_counts);
    int twice = 0;
    for (MPI_Count k = 1; k < t->size && !twice; k++) twice = sorted[k] == sorted[k - 1];
    free(sorted);
    return twice;
}

/* Only types whose data lies inside [lb, lb + extent), with no memory byte
 * twice in an element: elements never overlap, so reading into them is not
 * erroneous, and memory holds every stream byte the models expect.
 * (Explicit lower bounds from a resized child decide a struct's bounds
 * alone, MPI-3.1 4.1.7, which can leave a child's data outside them and
 * under the next member's.) */
void od_type_random(od_type_t *t, uint64_t *state, int depth)
{
    for (;;) {
        random_type(t, state, depth);
        MPI_Count tlb, textent;
        MPI_Type_get_true_extent_x(t->type, &tlb, &textent);
        if (tlb >= t->lb && tlb + textent <= t->lb + t->extent && !overlaps_itself(t)) return;
        od_type_free(t);
    }
}

static void random_type(od_type_t *t, uint64_t *state, int depth)
{
    static MPI_Datatype named[4];
    named[0] = MPI_BYTE, named[1] = MPI_SHORT, named[2] = MPI_INT, named[3] = MPI_DOUBLE;
    int kind = depth > 0 ? pick(state, 8) : 0;
    if (kind <= 1) {
        od_type_named(t, named[pick(state, 4)]);
        return;
    }
    od_type_t c, c2;
    random_type(&c, state, depth - 1);
    memset(t, 0, sizeof *t);
    switch (kind) {
    case 2: {
        int n = 1 + pick(state, 4);
        MPI_Type_contiguous(n, c.type, &t->type);
        for (int i = 0; i < n; i++) place(t, &c, i * c.extent);
        snprintf(t->desc, sizeof t->desc, "contiguous(%d,%.150s)", n, c.desc);
        break;
    }
    case 3: make_vector(t, &c, state, 0); break;
    case 4: make_vector(t, &c, state, 1); break;
    case 5: make_indexed(t, &c, state); break;
    case 6:
        random_type(&c2, state, depth - 1);
        make_struct(t, &c, &c2, state);
        od_type_free(&c2);
        break;
    default: make_resized(t, &c, state); break;
    }
    od_type_free(&c);
    finish(t);
}

void od_type_free(od_type_t *t)
{
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(t->type, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED) MPI_Type_free(&t->type);
    free(t->map);
    t->map = NULL;
}

void od_type_span(const od_type_t *t, MPI_Count count, MPI_Count *lo, MPI_Count *hi)
{
    *lo = 0;
    *hi = 0;
    for (MPI_Count s = 0; s < count * t->size; s++) {
        MPI_Count at = od_type_byte(t, s);
        if (s == 0 || at < *lo) *lo = at;
        if (s == 0 || at + 1 > *hi) *hi = at + 1;
    }
}

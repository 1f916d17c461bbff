/*
 * Tree construction with normalization.
 *
 * Every constructor takes ownership of the nodes and arrays it is given and
 * returns the simplest equivalent node: empty pieces vanish (NULL), count-1
 * repetitions become their child, contiguous repetitions become one LEAF,
 * vectors of vectors whose strides line up fold into one, touching byte runs
 * merge, evenly spaced equal runs become a VEC. None of these reorders the
 * stream. `finish` recomputes a node's derived fields (size, lo, hi,
 * monotone) from its shape.
 */
#include <string.h>

#include "base/alloc.h"
#include "datatype/datatype_int.h"
#include "error/error.h"

static int no_mem(void)
{
    return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory decoding a datatype");
}

static ferry__dt_node_t *new_node(ferry__dt_kind_t kind)
{
    ferry__dt_node_t *node = ferry__calloc(1, sizeof *node);
    if (node) node->kind = kind;
    return node;
}

/* The bytes touched by lens copies of child at d + j * child->extent. */
static void span_of(const ferry__dt_node_t *child, MPI_Count d, MPI_Count n, MPI_Count stride, MPI_Count *lo,
                    MPI_Count *hi)
{
    MPI_Count last = (n - 1) * stride;
    *lo = d + child->lo + (last < 0 ? last : 0);
    *hi = d + child->hi + (last > 0 ? last : 0);
}

static int rep_monotone(const ferry__dt_node_t *child, MPI_Count n, MPI_Count stride)
{
    return child->monotone && (n == 1 || stride >= child->hi - child->lo);
}

static void finish_list(ferry__dt_node_t *node)
{
    const ferry__dt_node_t *c = node->child;
    node->monotone = !c || c->monotone;
    MPI_Count prev_hi = 0;
    for (MPI_Count i = 0; i < node->count; i++) {
        MPI_Count lo, hi;
        MPI_Count len = node->lens ? node->lens[i] : node->uniform;
        if (c) {
            span_of(c, node->disps[i], len, c->extent, &lo, &hi);
            node->monotone &= rep_monotone(c, len, c->extent);
        } else {
            lo = node->disps[i];
            hi = lo + len;
        }
        if (i > 0 && lo < prev_hi) node->monotone = 0;
        node->lo = i == 0 || lo < node->lo ? lo : node->lo;
        node->hi = i == 0 || hi > node->hi ? hi : node->hi;
        prev_hi = hi;
        if (node->prefix) node->prefix[i + 1] = node->prefix[i] + len * (c ? c->size : 1);
    }
    node->size = ferry__dt_before(node, node->count);
}

static void finish_seq(ferry__dt_node_t *node)
{
    node->monotone = 1;
    for (MPI_Count i = 0; i < node->count; i++) {
        const ferry__dt_node_t *p = node->parts[i];
        if (!p->monotone || (i > 0 && p->lo < node->parts[i - 1]->hi)) node->monotone = 0;
        node->lo = i == 0 || p->lo < node->lo ? p->lo : node->lo;
        node->hi = i == 0 || p->hi > node->hi ? p->hi : node->hi;
        node->prefix[i + 1] = node->prefix[i] + p->size;
    }
    node->size = node->prefix[node->count];
}

/* Derived fields, with disp applied last so lo/hi include it. */
static void finish(ferry__dt_node_t *node)
{
    switch (node->kind) {
    case FERRY__DT_LEAF:
        node->lo = 0;
        node->hi = node->size;
        node->monotone = 1;
        node->copy = ferry__dt_copy_for(node->size);
        node->copy2 = ferry__dt_copy2_for(node->size);
        break;
    case FERRY__DT_VEC:
        node->size = node->count * node->child->size;
        span_of(node->child, 0, node->count, node->stride, &node->lo, &node->hi);
        node->monotone = rep_monotone(node->child, node->count, node->stride);
        break;
    case FERRY__DT_LIST: finish_list(node); break;
    case FERRY__DT_SEQ: finish_seq(node); break;
    }
    node->lo += node->disp;
    node->hi += node->disp;
}

void ferry__dt_shift(ferry__dt_node_t *node, MPI_Count delta)
{
    node->disp += delta;
    node->lo += delta;
    node->hi += delta;
}

int ferry__dt_leaf(MPI_Count disp, MPI_Count len, MPI_Count extent, ferry__dt_node_t **out)
{
    *out = NULL;
    if (len == 0) return 0;
    ferry__dt_node_t *node = new_node(FERRY__DT_LEAF);
    if (!node) return no_mem();
    node->disp = disp;
    node->size = len;
    node->extent = extent;
    finish(node);
    *out = node;
    return 0;
}

int ferry__dt_rep(MPI_Count n, MPI_Count stride, ferry__dt_node_t *child, ferry__dt_node_t **out)
{
    *out = NULL;
    if (!child || n == 0) {
        ferry__dt_node_free(child);
        return 0;
    }
    if (n == 1) {
        *out = child;
        return 0;
    }
    MPI_Count extent = n * stride;
    if (child->kind == FERRY__DT_LEAF && stride == child->size) {
        child->size *= n;
    } else if (child->kind == FERRY__DT_VEC && child->count * child->stride == stride) {
        child->count *= n;
    } else {
        ferry__dt_node_t *node = new_node(FERRY__DT_VEC);
        if (!node) {
            ferry__dt_node_free(child);
            return no_mem();
        }
        node->count = n;
        node->stride = stride;
        node->child = child;
        child = node;
    }
    finish(child);
    child->extent = extent;
    *out = child;
    return 0;
}

/* A LIST or SEQ node of n entries with its prefix array, or NULL. */
static ferry__dt_node_t *new_indexed(ferry__dt_kind_t kind, MPI_Count n)
{
    ferry__dt_node_t *node = new_node(kind);
    MPI_Count *prefix = ferry__calloc((size_t)n + 1, sizeof *prefix);
    if (!node || !prefix) {
        ferry__free(node);
        ferry__free(prefix);
        return NULL;
    }
    node->count = n;
    node->prefix = prefix;
    return node;
}

/* Completes a LIST or SEQ node; its extent is its span until the decoder
 * sets the host's. */
static int publish(ferry__dt_node_t *node, ferry__dt_node_t **out)
{
    finish(node);
    node->extent = node->hi - node->lo;
    *out = node;
    return 0;
}

/* Drops empty entries and merges touching byte runs; returns the new count. */
static MPI_Count compact_runs(MPI_Count n, MPI_Count *disps, MPI_Count *lens, int bytes)
{
    MPI_Count k = 0;
    for (MPI_Count i = 0; i < n; i++) {
        if (lens[i] == 0) continue;
        if (bytes && k > 0 && disps[k - 1] + lens[k - 1] == disps[i]) {
            lens[k - 1] += lens[i];
            continue;
        }
        disps[k] = disps[i];
        lens[k] = lens[i];
        k++;
    }
    return k;
}

static int same_lengths(MPI_Count n, const MPI_Count *lens)
{
    for (MPI_Count i = 1; i < n; i++)
        if (lens[i] != lens[0]) return 0;
    return 1;
}

/* True when n >= 2 entries have equal lengths and equal spacing. */
static int evenly_spaced(MPI_Count n, const MPI_Count *disps, const MPI_Count *lens)
{
    if (n < 2) return 0;
    for (MPI_Count i = 1; i < n; i++)
        if (lens[i] != lens[0] || disps[i] - disps[i - 1] != disps[1] - disps[0]) return 0;
    return 1;
}

/* One entry or a regular list: a rep of reps, shifted to disps[0]. */
static int list_as_rep(MPI_Count n, MPI_Count *disps, MPI_Count *lens, ferry__dt_node_t *child,
                       ferry__dt_node_t **out)
{
    MPI_Count first = disps[0], len = lens[0], spacing = n > 1 ? disps[1] - disps[0] : 0;
    ferry__free(disps);
    ferry__free(lens);
    ferry__dt_node_t *block;
    if (child) {
        FERRY_TRY(ferry__dt_rep(len, child->extent, child, &block));
    } else {
        FERRY_TRY(ferry__dt_leaf(0, len, len, &block));
    }
    FERRY_TRY(ferry__dt_rep(n, spacing, block, out));
    ferry__dt_shift(*out, first);
    return 0;
}

int ferry__dt_list(MPI_Count n, MPI_Count *disps, MPI_Count *lens, ferry__dt_node_t *child,
                   ferry__dt_node_t **out)
{
    *out = NULL;
    if (child && child->kind == FERRY__DT_LEAF && child->extent == child->size) {
        for (MPI_Count i = 0; i < n; i++) {
            disps[i] += child->disp;
            lens[i] *= child->size;
        }
        ferry__dt_node_free(child);
        child = NULL;
    }
    n = compact_runs(n, disps, lens, child == NULL);
    if (n == 0) {
        ferry__free(disps);
        ferry__free(lens);
        ferry__dt_node_free(child);
        return 0;
    }
    if (n == 1 || evenly_spaced(n, disps, lens)) return list_as_rep(n, disps, lens, child, out);
    int uniform = same_lengths(n, lens);
    ferry__dt_node_t *node = uniform ? new_node(FERRY__DT_LIST) : new_indexed(FERRY__DT_LIST, n);
    if (!node) {
        ferry__free(disps);
        ferry__free(lens);
        ferry__dt_node_free(child);
        return no_mem();
    }
    node->count = n;
    node->disps = disps;
    node->uniform = lens[0];
    node->lens = uniform ? NULL : lens;
    node->child = child;
    publish(node, out);
    node->lens = NULL; /* the prefix array has the lengths now */
    ferry__free(lens);
    return 0;
}

/* Runs of a part made only of bytes: a LEAF or a byte LIST (0 otherwise). */
static MPI_Count byte_runs(const ferry__dt_node_t *p)
{
    if (p->kind == FERRY__DT_LEAF) return 1;
    if (p->kind == FERRY__DT_LIST && !p->child) return p->count;
    return 0;
}

/* All parts are bytes: one byte LIST of their runs, in stream order. */
static int seq_as_list(MPI_Count n, ferry__dt_node_t **parts, MPI_Count runs, ferry__dt_node_t **out)
{
    MPI_Count *disps = ferry__malloc((size_t)runs * sizeof *disps);
    MPI_Count *lens = ferry__malloc((size_t)runs * sizeof *lens);
    int rc = disps && lens ? 0 : no_mem();
    MPI_Count k = 0;
    for (MPI_Count i = 0; i < n && rc == 0; i++) {
        const ferry__dt_node_t *p = parts[i];
        for (MPI_Count r = 0; r < byte_runs(p); r++, k++) {
            disps[k] = p->disp + (p->kind == FERRY__DT_LEAF ? 0 : p->disps[r]);
            lens[k] = p->kind == FERRY__DT_LEAF ? p->size : ferry__dt_len(p, r);
        }
    }
    for (MPI_Count i = 0; i < n; i++) ferry__dt_node_free(parts[i]);
    ferry__free(parts);
    if (rc != 0) {
        ferry__free(disps);
        ferry__free(lens);
        return rc;
    }
    return ferry__dt_list(runs, disps, lens, NULL, out);
}

int ferry__dt_seq(MPI_Count n, ferry__dt_node_t **parts, ferry__dt_node_t **out)
{
    *out = NULL;
    MPI_Count k = 0, runs = 0;
    int all_bytes = 1;
    for (MPI_Count i = 0; i < n; i++) {
        if (!parts[i]) continue;
        parts[k++] = parts[i];
        runs += byte_runs(parts[i]);
        all_bytes &= byte_runs(parts[i]) > 0;
    }
    if (k <= 1) {
        *out = k == 1 ? parts[0] : NULL;
        ferry__free(parts);
        return 0;
    }
    if (all_bytes) return seq_as_list(k, parts, runs, out);
    ferry__dt_node_t *node = new_indexed(FERRY__DT_SEQ, k);
    if (!node) {
        for (MPI_Count i = 0; i < k; i++) ferry__dt_node_free(parts[i]);
        ferry__free(parts);
        return no_mem();
    }
    node->parts = parts;
    return publish(node, out);
}

void ferry__dt_node_free(ferry__dt_node_t *node)
{
    if (!node) return;
    ferry__dt_node_free(node->child);
    for (MPI_Count i = 0; node->parts && i < node->count; i++) ferry__dt_node_free(node->parts[i]);
    ferry__free(node->parts);
    ferry__free(node->disps);
    ferry__free(node->lens);
    ferry__free(node->prefix);
    ferry__free(node);
}

static int copy_array(const MPI_Count *src, MPI_Count n, MPI_Count **dst)
{
    *dst = NULL;
    if (!src) return 0;
    *dst = ferry__malloc((size_t)n * sizeof **dst);
    if (!*dst) return no_mem();
    memcpy(*dst, src, (size_t)n * sizeof **dst);
    return 0;
}

int ferry__dt_clone(const ferry__dt_node_t *node, ferry__dt_node_t **out)
{
    *out = NULL;
    if (!node) return 0;
    ferry__dt_node_t *copy = ferry__malloc(sizeof *copy);
    if (!copy) return no_mem();
    *copy = *node;
    copy->child = NULL;
    copy->parts = NULL;
    copy->disps = copy->lens = copy->prefix = NULL;
    int rc = ferry__dt_clone(node->child, &copy->child);
    if (rc == 0) rc = copy_array(node->disps, node->count, &copy->disps);
    if (rc == 0) rc = copy_array(node->lens, node->count, &copy->lens);
    if (rc == 0) rc = copy_array(node->prefix, node->count + 1, &copy->prefix);
    if (rc == 0 && node->parts) {
        copy->parts = ferry__calloc((size_t)node->count, sizeof *copy->parts);
        rc = copy->parts ? 0 : no_mem();
        for (MPI_Count i = 0; rc == 0 && i < node->count; i++) rc = ferry__dt_clone(node->parts[i], &copy->parts[i]);
    }
    if (rc != 0) {
        if (!copy->parts) copy->count = 0;
        ferry__dt_node_free(copy);
        return rc;
    }
    *out = copy;
    return 0;
}

void ferry__dt_footprint(const ferry__dt_node_t *node, size_t *nodes, size_t *bytes)
{
    if (!node) return;
    *nodes += 1;
    *bytes += sizeof *node;
    if (node->disps) *bytes += (size_t)node->count * sizeof(MPI_Count);
    if (node->lens) *bytes += (size_t)node->count * sizeof(MPI_Count);
    if (node->prefix) *bytes += ((size_t)node->count + 1) * sizeof(MPI_Count);
    if (node->parts) *bytes += (size_t)node->count * sizeof(node->parts[0]);
    ferry__dt_footprint(node->child, nodes, bytes);
    for (MPI_Count i = 0; node->parts && i < node->count; i++) ferry__dt_footprint(node->parts[i], nodes, bytes);
}

MPI_Count ferry__dt_entry(const ferry__dt_node_t *nd, MPI_Count r)
{
    if (!nd->prefix) return r / (nd->uniform * (nd->child ? nd->child->size : 1));
    MPI_Count lo = 0, hi = nd->count - 1;
    while (lo < hi) {
        MPI_Count mid = lo + (hi - lo + 1) / 2;
        if (nd->prefix[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

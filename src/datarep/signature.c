/*
 * Type signatures as trees. Every combiner but struct repeats one old type
 * (contiguous, vector, indexed, subarray, darray, resized, dup...), so its
 * signature is REP(size / old size, old) whatever the displacements; a
 * struct is a SEQ of REP(blocklength_i, type_i). The tree therefore has one
 * node per struct entry and per nesting level, never per block, and a
 * stream position is found in O(depth * log entries).
 */
#include "core/core.h"
#include "datarep/datarep_int.h"
#include "error/error.h"

enum { LEAF, REP, SEQ };

static int no_mem(void)
{
    return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory reading a datatype's signature");
}

void ferry__dr_sig_free(ferry__dr_sig_t *sig)
{
    if (!sig) return;
    for (MPI_Count i = 0; sig->kind != LEAF && i < (sig->kind == REP ? 1 : sig->n); i++)
        ferry__dr_sig_free(sig->parts[i]);
    ferry__free(sig->parts);
    ferry__free(sig->prefix);
    ferry__free(sig);
}

static int make_leaf(const ferry__datarep_t *rep, MPI_Datatype type, int combiner, ferry__dr_sig_t **out)
{
    ferry__dr_sig_t *s = ferry__calloc(1, sizeof *s);
    if (!s) return no_mem();
    int rc = ferry__dr_basic(rep, type, combiner, &s->leaf);
    if (rc != 0 || s->leaf.msize == 0) {
        ferry__free(s);
        return rc;
    }
    s->kind = LEAF;
    s->size = (ferry__dr_pos_t){s->leaf.msize, s->leaf.fsize, 1};
    s->same_size = s->leaf.msize == s->leaf.fsize;
    *out = s;
    return 0;
}

/* n copies of child (taken). */
static int make_rep(MPI_Count n, ferry__dr_sig_t *child, ferry__dr_sig_t **out)
{
    *out = NULL;
    if (!child || n <= 0) {
        ferry__dr_sig_free(child);
        return 0;
    }
    if (n > 1 && child->kind == REP) {
        child->n *= n;
        child->size = (ferry__dr_pos_t){child->size.m * n, child->size.f * n, child->size.i * n};
    } else if (n > 1) {
        ferry__dr_sig_t *s = ferry__calloc(1, sizeof *s);
        if (!s || !(s->parts = ferry__malloc(sizeof *s->parts))) {
            ferry__free(s);
            ferry__dr_sig_free(child);
            return no_mem();
        }
        s->kind = REP;
        s->n = n;
        s->parts[0] = child;
        s->size = (ferry__dr_pos_t){child->size.m * n, child->size.f * n, child->size.i * n};
        s->same_size = child->same_size;
        child = s;
    }
    *out = child;
    return 0;
}

/* n parts in stream order (array and parts taken; NULL parts dropped). */
static int make_seq(MPI_Count n, ferry__dr_sig_t **parts, ferry__dr_sig_t **out)
{
    MPI_Count k = 0;
    for (MPI_Count i = 0; i < n; i++)
        if (parts[i]) parts[k++] = parts[i];
    *out = k == 1 ? parts[0] : NULL;
    if (k <= 1) {
        ferry__free(parts);
        return 0;
    }
    ferry__dr_sig_t *s = ferry__calloc(1, sizeof *s);
    if (!s || !(s->prefix = ferry__malloc((size_t)(k + 1) * sizeof *s->prefix))) {
        if (s) ferry__free(s);
        for (MPI_Count i = 0; i < k; i++) ferry__dr_sig_free(parts[i]);
        ferry__free(parts);
        return no_mem();
    }
    s->kind = SEQ;
    s->n = k;
    s->parts = parts;
    s->same_size = 1;
    s->prefix[0] = (ferry__dr_pos_t){0, 0, 0};
    for (MPI_Count i = 0; i < k; i++) {
        s->prefix[i + 1] = (ferry__dr_pos_t){s->prefix[i].m + parts[i]->size.m, s->prefix[i].f + parts[i]->size.f,
                                             s->prefix[i].i + parts[i]->size.i};
        s->same_size &= parts[i]->same_size;
    }
    s->size = s->prefix[k];
    *out = s;
    return 0;
}

static int build(const ferry__datarep_t *rep, MPI_Datatype type, ferry__dr_sig_t **out);

static int build_struct(const ferry__datarep_t *rep, ferry__dr_contents_t *c, ferry__dr_sig_t **out)
{
    MPI_Count n = ferry__dr_arg_count(c);
    if (n > c->nd) return ferry__error_set(MPI_ERR_TYPE, "ferry: struct contents lack types");
    ferry__dr_sig_t **parts = ferry__calloc((size_t)n + 1, sizeof *parts);
    if (!parts) return no_mem();
    int rc = 0;
    for (MPI_Count i = 0; i < n; i++) {
        MPI_Count len = ferry__dr_arg_count(c);
        ferry__dr_sig_t *child = NULL;
        if (rc == 0) rc = build(rep, c->types[i], &child);
        if (rc == 0) rc = make_rep(len, child, &parts[i]);
    }
    if (rc == 0) return make_seq(n, parts, out);
    for (MPI_Count i = 0; i < n; i++) ferry__dr_sig_free(parts[i]);
    ferry__free(parts);
    return rc;
}

static int build_repeat(const ferry__datarep_t *rep, MPI_Datatype type, ferry__dr_contents_t *c,
                        ferry__dr_sig_t **out)
{
    MPI_Count total = 0;
    ferry__dr_sig_t *child = NULL;
    if (MPI_Type_size_x(type, &total) != MPI_SUCCESS || total == MPI_UNDEFINED)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: cannot get a datatype's size");
    if (total == 0) return 0;
    if (c->nd < 1) return ferry__error_set(MPI_ERR_TYPE, "ferry: datatype contents lack a child type");
    FERRY_TRY(build(rep, c->types[0], &child));
    if (!child || total % child->size.m != 0) {
        ferry__dr_sig_free(child);
        return ferry__error_set(MPI_ERR_TYPE, "ferry: datatype size is not a multiple of its old type's");
    }
    return make_rep(total / child->size.m, child, out);
}

static int build(const ferry__datarep_t *rep, MPI_Datatype type, ferry__dr_sig_t **out)
{
    ferry__dr_contents_t c;
    *out = NULL;
    int rc = ferry__dr_contents_get(type, &c);
    if (rc == 0 && ferry__dr_predefined(c.combiner)) rc = make_leaf(rep, type, c.combiner, out);
    else if (rc == 0 && c.combiner == MPI_COMBINER_STRUCT) rc = build_struct(rep, &c, out);
    else if (rc == 0) rc = build_repeat(rep, type, &c, out);
    ferry__dr_contents_release(&c);
    return rc;
}

int ferry__dr_sig_build(const ferry__datarep_t *rep, MPI_Datatype type, ferry__dr_sig_t **sig)
{
    if (type == MPI_DATATYPE_NULL) return ferry__error_set(MPI_ERR_TYPE, "ferry: MPI_DATATYPE_NULL");
    return build(rep, type, sig);
}

/* Index of the SEQ part holding file byte f. */
static MPI_Count find_part(const ferry__dr_sig_t *s, MPI_Count f)
{
    MPI_Count lo = 0, hi = s->n - 1;
    while (lo < hi) {
        MPI_Count mid = lo + (hi - lo + 1) / 2;
        if (s->prefix[mid].f <= f) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

void ferry__dr_locate(const ferry__dr_sig_t *sig, MPI_Count count, MPI_Count f, ferry__dr_spot_t *spot)
{
    const ferry__dr_sig_t *s = sig;
    MPI_Count copies = count;
    ferry__dr_pos_t at = {0, 0, 0};
    for (;;) {
        MPI_Count k = s->size.f > 0 ? f / s->size.f : 0;
        if (k >= copies) k = copies - 1; /* items of file size 0 (user representations) */
        f -= k * s->size.f;
        at.m += k * s->size.m, at.f += k * s->size.f, at.i += k * s->size.i;
        if (s->kind == LEAF) {
            spot->leaf = &s->leaf;
            spot->at = at;
            spot->run = copies - k;
            return;
        }
        if (s->kind == REP) {
            copies = s->n;
            s = s->parts[0];
            continue;
        }
        MPI_Count j = find_part(s, f);
        f -= s->prefix[j].f;
        at.m += s->prefix[j].m, at.f += s->prefix[j].f, at.i += s->prefix[j].i;
        copies = 1;
        s = s->parts[j];
    }
}

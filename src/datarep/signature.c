/*
 * Type signatures as trees. Every combiner but struct repeats one old type
 * (contiguous, vector, indexed, subarray, darray, resized, dup...), so its
 * signature is REP(size / old size, old) whatever the displacements; a
 * struct is a SEQ of REP(blocklength_i, type_i). The tree therefore has one
 * node per struct entry and per nesting level, never per block, and a
 * stream position is found in O(depth * log entries).
 */
#include "base/alloc.h"
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
    ferry__free(sig->runs);
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
    MPI_Count n = ferry__datatype_arg_count(c);
    if (n > c->nd) return ferry__error_set(MPI_ERR_TYPE, "ferry: struct contents lack types");
    ferry__dr_sig_t **parts = ferry__calloc((size_t)n + 1, sizeof *parts);
    if (!parts) return no_mem();
    int rc = 0;
    for (MPI_Count i = 0; i < n; i++) {
        MPI_Count len = ferry__datatype_arg_count(c);
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
    if (rc == 0 && ferry__datatype_predefined_combiner(c.combiner)) rc = make_leaf(rep, type, c.combiner, out);
    else if (rc == 0 && c.combiner == MPI_COMBINER_STRUCT) rc = build_struct(rep, &c, out);
    else if (rc == 0) rc = build_repeat(rep, type, &c, out);
    ferry__datatype_contents_release(&c);
    return rc;
}

/* Appends s's runs (copies times) to runs[*n] at *at; 0 when more than
 * FERRY__DR_RUNS would be needed or an item has no file bytes. */
static int flatten(const ferry__dr_sig_t *s, MPI_Count copies, ferry__dr_run_t *runs, MPI_Count *n,
                   ferry__dr_pos_t *at)
{
    if (s->kind == LEAF) {
        if (s->leaf.fsize == 0) return 0;
        if (*n > 0 && runs[*n - 1].leaf == &s->leaf) {
            runs[*n - 1].n += copies;
        } else {
            if (*n == FERRY__DR_RUNS) return 0;
            runs[(*n)++] = (ferry__dr_run_t){&s->leaf, copies, *at};
        }
        at->m += copies * s->size.m, at->f += copies * s->size.f, at->i += copies;
        return 1;
    }
    if (s->kind == REP && s->parts[0]->kind == LEAF) return flatten(s->parts[0], copies * s->n, runs, n, at);
    MPI_Count reps = s->kind == REP ? s->n : 1;
    if (copies > FERRY__DR_RUNS || reps > FERRY__DR_RUNS) return 0;
    for (MPI_Count c = 0; c < copies * reps; c++)
        for (MPI_Count j = 0; j < (s->kind == REP ? 1 : s->n); j++)
            if (!flatten(s->parts[j], 1, runs, n, at)) return 0;
    return 1;
}

int ferry__dr_sig_build(const ferry__datarep_t *rep, MPI_Datatype type, ferry__dr_sig_t **sig)
{
    if (type == MPI_DATATYPE_NULL) return ferry__error_set(MPI_ERR_TYPE, "ferry: MPI_DATATYPE_NULL");
    FERRY_TRY(build(rep, type, sig));
    ferry__dr_sig_t *s = *sig;
    if (!s || s->kind == LEAF || (s->kind == REP && s->parts[0]->kind == LEAF)) return 0; /* one run already */
    ferry__dr_run_t *runs = ferry__malloc(FERRY__DR_RUNS * sizeof *runs);
    ferry__dr_pos_t at = {0, 0, 0};
    MPI_Count n = 0;
    if (runs && flatten(s, 1, runs, &n, &at)) {
        ferry__dr_run_t *fit = ferry__realloc(runs, (size_t)n * sizeof *runs);
        s->runs = fit ? fit : runs, s->nruns = n;
    } else {
        ferry__free(runs); /* no flat form: locating descends the tree */
    }
    return 0;
}

/* The run holding file byte f of one element. */
static MPI_Count find_run(const ferry__dr_sig_t *s, MPI_Count f)
{
    MPI_Count lo = 0, hi = s->nruns - 1;
    while (lo < hi) {
        MPI_Count mid = lo + (hi - lo + 1) / 2;
        if (s->runs[mid].at.f <= f) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

static void locate_flat(const ferry__dr_sig_t *s, MPI_Count count, MPI_Count f, ferry__dr_spot_t *spot)
{
    MPI_Count e = f / s->size.f;
    if (e >= count) e = count - 1;
    f -= e * s->size.f;
    MPI_Count index = find_run(s, f);
    const ferry__dr_run_t *r = &s->runs[index];
    MPI_Count k = (f - r->at.f) / r->leaf->fsize;
    if (k >= r->n) k = r->n - 1;
    spot->leaf = r->leaf;
    spot->at = (ferry__dr_pos_t){e * s->size.m + r->at.m + k * r->leaf->msize,
                                 e * s->size.f + r->at.f + k * r->leaf->fsize, e * s->size.i + r->at.i + k};
    spot->run = r->n - k;
    spot->elem = e, spot->index = index;
}

void ferry__dr_next_run(const ferry__dr_sig_t *s, ferry__dr_spot_t *spot)
{
    MPI_Count e = spot->elem, index = spot->index + 1;
    if (index == s->nruns) index = 0, e++;
    const ferry__dr_run_t *r = &s->runs[index];
    spot->leaf = r->leaf;
    spot->at = (ferry__dr_pos_t){e * s->size.m + r->at.m, e * s->size.f + r->at.f, e * s->size.i + r->at.i};
    spot->run = r->n;
    spot->elem = e, spot->index = index;
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
    if (sig->runs) {
        locate_flat(sig, count, f, spot);
        return;
    }
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

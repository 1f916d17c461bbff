/*
 * Definitions agreed across ranks. ferry_ckpt_def_dim and ferry_ckpt_def_var
 * are local; every collective call of a set (write, restart, read) begins with
 * one reduction that carries each rank's local error, a hash of its
 * definitions and of the call itself (which call, which step or file), and
 * whether blocks changed since they were last shared:
 *
 *   - a rank's error (a NULL argument, a bad step) fails the call everywhere;
 *   - hashes that differ (a variable more on one rank, a dimension length, a
 *     type, a strategy, another step) fail it everywhere with
 *     MPI_ERR_NOT_SAME naming the first difference: rank 0 broadcasts its
 *     definitions as text and every rank compares its own line by line;
 *   - after new definitions, one allgather shares every rank's block of every
 *     variable; before each write every rank checks its own block against
 *     all others (ferry__ckpt_check_overlaps): overlapping blocks are MPI_ERR_ARG
 *     naming the variable and both ranks (a read may overlap).
 *
 * Ranks that disagree therefore never reach a collective the others do not
 * call (before, a variable more on rank 0 hung every rank).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"
#include "progress/progress.h"

static const char *const strategy_names[] = {"steer", "stack", "gather"};

static void put_text(ferry__ckpt_bytes_t *b, const char *fmt, ...) FERRY_PRINTF(2, 3);

/* Appends one NUL-terminated line. */
static void put_text(ferry__ckpt_bytes_t *b, const char *fmt, ...)
{
    char line[1400];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof line) n = (int)sizeof line - 1;
    ferry__ckpt_bytes_put(b, line, (size_t)n + 1);
}


/* One line per attribute: its start for the reader, a hash of all its values for the comparison. */
static void att_lines(const char *owner, const ferry__ckpt_nc_atts_t *atts, ferry__ckpt_bytes_t *b)
{
    for (int i = 0; i < atts->count; i++) {
        const ferry__ckpt_nc_att_t *a = &atts->atts[i];
        size_t bytes = (size_t)a->nelems * (size_t)ferry__ckpt_nc_type_size(a->type);
        char hash[17];
        ferry__ckpt_hex(ferry__ckpt_fnv1a(a->values, bytes), hash);
        int shown = a->type == NC_CHAR ? (int)(a->nelems < 40 ? a->nelems : 40) : 0;
        put_text(b, "attribute %s:%s: %lld %s, '%.*s' (values %s)", owner, a->name, (long long)a->nelems,
                 ferry__ckpt_nc_type_name(a->type), shown, (const char *)a->values, hash);
    }
}

static void var_line(ferry_ckpt_t ck, int i, ferry__ckpt_bytes_t *b)
{
    const ferry__ckpt_var_t *v = &ck->vars[i];
    char dims[1100] = "";
    for (int d = 0; d < v->ndims; d++)
        snprintf(dims + strlen(dims), sizeof dims - strlen(dims), "%s%s", d ? ", " : "", ck->dims[v->dimids[d]].name);
    put_text(b, "variable %d: %s %s(%s)%s%s%s", i, ferry__ckpt_nc_type_name(v->nctype), v->name, dims,
             v->mask ? ", mask '" : "", v->mask ? v->mask : "", v->mask ? "'" : "");
    att_lines(v->name, &v->atts, b);
}

/* Every rank's definitions as lines of text: what the hash covers and the difference is named from. */
static int defs_text(ferry_ckpt_t ck, const char *call, ferry__ckpt_bytes_t *b)
{
    put_text(b, "call: %s", call);
    put_text(b, "options: strategy %s%s, %s transfers, CDF-%d, %s MPI-IO, keep %d, align %lld, stage limit %lld%s",
             ck->automatic ? "auto: " : "", strategy_names[ck->strategy], ck->independent ? "independent" : "collective",
             ck->format == FERRY_CKPT_CDF2 ? 2 : 5, ck->io_kind == FERRY_CKPT_IO_HOST ? "host" : "ferry", ck->keep,
             (long long)ck->align, (long long)ck->stage_limit, ck->series ? ", a series" : "");
    for (int i = 0; i < ck->ndims; i++)
        put_text(b, "dimension %d: %s = %lld", i, ck->dims[i].name, (long long)ck->dims[i].len);
    for (int i = 0; i < ck->nvars; i++) var_line(ck, i, b);
    att_lines("global", &ck->gatts, b);
    att_lines("time", &ck->time_atts, b);
    put_text(b, "end: %d dimensions, %d variables", ck->ndims, ck->nvars);
    return b->failed ? ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for the definitions") : 0;
}

uint64_t ferry__ckpt_fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The line of text after the k-th NUL, or NULL past the end. */
static const char *line_at(const unsigned char *text, size_t len, int k)
{
    size_t at = 0;
    for (int i = 0; i < k && at < len; i++) at += strlen((const char *)text + at) + 1;
    return at < len ? (const char *)text + at : NULL;
}

/* Collective, after the hashes differed: names the first line where this rank's text differs from rank 0's. */
static int name_difference(ferry_ckpt_t ck, const ferry__ckpt_bytes_t *mine, const char *what)
{
    unsigned long long len = mine->len;
    int rc = ferry__progress_bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, ck->comm);
    unsigned char *root = rc == MPI_SUCCESS ? ferry__malloc((size_t)len + 1) : NULL;
    int cls = rc != MPI_SUCCESS ? ferry__error_host(rc, what, ck->base, "MPI_Bcast") : 0;
    if (!cls && !root) cls = ferry__error_set(MPI_ERR_NO_MEM, "%s: no memory to compare the definitions", what);
    cls = ferry__error_agree(ck->comm, cls, what);
    if (!cls && ck->rank == 0) memcpy(root, mine->p, (size_t)len);
    if (!cls && (rc = ferry__progress_bcast(root, (int)len, MPI_BYTE, 0, ck->comm)) != MPI_SUCCESS)
        cls = ferry__error_host(rc, what, ck->base, "MPI_Bcast");
    for (int k = 0; !cls && ck->rank != 0; k++) {
        const char *theirs = line_at(root, (size_t)len, k), *own = line_at(mine->p, mine->len, k);
        if (!theirs && !own) break;
        if (theirs && own && strcmp(theirs, own) == 0) continue;
        cls = ferry__error_set(MPI_ERR_NOT_SAME,
                               "%s on %s: the ranks' definitions or calls differ: rank 0 has '%s', rank %d has '%s'",
                               what, ck->base, theirs ? theirs : "nothing more", ck->rank, own ? own : "nothing more");
    }
    ferry__free(root);
    cls = ferry__error_agree(ck->comm, cls, what);
    return cls ? cls
               : ferry__error_set(MPI_ERR_INTERN, "%s on %s: the definitions' hashes differ but their texts do not",
                                  what, ck->base);
}

/* Whether blocks a and b (start then count, 4-D) share a point. */
static int overlap(const MPI_Offset *a, const MPI_Offset *b)
{
    for (int d = 0; d < FERRY__CKPT_D; d++) {
        MPI_Offset lo = a[d] > b[d] ? a[d] : b[d], hi_a = a[d] + a[FERRY__CKPT_D + d],
                   hi_b = b[d] + b[FERRY__CKPT_D + d];
        if (lo >= (hi_a < hi_b ? hi_a : hi_b)) return 0;
    }
    return 1;
}

/* This rank's block of v against every other rank's. */
static int check_var_overlap(ferry_ckpt_t ck, const ferry__ckpt_var_t *v, const char *what)
{
    const MPI_Offset *mine = &v->blocks[(size_t)ck->rank * 2 * FERRY__CKPT_D];
    for (int r = 0; r < ck->nprocs; r++) {
        const MPI_Offset *theirs = &v->blocks[(size_t)r * 2 * FERRY__CKPT_D];
        if (r == ck->rank || !overlap(mine, theirs)) continue;
        int lead = FERRY__CKPT_D - v->ndims;
        return ferry__error_set(MPI_ERR_ARG,
                                "%s on %s: variable %s: the blocks of ranks %d and %d overlap (they start at "
                                "index %lld and %lld of the first dimension in which the array is %lld long)",
                                what, ck->base, v->name, ck->rank < r ? ck->rank : r, ck->rank < r ? r : ck->rank,
                                (long long)mine[lead], (long long)theirs[lead], (long long)v->global[lead]);
    }
    return 0;
}

/* The stacked offsets of v: prefix sums of the blocks' sizes in rank order. */
static void stack_offsets(ferry_ckpt_t ck, ferry__ckpt_var_t *v)
{
    v->offsets = v->blocks + (size_t)ck->nprocs * 2 * FERRY__CKPT_D;
    v->offsets[0] = 0;
    for (int r = 0; r < ck->nprocs; r++)
        v->offsets[r + 1] = v->offsets[r] + ferry__ckpt_elems(&v->blocks[r * 2 * FERRY__CKPT_D + FERRY__CKPT_D]);
}

/* Collective: every rank's 4-D start and count of every variable, in one allgather. */
static int share_blocks(ferry_ckpt_t ck, const char *what)
{
    size_t per_rank = (size_t)ck->nvars * 2 * FERRY__CKPT_D;
    MPI_Offset *mine = ferry__malloc(per_rank * sizeof *mine + 1),
               *all = ferry__malloc((size_t)ck->nprocs * per_rank * sizeof *all + 1);
    int cls =
        mine && all ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "%s: no memory for %d ranks' blocks", what, ck->nprocs);
    for (int i = 0; i < ck->nvars && !cls; i++) {
        ferry__ckpt_var_t *v = &ck->vars[i];
        memcpy(mine + (size_t)i * 2 * FERRY__CKPT_D, v->start, sizeof v->start);
        memcpy(mine + (size_t)i * 2 * FERRY__CKPT_D + FERRY__CKPT_D, v->count, sizeof v->count);
        ferry__free(v->blocks);
        v->offsets = NULL;
        v->blocks =
            ferry__malloc(((size_t)ck->nprocs * 2 * FERRY__CKPT_D + (size_t)ck->nprocs + 1) * sizeof *v->blocks);
        if (!v->blocks) cls = ferry__error_set(MPI_ERR_NO_MEM, "%s: no memory for %d ranks' blocks", what, ck->nprocs);
    }
    cls = ferry__error_agree(ck->comm, cls, what);
    int rc = cls ? MPI_SUCCESS
                 : ferry__progress_allgather(mine, (int)per_rank, MPI_OFFSET, all, (int)per_rank, MPI_OFFSET, ck->comm);
    if (!cls && rc != MPI_SUCCESS) cls = ferry__error_host(rc, what, ck->base, "MPI_Allgather");
    for (int i = 0; i < ck->nvars && !cls; i++) {
        ferry__ckpt_var_t *v = &ck->vars[i];
        for (int r = 0; r < ck->nprocs; r++)
            memcpy(&v->blocks[(size_t)r * 2 * FERRY__CKPT_D],
                   all + (size_t)r * per_rank + (size_t)i * 2 * FERRY__CKPT_D, 2 * FERRY__CKPT_D * sizeof *all);
        stack_offsets(ck, v);
    }
    ferry__free(mine);
    ferry__free(all);
    cls = ferry__error_agree(ck->comm, cls, what);
    ck->shared = !cls;
    return cls;
}

int ferry__ckpt_defs_agree(ferry_ckpt_t ck, int local_cls, const char *what, const char *call)
{
    ferry__ckpt_bytes_t text = {0};
    int cls = local_cls ? local_cls : defs_text(ck, call, &text);
    uint64_t h = text.p ? ferry__ckpt_fnv1a(text.p, text.len) : 0;
    int64_t values[3] = {(int64_t)h, (int64_t)~h, !ck->shared};
    cls = ferry__error_agree_max(ck->comm, cls, what, values, 3);
    if (!cls && ((uint64_t)values[0] != h || (uint64_t)values[1] != ~h)) cls = name_difference(ck, &text, what);
    else if (!cls && values[2]) cls = share_blocks(ck, what);
    ferry__free(text.p);
    return cls;
}

int ferry__ckpt_check_overlaps(ferry_ckpt_t ck, const char *what)
{
    for (int i = 0; i < ck->nvars; i++) FERRY_TRY(check_var_overlap(ck, &ck->vars[i], what));
    return 0;
}

/* FERRY_CKPT_AUTO's choice for the current definitions: gather for a set of at most auto_limit bytes
 * whose ranks share one node, where gathering measured faster than steering; steer elsewhere. (A
 * series file's header does not name its strategy: runs that chose differently append to one file.) */
static int automatic_strategy(const ferry_ckpt_t ck)
{
    long long bytes = 0;
    for (int i = 0; i < ck->nvars; i++) bytes += ferry__ckpt_elems(ck->vars[i].global) * ck->vars[i].esize;
    return ck->one_node && bytes <= ck->auto_limit ? FERRY_CKPT_GATHER : FERRY_CKPT_STEER;
}

void ferry__ckpt_defs_changed(ferry_ckpt_t ck)
{
    if (ck->automatic) ck->strategy = automatic_strategy(ck);
    ck->shared = 0;
    ck->defs_version++;
    if (ck->kept) ck->kept->valid = 0; /* the blocks may change: the kept types with them */
}

/*
 * A decoded tree as bytes, and bytes back into a host datatype: how one
 * rank's file view reaches the others (collective I/O's view cache, seed
 * 001) without sending the user's construction or any block list.
 *
 * The blob is the normalized tree in preorder, in 64-bit words:
 *
 *   header   lb, extent, size, has_root
 *   LEAF     kind, disp, size
 *   VEC      kind, disp, count, stride, <child>
 *   LIST     kind, disp, count, has_child, child_extent,
 *            count displacements, count lengths (child copies, or bytes), [<child>]
 *   SEQ      kind, disp, count, <part> * count
 *
 * so its size follows the tree's (a vector of 10^8 blocks is a few dozen
 * bytes). The receiver rebuilds a host datatype with the same type map,
 * lb and extent from hvector, hindexed and struct constructors; the engine
 * decodes that back into an equivalent tree when it is first navigated.
 * Blobs are read with bounds checks: a truncated or corrupt blob is
 * MPI_ERR_INTERN, never a read past its end.
 */
#include <limits.h>
#include <string.h>

#include "base/alloc.h"
#include "datatype/datatype_int.h"
#include "error/error.h"

/* --- writing ------------------------------------------------------------ */

typedef struct blob_writer {
    int64_t *words; /* NULL while counting */
    size_t n;
} blob_writer_t;

static void put(blob_writer_t *w, MPI_Count value)
{
    if (w->words) w->words[w->n] = (int64_t)value;
    w->n++;
}

static void put_node(blob_writer_t *w, const ferry__dt_node_t *nd)
{
    put(w, nd->kind);
    put(w, nd->disp);
    switch (nd->kind) {
    case FERRY__DT_LEAF:
        put(w, nd->size);
        break;
    case FERRY__DT_VEC:
        put(w, nd->count);
        put(w, nd->stride);
        put_node(w, nd->child);
        break;
    case FERRY__DT_LIST:
        put(w, nd->count);
        put(w, nd->child != NULL);
        put(w, nd->child ? nd->child->extent : 0);
        for (MPI_Count i = 0; i < nd->count; i++) put(w, nd->disps[i]);
        for (MPI_Count i = 0; i < nd->count; i++) put(w, ferry__dt_len(nd, i));
        if (nd->child) put_node(w, nd->child);
        break;
    case FERRY__DT_SEQ:
        put(w, nd->count);
        for (MPI_Count i = 0; i < nd->count; i++) put_node(w, nd->parts[i]);
        break;
    }
}

static void put_tree(blob_writer_t *w, const ferry__dt_tree_t *tree)
{
    put(w, tree->lb);
    put(w, tree->extent);
    put(w, tree->size);
    put(w, tree->root != NULL);
    if (tree->root) put_node(w, tree->root);
}

int ferry__datatype_serialize(MPI_Datatype type, void **blob, size_t *len)
{
    ferry__dt_scratch_t scratch;
    const ferry__dt_tree_t *tree;
    FERRY_TRY(ferry__dt_tree_of(type, &scratch, &tree));
    blob_writer_t w = {NULL, 0};
    put_tree(&w, tree);
    if (!(w.words = ferry__malloc(w.n * sizeof *w.words)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory serializing a datatype");
    *len = w.n * sizeof *w.words;
    w.n = 0;
    put_tree(&w, tree);
    *blob = w.words;
    return 0;
}

/* --- reading ------------------------------------------------------------ */

typedef struct blob_reader {
    const int64_t *words;
    size_t n, pos;
    int bad;
} blob_reader_t;

static MPI_Count get(blob_reader_t *r)
{
    if (r->pos >= r->n) {
        r->bad = 1;
        return 0;
    }
    return r->words[r->pos++];
}

static int corrupt(void)
{
    return ferry__error_set(MPI_ERR_INTERN, "ferry: a serialized datatype is truncated or corrupt");
}

static int host(int mpi_rc, MPI_Datatype *made)
{
    if (mpi_rc != MPI_SUCCESS) {
        *made = MPI_DATATYPE_NULL;
        return ferry__error_set(MPI_ERR_TYPE, "ferry: the host MPI refused to rebuild a datatype");
    }
    return 0;
}

static void release(MPI_Datatype *type)
{
    if (*type != MPI_DATATYPE_NULL && *type != MPI_BYTE) MPI_Type_free(type);
}

/* Moves every byte of *type by delta. */
static int shift(MPI_Datatype *type, MPI_Count delta)
{
    if (delta == 0) return 0;
    MPI_Aint disp = (MPI_Aint)delta;
    MPI_Datatype moved;
    int rc = host(MPI_Type_create_hindexed_block(1, 1, &disp, *type, &moved), &moved);
    release(type);
    *type = moved;
    return rc;
}

/* n copies of *type, copy j at j * stride; counts beyond int in two levels. */
static int repeat(MPI_Datatype *type, MPI_Count n, MPI_Count stride)
{
    const MPI_Count chunk = (MPI_Count)1 << 30;
    MPI_Datatype out = MPI_DATATYPE_NULL;
    int rc;
    if (n <= INT_MAX) {
        rc = host(MPI_Type_create_hvector((int)n, 1, (MPI_Aint)stride, *type, &out), &out);
    } else {
        MPI_Datatype inner, outer, rest = MPI_DATATYPE_NULL;
        rc = host(MPI_Type_create_hvector((int)chunk, 1, (MPI_Aint)stride, *type, &inner), &inner);
        if (rc == 0) rc = host(MPI_Type_create_hvector((int)(n / chunk), 1, (MPI_Aint)(chunk * stride), inner, &outer), &outer);
        if (rc == 0 && n % chunk)
            rc = host(MPI_Type_create_hvector((int)(n % chunk), 1, (MPI_Aint)stride, *type, &rest), &rest);
        if (rc == 0 && n % chunk) rc = shift(&rest, (n / chunk) * chunk * stride);
        if (rc == 0) {
            MPI_Datatype parts[2] = {outer, rest};
            int ones[2] = {1, 1};
            MPI_Aint zeros[2] = {0, 0};
            rc = host(MPI_Type_create_struct(n % chunk ? 2 : 1, ones, zeros, parts, &out), &out);
        }
        release(&inner);
        release(&outer);
        release(&rest);
    }
    release(type);
    *type = out;
    return rc;
}

static int bytes_type(MPI_Count len, MPI_Datatype *out)
{
    *out = MPI_BYTE;
    return len == 1 ? 0 : repeat(out, len, 1);
}

static int get_node(blob_reader_t *r, int depth, MPI_Datatype *out);

static int get_list(blob_reader_t *r, int depth, MPI_Datatype *out)
{
    MPI_Count count = get(r), has_child = get(r), child_extent = get(r);
    if (r->bad || count < 1 || count > INT_MAX || r->n - r->pos < 2 * (size_t)count) return corrupt();
    int *lens = ferry__malloc((size_t)count * sizeof *lens);
    MPI_Aint *disps = ferry__malloc((size_t)count * sizeof *disps);
    int rc = lens && disps ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory rebuilding a datatype");
    for (MPI_Count i = 0; rc == 0 && i < count; i++) disps[i] = (MPI_Aint)get(r);
    for (MPI_Count i = 0; rc == 0 && i < count; i++) {
        MPI_Count len = get(r);
        if (len < 1 || len > INT_MAX)
            rc = ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION, "ferry: a datatype block too long to rebuild");
        else
            lens[i] = (int)len;
    }
    MPI_Datatype child = MPI_BYTE;
    if (rc == 0 && has_child) {
        rc = get_node(r, depth + 1, &child);
        MPI_Datatype sized = MPI_DATATYPE_NULL;
        if (rc == 0) rc = host(MPI_Type_create_resized(child, 0, (MPI_Aint)child_extent, &sized), &sized);
        release(&child);
        child = sized;
    }
    if (rc == 0) rc = host(MPI_Type_create_hindexed((int)count, lens, disps, child, out), out);
    release(&child);
    ferry__free(lens);
    ferry__free(disps);
    return rc;
}

static int get_seq(blob_reader_t *r, int depth, MPI_Datatype *out)
{
    MPI_Count count = get(r);
    if (r->bad || count < 1 || count > INT_MAX) return corrupt();
    MPI_Datatype *parts = ferry__calloc((size_t)count, sizeof *parts);
    int *ones = ferry__malloc((size_t)count * sizeof *ones);
    MPI_Aint *zeros = ferry__calloc((size_t)count, sizeof *zeros);
    int rc = parts && ones && zeros ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory rebuilding a datatype");
    MPI_Count made = 0;
    for (; rc == 0 && made < count; made++) {
        ones[made] = 1;
        rc = get_node(r, depth + 1, &parts[made]);
        if (rc) parts[made] = MPI_DATATYPE_NULL;
    }
    if (rc == 0) rc = host(MPI_Type_create_struct((int)count, ones, zeros, parts, out), out);
    for (MPI_Count i = 0; parts && i < made; i++) release(&parts[i]);
    ferry__free(parts);
    ferry__free(ones);
    ferry__free(zeros);
    return rc;
}

static int get_node(blob_reader_t *r, int depth, MPI_Datatype *out)
{
    *out = MPI_DATATYPE_NULL;
    MPI_Count kind = get(r), disp = get(r);
    if (r->bad || depth > 64) return corrupt();
    int rc;
    switch (kind) {
    case FERRY__DT_LEAF: {
        MPI_Count size = get(r);
        rc = r->bad || size < 1 ? corrupt() : bytes_type(size, out);
        break;
    }
    case FERRY__DT_VEC: {
        MPI_Count count = get(r), stride = get(r);
        if (r->bad || count < 1) return corrupt();
        rc = get_node(r, depth + 1, out);
        if (rc == 0) rc = repeat(out, count, stride);
        break;
    }
    case FERRY__DT_LIST:
        rc = get_list(r, depth, out);
        break;
    case FERRY__DT_SEQ:
        rc = get_seq(r, depth, out);
        break;
    default:
        return corrupt();
    }
    if (rc == 0) rc = shift(out, disp);
    if (rc != 0) release(out);
    return rc;
}

int ferry__datatype_deserialize(const void *blob, size_t len, MPI_Datatype *type)
{
    *type = MPI_DATATYPE_NULL;
    blob_reader_t r = {blob, len / sizeof(int64_t), 0, 0};
    MPI_Count lb = get(&r), extent = get(&r), size = get(&r), has_root = get(&r);
    if (r.bad || len % sizeof(int64_t)) return corrupt();
    MPI_Datatype body = MPI_DATATYPE_NULL;
    int rc = 0;
    if (has_root) rc = get_node(&r, 0, &body);
    else rc = host(MPI_Type_contiguous(0, MPI_BYTE, &body), &body);
    if (rc == 0 && r.pos != r.n) rc = corrupt();
    if (rc == 0) rc = host(MPI_Type_create_resized(body, (MPI_Aint)lb, (MPI_Aint)extent, type), type);
    release(&body);
    if (rc == 0) rc = host(MPI_Type_commit(type), type);
    MPI_Count got = -1;
    if (rc == 0 && (MPI_Type_size_x(*type, &got) != MPI_SUCCESS || got != size)) rc = corrupt();
    if (rc != 0) release(type);
    return rc;
}

/* --- hoisting a blob's displacement --------------------------------------- */

enum { TREE_HEADER_WORDS = 4, LIST_FIXED_WORDS = 5 };

MPI_Count ferry__datatype_blob_hoist(void *blob, size_t len)
{
    int64_t *w = blob;
    size_t n = len / sizeof(int64_t), at = TREE_HEADER_WORDS;
    if (n < TREE_HEADER_WORDS || !w[3]) return 0;
    MPI_Count shift = 0;
    /* The disp of a node adds to every byte below it: along single children they sum. */
    while (at + 2 <= n) {
        int64_t kind = w[at];
        shift += w[at + 1];
        w[at + 1] = 0;
        if (kind == FERRY__DT_VEC && at + 4 < n) at += 4;
        else if (kind == FERRY__DT_LIST && at + LIST_FIXED_WORDS <= n && w[at + 3] && w[at + 2] >= 0 &&
                 (size_t)w[at + 2] <= (n - at - LIST_FIXED_WORDS) / 2)
            at += LIST_FIXED_WORDS + 2 * (size_t)w[at + 2];
        else break;
    }
    return shift; /* lb and extent stay: they place tiles, not bytes */
}

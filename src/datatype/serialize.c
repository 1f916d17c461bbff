/*
 * A decoded tree as bytes, and bytes back into a host datatype: how one
 * rank's file view reaches the others (collective I/O's view cache, seed
 * 001) without sending the user's construction.
 *
 * The blob is the normalized tree in preorder, in 64-bit words:
 *
 *   header   lb, extent, size, has_root, expanded
 *   LEAF     kind, disp, size
 *   VEC      kind, disp, count, stride, <child>
 *   LIST     kind, disp, count, has_child, child_extent, uniform, signed,
 *            bytes, <entries: `bytes` bytes, zero-padded to a word>, [<child>]
 *   SEQ      kind, disp, count, <part> * count
 *
 * so its size follows the tree's (a vector of 10^8 blocks is a few dozen
 * bytes). A LIST's entries are the only part that grows with the user's
 * block list (an irregular indexed view: millions of entries), so they are
 * bytes, not words: per entry the gap from the previous entry's end to its
 * displacement (the first: from 0), modulo 2^64, then its length (child
 * copies, or bytes) unless every entry has the length `uniform` (0: lengths
 * follow), each a varint (7 bits a byte, low first, high bit: more
 * follow). When some gap is negative (entries out of order or
 * overlapping), `signed` is 1 and every gap is zigzagged (0, -1, 1, -2 ...
 * as 0, 1, 2, 3 ...) so that small steps back stay small. Gaps and lengths
 * under 128 take 2 bytes per entry where words took 16. Every node
 * stays word-aligned, which ferry__datatype_blob_hoist relies on to reach
 * the displacements it moves. `expanded` is the bytes the blob would take
 * with 2 words per entry and no `expanded`, `uniform`, `signed`, `bytes` or padding:
 * what the receiver's memory for the rebuilt type scales with.
 *
 * The receiver rebuilds a host datatype with the same type map, lb and
 * extent from hvector, hindexed and struct constructors; the engine
 * decodes that back into an equivalent tree when it is first navigated.
 * Blobs are read with bounds checks: a truncated or corrupt blob (a varint
 * past its section or 64 bits, a count its bytes cannot hold, a node with
 * more bytes than the type) is MPI_ERR_INTERN, never a read past its end
 * or an allocation larger than the blob can describe.
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
    size_t expanded; /* words the blob would take with 2 words per LIST entry */
} blob_writer_t;

/* A word both formats have. */
static void put(blob_writer_t *w, MPI_Count value)
{
    if (w->words) w->words[w->n] = (int64_t)value;
    w->n++;
    w->expanded++;
}

/* A word only the compact format has. */
static void put_compact(blob_writer_t *w, MPI_Count value)
{
    put(w, value);
    w->expanded--;
}

/* value as a varint at out (NULL: counted only); returns its bytes. */
static size_t put_varint(unsigned char *out, uint64_t value)
{
    if (!out) return 1 + (size_t)(63 - __builtin_clzll(value | 1)) / 7;
    size_t n = 0;
    for (; value >= 0x80; value >>= 7) out[n++] = (unsigned char)(value | 0x80);
    out[n] = (unsigned char)value;
    return n + 1;
}

/* Small negative gaps (a list going back) in few bytes too. */
static uint64_t zigzag(uint64_t gap)
{
    return (gap << 1) ^ (0 - (gap >> 63));
}

/* A LIST's entries as varints into out (NULL: counted only); returns their
 * bytes, or SIZE_MAX when unsigned gaps were asked for and some entry starts
 * below the previous one's end (the first: below 0). */
static size_t put_entries(const ferry__dt_node_t *nd, int sign, unsigned char *out)
{
    uint64_t end = 0, unit = nd->child ? (uint64_t)nd->child->extent : 1;
    size_t n = 0;
    for (MPI_Count i = 0; i < nd->count; i++) {
        /* Modulo 2^64: every pair of 64-bit displacements has a gap. */
        uint64_t disp = (uint64_t)nd->disps[i], gap = disp - end, len = (uint64_t)ferry__dt_len(nd, i);
        if (!sign && gap > INT64_MAX) return SIZE_MAX;
        n += put_varint(out ? out + n : NULL, sign ? zigzag(gap) : gap);
        if (nd->prefix) n += put_varint(out ? out + n : NULL, len);
        end = disp + len * unit;
    }
    return n;
}

static size_t words_holding(size_t bytes)
{
    return (bytes + sizeof(int64_t) - 1) / sizeof(int64_t);
}

static void put_node(blob_writer_t *w, const ferry__dt_node_t *nd);

static void put_list(blob_writer_t *w, const ferry__dt_node_t *nd)
{
    put(w, nd->count);
    put(w, nd->child != NULL);
    put(w, nd->child ? nd->child->extent : 0);
    put_compact(w, nd->prefix ? 0 : nd->uniform);
    size_t sign_word = w->n, bytes_word = w->n + 1;
    put_compact(w, 0);
    put_compact(w, 0);
    unsigned char *section = w->words ? (unsigned char *)(w->words + w->n) : NULL;
    /* Unsigned gaps where the list allows (one pass for sorted lists), else signed from the start. */
    int sign = 0;
    size_t bytes = put_entries(nd, 0, section);
    if (bytes == SIZE_MAX) {
        sign = 1;
        bytes = put_entries(nd, 1, section);
    }
    size_t words = words_holding(bytes);
    if (section) {
        /* Zeroed padding: equal lists give equal blobs (hashed and compared). */
        memset(section + bytes, 0, words * sizeof(int64_t) - bytes);
        w->words[sign_word] = sign;
        w->words[bytes_word] = (int64_t)bytes;
    }
    w->n += words;
    w->expanded += 2 * (size_t)nd->count;
    if (nd->child) put_node(w, nd->child);
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
    case FERRY__DT_LIST: put_list(w, nd); break;
    case FERRY__DT_SEQ:
        put(w, nd->count);
        for (MPI_Count i = 0; i < nd->count; i++) put_node(w, nd->parts[i]);
        break;
    }
}

static void put_tree(blob_writer_t *w, const ferry__dt_tree_t *tree, size_t expanded_bytes)
{
    put(w, tree->lb);
    put(w, tree->extent);
    put(w, tree->size);
    put(w, tree->root != NULL);
    put_compact(w, (MPI_Count)expanded_bytes);
    if (tree->root) put_node(w, tree->root);
}

int ferry__datatype_serialize(MPI_Datatype type, void **blob, size_t *len)
{
    ferry__dt_scratch_t scratch;
    const ferry__dt_tree_t *tree;
    FERRY_TRY(ferry__dt_tree_of(type, &scratch, &tree));
    blob_writer_t w = {NULL, 0, 0};
    put_tree(&w, tree, 0);
    size_t expanded_bytes = w.expanded * sizeof(int64_t);
    if (!(w.words = ferry__malloc(w.n * sizeof *w.words)))
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory serializing a datatype");
    *len = w.n * sizeof *w.words;
    w.n = w.expanded = 0;
    put_tree(&w, tree, expanded_bytes);
    *blob = w.words;
    return 0;
}

/* --- reading ------------------------------------------------------------ */

typedef struct blob_reader {
    const int64_t *words;
    size_t n, pos;
    size_t expanded;      /* words read so far in the 2-words-per-entry count */
    MPI_Count size_bound; /* the type's size: no node has more stream bytes */
    int bad;
    int too_long; /* a valid block past int: refused only once the whole blob checks out */
} blob_reader_t;

/* A word only the compact format has. */
static MPI_Count get_compact(blob_reader_t *r)
{
    if (r->pos >= r->n) {
        r->bad = 1;
        return 0;
    }
    return r->words[r->pos++];
}

/* A word both formats have. */
static MPI_Count get(blob_reader_t *r)
{
    r->expanded++;
    return get_compact(r);
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
    MPI_Count span;
    int rc;
    if (__builtin_mul_overflow(n, stride, &span) || n / chunk > INT_MAX) {
        rc = corrupt(); /* no type spans more than 64 bits of addresses or holds 2^61 copies */
    } else if (n <= INT_MAX) {
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

/* *total = a * b when that is a size some node of this blob can have. */
static int node_size(const blob_reader_t *r, MPI_Count a, MPI_Count b, MPI_Count *total)
{
    return !__builtin_mul_overflow(a, b, total) && *total >= 1 && *total <= r->size_bound;
}

/* A LIST's section: varints from p up to end, read only there. */
typedef struct section_reader {
    const unsigned char *p, *end;
    int bad;
} section_reader_t;

/* A varint in its shortest form and within 64 bits, or bad. */
static uint64_t get_varint(section_reader_t *s)
{
    uint64_t value = 0;
    for (unsigned shift_bits = 0; s->p < s->end && shift_bits < 64; shift_bits += 7) {
        unsigned char byte = *s->p++;
        if (shift_bits == 63 && byte > 1) break; /* past 64 bits */
        value |= (uint64_t)(byte & 0x7f) << shift_bits;
        if (!(byte & 0x80)) {
            if (byte == 0 && shift_bits > 0) break; /* overlong */
            return value;
        }
    }
    s->bad = 1;
    return 0;
}

static MPI_Count signed_of(uint64_t value)
{
    return value <= INT64_MAX ? (MPI_Count)value : -(MPI_Count)(~value) - 1;
}

typedef struct list_entries {
    MPI_Count count, uniform;
    int sign;      /* gaps zigzagged */
    uint64_t unit; /* bytes a unit of length spans: the child's extent, or 1 */
    MPI_Aint *disps;
    int *lens;
    MPI_Count copies; /* the lengths' sum */
    int too_long;     /* a length past int: valid, but the host cannot rebuild it */
} list_entries_t;

static uint64_t unzigzag(uint64_t value)
{
    return (value >> 1) ^ (0 - (value & 1));
}

/* The entries from a section of `bytes` at the reader's position, which it
 * then passes; the section must end where its varints end, padded with zeros. */
static int get_entries(blob_reader_t *r, MPI_Count bytes, list_entries_t *e)
{
    const unsigned char *start = (const unsigned char *)(r->words + r->pos);
    section_reader_t s = {start, start + bytes, 0};
    uint64_t end = 0;
    for (MPI_Count i = 0; i < e->count; i++) {
        uint64_t gap = get_varint(&s);
        uint64_t disp = end + (e->sign ? unzigzag(gap) : gap); /* modulo 2^64, as written */
        MPI_Count len = e->uniform ? e->uniform : signed_of(get_varint(&s));
        e->disps[i] = (MPI_Aint)signed_of(disp);
        /* Unsigned gaps below 2^63 only: otherwise the writer signs them. */
        if (s.bad || (!e->sign && gap > INT64_MAX) || len < 1 || e->disps[i] != signed_of(disp) ||
            __builtin_add_overflow(e->copies, len, &e->copies))
            return corrupt();
        end = disp + (uint64_t)len * e->unit;
        e->too_long |= len > INT_MAX;
        e->lens[i] = len > INT_MAX ? 0 : (int)len;
    }
    size_t words = words_holding((size_t)bytes);
    for (const unsigned char *pad = s.p; pad < start + words * sizeof(int64_t); pad++)
        if (*pad) return corrupt();
    if (s.p != s.end) return corrupt();
    r->pos += words;
    return 0;
}

static int no_memory(void)
{
    return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory rebuilding a datatype");
}

static int get_node(blob_reader_t *r, int depth, MPI_Datatype *out, MPI_Count *size);

/* A LIST's child, resized to the extent its copies are placed by. */
static int get_child(blob_reader_t *r, int depth, MPI_Count extent, MPI_Datatype *child, MPI_Count *size)
{
    MPI_Datatype read;
    int rc = get_node(r, depth + 1, &read, size);
    if (rc == 0) rc = host(MPI_Type_create_resized(read, 0, (MPI_Aint)extent, child), child);
    release(&read);
    return rc;
}

static int get_list(blob_reader_t *r, int depth, MPI_Datatype *out, MPI_Count *size)
{
    MPI_Count count = get(r), has_child = get(r), child_extent = get(r);
    MPI_Count uniform = get_compact(r), sign = get_compact(r), bytes = get_compact(r);
    uint64_t room = (uint64_t)(r->n - r->pos) * sizeof(int64_t);
    /* An entry takes a byte or two: a count its section cannot hold is refused before allocating. */
    if (r->bad || count < 1 || count > INT_MAX || (uint64_t)has_child > 1 || uniform < 0 || (uint64_t)sign > 1 ||
        bytes < 0 || (uint64_t)bytes > room || count > bytes / (uniform ? 1 : 2))
        return corrupt();
    r->expanded += 2 * (size_t)count;
    list_entries_t e = {.count = count, .uniform = uniform, .sign = (int)sign};
    e.unit = has_child ? (uint64_t)child_extent : 1;
    e.disps = ferry__malloc((size_t)count * sizeof *e.disps);
    e.lens = ferry__malloc((size_t)count * sizeof *e.lens);
    int rc = e.disps && e.lens ? get_entries(r, bytes, &e) : no_memory();
    MPI_Datatype child = MPI_BYTE;
    MPI_Count child_size = 1;
    if (rc == 0 && has_child) rc = get_child(r, depth, child_extent, &child, &child_size);
    if (rc == 0 && !node_size(r, e.copies, child_size, size)) rc = corrupt();
    r->too_long |= e.too_long;
    if (rc == 0 && r->too_long) *out = MPI_BYTE; /* a stand-in: the blob is refused at its end */
    else if (rc == 0) rc = host(MPI_Type_create_hindexed((int)count, e.lens, e.disps, child, out), out);
    release(&child);
    ferry__free(e.lens);
    ferry__free(e.disps);
    return rc;
}

static int get_seq(blob_reader_t *r, int depth, MPI_Datatype *out, MPI_Count *size)
{
    MPI_Count count = get(r);
    /* A part takes at least a LEAF's 3 words. */
    if (r->bad || count < 1 || count > INT_MAX || (uint64_t)count > (r->n - r->pos) / 3) return corrupt();
    MPI_Datatype *parts = ferry__calloc((size_t)count, sizeof *parts);
    int *ones = ferry__malloc((size_t)count * sizeof *ones);
    MPI_Aint *zeros = ferry__calloc((size_t)count, sizeof *zeros);
    int rc = parts && ones && zeros ? 0 : no_memory();
    MPI_Count made = 0;
    *size = 0;
    for (; rc == 0 && made < count; made++) {
        ones[made] = 1;
        MPI_Count part_size = 0;
        rc = get_node(r, depth + 1, &parts[made], &part_size);
        if (rc == 0 && (__builtin_add_overflow(*size, part_size, size) || *size > r->size_bound)) rc = corrupt();
    }
    if (rc == 0) rc = host(MPI_Type_create_struct((int)count, ones, zeros, parts, out), out);
    for (MPI_Count i = 0; parts && i < made; i++) release(&parts[i]);
    ferry__free(parts);
    ferry__free(ones);
    ferry__free(zeros);
    return rc;
}

static int get_vec(blob_reader_t *r, int depth, MPI_Datatype *out, MPI_Count *size)
{
    MPI_Count count = get(r), stride = get(r), child_size = 0;
    if (r->bad || count < 1) return corrupt();
    int rc = get_node(r, depth + 1, out, &child_size);
    if (rc == 0 && !node_size(r, count, child_size, size)) rc = corrupt();
    if (rc == 0) rc = repeat(out, count, stride);
    return rc;
}

/* *out: the node's type; *size: its stream bytes, checked against the type's. */
static int get_node(blob_reader_t *r, int depth, MPI_Datatype *out, MPI_Count *size)
{
    *out = MPI_DATATYPE_NULL;
    MPI_Count kind = get(r), disp = get(r);
    if (r->bad || depth > 64) return corrupt();
    int rc;
    switch (kind) {
    case FERRY__DT_LEAF: {
        MPI_Count leaf = get(r);
        rc = r->bad || !node_size(r, leaf, 1, size) ? corrupt() : bytes_type(leaf, out);
        break;
    }
    case FERRY__DT_VEC: rc = get_vec(r, depth, out, size); break;
    case FERRY__DT_LIST: rc = get_list(r, depth, out, size); break;
    case FERRY__DT_SEQ: rc = get_seq(r, depth, out, size); break;
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
    blob_reader_t r = {.words = blob, .n = len / sizeof(int64_t)};
    MPI_Count lb = get(&r), extent = get(&r), size = get(&r), has_root = get(&r), expanded = get_compact(&r);
    /* An empty type has no tree, every other one a root. */
    if (r.bad || len % sizeof(int64_t) || size < 0 || has_root != (size > 0)) return corrupt();
    r.size_bound = size;
    MPI_Datatype body = MPI_DATATYPE_NULL;
    MPI_Count body_size = 0;
    int rc = has_root ? get_node(&r, 0, &body, &body_size) : host(MPI_Type_contiguous(0, MPI_BYTE, &body), &body);
    if (rc == 0 && (r.pos != r.n || body_size != size || (uint64_t)expanded != r.expanded * sizeof(int64_t)))
        rc = corrupt();
    if (rc == 0 && r.too_long)
        rc = ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION, "ferry: a datatype block too long to rebuild");
    if (rc == 0) rc = host(MPI_Type_create_resized(body, (MPI_Aint)lb, (MPI_Aint)extent, type), type);
    release(&body);
    if (rc == 0) rc = host(MPI_Type_commit(type), type);
    MPI_Count got = -1;
    if (rc == 0 && (MPI_Type_size_x(*type, &got) != MPI_SUCCESS || got != size)) rc = corrupt();
    if (rc != 0) release(type);
    return rc;
}

/* --- the header's expanded size and hoisting a blob's displacement -------- */

enum { TREE_HEADER_WORDS = 5, HEADER_EXPANDED = 4, LIST_FIXED_WORDS = 8, LIST_SECTION_BYTES = 7 };

size_t ferry__datatype_blob_expanded(const void *blob, size_t len)
{
    int64_t expanded;
    if (len < TREE_HEADER_WORDS * sizeof(int64_t)) return len;
    memcpy(&expanded, (const char *)blob + HEADER_EXPANDED * sizeof(int64_t), sizeof expanded);
    /* The compact format takes a byte or more where the expanded one takes 16: beyond that it is corrupt. */
    if (expanded < 4 * (int64_t)sizeof(int64_t) || ((uint64_t)expanded - 1) / 16 >= len) return len;
    return (size_t)expanded;
}

MPI_Count ferry__datatype_blob_hoist(void *blob, size_t len)
{
    int64_t *w = blob;
    size_t n = len / sizeof(int64_t), at = TREE_HEADER_WORDS;
    if (n < TREE_HEADER_WORDS || !w[3]) return 0;
    MPI_Count shift = 0;
    /* The disp of a node adds to every byte below it: along single children they sum. */
    while (at + 2 <= n) {
        MPI_Count moved;
        if (__builtin_add_overflow(shift, w[at + 1], &moved)) break;
        shift = moved;
        int64_t kind = w[at], bytes = at + LIST_FIXED_WORDS <= n ? w[at + LIST_SECTION_BYTES] : -1;
        w[at + 1] = 0;
        if (kind == FERRY__DT_VEC && at + 4 < n) at += 4;
        else if (kind == FERRY__DT_LIST && bytes >= 0 && w[at + 3] &&
                 (uint64_t)bytes <= (n - at - LIST_FIXED_WORDS) * sizeof(int64_t))
            at += LIST_FIXED_WORDS + words_holding((size_t)bytes);
        else break;
    }
    return shift; /* lb and extent stay: they place tiles, not bytes */
}

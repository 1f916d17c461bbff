/*
 * The view cache's type transport: a type serialized on one rank and
 * rebuilt as a host datatype must have the same size, lb, extent and the
 * same offset for every stream byte; a hoisted blob (issue 20) the same
 * offsets lower by its shift. Seeded random types from every
 * constructor, plus vectors whose counts do not fit an int, plus
 * irregular block lists (issue 20, item 3: compact entries) in every
 * order and at 64-bit displacements, whose blobs must stay small, state
 * the size the word format would have had, and, truncated or with bytes
 * flipped, be refused as corrupt or rebuilt, never read past their end.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "datatype/datatype.h"
#include "datatype/datatype_int.h"
#include "ferry_test.h"
#include "oracle.h"

/* b's map is a's lower by shift (0: the same), with the same size, lb and extent. */
static void check_same_map(MPI_Datatype a, MPI_Datatype b, MPI_Count shift)
{
    ferry__typeinfo_t ia, ib;
    FT_EQ(ferry__datatype_info(a, &ia), 0);
    FT_EQ(ferry__datatype_info(b, &ib), 0);
    FT_EQ(ia.size, ib.size);
    FT_EQ(ia.lb, ib.lb);
    FT_EQ(ia.extent, ib.extent);
    FT_EQ(ia.monotone, ib.monotone);
    MPI_Count n = 2 * ia.size, step = n > 20000 ? n / 20000 : 1;
    for (MPI_Count r = 0; r < n; r += step) {
        MPI_Count oa = -1, ob = -2;
        FT_EQ(ferry__datatype_offset(a, r, &oa), 0);
        FT_EQ(ferry__datatype_offset(b, r, &ob), 0);
        FT_EQ(oa, ob + shift);
    }
}

/* The rebuilt type serializes to the same bytes: the engine decodes it into the same tree. For types
 * at offsets past ferry's navigation (2^61), where check_same_map cannot ask for offsets. */
static void check_same_blob(MPI_Datatype rebuilt, const void *blob, size_t len)
{
    void *again;
    size_t again_len;
    FT_EQ(ferry__datatype_serialize(rebuilt, &again, &again_len), 0);
    FT_EQ(again_len, len);
    FT_EQ_MEM(again, blob, len);
    ferry__free(again);
}

/* Issue 20: a hoisted blob rebuilds the same type map lower by the shift, with the same size, lb and extent. */
static void check_hoisted(const void *blob, size_t len, MPI_Datatype type, int navigable)
{
    void *copy = ferry__malloc(len);
    FT_CHECK(copy != NULL);
    memcpy(copy, blob, len);
    MPI_Count shift = ferry__datatype_blob_hoist(copy, len);
    MPI_Datatype rebuilt;
    FT_EQ(ferry__datatype_deserialize(copy, len, &rebuilt), 0);
    if (navigable) check_same_map(type, rebuilt, shift);
    check_same_blob(rebuilt, copy, len);
    MPI_Type_free(&rebuilt);
    ferry__free(copy);
}

/* Words of a node in the format before compact lists: every value a word, a LIST entry two. */
static size_t word_format_words(const ferry__dt_node_t *nd)
{
    switch (nd->kind) {
    case FERRY__DT_LEAF: return 3;
    case FERRY__DT_VEC: return 4 + word_format_words(nd->child);
    case FERRY__DT_LIST: return 5 + 2 * (size_t)nd->count + (nd->child ? word_format_words(nd->child) : 0);
    case FERRY__DT_SEQ: {
        size_t words = 3;
        for (MPI_Count i = 0; i < nd->count; i++) words += word_format_words(nd->parts[i]);
        return words;
    }
    }
    return 0;
}

static size_t word_format_bytes(MPI_Datatype type)
{
    ferry__dt_scratch_t scratch;
    const ferry__dt_tree_t *tree;
    FT_EQ(ferry__dt_tree_of(type, &scratch, &tree), 0);
    return sizeof(int64_t) * (4 + (tree->root ? word_format_words(tree->root) : 0));
}

/* type through a blob and back, checked; the blob is returned (ferry__free). */
static void roundtrip_blob(MPI_Datatype type, int navigable, void **blob_out, size_t *len_out)
{
    void *blob = NULL;
    size_t len = 0;
    FT_EQ(ferry__datatype_serialize(type, &blob, &len), 0);
    FT_EQ(ferry__datatype_blob_expanded(blob, len), word_format_bytes(type));
    MPI_Datatype rebuilt;
    FT_EQ(ferry__datatype_deserialize(blob, len, &rebuilt), 0);
    if (navigable) check_same_map(type, rebuilt, 0);
    check_same_blob(rebuilt, blob, len);
    check_hoisted(blob, len, type, navigable);
    /* Truncated blobs are refused, not read past their end. */
    MPI_Datatype none;
    FT_CHECK(ferry__datatype_deserialize(blob, len - sizeof(int64_t), &none) != 0);
    FT_CHECK(none == MPI_DATATYPE_NULL);
    MPI_Type_free(&rebuilt);
    *blob_out = blob;
    *len_out = len;
}

static void roundtrip(MPI_Datatype type)
{
    void *blob;
    size_t len;
    roundtrip_blob(type, 1, &blob, &len);
    ferry__free(blob);
}

/* --- irregular block lists ------------------------------------------------- */

typedef enum { ORDER_RISING, ORDER_SHUFFLED, ORDER_FALLING, ORDER_FAR, ORDER_EDGE } list_order_t;

/* n entries' byte displacements and lengths (0 allowed) in the given order;
 * ORDER_FAR rises from beyond 2^32 or near +-2^61 (as far as ferry
 * navigates), ORDER_EDGE from near -2^62 or the largest MPI_Aint. */
static void random_entries(uint64_t *state, int n, list_order_t order, MPI_Count unit, MPI_Aint *disps, int *lens)
{
    const MPI_Aint far[] = {(MPI_Aint)1 << 33, ((MPI_Aint)1 << 61) - ((MPI_Aint)1 << 40),
                            ((MPI_Aint)1 << 40) - ((MPI_Aint)1 << 61)};
    const MPI_Aint edge[] = {-((MPI_Aint)1 << 62), INT64_MAX - ((MPI_Aint)1 << 40)};
    MPI_Aint at = order == ORDER_FAR ? far[ft_rand(state) % 3] : order == ORDER_EDGE ? edge[ft_rand(state) % 2] : 0;
    for (int i = 0; i < n; i++) {
        lens[i] = (int)(ft_rand(state) % 128);
        if (ft_rand(state) % 16 == 0) lens[i] = 0;
        MPI_Aint gap = (MPI_Aint)(ft_rand(state) % 128);
        if (order == ORDER_SHUFFLED) disps[i] = (MPI_Aint)(ft_rand(state) % (1 << 20)) - (1 << 19);
        else if (order == ORDER_FALLING) disps[i] = -at - (MPI_Aint)lens[i] * unit;
        else disps[i] = at;
        at += (MPI_Aint)lens[i] * unit + gap;
    }
}

/* An hindexed type of n random entries of child (MPI_BYTE, MPI_INT, or a child with holes). */
static MPI_Datatype random_list(uint64_t *state, int n, list_order_t order, MPI_Datatype child)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(child, &lb, &extent);
    MPI_Aint *disps = ferry__malloc((size_t)n * sizeof *disps);
    int *lens = ferry__malloc((size_t)n * sizeof *lens);
    FT_CHECK(disps && lens);
    random_entries(state, n, order, extent, disps, lens);
    MPI_Datatype type;
    if (ft_rand(state) % 4 == 0) {
        int block = 1 + (int)(ft_rand(state) % 5);
        FT_OK(MPI_Type_create_hindexed_block(n, block, disps, child, &type)); /* uniform lengths */
    } else {
        FT_OK(MPI_Type_create_hindexed(n, lens, disps, child, &type));
    }
    FT_OK(MPI_Type_commit(&type));
    ferry__free(disps);
    ferry__free(lens);
    return type;
}

/* Truncated anywhere, a blob is corrupt; with a few bytes flipped, corrupt or some valid type. */
static void check_corruption(const void *blob, size_t len, uint64_t *state, int flips)
{
    MPI_Datatype type;
    for (size_t cut = 0; cut < len; cut++) {
        void *copy = ferry__malloc(cut ? cut : 1); /* exactly the bytes: ASan sees a read past them */
        FT_CHECK(copy != NULL);
        memcpy(copy, blob, cut);
        FT_EQ(ft_class(ferry__datatype_deserialize(copy, cut, &type)), MPI_ERR_INTERN);
        FT_CHECK(type == MPI_DATATYPE_NULL);
        ferry__datatype_blob_hoist(copy, cut);
        FT_CHECK(ferry__datatype_blob_expanded(copy, cut) <= (cut < 40 ? cut : 16 * cut));
        ferry__free(copy);
    }
    unsigned char *copy = ferry__malloc(len);
    FT_CHECK(copy != NULL);
    for (int i = 0; i < flips; i++) {
        memcpy(copy, blob, len);
        for (int k = 1 + (int)(ft_rand(state) % 3); k > 0; k--)
            copy[ft_rand(state) % len] ^= (unsigned char)(1 + ft_rand(state) % 255);
        int rc = ferry__datatype_deserialize(copy, len, &type);
        FT_CHECK(rc == 0 || ft_class(rc) == MPI_ERR_INTERN);
        if (rc == 0) MPI_Type_free(&type);
        FT_CHECK(ferry__datatype_blob_expanded(copy, len) <= 16 * len);
        ferry__datatype_blob_hoist(copy, len);
    }
    ferry__free(copy);
}

/* A child whose copies leave holes: a LIST keeps it as a child node. */
static MPI_Datatype holey_child(void)
{
    MPI_Datatype pair, child;
    FT_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &pair));
    FT_OK(MPI_Type_create_resized(pair, 0, 20, &child));
    FT_OK(MPI_Type_commit(&child));
    MPI_Type_free(&pair);
    return child;
}

static void irregular_lists(uint64_t *state)
{
    MPI_Datatype holey = holey_child(), children[3] = {MPI_BYTE, MPI_INT, holey};
    const int sizes[] = {1, 2, 7, 300, 100000};
    for (int s = 0; s < 5; s++)
        for (int order = ORDER_RISING; order <= ORDER_EDGE; order++)
            for (int c = 0; c < 3; c++) {
                MPI_Datatype type = random_list(state, sizes[s], (list_order_t)order, children[c]);
                void *blob;
                size_t len;
                roundtrip_blob(type, order != ORDER_EDGE, &blob, &len);
                if (sizes[s] == 300 && order < ORDER_FAR) check_corruption(blob, len, state, 400);
                ferry__free(blob);
                MPI_Type_free(&type);
            }
    MPI_Type_free(&holey);
}

/* 10^5 rising entries, gaps and lengths under 128 bytes: 2 bytes an entry (was 16). */
static void compact_size(uint64_t *state)
{
    enum { N = 100000 };
    MPI_Aint *disps = ferry__malloc(N * sizeof *disps);
    int *lens = ferry__malloc(N * sizeof *lens);
    FT_CHECK(disps && lens);
    MPI_Aint at = 0;
    for (int i = 0; i < N; i++) {
        lens[i] = 1 + (int)(ft_rand(state) % 127);
        disps[i] = at;
        at += lens[i] + 1 + (MPI_Aint)(ft_rand(state) % 127); /* a hole: entries do not merge */
    }
    MPI_Datatype type;
    FT_OK(MPI_Type_create_hindexed(N, lens, disps, MPI_BYTE, &type));
    FT_OK(MPI_Type_commit(&type));
    void *blob;
    size_t len;
    roundtrip_blob(type, 1, &blob, &len);
    FT_CHECK(len < 3 * (size_t)N);
    FT_CHECK(len <= 2 * (size_t)N + 128);
    FT_EQ(ferry__datatype_blob_expanded(blob, len), 8 * (4 + 5 + 2 * (size_t)N));
    ferry__free(blob);
    MPI_Type_free(&type);
    ferry__free(disps);
    ferry__free(lens);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    uint64_t state = ft_seed;
    int iters = getenv("FERRY_DT_ITERS") ? atoi(getenv("FERRY_DT_ITERS")) : 1500;
    for (int i = 0; i < iters; i++) {
        MPI_Datatype type = or_random_type(&state, 1 + i % 5);
        roundtrip(type);
        if (i < 4) {
            void *blob;
            size_t len;
            roundtrip_blob(type, 1, &blob, &len);
            check_corruption(blob, len, &state, 500);
            ferry__free(blob);
        }
        or_type_free(&type);
    }
    irregular_lists(&state);
    compact_size(&state);
    /* A vector of 3 * 2^30 + 5 blocks: a few words, rebuilt in two levels. */
    MPI_Datatype block, big;
    MPI_Type_contiguous(3, MPI_BYTE, &block);
    MPI_Type_create_hvector(1 << 30, 1, 8, block, &big);
    MPI_Datatype parts[2] = {big, big};
    int ones[2] = {1, 1};
    MPI_Aint disps[2] = {0, (MPI_Aint)8 << 30};
    MPI_Datatype huge;
    MPI_Type_create_struct(2, ones, disps, parts, &huge);
    MPI_Type_commit(&huge);
    roundtrip(huge);
    MPI_Type_free(&huge);
    MPI_Type_free(&big);
    MPI_Type_free(&block);
    return ft_finish();
}

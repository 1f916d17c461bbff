/*
 * The module's entry points: look up (or decode) the tree, check the
 * request against the type, and run the walk or the navigation.
 */
#include "base/checked.h"
#include "datatype/datatype_int.h"
#include "error/error.h"

static int monotone_tiling(const ferry__dt_tree_t *tree)
{
    const ferry__dt_node_t *root = tree->root;
    return !root || (root->monotone && tree->extent >= root->hi - root->lo && tree->extent > 0);
}

int ferry__datatype_info(MPI_Datatype type, ferry__typeinfo_t *info)
{
    ferry__dt_scratch_t scratch;
    const ferry__dt_tree_t *tree;
    FERRY_TRY(ferry__dt_tree_of(type, &scratch, &tree));
    const ferry__dt_node_t *root = tree->root;
    *info = (ferry__typeinfo_t){
        .size = tree->size,
        .extent = tree->extent,
        .true_lb = tree->true_lb,
        .true_extent = tree->true_extent,
        .contiguous = !root || (root->kind == FERRY__DT_LEAF && root->disp == tree->true_lb),
        .lb = tree->lb,
        .monotone = monotone_tiling(tree),
        .monotone_element = !root || root->monotone,
        .nonoverlapping = tree->nonoverlapping,
        .tree_nodes = tree->nodes,
        .tree_bytes = tree->bytes,
    };
    return 0;
}

int ferry__datatype_stream_contiguous(const ferry__typeinfo_t *info, MPI_Count count)
{
    return info->contiguous && (count <= 1 || info->extent == info->size);
}

static int transfer(ferry__dt_dir_t dir, char *stream, MPI_Count len, void *buf, MPI_Count count,
                    MPI_Datatype type, MPI_Count skip)
{
    ferry__dt_scratch_t scratch;
    const ferry__dt_tree_t *tree;
    FERRY_TRY(ferry__dt_tree_of(type, &scratch, &tree));
    if (len == 0) return 0;
    if (skip < 0 || len < 0 || count < 0 || skip > count * tree->size - len)
        return ferry__error_set(MPI_ERR_ARG, "ferry: stream window [%lld, +%lld) outside %lld bytes",
                                (long long)skip, (long long)len, (long long)(count * tree->size));
    ferry__dt_io_t io = {dir, stream};
    ferry__dt_walk(tree->root, buf, tree->extent, skip, len, &io);
    return 0;
}

int ferry__datatype_pack(const void *buf, MPI_Count count, MPI_Datatype type, MPI_Count skip, void *dst,
                         MPI_Count len)
{
    return transfer(FERRY__DT_PACK, dst, len, (void *)buf, count, type, skip);
}

int ferry__datatype_unpack(const void *src, MPI_Count len, void *buf, MPI_Count count, MPI_Datatype type,
                           MPI_Count skip)
{
    return transfer(FERRY__DT_UNPACK, (char *)src, len, buf, count, type, skip);
}

/* *offset = element * extent + within, unless that passes FERRY_OFFSET_MAX. */
static int place(const ferry__dt_tree_t *tree, MPI_Count element, MPI_Count within, MPI_Count *offset)
{
    MPI_Count start;
    if (!ferry__offset_mul(element, tree->extent, &start) && !ferry__offset_add(start, within, offset)) return 0;
    return ferry__error_set(MPI_ERR_ARG,
                            "ferry: element %lld of a datatype of extent %lld lies past the largest offset ferry "
                            "addresses (%lld)",
                            (long long)element, (long long)tree->extent, (long long)FERRY_OFFSET_MAX);
}

/* Offset of stream byte n, type tiled without end. */
static int offset_in(const ferry__dt_tree_t *tree, MPI_Count n, MPI_Count *offset)
{
    return place(tree, n / tree->size, ferry__dt_offset(tree->root, n % tree->size), offset);
}

static int nonempty(const ferry__dt_tree_t *tree, MPI_Count n)
{
    if (!tree->root || n < 0)
        return ferry__error_set(MPI_ERR_ARG, "ferry: stream byte %lld does not exist", (long long)n);
    return 0;
}

int ferry__datatype_offset(MPI_Datatype type, MPI_Count n, MPI_Count *offset)
{
    ferry__dt_scratch_t scratch;
    const ferry__dt_tree_t *tree;
    FERRY_TRY(ferry__dt_tree_of(type, &scratch, &tree));
    FERRY_TRY(nonempty(tree, n));
    return offset_in(tree, n, offset);
}

static int monotone_tree(MPI_Datatype type, ferry__dt_scratch_t *scratch, const ferry__dt_tree_t **tree)
{
    FERRY_TRY(ferry__dt_tree_of(type, scratch, tree));
    if (!monotone_tiling(*tree))
        return ferry__error_set(MPI_ERR_ARG, "ferry: navigation by offset needs a monotone datatype");
    return 0;
}

static MPI_Count below_in(const ferry__dt_tree_t *tree, MPI_Count count, MPI_Count offset)
{
    if (!tree->root || count <= 0) return 0;
    return ferry__dt_below_count(tree->root, count, tree->extent, offset);
}

int ferry__datatype_bytes_below(MPI_Datatype type, MPI_Count count, MPI_Count offset, MPI_Count *n)
{
    ferry__dt_scratch_t scratch;
    const ferry__dt_tree_t *tree;
    FERRY_TRY(monotone_tree(type, &scratch, &tree));
    *n = below_in(tree, count, offset);
    return 0;
}

/* A count large enough to stand for "tiled without end". */
static MPI_Count endless(const ferry__dt_tree_t *tree)
{
    return (((MPI_Count)1 << 62) / (tree->size > 0 ? tree->size : 1)) / (tree->extent > 0 ? tree->extent : 1);
}

int ferry__datatype_ff_size(MPI_Datatype type, MPI_Count skip, MPI_Count extent, MPI_Count *size)
{
    ferry__dt_scratch_t scratch;
    const ferry__dt_tree_t *tree;
    FERRY_TRY(monotone_tree(type, &scratch, &tree));
    FERRY_TRY(nonempty(tree, skip));
    MPI_Count from = 0, end = 0;
    FERRY_TRY(offset_in(tree, skip, &from));
    if (ferry__offset_add(from, extent, &end)) end = FERRY_OFFSET_MAX;
    MPI_Count got = below_in(tree, endless(tree), end) - skip;
    *size = got > 0 ? got : 0;
    return 0;
}

int ferry__datatype_ff_extent(MPI_Datatype type, MPI_Count skip, MPI_Count size, MPI_Count *extent)
{
    ferry__dt_scratch_t scratch;
    const ferry__dt_tree_t *tree;
    FERRY_TRY(monotone_tree(type, &scratch, &tree));
    *extent = 0;
    if (size <= 0) return 0;
    FERRY_TRY(nonempty(tree, skip));
    MPI_Count first = 0, last = 0;
    FERRY_TRY(offset_in(tree, skip, &first));
    FERRY_TRY(offset_in(tree, skip + size - 1, &last));
    *extent = last + 1 - first;
    return 0;
}

void ferry__datatype_cursor_init(ferry__datatype_cursor_t *cursor, MPI_Datatype type, MPI_Count skip,
                                 MPI_Count len)
{
    *cursor = (ferry__datatype_cursor_t){type, skip, skip + len};
}

int ferry__datatype_segments(ferry__datatype_cursor_t *cursor, ferry__datatype_segment_t *segs, int max, int *n)
{
    ferry__dt_scratch_t scratch;
    const ferry__dt_tree_t *tree;
    *n = 0;
    FERRY_TRY(ferry__dt_tree_of(cursor->type, &scratch, &tree));
    if (cursor->pos >= cursor->end) return 0;
    FERRY_TRY(nonempty(tree, cursor->pos));
    int k = 0;
    while (cursor->pos < cursor->end) {
        MPI_Count run, left = cursor->end - cursor->pos, off = 0;
        MPI_Count within = ferry__dt_locate(tree->root, cursor->pos % tree->size, &run);
        FERRY_TRY(place(tree, cursor->pos / tree->size, within, &off));
        run = run < left ? run : left;
        if (k > 0 && segs[k - 1].offset + segs[k - 1].length == off) {
            segs[k - 1].length += run;
        } else if (k == max) {
            break;
        } else {
            segs[k++] = (ferry__datatype_segment_t){off, run};
        }
        cursor->pos += run;
    }
    *n = k;
    return 0;
}

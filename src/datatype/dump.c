/* A readable dump of a decoded tree, for test failures and debugging. */
#include <stdio.h>

#include "datatype/datatype_int.h"
#include "error/error.h"

static void dump_node(const ferry__dt_node_t *nd, FILE *out, int indent)
{
    static const char *kinds[] = {"leaf", "vec", "list", "seq"};
    fprintf(out, "%*s%s disp %lld size %lld extent %lld [%lld,%lld)%s", indent, "", kinds[nd->kind],
            (long long)nd->disp, (long long)nd->size, (long long)nd->extent, (long long)nd->lo, (long long)nd->hi,
            nd->monotone ? " monotone" : "");
    if (nd->kind == FERRY__DT_VEC) fprintf(out, " count %lld stride %lld", (long long)nd->count, (long long)nd->stride);
    if (nd->kind == FERRY__DT_LIST) {
        fprintf(out, " entries");
        for (MPI_Count i = 0; i < nd->count && i < 16; i++)
            fprintf(out, " %lld:%lld", (long long)nd->disps[i], (long long)ferry__dt_len(nd, i));
        if (nd->count > 16) fprintf(out, " ... (%lld)", (long long)nd->count);
    }
    fputc('\n', out);
    if (nd->child) dump_node(nd->child, out, indent + 2);
    for (MPI_Count i = 0; nd->parts && i < nd->count; i++) dump_node(nd->parts[i], out, indent + 2);
}

int ferry__datatype_dump(MPI_Datatype type, FILE *out)
{
    ferry__dt_scratch_t scratch;
    const ferry__dt_tree_t *tree;
    FERRY_TRY(ferry__dt_tree_of(type, &scratch, &tree));
    fprintf(out, "tree: %zu nodes, %zu bytes, size %lld extent %lld\n", tree->nodes, tree->bytes,
            (long long)tree->size, (long long)tree->extent);
    if (tree->root) dump_node(tree->root, out, 2);
    return 0;
}

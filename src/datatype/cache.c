/*
 * The decoded tree of a datatype, cached on the datatype itself.
 *
 * A derived type is decoded once and its tree is stored as an attribute
 * (a type keyval created once per process). The delete callback frees the
 * tree when the type is freed; the copy callback lets MPI_Type_dup share it
 * (reference count), since a dup has the same type map. Nothing is looked up
 * by handle value: a freed handle may be reused for another type.
 *
 * Predefined types cannot carry attributes in every MPI; they are one or two
 * byte runs, built on each call into caller-provided scratch space.
 *
 * Decoding and setting the attribute happen under one mutex, so two threads
 * never both install a tree on a type (the loser's would be deleted under
 * the winner). The keyval is freed at MPI_Finalize by a function this
 * module registers with the finalize hook (ferry__process_at_finalize).
 */
#include <pthread.h>

#include "base/alloc.h"
#include "base/process.h"
#include "datatype/datatype_int.h"
#include "error/error.h"

static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t decode_lock = PTHREAD_MUTEX_INITIALIZER;
static int type_keyval = MPI_KEYVAL_INVALID;
static MPI_Comm probe_comm = MPI_COMM_NULL; /* MPI_COMM_SELF's duplicate with MPI_ERRORS_RETURN */

static void tree_release(ferry__dt_tree_t *tree)
{
    if (tree && atomic_fetch_sub(&tree->refs, 1) == 1) {
        ferry__dt_node_free(tree->root);
        ferry__free(tree);
    }
}

static int copy_tree(MPI_Datatype type, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)type, (void)keyval, (void)extra;
    atomic_fetch_add(&((ferry__dt_tree_t *)in)->refs, 1);
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_tree(MPI_Datatype type, int keyval, void *attr, void *extra)
{
    (void)type, (void)keyval, (void)extra;
    tree_release(attr);
    return MPI_SUCCESS;
}

static void on_finalize(void)
{
    if (type_keyval != MPI_KEYVAL_INVALID) MPI_Type_free_keyval(&type_keyval);
    if (probe_comm != MPI_COMM_NULL) MPI_Comm_free(&probe_comm);
}

static void create_keyval(void)
{
    if (ferry__process_at_finalize(on_finalize) != 0) return;
    if (MPI_Comm_dup(MPI_COMM_SELF, &probe_comm) != MPI_SUCCESS) probe_comm = MPI_COMM_NULL;
    else MPI_Comm_set_errhandler(probe_comm, MPI_ERRORS_RETURN);
    if (MPI_Type_create_keyval(copy_tree, delete_tree, &type_keyval, NULL) != MPI_SUCCESS) {
        type_keyval = MPI_KEYVAL_INVALID;
    }
}

int ferry__datatype_committed(MPI_Datatype type)
{
    pthread_once(&keyval_once, create_keyval);
    if (probe_comm == MPI_COMM_NULL) return 1; /* cannot tell: let it through */
    /* No MPI function reports whether a type is committed, but both hosts
     * check it among MPI_Pack's arguments, for a count of 0 too (Open MPI
     * 4.1's OMPI_CHECK_DATATYPE_FOR_SEND, MPICH 4.0's committed-pointer
     * check): about 15 ns, so nothing is cached (a cache keyed on the type
     * would have to follow MPI_Type_commit, which ferry does not see). */
    char none = 0;
    int position = 0;
    return MPI_Pack(&none, 0, type, &none, 0, &position, probe_comm) == MPI_SUCCESS;
}

const ferry__dt_tree_t *ferry__dt_cached(MPI_Datatype type)
{
    void *cached = NULL;
    int flag = 0;
    if (type_keyval == MPI_KEYVAL_INVALID || MPI_Type_get_attr(type, type_keyval, &cached, &flag) != MPI_SUCCESS)
        return NULL;
    return flag ? cached : NULL;
}

int ferry__dt_named_runs(MPI_Datatype type, MPI_Count disps[2], MPI_Count lens[2], int *n)
{
    MPI_Count size, true_lb, true_extent;
    if (MPI_Type_size_x(type, &size) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(type, &true_lb, &true_extent) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: invalid datatype");
    disps[0] = true_lb;
    lens[0] = size;
    *n = 1;
    if (size == true_extent || size == 0) return 0;
    /* Pair types for MINLOC/MAXLOC: a value, then an int at the end. */
    if (type != MPI_SHORT_INT && type != MPI_LONG_INT && type != MPI_DOUBLE_INT && type != MPI_LONG_DOUBLE_INT &&
        type != MPI_FLOAT_INT && type != MPI_2INT)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: predefined datatype with holes is not supported");
    lens[0] = size - (MPI_Count)sizeof(int);
    disps[1] = true_lb + true_extent - (MPI_Count)sizeof(int);
    lens[1] = (MPI_Count)sizeof(int);
    *n = 2;
    return 0;
}

static int host_numbers(MPI_Datatype type, ferry__dt_tree_t *tree)
{
    if (MPI_Type_size_x(type, &tree->size) != MPI_SUCCESS ||
        MPI_Type_get_extent_x(type, &tree->lb, &tree->extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(type, &tree->true_lb, &tree->true_extent) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_TYPE, "ferry: invalid datatype");
    if (tree->size == MPI_UNDEFINED) return ferry__error_set(MPI_ERR_TYPE, "ferry: datatype size overflows");
    return 0;
}

/* Properties that need the whole tree. */
static void summarize(ferry__dt_tree_t *tree)
{
    tree->nodes = 0;
    tree->bytes = sizeof *tree;
    ferry__dt_footprint(tree->root, &tree->nodes, &tree->bytes);
    tree->nonoverlapping = !tree->root || ferry__dt_nonoverlapping(tree->root);
}

static int named_tree(MPI_Datatype type, ferry__dt_scratch_t *s)
{
    int n;
    ferry__dt_tree_t *tree = &s->tree;
    ferry__dt_node_t *node = &s->node;
    FERRY_TRY(host_numbers(type, tree));
    FERRY_TRY(ferry__dt_named_runs(type, s->disps, s->lens, &n));
    *node = (ferry__dt_node_t){.kind = n == 1 ? FERRY__DT_LEAF : FERRY__DT_LIST, .monotone = 1,
                               .size = tree->size, .extent = tree->extent, .lo = tree->true_lb,
                               .hi = tree->true_lb + tree->true_extent, .count = n};
    if (n == 1) {
        node->disp = s->disps[0];
        node->copy = ferry__dt_copy_for(node->size);
        node->copy2 = ferry__dt_copy2_for(node->size);
    } else {
        s->prefix[0] = 0;
        s->prefix[1] = s->lens[0];
        s->prefix[2] = tree->size;
        node->disps = s->disps;
        node->prefix = s->prefix;
    }
    tree->root = tree->size > 0 ? node : NULL;
    tree->nodes = 1;
    tree->bytes = 0;
    tree->nonoverlapping = 1;
    return 0;
}

static int decode_tree(MPI_Datatype type, ferry__dt_tree_t **out)
{
    ferry__dt_tree_t *tree = ferry__calloc(1, sizeof *tree);
    if (!tree) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory decoding a datatype");
    atomic_init(&tree->refs, 1);
    int rc = host_numbers(type, tree);
    if (rc == 0) rc = ferry__dt_decode(type, &tree->root);
    if (rc == 0 && (tree->root ? tree->root->size : 0) != tree->size)
        rc = ferry__error_set(MPI_ERR_INTERN, "ferry: decoded datatype has %lld bytes, the host says %lld",
                              (long long)(tree->root ? tree->root->size : 0), (long long)tree->size);
    if (rc != 0) {
        tree_release(tree);
        return rc;
    }
    summarize(tree);
    *out = tree;
    return 0;
}

/* Decodes type and stores the tree on it, unless another thread did. */
static int install(MPI_Datatype type, const ferry__dt_tree_t **out)
{
    void *cached = NULL;
    int flag = 0, rc = 0;
    pthread_mutex_lock(&decode_lock);
    if (MPI_Type_get_attr(type, type_keyval, &cached, &flag) != MPI_SUCCESS) flag = 0;
    if (!flag) {
        ferry__dt_tree_t *tree = NULL;
        rc = decode_tree(type, &tree);
        if (rc == 0 && MPI_Type_set_attr(type, type_keyval, tree) != MPI_SUCCESS) {
            tree_release(tree);
            rc = ferry__error_set(MPI_ERR_TYPE, "ferry: cannot attach the decoded tree to a datatype");
        }
        cached = tree;
    }
    pthread_mutex_unlock(&decode_lock);
    *out = cached;
    return rc;
}

int ferry__dt_tree_of(MPI_Datatype type, ferry__dt_scratch_t *scratch, const ferry__dt_tree_t **out)
{
    if (type == MPI_DATATYPE_NULL) return ferry__error_set(MPI_ERR_TYPE, "ferry: MPI_DATATYPE_NULL");
    pthread_once(&keyval_once, create_keyval);
    if (type_keyval == MPI_KEYVAL_INVALID)
        return ferry__error_set(MPI_ERR_INTERN, "ferry: cannot create the datatype keyval");
    void *cached = NULL;
    int flag = 0, named;
    if (MPI_Type_get_attr(type, type_keyval, &cached, &flag) == MPI_SUCCESS && flag) {
        *out = cached;
        return 0;
    }
    FERRY_TRY(ferry__dt_is_named(type, &named));
    if (!named) return install(type, out);
    FERRY_TRY(named_tree(type, scratch));
    *out = &scratch->tree;
    return 0;
}

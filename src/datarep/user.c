/*
 * Representations registered with ferry_Register_datarep (MPI-3.1 13.5.3)
 * or its large-count form ferry_Register_datarep_c (MPI-4.0 14.5.3).
 *
 * The conversion functions see the caller's (buf, datatype) and convert
 * `count` items starting at item `position` of the datatype tiled over buf;
 * the file side is those items back to back, each of the size the
 * representation's dtype_file_extent_fn gives its predefined type. A window
 * is served by one call for the whole items it holds; an item the window
 * cuts is written through a small buffer (pack), and read once the next
 * window completes it (the stream's carry), since a user function converts
 * whole items only. MPI_CONVERSION_FN_NULL moves
 * native bytes, which needs every file extent equal to the native size.
 */
#include <limits.h>
#include <string.h>

#include "base/alloc.h"
#include "datarep/datarep_int.h"
#include "datatype/datatype.h"
#include "error/error.h"

static int no_conversion(const ferry__datarep_t *rep, const ferry__dr_sig_t *sig, const char *dir)
{
    if (sig->same_size) return 0;
    return ferry__error_set(MPI_ERR_CONVERSION,
                            "ferry: data representation '%s' has no %s_conversion_fn, so data moves in native "
                            "form, but its file extents differ from the native sizes",
                            rep->name, dir);
}

/* Items wholly inside file bytes [pos, end), pos being an item's start. */
static MPI_Count whole_items(const ferry__dr_sig_t *sig, MPI_Count count, const ferry__dr_spot_t *first,
                             MPI_Count end)
{
    if (end >= count * sig->size.f) return count * sig->size.i - first->at.i;
    ferry__dr_spot_t last;
    ferry__dr_locate(sig, count, end, &last);
    return last.at.i - first->at.i;
}

/* `count` items of the user's (buf, type) from item `first` on, whose file
 * form is at `file`: what one conversion function call converts. */
typedef struct item_run {
    MPI_Offset first;
    MPI_Count count;
    void *file;
} item_run_t;

/* Calls the user's read (reading) or write conversion function on run:
 * the large-count form as it is, the int one when the run fits an int. */
static int convert(const ferry__datarep_t *rep, int reading, const void *buf, MPI_Datatype type,
                   const item_run_t *run)
{
    const ferry__dr_conversion_t *fn = reading ? &rep->read : &rep->write;
    const char *dir = reading ? "read" : "write";
    int code;
    if (fn->fn_c) {
        code = fn->fn_c((void *)buf, type, run->count, run->file, run->first, rep->extra_state);
    } else if (run->count > INT_MAX) {
        return ferry__error_set(MPI_ERR_COUNT,
                                "ferry: data representation '%s': a window holds more than INT_MAX items for its "
                                "int-count %s_conversion_fn",
                                rep->name, dir);
    } else {
        code = fn->fn((void *)buf, type, (int)run->count, run->file, run->first, rep->extra_state);
    }
    if (code == MPI_SUCCESS) return 0;
    return ferry__error_set(MPI_ERR_CONVERSION, "ferry: data representation '%s': %s_conversion_fn returned %d",
                            rep->name, dir, code);
}

static int converts(const ferry__dr_conversion_t *fn)
{
    return fn->fn || fn->fn_c;
}

/* Memory without a conversion function: native bytes, when every file extent is the native size. */
static int move_native(const ferry__dr_user_window_t *w, MPI_Count skip, void *file, MPI_Count len)
{
    const ferry__datarep_memory_t *m = w->mem;
    FERRY_TRY(no_conversion(w->rep, w->sig, w->write ? "write" : "read"));
    return w->write ? ferry__datatype_pack(m->buf, m->count, m->type, skip, file, len)
                    : ferry__datatype_unpack(file, len, m->buf, m->count, m->type, skip);
}

/* The item at `at`, of which the window holds file bytes [pos, stop) at
 * `part`: written through a small buffer, or read once the carry holds it whole. */
static int cut_item(const ferry__dr_user_window_t *w, const ferry__dr_spot_t *at, MPI_Count pos, MPI_Count stop,
                    char *part)
{
    const ferry__datarep_memory_t *m = w->mem;
    if (!w->write) {
        unsigned char whole[FERRY__DR_ITEM_MAX];
        if (!ferry__dr_carry_feed(w->carry, at, (const unsigned char *)part, pos - at->at.f, stop - at->at.f, whole))
            return 0;
        return convert(w->rep, 1, m->buf, m->type, &(item_run_t){at->at.i, 1, whole});
    }
    char *item = ferry__malloc((size_t)at->leaf->fsize + 1);
    if (!item) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory");
    int cls = convert(w->rep, 0, m->buf, m->type, &(item_run_t){at->at.i, 1, item});
    if (cls == 0) memcpy(part, item + (pos - at->at.f), (size_t)(stop - pos));
    ferry__free(item);
    return cls;
}

int ferry__dr_user_walk(const ferry__dr_user_window_t *w, MPI_Count skip, void *file, MPI_Count len)
{
    if (!converts(w->write ? &w->rep->write : &w->rep->read)) return move_native(w, skip, file, len);
    const ferry__dr_sig_t *sig = w->sig;
    MPI_Count count = w->mem->count, pos = skip, end = skip + len;
    while (pos < end) {
        ferry__dr_spot_t at;
        ferry__dr_locate(sig, count, pos, &at);
        MPI_Count n = pos == at.at.f ? whole_items(sig, count, &at, end) : 0;
        if (n > 0) {
            item_run_t run = {at.at.i, n, (char *)file + (pos - skip)};
            FERRY_TRY(convert(w->rep, !w->write, w->mem->buf, w->mem->type, &run));
            if (end >= count * sig->size.f) break;
            ferry__dr_locate(sig, count, end, &at);
            pos = at.at.f;
            continue;
        }
        MPI_Count stop = end < at.at.f + at.leaf->fsize ? end : at.at.f + at.leaf->fsize;
        FERRY_TRY(cut_item(w, &at, pos, stop, (char *)file + (pos - skip)));
        pos = stop;
    }
    return 0;
}

/*
 * Representations registered with ferry_Register_datarep (MPI-3.1 13.5.3).
 *
 * The conversion functions see the caller's (buf, datatype) and convert
 * `count` items starting at item `position` of the datatype tiled over buf;
 * the file side is those items back to back, each of the size the
 * representation's dtype_file_extent_fn gives its predefined type. A window
 * is served by one call for the whole items it holds; an item the window
 * cuts is written through a small buffer (pack), and read once the next
 * window completes it (convert.c's carry), since a user function converts
 * whole items only. MPI_CONVERSION_FN_NULL moves
 * native bytes, which needs every file extent equal to the native size.
 */
#include <limits.h>
#include <string.h>

#include "core/core.h"
#include "datarep/datarep_int.h"
#include "datatype/datatype.h"
#include "error/error.h"

static int user_failed(const ferry__datarep_t *rep, const char *dir, int code)
{
    return ferry__error_set(MPI_ERR_CONVERSION, "ferry: data representation '%s': %s_conversion_fn returned %d",
                            rep->name, dir, code);
}

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

static int too_many(const ferry__datarep_t *rep)
{
    return ferry__error_set(MPI_ERR_COUNT, "ferry: data representation '%s': a window holds more than INT_MAX items",
                            rep->name);
}

int ferry__dr_user_pack(const ferry__datarep_t *rep, const ferry__dr_sig_t *sig, const void *buf, MPI_Count count,
                        MPI_Datatype type, MPI_Count skip, void *dst, MPI_Count len)
{
    if (!rep->write_fn) {
        FERRY_TRY(no_conversion(rep, sig, "write"));
        return ferry__datatype_pack(buf, count, type, skip, dst, len);
    }
    MPI_Count pos = skip, end = skip + len;
    while (pos < end) {
        ferry__dr_spot_t at;
        ferry__dr_locate(sig, count, pos, &at);
        MPI_Count fsize = at.leaf->fsize, n = pos == at.at.f ? whole_items(sig, count, &at, end) : 0;
        if (n > INT_MAX) return too_many(rep);
        if (n > 0) {
            int code = rep->write_fn((void *)buf, type, (int)n, (char *)dst + (pos - skip), at.at.i, rep->extra_state);
            if (code != MPI_SUCCESS) return user_failed(rep, "write", code);
            if (end >= count * sig->size.f) break;
            ferry__dr_locate(sig, count, end, &at);
            pos = at.at.f;
            continue;
        }
        MPI_Count stop = end < at.at.f + fsize ? end : at.at.f + fsize;
        char *item = ferry__malloc((size_t)fsize + 1);
        if (!item) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory");
        int code = rep->write_fn((void *)buf, type, 1, item, at.at.i, rep->extra_state);
        if (code == MPI_SUCCESS) memcpy((char *)dst + (pos - skip), item + (pos - at.at.f), (size_t)(stop - pos));
        ferry__free(item);
        if (code != MPI_SUCCESS) return user_failed(rep, "write", code);
        pos = stop;
    }
    return 0;
}

int ferry__dr_user_unpack(const ferry__datarep_t *rep, const ferry__dr_sig_t *sig, const void *src, MPI_Count len,
                          void *buf, MPI_Count count, MPI_Datatype type, MPI_Count skip)
{
    if (!rep->read_fn) {
        FERRY_TRY(no_conversion(rep, sig, "read"));
        return ferry__datatype_unpack(src, len, buf, count, type, skip);
    }
    MPI_Count pos = skip, end = skip + len;
    while (pos < end) {
        ferry__dr_spot_t at;
        ferry__dr_locate(sig, count, pos, &at);
        MPI_Count n = pos == at.at.f ? whole_items(sig, count, &at, end) : 0;
        int code;
        if (n > INT_MAX) return too_many(rep);
        if (n > 0) {
            code = rep->read_fn(buf, type, (int)n, (char *)src + (pos - skip), at.at.i, rep->extra_state);
            if (code != MPI_SUCCESS) return user_failed(rep, "read", code);
            if (end >= count * sig->size.f) break;
            ferry__dr_locate(sig, count, end, &at);
            pos = at.at.f;
            continue;
        }
        /* A cut element: converted once an earlier window's part completes it. */
        unsigned char whole[FERRY__DR_ITEM_MAX];
        MPI_Count stop = end < at.at.f + at.leaf->fsize ? end : at.at.f + at.leaf->fsize;
        if (ferry__dr_carry(buf, count, type, &at, (const unsigned char *)src + (pos - skip), pos - at.at.f,
                            stop - at.at.f, whole)) {
            code = rep->read_fn(buf, type, 1, whole, at.at.i, rep->extra_state);
            if (code != MPI_SUCCESS) return user_failed(rep, "read", code);
        }
        pos = stop;
    }
    return 0;
}

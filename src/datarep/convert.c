/*
 * Windowed conversion between (buf, count, type) in memory and the file
 * stream of a representation.
 *
 * external32: the window's items are located in the signature (O(depth)),
 * their native bytes moved through a bounded staging chunk by the datatype
 * engine (or read and written in place when the memory stream is
 * contiguous), and converted a run of same-type items at a time. An item the
 * window cuts is converted whole into a small buffer and the window's part
 * copied (pack). Unpack keeps a cut item's leading file bytes in the
 * stream object and converts the item whole when the next window
 * continues it; out of
 * order it stores only the bytes the window determines alone (every
 * byte-order and integer-widening conversion; long double, LOGICAL and user
 * conversions need the whole item).
 */
#include <string.h>

#include "base/alloc.h"
#include "datarep/datarep_int.h"
#include "datatype/datatype.h"
#include "error/error.h"

enum { CHUNK = 64 << 10, ITEM_MAX = FERRY__DR_ITEM_MAX };

typedef struct stream {
    const ferry__dr_sig_t *sig;
    void *buf; /* the caller's buffer (const for pack) */
    MPI_Count count;
    MPI_Datatype type;
    unsigned char *chunk; /* native bytes [c0, c0 + clen) */
    MPI_Count c0, clen;
    unsigned char *direct; /* the native stream itself when memory is contiguous: no staging */
    ferry__dr_spot_t last; /* the run found last (flat signatures: the next one follows without a search) */
    int have_last;
} stream_t;

static int conversion_error(const ferry__dr_basic_t *b, const char *dir)
{
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    MPI_Type_get_name(b->type, name, &len);
    return ferry__error_set(MPI_ERR_CONVERSION, "ferry: external32 %s: a %s value does not fit its %s size", dir,
                            len > 0 ? name : "predefined", dir[0] == 'w' ? "file" : "memory");
}

/* Makes native bytes [m, m + need) staged, refilling up to `limit`. */
static int stage(stream_t *s, MPI_Count m, MPI_Count need, MPI_Count limit)
{
    if (s->direct || (m >= s->c0 && m + need <= s->c0 + s->clen)) return 0; /* direct: all of it is there */
    s->c0 = m;
    s->clen = limit - m < CHUNK ? limit - m : CHUNK;
    return ferry__datatype_pack(s->buf, s->count, s->type, m, s->chunk, s->clen);
}

/* Native bytes up to the end of the item holding file byte end - 1. */
static MPI_Count native_limit(const ferry__dr_sig_t *sig, MPI_Count count, MPI_Count end)
{
    ferry__dr_spot_t e;
    ferry__dr_locate(sig, count, end - 1, &e);
    return e.at.m + e.leaf->msize;
}

/* The item at file byte pos: how many whole items of its run fit before
 * end (0: the window cuts it, and *stop is where the window's part ends). */
static MPI_Count next_run(stream_t *s, MPI_Count pos, MPI_Count end, ferry__dr_spot_t *at, MPI_Count *stop)
{
    const ferry__dr_spot_t *l = &s->last;
    if (s->have_last && s->sig->runs && pos == l->at.f + l->run * l->leaf->fsize) {
        *at = *l;
        ferry__dr_next_run(s->sig, at);
    } else {
        ferry__dr_locate(s->sig, s->count, pos, at);
    }
    s->last = *at;
    s->have_last = 1;
    MPI_Count fsize = at->leaf->fsize, n = at->run;
    *stop = end < at->at.f + fsize ? end : at->at.f + fsize;
    if (pos != at->at.f) return 0;
    if (at->at.f + n * fsize > end) n = (end - pos) / fsize;
    return n;
}

/* ne whole elements of a flat signature, run by run. */
static int convert_elements(const ferry__dr_sig_t *sig, int put, const unsigned char *src, unsigned char *dst,
                            MPI_Count ne)
{
    MPI_Count ss = put ? sig->size.m : sig->size.f, ds = put ? sig->size.f : sig->size.m;
    for (MPI_Count e = 0; e < ne; e++, src += ss, dst += ds)
        for (MPI_Count r = 0; r < sig->nruns; r++) {
            const ferry__dr_run_t *run = &sig->runs[r];
            MPI_Count from = put ? run->at.m : run->at.f, to = put ? run->at.f : run->at.m;
            int rc = put ? ferry__dr_put(run->leaf, src + from, dst + to, run->n)
                         : ferry__dr_get(run->leaf, src + from, dst + to, run->n);
            if (rc) return conversion_error(run->leaf, put ? "write" : "read");
        }
    return 0;
}

/* Whole elements of a flat signature from file byte pos on (0: none). */
static MPI_Count whole_elements(const stream_t *s, MPI_Count pos, MPI_Count end)
{
    const ferry__dr_sig_t *sig = s->sig;
    if (!sig->runs || sig->size.m > CHUNK || end - pos < sig->size.f || pos % sig->size.f) return 0;
    MPI_Count ne = (end - pos) / sig->size.f;
    return ne < CHUNK / sig->size.m ? ne : CHUNK / sig->size.m;
}

static int ext_pack(stream_t *s, MPI_Count skip, unsigned char *dst, MPI_Count len)
{
    MPI_Count pos = skip, end = skip + len, limit = native_limit(s->sig, s->count, end);
    while (pos < end) {
        MPI_Count ne = whole_elements(s, pos, end), m = pos / s->sig->size.f * s->sig->size.m;
        if (ne > 0) {
            FERRY_TRY(stage(s, m, s->sig->size.m, limit));
            MPI_Count staged = (s->c0 + s->clen - m) / s->sig->size.m;
            ne = ne < staged ? ne : staged;
            FERRY_TRY(convert_elements(s->sig, 1, s->chunk + (m - s->c0), dst + (pos - skip), ne));
            pos += ne * s->sig->size.f;
            continue;
        }
        ferry__dr_spot_t at;
        MPI_Count stop, n = next_run(s, pos, end, &at, &stop);
        const ferry__dr_basic_t *b = at.leaf;
        if (n == 0) { /* a cut item */
            unsigned char file[ITEM_MAX];
            FERRY_TRY(stage(s, at.at.m, b->msize, limit));
            if (ferry__dr_put(b, s->chunk + (at.at.m - s->c0), file, 1)) return conversion_error(b, "write");
            memcpy(dst + (pos - skip), file + (pos - at.at.f), (size_t)(stop - pos));
            pos = stop;
            continue;
        }
        if (n > CHUNK / b->msize) n = CHUNK / b->msize;
        FERRY_TRY(stage(s, at.at.m, b->msize, limit));
        MPI_Count staged = (s->c0 + s->clen - at.at.m) / b->msize;
        if (n > staged) n = staged;
        if (ferry__dr_put(b, s->chunk + (at.at.m - s->c0), dst + (pos - skip), n)) return conversion_error(b, "write");
        pos += n * b->fsize;
    }
    return 0;
}

static int flush(stream_t *s)
{
    int rc = s->clen > 0 && !s->direct ? ferry__datatype_unpack(s->chunk, s->clen, s->buf, s->count, s->type, s->c0)
                                       : 0;
    s->clen = 0;
    return rc;
}

/* Where up to *units units of native bytes from m on are converted to:
 * contiguous memory itself, or the staging chunk (flushed when it cannot
 * continue; *units shrinks to what fits). */
static int reserve(stream_t *s, MPI_Count m, MPI_Count unit, MPI_Count *units, unsigned char **to)
{
    if (s->direct) {
        *to = s->direct + m;
        return 0;
    }
    if (s->clen > 0 && (s->c0 + s->clen != m || s->clen + unit > CHUNK)) FERRY_TRY(flush(s));
    if (s->clen == 0) s->c0 = m;
    MPI_Count room = (CHUNK - s->clen) / unit;
    if (*units > room) *units = room;
    *to = s->chunk + s->clen;
    s->clen += *units * unit;
    return 0;
}

int ferry__dr_carry_feed(ferry__dr_carry_t *carry, const ferry__dr_spot_t *at, const unsigned char *src,
                         MPI_Count lo, MPI_Count hi, unsigned char *whole)
{
    MPI_Count fsize = at->leaf->fsize;
    int continues = carry->have == lo && carry->item == at->at.f;
    if (fsize > ITEM_MAX || (lo > 0 && !continues)) {
        carry->have = -1;
        return 0;
    }
    carry->item = at->at.f;
    memcpy(carry->bytes + lo, src, (size_t)(hi - lo));
    carry->have = hi;
    if (hi < fsize) return 0;
    memcpy(whole, carry->bytes, (size_t)fsize);
    carry->have = -1;
    return 1;
}

/* File bytes [lo, hi) of the item at `at` are in src: store the native
 * bytes they determine. */
static int cut_unpack(stream_t *s, const ferry__dr_spot_t *at, const unsigned char *src, MPI_Count lo, MPI_Count hi)
{
    const ferry__dr_basic_t *b = at->leaf;
    unsigned char file[ITEM_MAX] = {0}, native[ITEM_MAX];
    memcpy(file + lo, src, (size_t)(hi - lo));
    (void)ferry__dr_get(b, file, native, 1); /* only bytes that do not depend on the missing ones are kept */
    for (MPI_Count j = 0; j < b->msize;) {
        MPI_Count k = j;
        while (k < b->msize) {
            int from = ferry__dr_source_byte(b, k);
            if (from < lo || from >= hi) break;
            k++;
        }
        if (k > j) FERRY_TRY(ferry__datatype_unpack(native + j, k - j, s->buf, s->count, s->type, at->at.m + j));
        j = k > j ? k : j + 1;
    }
    return 0;
}

static int ext_unpack(stream_t *s, ferry__dr_carry_t *carry, const unsigned char *src, MPI_Count len,
                      MPI_Count skip)
{
    MPI_Count pos = skip, end = skip + len;
    while (pos < end) {
        MPI_Count ne = whole_elements(s, pos, end), m = pos / s->sig->size.f * s->sig->size.m;
        if (ne > 0) {
            unsigned char *to;
            FERRY_TRY(reserve(s, m, s->sig->size.m, &ne, &to));
            FERRY_TRY(convert_elements(s->sig, 0, src + (pos - skip), to, ne));
            pos += ne * s->sig->size.f;
            continue;
        }
        ferry__dr_spot_t at;
        MPI_Count stop, n = next_run(s, pos, end, &at, &stop);
        const ferry__dr_basic_t *b = at.leaf;
        if (n == 0) {
            unsigned char whole[ITEM_MAX], native[ITEM_MAX];
            FERRY_TRY(flush(s));
            if (!ferry__dr_carry_feed(carry, &at, src + (pos - skip), pos - at.at.f, stop - at.at.f, whole))
                FERRY_TRY(cut_unpack(s, &at, src + (pos - skip), pos - at.at.f, stop - at.at.f));
            else if (ferry__dr_get(b, whole, native, 1))
                return conversion_error(b, "read");
            else
                FERRY_TRY(ferry__datatype_unpack(native, b->msize, s->buf, s->count, s->type, at.at.m));
            pos = stop;
            continue;
        }
        unsigned char *to;
        FERRY_TRY(reserve(s, at.at.m, b->msize, &n, &to));
        if (ferry__dr_get(b, src + (pos - skip), to, n)) return conversion_error(b, "read");
        pos += n * b->fsize;
    }
    return flush(s);
}

struct ferry__datarep_stream {
    const ferry__datarep_t *rep;
    ferry__datarep_memory_t mem;
    MPI_Count total;         /* file-stream bytes of the memory */
    ferry__dr_sig_t *sig;    /* owned: the memory's signature in rep; NULL for native representations */
    stream_t ext;            /* external32: the signature, the staging chunk and the run found last */
    unsigned char *staging;  /* owned; NULL when memory is contiguous (converted in place) or not external32 */
    ferry__dr_carry_t carry; /* a cut element's leading file bytes, for the window that continues it */
};

/* external32's staging: memory itself when its stream is contiguous, else a chunk of its own. */
static int open_external32(ferry__datarep_stream_t *st)
{
    ferry__typeinfo_t info;
    FERRY_TRY(ferry__datatype_info(st->mem.type, &info));
    stream_t *s = &st->ext;
    if (ferry__datatype_stream_contiguous(&info, st->mem.count)) { /* convert in place of staging */
        s->direct = s->chunk = ferry__datatype_at(st->mem.buf, info.true_lb);
        s->clen = st->mem.count * s->sig->size.m;
    } else if (!(s->chunk = st->staging = ferry__malloc(CHUNK))) {
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory converting to external32");
    }
    return 0;
}

int ferry__datarep_stream_open(const ferry__datarep_t *rep, const ferry__datarep_memory_t *mem,
                               ferry__datarep_stream_t **stream)
{
    ferry__datarep_stream_t *st = *stream = ferry__calloc(1, sizeof *st);
    if (!st) return ferry__error_set(MPI_ERR_NO_MEM, "ferry: out of memory converting '%s'", rep->name);
    *st = (ferry__datarep_stream_t){.rep = rep, .mem = *mem, .carry = {.have = -1}};
    st->ext = (stream_t){.buf = mem->buf, .count = mem->count, .type = mem->type};
    int rc = rep->kind == FERRY__DR_NATIVE ? 0 : ferry__dr_sig_build(rep, mem->type, &st->sig);
    st->ext.sig = st->sig;
    if (rc == 0 && st->sig) st->total = mem->count * st->sig->size.f;
    if (rc == 0 && st->sig && rep->kind == FERRY__DR_EXTERNAL32) rc = open_external32(st);
    if (rc == 0) return 0;
    ferry__datarep_stream_close(st);
    *stream = NULL;
    return rc;
}

void ferry__datarep_stream_close(ferry__datarep_stream_t *st)
{
    if (!st) return;
    ferry__dr_sig_free(st->sig);
    ferry__free(st->staging);
    ferry__free(st);
}

/* File bytes [skip, skip + len) must lie in the stream. */
static int check_window(const ferry__datarep_stream_t *st, MPI_Count skip, MPI_Count len)
{
    if (skip >= 0 && len >= 0 && skip + len <= st->total) return 0;
    return ferry__error_set(MPI_ERR_ARG, "ferry: window [%lld, +%lld) outside a %lld-byte file stream",
                            (long long)skip, (long long)len, (long long)st->total);
}

int ferry__datarep_stream_pack(ferry__datarep_stream_t *st, MPI_Count skip, void *dst, MPI_Count len)
{
    const ferry__datarep_memory_t *m = &st->mem;
    if (st->rep->kind == FERRY__DR_NATIVE) return ferry__datatype_pack(m->buf, m->count, m->type, skip, dst, len);
    if (len == 0) return 0;
    FERRY_TRY(check_window(st, skip, len));
    if (st->rep->kind == FERRY__DR_USER)
        return ferry__dr_user_walk(&(ferry__dr_user_window_t){st->rep, st->sig, m, &st->carry, 1}, skip, dst, len);
    return ext_pack(&st->ext, skip, dst, len);
}

int ferry__datarep_stream_unpack(ferry__datarep_stream_t *st, const void *src, MPI_Count len, MPI_Count skip)
{
    const ferry__datarep_memory_t *m = &st->mem;
    if (st->rep->kind == FERRY__DR_NATIVE) return ferry__datatype_unpack(src, len, m->buf, m->count, m->type, skip);
    if (len == 0) return 0;
    FERRY_TRY(check_window(st, skip, len));
    if (st->rep->kind == FERRY__DR_USER)
        return ferry__dr_user_walk(&(ferry__dr_user_window_t){st->rep, st->sig, m, &st->carry, 0}, skip,
                                   (void *)src, len);
    return ext_unpack(&st->ext, &st->carry, src, len, skip);
}

int ferry__datarep_pack(const ferry__datarep_t *rep, const ferry__datarep_memory_t *mem, MPI_Count skip, void *dst,
                        MPI_Count len)
{
    if (rep->kind == FERRY__DR_NATIVE) return ferry__datatype_pack(mem->buf, mem->count, mem->type, skip, dst, len);
    ferry__datarep_stream_t *st;
    FERRY_TRY(ferry__datarep_stream_open(rep, mem, &st));
    int rc = ferry__datarep_stream_pack(st, skip, dst, len);
    ferry__datarep_stream_close(st);
    return rc;
}

int ferry__datarep_unpack(const ferry__datarep_t *rep, const void *src, MPI_Count len,
                          const ferry__datarep_memory_t *mem, MPI_Count skip)
{
    if (rep->kind == FERRY__DR_NATIVE) return ferry__datatype_unpack(src, len, mem->buf, mem->count, mem->type, skip);
    ferry__datarep_stream_t *st;
    FERRY_TRY(ferry__datarep_stream_open(rep, mem, &st));
    int rc = ferry__datarep_stream_unpack(st, src, len, skip);
    ferry__datarep_stream_close(st);
    return rc;
}

/* Where the element holding file byte pos of (count, type) starts in both
 * streams; the streams' ends when pos is at or past the end. */
static int element_at(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Count count, MPI_Count pos,
                      ferry__dr_pos_t *at, int *inside)
{
    ferry__dr_sig_t *sig;
    FERRY_TRY(ferry__dr_sig_build(rep, type, &sig));
    *at = sig ? (ferry__dr_pos_t){count * sig->size.m, count * sig->size.f, count * sig->size.i}
              : (ferry__dr_pos_t){0, 0, 0};
    *inside = sig && pos < at->f;
    if (*inside) {
        ferry__dr_spot_t spot;
        ferry__dr_locate(sig, count, pos, &spot);
        *at = spot.at;
    }
    ferry__dr_sig_free(sig);
    return 0;
}

int ferry__datarep_item_floor(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Count count, MPI_Count pos,
                              MPI_Count *floor)
{
    ferry__dr_pos_t at;
    int inside;
    *floor = pos;
    if (rep->kind == FERRY__DR_NATIVE || pos <= 0) return 0;
    FERRY_TRY(element_at(rep, type, count, pos, &at, &inside));
    if (inside) *floor = at.f;
    return 0;
}

int ferry__datarep_native_bytes(const ferry__datarep_t *rep, MPI_Datatype type, MPI_Count count,
                                MPI_Count file_bytes, MPI_Count *native)
{
    ferry__dr_pos_t at;
    int inside;
    *native = file_bytes;
    if (rep->kind == FERRY__DR_NATIVE || file_bytes <= 0) return 0;
    FERRY_TRY(element_at(rep, type, count, file_bytes, &at, &inside));
    *native = at.m;
    return 0;
}

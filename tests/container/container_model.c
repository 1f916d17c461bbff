#include "container_model.h"

#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

void ct_model(uint64_t seed, int stream, size_t max_length, size_t max_piece, ct_model_t *m)
{
    uint64_t state = seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(stream + 1));
    memset(m, 0, sizeof *m);
    m->seed = ft_rand(&state);
    m->max_piece = max_piece;
    /* A quarter of the streams are empty or tiny; the rest anything up to max_length. */
    uint64_t kind = ft_rand(&state) % 4;
    m->length = kind == 0 ? (size_t)(ft_rand(&state) % 3) : (size_t)(ft_rand(&state) % (max_length + 1));
    if (m->length > 16 && ft_rand(&state) % 3 == 0) {
        m->hole_start = (size_t)(ft_rand(&state) % (m->length - 8));
        m->hole_end = m->hole_start + 1 + (size_t)(ft_rand(&state) % (m->length - m->hole_start - 2));
    }
}

void ct_expected(const ct_model_t *m, unsigned char *buf)
{
    ft_fill(buf, m->length, m->seed);
    if (m->hole_end > m->hole_start) memset(buf + m->hole_start, 0, m->hole_end - m->hole_start);
}

/* A write size from 1 byte to max_piece, small ones as likely as large. */
static size_t piece_size(uint64_t *state, size_t max_piece)
{
    size_t limit = (size_t)1 << (ft_rand(state) % 24);
    if (limit > max_piece) limit = max_piece;
    return 1 + (size_t)(ft_rand(state) % limit);
}

static void write_all(ferry_container_t c, const unsigned char *data, size_t len)
{
    size_t done = 0;
    FT_OK(ferry_container_write(c, data, len, &done));
    FT_EQ(done, len);
}

/* Seeks back up to `back` bytes and writes the same bytes again. */
static void rewrite_tail(ferry_container_t c, const unsigned char *expected, size_t pos, uint64_t *state)
{
    size_t back = 1 + (size_t)(ft_rand(state) % pos);
    FT_OK(ferry_container_seek(c, -(MPI_Offset)back, MPI_SEEK_CUR));
    write_all(c, expected + pos - back, back);
    MPI_Offset now;
    FT_OK(ferry_container_tell(c, &now));
    FT_EQ(now, pos);
}

size_t ct_write(ferry_container_t c, const ct_model_t *m, int flush_one_in)
{
    unsigned char *expected = malloc(m->length + 1);
    uint64_t state = m->seed ^ 0x5bd1e995u;
    size_t pos = 0, flushed = 0;
    FT_CHECK(expected != NULL);
    ct_expected(m, expected);
    while (pos < m->length) {
        if (pos == m->hole_start && m->hole_end > m->hole_start) {
            FT_OK(ferry_container_seek(c, (MPI_Offset)m->hole_end, MPI_SEEK_SET));
            pos = m->hole_end;
            continue;
        }
        size_t stop = pos < m->hole_start && m->hole_end > m->hole_start ? m->hole_start : m->length;
        size_t len = piece_size(&state, m->max_piece);
        if (len > stop - pos) len = stop - pos;
        write_all(c, expected + pos, len);
        pos += len;
        if (ft_rand(&state) % 8 == 0) rewrite_tail(c, expected, pos, &state);
        if (flush_one_in && ft_rand(&state) % (uint64_t)flush_one_in == 0) {
            FT_OK(ferry_container_flush(c));
            flushed = pos;
        }
    }
    free(expected);
    return flushed;
}

static void check_position(ferry_container_t c, const ct_model_t *m, size_t pos)
{
    MPI_Offset avail, at;
    int eof;
    FT_OK(ferry_container_bytes_avail(c, &avail));
    FT_OK(ferry_container_eof(c, &eof));
    FT_OK(ferry_container_tell(c, &at));
    FT_EQ(at, pos);
    FT_EQ(avail, m->length - pos);
    FT_EQ(eof, pos >= m->length);
}

void ct_check_read(ferry_container_t c, const ct_model_t *m)
{
    unsigned char *expected = malloc(m->length + 1), *got = malloc(m->length + 1);
    uint64_t state = m->seed ^ 0x1234567u;
    size_t pos = 0;
    FT_CHECK(expected && got);
    ct_expected(m, expected);
    FT_OK(ferry_container_seek(c, 0, MPI_SEEK_SET));
    for (;;) {
        check_position(c, m, pos);
        size_t want = piece_size(&state, m->max_piece), done = 0;
        FT_OK(ferry_container_read(c, got + pos, want <= m->length - pos ? want : m->length - pos + 1, &done));
        FT_EQ(done, want <= m->length - pos ? want : m->length - pos);
        pos += done;
        if (done == 0) break;
    }
    FT_EQ(pos, m->length);
    FT_EQ_MEM(got, expected, m->length);
    free(expected);
    free(got);
}

void ct_check_serial(ferry_container_set_t set, int stream, const ct_model_t *m)
{
    ferry_container_info_t info;
    unsigned char *expected = malloc(m->length + 1), *got = malloc(m->length + 1);
    FT_CHECK(expected && got);
    ct_expected(m, expected);
    FT_OK(ferry_container_serial_stream(set, stream, &info));
    FT_EQ(info.length, m->length);
    FT_EQ(info.stream, stream);
    size_t done = 0;
    FT_OK(ferry_container_serial_read(set, stream, 0, got, m->length + 1, &done));
    FT_EQ(done, m->length);
    FT_EQ_MEM(got, expected, m->length);
    if (m->length > 2) { /* any position */
        FT_OK(ferry_container_serial_read(set, stream, (MPI_Offset)(m->length / 2), got, m->length, &done));
        FT_EQ(done, m->length - m->length / 2);
        FT_EQ_MEM(got, expected + m->length / 2, done);
    }
    free(expected);
    free(got);
}

typedef struct extent {
    int file;
    MPI_Offset lo, hi;
} extent_t;

static int by_place(const void *a, const void *b)
{
    const extent_t *x = a, *y = b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void ct_check_alignment(ferry_container_set_t set)
{
    int streams, files, complete;
    size_t n = 0, cap = 64;
    extent_t *all = malloc(cap * sizeof *all);
    FT_OK(ferry_container_serial_describe(set, &streams, &files, &complete));
    for (int s = 0; s < streams; s++) {
        ferry_container_info_t info;
        FT_OK(ferry_container_serial_stream(set, s, &info));
        FT_EQ(info.chunk_size % info.block_size, 0);
        for (MPI_Offset b = 0; b < info.chunks; b++) {
            if (n == cap) all = realloc(all, (cap *= 2) * sizeof *all);
            MPI_Offset used;
            FT_OK(ferry_container_serial_chunk(set, s, b, &all[n].file, &all[n].lo, &used));
            FT_EQ(all[n].lo % info.block_size, 0);
            all[n].hi = all[n].lo + info.chunk_size;
            n++;
        }
    }
    qsort(all, n, sizeof *all, by_place);
    for (size_t i = 1; i < n; i++)
        if (all[i].file == all[i - 1].file) FT_CHECK(all[i].lo >= all[i - 1].hi);
    free(all);
}

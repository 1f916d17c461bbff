/*
 * CRC-32C (Castagnoli), the checksum of every container record and, when
 * asked for, of the data in each chunk: the SSE4.2 instruction where the
 * processor has it, eight bytes per step through tables otherwise. Both
 * give the same values.
 *
 * The instruction has a latency of three cycles, so one chain of it runs at
 * a third of its throughput: long buffers go through three interleaved
 * chains over adjacent LANE-byte pieces, joined by "shifting" a register
 * past LANE zero bytes (a linear map over GF(2), tabulated once), which
 * makes the checksum nearly three times faster.
 */
#include <pthread.h>
#include <string.h>

#include "container/container_int.h"

enum { POLY_REFLECTED = 0x82F63B78u, LANE = 4096 };

static uint32_t table[8][256];
static uint32_t lane_shift[4][256]; /* a register advanced past LANE zero bytes, byte by byte */
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static int have_hardware;

/* The 32x32 GF(2) matrix mat (its columns) times vec. */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
    uint32_t sum = 0;
    for (int i = 0; vec; vec >>= 1, i++)
        if (vec & 1) sum ^= mat[i];
    return sum;
}

/* out = a after b (both maps of the register). */
static void gf2_compose(uint32_t *out, const uint32_t *a, const uint32_t *b)
{
    uint32_t tmp[32];
    for (int n = 0; n < 32; n++) tmp[n] = gf2_times(a, b[n]);
    memcpy(out, tmp, sizeof tmp);
}

/* lane_shift: the map "append LANE zero bytes" by powers of the one-bit map. */
static void make_lane_shift(void)
{
    uint32_t power[32], result[32];
    power[0] = POLY_REFLECTED; /* one zero bit: the register shifts right, its low bit folds the polynomial in */
    for (int n = 1; n < 32; n++) power[n] = 1u << (n - 1);
    for (int n = 0; n < 32; n++) result[n] = 1u << n;
    for (uint64_t bits = (uint64_t)LANE * 8; bits; bits >>= 1) {
        if (bits & 1) gf2_compose(result, power, result);
        gf2_compose(power, power, power);
    }
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++) lane_shift[k][b] = gf2_times(result, b << (8 * k));
}

static uint32_t shift_past_lane(uint32_t c)
{
    return lane_shift[0][c & 0xff] ^ lane_shift[1][(c >> 8) & 0xff] ^ lane_shift[2][(c >> 16) & 0xff] ^
           lane_shift[3][c >> 24];
}

static void make_tables(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ POLY_REFLECTED : c >> 1;
        table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (uint32_t i = 0; i < 256; i++) table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
    make_lane_shift();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    have_hardware = __builtin_cpu_supports("sse4.2");
#endif
}

/* c is the running (inverted) register. */
static uint32_t crc_tables(uint32_t c, const unsigned char *p, size_t len)
{
    for (; len >= 8; p += 8, len -= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        c = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^ table[4][lo >> 24] ^
            table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^ table[0][p[7]];
    }
    while (len--) c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
    return c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) static unsigned long long word_at(const unsigned char *p)
{
    unsigned long long word;
    memcpy(&word, p, 8);
    return word;
}

/* Three chains over three adjacent lanes, joined: the register after all 3 * LANE bytes. */
__attribute__((target("sse4.2"))) static uint32_t three_lanes(uint32_t c, const unsigned char *p)
{
    unsigned long long a = c, b = 0, d = 0;
    for (size_t i = 0; i < LANE; i += 8) {
        a = __builtin_ia32_crc32di(a, word_at(p + i));
        b = __builtin_ia32_crc32di(b, word_at(p + LANE + i));
        d = __builtin_ia32_crc32di(d, word_at(p + 2 * LANE + i));
    }
    return shift_past_lane(shift_past_lane((uint32_t)a) ^ (uint32_t)b) ^ (uint32_t)d;
}

__attribute__((target("sse4.2"))) static uint32_t crc_hardware(uint32_t c, const unsigned char *p, size_t len)
{
    for (; len >= 3 * LANE; p += 3 * LANE, len -= 3 * LANE) c = three_lanes(c, p);
    unsigned long long c64 = c;
    for (; len >= 8; p += 8, len -= 8) c64 = __builtin_ia32_crc32di(c64, word_at(p));
    c = (uint32_t)c64;
    while (len--) c = __builtin_ia32_crc32qi(c, *p++);
    return c;
}
#else
static uint32_t crc_hardware(uint32_t c, const unsigned char *p, size_t len)
{
    return crc_tables(c, p, len);
}
#endif

uint32_t ferry__container_crc(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&table_once, make_tables);
    uint32_t c = ~crc;
    c = have_hardware ? crc_hardware(c, buf, len) : crc_tables(c, buf, len);
    return ~c;
}

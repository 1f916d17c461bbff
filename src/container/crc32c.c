/*
 * CRC-32C (Castagnoli), the checksum of every container record and of the
 * data in each chunk: the SSE4.2 instruction where the processor has it
 * (several GB/s, so checksumming costs little next to writing), eight
 * bytes per step through tables otherwise. Both give the same values.
 */
#include <pthread.h>
#include <string.h>

#include "container/container_int.h"

enum { POLY_REFLECTED = 0x82F63B78u };

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static int have_hardware;

static void make_tables(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ POLY_REFLECTED : c >> 1;
        table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (uint32_t i = 0; i < 256; i++) table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
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
__attribute__((target("sse4.2"))) static uint32_t crc_hardware(uint32_t c, const unsigned char *p, size_t len)
{
    unsigned long long c64 = c;
    for (; len >= 8; p += 8, len -= 8) {
        unsigned long long word;
        memcpy(&word, p, 8);
        c64 = __builtin_ia32_crc32di(c64, word);
    }
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

/*
 * The container's CRC-32C (src/container/crc32c.c: hardware chains joined
 * by tabulated shifts, or tables) against a bit-by-bit one, over random
 * lengths around the three-lane block and continued in random pieces.
 */
#include <stdlib.h>

#include "container/container_int.h"
#include "ferry_test.h"

static uint32_t bitwise(uint32_t crc, const unsigned char *p, size_t len)
{
    uint32_t c = ~crc;
    for (size_t i = 0; i < len; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    enum { MAX = 5 * 3 * 4096 + 77 };
    unsigned char *buf = malloc(MAX);
    uint64_t state = ft_seed;
    ft_fill(buf, MAX, ft_seed);
    FT_EQ(ferry__container_crc(0, "123456789", 9), 0xE3069283u);
    for (int round = 0; round < 200; round++) {
        size_t len = (size_t)(ft_rand(&state) % MAX), cut = len ? (size_t)(ft_rand(&state) % len) : 0;
        uint32_t whole = ferry__container_crc(0, buf, len);
        FT_EQ(whole, bitwise(0, buf, len));
        FT_EQ(ferry__container_crc(ferry__container_crc(0, buf, cut), buf + cut, len - cut), whole);
    }
    free(buf);
    return ft_finish();
}

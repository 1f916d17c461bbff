/* The byte map from the host's MPI_Pack, and naive pack/unpack by the map. */
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"
#include "oracle.h"

void or_span(MPI_Datatype type, MPI_Count count, MPI_Count *lo, MPI_Count *hi)
{
    MPI_Count lb, extent, tlb, textent, size;
    MPI_Type_size_x(type, &size);
    *lo = *hi = 0;
    if (size == 0 || count == 0) return; /* Open MPI reports true bounds of +-2^63 then */
    MPI_Type_get_extent_x(type, &lb, &extent);
    MPI_Type_get_true_extent_x(type, &tlb, &textent);
    MPI_Count last = (count - 1) * extent;
    *lo = tlb + (last < 0 ? last : 0);
    *hi = tlb + textent + (last > 0 ? last : 0);
    if (*hi < *lo) *hi = *lo;
}

int or_host_crashes;
static sigjmp_buf host_crash;

static void on_host_crash(int sig)
{
    siglongjmp(host_crash, sig);
}

/* MPI_Pack, turning an arithmetic fault inside the host (MPICH 4.0's yaksa
 * divides by zero on some types) into a return of 0. */
static int host_pack(const void *buf, MPI_Count count, MPI_Datatype type, void *out, MPI_Count n)
{
    struct sigaction crash = {.sa_handler = on_host_crash}, saved;
    int position = 0;
    sigemptyset(&crash.sa_mask);
    sigaction(SIGFPE, &crash, &saved);
    if (sigsetjmp(host_crash, 1) != 0) {
        sigaction(SIGFPE, &saved, NULL);
        or_host_crashes++;
        return 0;
    }
    FT_OK(MPI_Pack(buf, (int)count, type, out, (int)n, &position, MPI_COMM_SELF));
    sigaction(SIGFPE, &saved, NULL);
    FT_EQ(position, n);
    return 1;
}

/* Bytes of slack on both sides of the span: a host that reads outside the
 * true extent reads (and reports) slack instead of tripping AddressSanitizer. */
enum { SLACK = 1 << 16 };
int or_host_strays;

MPI_Count *or_byte_map(MPI_Datatype type, MPI_Count count)
{
    MPI_Count size, lo, hi;
    MPI_Type_size_x(type, &size);
    or_span(type, count, &lo, &hi);
    MPI_Count n = count * size, room = hi - lo + 2 * SLACK;
    FT_CHECK(room < ((MPI_Count)1 << 24) && n < ((MPI_Count)1 << 30));
    unsigned char *mem = malloc((size_t)room), *plane = malloc((size_t)n + 1);
    MPI_Count *map = calloc((size_t)n + 1, sizeof *map);
    FT_CHECK(mem && plane && map);
    int ok = 1;
    for (int k = 0; k < 3 && ok; k++) {
        for (MPI_Count p = 0; p < room; p++) mem[p] = (unsigned char)(p >> (8 * k));
        ok = host_pack((void *)((uintptr_t)mem + SLACK - (uintptr_t)lo), count, type, plane, n);
        for (MPI_Count i = 0; ok && i < n; i++) map[i] |= (MPI_Count)plane[i] << (8 * k);
    }
    for (MPI_Count i = 0; ok && i < n; i++) {
        map[i] += lo - SLACK;
        if (map[i] < lo || map[i] >= hi) {
            or_host_strays++;
            ok = 0;
        }
    }
    free(mem);
    free(plane);
    if (!ok) free(map);
    return ok ? map : NULL;
}

void or_naive_pack(const char *buf, const MPI_Count *map, MPI_Count skip, MPI_Count len, char *dst)
{
    for (MPI_Count i = 0; i < len; i++) dst[i] = buf[map[skip + i]];
}

void or_naive_unpack(const char *src, const MPI_Count *map, MPI_Count skip, MPI_Count len, char *buf)
{
    for (MPI_Count i = 0; i < len; i++) buf[map[skip + i]] = src[i];
}

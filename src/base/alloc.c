/*
 * The one allocation wrapper. Tests arm ferry__alloc_fail_after(n) to make
 * the n-th allocation fail and check the error path that follows.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

static atomic_long allocations_until_failure; /* 0: disarmed */

void ferry__alloc_fail_after(long n)
{
    atomic_store(&allocations_until_failure, n);
}

static int injected_failure(void)
{
    long left = atomic_load(&allocations_until_failure);
    while (left > 0) {
        if (atomic_compare_exchange_weak(&allocations_until_failure, &left, left - 1)) return left == 1;
    }
    return 0;
}

void *ferry__malloc(size_t size)
{
    return injected_failure() ? NULL : malloc(size ? size : 1);
}

void *ferry__calloc(size_t count, size_t size)
{
    return injected_failure() ? NULL : calloc(count ? count : 1, size ? size : 1);
}

void *ferry__realloc(void *ptr, size_t size)
{
    return injected_failure() ? NULL : realloc(ptr, size ? size : 1);
}

void ferry__free(void *ptr)
{
    free(ptr);
}

char *ferry__strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *copy = ferry__malloc(len);
    if (copy) memcpy(copy, s, len);
    return copy;
}

/*
 * Allocation and scratch buffers (a leaf header: includes only ferry.h and
 * the C library's).
 *
 * All of ferry allocates through ferry__malloc/ferry__calloc/ferry__free,
 * so a test can make the n-th allocation fail (ferry__alloc_fail_after) and
 * check the error path behind it. Every module may include this header.
 */
#ifndef FERRY_BASE_ALLOC_H
#define FERRY_BASE_ALLOC_H

#include <stdatomic.h>
#include <stddef.h>

#include "ferry.h"

void *ferry__malloc(size_t size);
void *ferry__calloc(size_t count, size_t size);
void *ferry__realloc(void *ptr, size_t size);
void ferry__free(void *ptr);
char *ferry__strdup(const char *s);

/* Test hook: the n-th allocation from now on (1-based) fails; 0 disarms. */
void ferry__alloc_fail_after(long n);

/* A reusable scratch buffer (scratch.c), kept between calls by its owner so
 * a call's buffer is not allocated and faulted in again every time. */
typedef struct ferry__scratch_slot {
    void *buf; /* owned */
    size_t size;
    atomic_int busy;
} ferry__scratch_slot_t;

/* Borrows at least size bytes from slot (a private allocation when another
 * thread holds it); NULL when out of memory. Give it back with
 * ferry__scratch_give; ferry__scratch_release frees the slot's buffer. */
void *ferry__scratch_take(ferry__scratch_slot_t *slot, size_t size);
void ferry__scratch_give(ferry__scratch_slot_t *slot, void *buf);
void ferry__scratch_release(ferry__scratch_slot_t *slot);

#endif

/*
 * The registry of live handles: every open file, so that an entry point
 * can refuse a closed file, a stale copy of a handle or garbage without
 * dereferencing it, and so that MPI_Finalize can close what the program
 * left open.
 *
 * A hash set of pointers (open addressing, linear probing) behind a
 * read-write lock: a lookup on the hot path is one uncontended read lock
 * and a probe or two; open and close, which are collective anyway, take
 * the write lock. Removed entries leave a marker until the next rebuild,
 * and at least half the slots stay empty so every probe ends.
 *
 * Closed files' memory is freed only after RETIRED_KEPT later closes, so a
 * new file does not at once take the address of a closed one: a stale
 * handle then stays unknown instead of silently naming another file.
 *
 * Finalize closes files in the order this rank opened them. Opens are
 * blocking collectives, so the orders in which the ranks opened their files
 * were compatible (had two ranks opened two shared files in crossed orders,
 * the opens would have waited for each other for ever), and closes made in
 * the same orders meet just as the opens did. Files opened at the same
 * time by two threads are the exception the program must avoid.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "error/error.h"

#define REMOVED ((ferry_File)(uintptr_t)1)

enum { MIN_CAPACITY = 16, RETIRED_KEPT = 32 };

static pthread_rwlock_t live_lock = PTHREAD_RWLOCK_INITIALIZER;
static ferry_File *slots; /* NULL: never used; REMOVED: used, then removed */
static size_t capacity, filled, count; /* filled counts live and removed slots */
static uint64_t opens; /* files registered so far: the next open sequence */
static ferry_File retired[RETIRED_KEPT];
static size_t retired_next;
static ferry__handle_closer_t *closer;

static size_t home_slot(ferry_File fh, size_t cap)
{
    uint64_t h = (uint64_t)(uintptr_t)fh * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing */
    return (size_t)(h >> 32) & (cap - 1);
}

/* The slot holding fh, or the empty slot where its probe ends. */
static size_t probe(ferry_File *table, size_t cap, ferry_File fh)
{
    size_t i = home_slot(fh, cap);
    while (table[i] != NULL && table[i] != fh) i = (i + 1) & (cap - 1);
    return i;
}

/* Rebuilds the table with room for `needed` live entries, dropping removed markers. */
static int rebuild(size_t needed)
{
    size_t cap = MIN_CAPACITY;
    while (cap < 4 * needed) cap *= 2;
    ferry_File *table = ferry__calloc(cap, sizeof *table);
    if (!table) return MPI_ERR_NO_MEM;
    for (size_t i = 0; i < capacity; i++)
        if (slots[i] != NULL && slots[i] != REMOVED) table[probe(table, cap, slots[i])] = slots[i];
    ferry__free(slots);
    slots = table;
    capacity = cap;
    filled = count;
    return 0;
}

int ferry__handle_register(ferry_File fh)
{
    int cls = 0;
    pthread_rwlock_wrlock(&live_lock);
    if (2 * (filled + 1) > capacity) cls = rebuild(count + 1);
    if (cls == 0) {
        size_t i = probe(slots, capacity, fh);
        if (slots[i] == NULL) filled++, count++;
        slots[i] = fh;
        fh->open_sequence = ++opens;
    }
    pthread_rwlock_unlock(&live_lock);
    return cls;
}

void ferry__handle_unregister(ferry_File fh)
{
    pthread_rwlock_wrlock(&live_lock);
    if (capacity > 0) {
        size_t i = probe(slots, capacity, fh);
        if (slots[i] == fh) slots[i] = REMOVED, count--;
    }
    pthread_rwlock_unlock(&live_lock);
}

int ferry__handle_live(ferry_File fh)
{
    if (fh == FERRY_FILE_NULL || fh == REMOVED) return 0;
    pthread_rwlock_rdlock(&live_lock);
    int live = capacity > 0 && slots[probe(slots, capacity, fh)] == fh;
    pthread_rwlock_unlock(&live_lock);
    return live;
}

int ferry__handle_check_live(ferry_File fh, const char *op)
{
    if (ferry__handle_live(fh)) return 0;
    return ferry__error_set(MPI_ERR_FILE, "ferry: %s: invalid file handle %p: not an open file (closed, or never "
                            "opened)", op, (void *)fh);
}

void ferry__handle_retire(ferry_File fh)
{
    pthread_rwlock_wrlock(&live_lock);
    ferry__free(retired[retired_next]);
    retired[retired_next] = fh;
    retired_next = (retired_next + 1) % RETIRED_KEPT;
    pthread_rwlock_unlock(&live_lock);
}

void ferry__handle_set_closer(ferry__handle_closer_t *close_fn)
{
    pthread_rwlock_wrlock(&live_lock);
    closer = close_fn;
    pthread_rwlock_unlock(&live_lock);
}

static int by_sequence(const void *a, const void *b)
{
    ferry_File x = *(ferry_File const *)a, y = *(ferry_File const *)b;
    return x->open_sequence < y->open_sequence ? -1 : x->open_sequence > y->open_sequence;
}

/* A copy of the live handles (owned, ferry__free), in open-sequence order. */
static ferry_File *live_in_order(size_t *n)
{
    pthread_rwlock_rdlock(&live_lock);
    ferry_File *list = count > 0 ? ferry__malloc(count * sizeof *list) : NULL;
    *n = 0;
    for (size_t i = 0; list && i < capacity; i++)
        if (slots[i] != NULL && slots[i] != REMOVED) list[(*n)++] = slots[i];
    pthread_rwlock_unlock(&live_lock);
    if (*n > 1) qsort(list, *n, sizeof *list, by_sequence);
    return list;
}

void ferry__handle_close_all(void)
{
    size_t n = 0;
    ferry_File *list = live_in_order(&n);
    for (size_t i = 0; i < n && closer; i++) closer(list[i]);
    ferry__free(list);
}

void ferry__handle_live_finalize(void)
{
    pthread_rwlock_wrlock(&live_lock);
    for (size_t i = 0; i < RETIRED_KEPT; i++) ferry__free(retired[i]);
    memset(retired, 0, sizeof retired);
    ferry__free(slots);
    slots = NULL;
    capacity = filled = count = 0;
    pthread_rwlock_unlock(&live_lock);
}

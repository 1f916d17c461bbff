/*
 * The memory of file handles, and which of them are open: an entry point
 * can refuse a closed file, a stale copy of a handle or garbage without
 * reading through it, and MPI_Finalize can close what the program left
 * open.
 *
 * File structs live in slots of chunks that ferry keeps until MPI_Finalize
 * (chunk k holds FIRST_CHUNK << k slots), each slot with a `live` flag. A
 * handle is open when it points at the struct of a slot in one of the
 * chunks and that slot's flag is set: a few address comparisons and one
 * atomic load, no lock (a lock-protected hash set cost 80 ns a call). The
 * memory behind a stale handle stays allocated, so reading its flag is
 * safe. Free slots wait in a FIFO and a slot is reused only once more than
 * REUSE_DELAY others are free, so a new file does not at once take a closed
 * file's address (a stale handle then reads "closed" rather than naming the
 * new file; after that many opens it may).
 *
 * Finalize closes files in the order this rank opened them. Opens are
 * blocking collectives, so the orders in which the ranks opened their files
 * were compatible (had two ranks opened two shared files in crossed orders,
 * the opens would have waited for each other for ever), and closes made in
 * the same orders meet just as the opens did. Files opened at the same
 * time by two threads are the exception the program must avoid.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "error/error.h"

enum { FIRST_CHUNK = 16, MAX_CHUNKS = 40, REUSE_DELAY = 32 };

typedef struct slot {
    atomic_int live;
    struct ferry_file file;
} slot_t;

/* Chunks are published by the count: an entry is complete before the count covers it. */
static struct {
    slot_t *base;
    size_t count;
} chunks[MAX_CHUNKS];
static atomic_int nchunks;

static pthread_mutex_t slab_lock = PTHREAD_MUTEX_INITIALIZER;
static slot_t **free_ring; /* a FIFO of free slots, as a ring */
static size_t ring_capacity, ring_head, ring_length;
static uint64_t opens; /* files registered so far: the next open sequence */
static ferry__handle_closer_t *closer;

static void ring_push(slot_t *slot)
{
    free_ring[(ring_head + ring_length++) % ring_capacity] = slot;
}

/* Adds a chunk and queues its slots; called with slab_lock held. */
static int add_chunk(void)
{
    int k = atomic_load(&nchunks);
    if (k == MAX_CHUNKS) return MPI_ERR_NO_MEM;
    size_t count = (size_t)FIRST_CHUNK << k;
    slot_t *base = ferry__calloc(count, sizeof *base);
    slot_t **ring = ferry__calloc(ring_capacity + count, sizeof *ring);
    if (!base || !ring) {
        ferry__free(base);
        ferry__free(ring);
        return MPI_ERR_NO_MEM;
    }
    for (size_t i = 0; i < ring_length; i++) ring[i] = free_ring[(ring_head + i) % ring_capacity];
    ferry__free(free_ring);
    free_ring = ring;
    ring_capacity += count;
    ring_head = 0;
    for (size_t i = 0; i < count; i++) ring_push(&base[i]);
    chunks[k].base = base;
    chunks[k].count = count;
    atomic_store(&nchunks, k + 1);
    return 0;
}

ferry_File ferry__handle_create(void)
{
    slot_t *slot = NULL;
    pthread_mutex_lock(&slab_lock);
    while (ring_length <= REUSE_DELAY && add_chunk() == 0) continue;
    if (ring_length > 0) { /* out of memory for a chunk: reuse sooner rather than fail */
        slot = free_ring[ring_head];
        ring_head = (ring_head + 1) % ring_capacity;
        ring_length--;
        memset(&slot->file, 0, sizeof slot->file);
    }
    pthread_mutex_unlock(&slab_lock);
    return slot ? &slot->file : NULL;
}

/* The slot whose file fh points at, or NULL when fh points at none. */
static slot_t *slot_of(ferry_File fh)
{
    uintptr_t p = (uintptr_t)fh - offsetof(slot_t, file);
    int n = atomic_load(&nchunks);
    for (int k = 0; k < n; k++) {
        uintptr_t base = (uintptr_t)chunks[k].base;
        if (p >= base && p < base + chunks[k].count * sizeof(slot_t) && (p - base) % sizeof(slot_t) == 0)
            return (slot_t *)p;
    }
    return NULL;
}

void ferry__handle_destroy(ferry_File fh)
{
    slot_t *slot = slot_of(fh);
    if (!slot) return;
    atomic_store(&slot->live, 0);
    pthread_mutex_lock(&slab_lock);
    ring_push(slot);
    pthread_mutex_unlock(&slab_lock);
}

void ferry__handle_register(ferry_File fh)
{
    slot_t *slot = slot_of(fh);
    pthread_mutex_lock(&slab_lock);
    fh->open_sequence = ++opens;
    pthread_mutex_unlock(&slab_lock);
    if (slot) atomic_store(&slot->live, 1);
}

void ferry__handle_unregister(ferry_File fh)
{
    slot_t *slot = slot_of(fh);
    if (slot) atomic_store(&slot->live, 0);
}

int ferry__handle_live(ferry_File fh)
{
    slot_t *slot = fh ? slot_of(fh) : NULL;
    return slot && atomic_load(&slot->live);
}

int ferry__handle_check_live(ferry_File fh, const char *op)
{
    if (ferry__handle_live(fh)) return 0;
    return ferry__error_set(MPI_ERR_FILE, "ferry: %s: invalid file handle %p: not an open file (closed, or never "
                            "opened)", op, (void *)fh);
}

void ferry__handle_set_closer(ferry__handle_closer_t *close_fn)
{
    pthread_mutex_lock(&slab_lock);
    closer = close_fn;
    pthread_mutex_unlock(&slab_lock);
}

static int by_sequence(const void *a, const void *b)
{
    ferry_File x = *(ferry_File const *)a, y = *(ferry_File const *)b;
    return x->open_sequence < y->open_sequence ? -1 : x->open_sequence > y->open_sequence;
}

/* The open files (owned list, ferry__free), in open-sequence order. */
static ferry_File *live_in_order(size_t *n)
{
    size_t total = 0;
    int nk = atomic_load(&nchunks);
    for (int k = 0; k < nk; k++) total += chunks[k].count;
    ferry_File *list = total ? ferry__malloc(total * sizeof *list) : NULL;
    *n = 0;
    for (int k = 0; list && k < nk; k++)
        for (size_t i = 0; i < chunks[k].count; i++)
            if (atomic_load(&chunks[k].base[i].live)) list[(*n)++] = &chunks[k].base[i].file;
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
    pthread_mutex_lock(&slab_lock);
    int n = atomic_load(&nchunks);
    for (int k = 0; k < n; k++) ferry__free(chunks[k].base);
    memset(chunks, 0, sizeof chunks);
    atomic_store(&nchunks, 0);
    ferry__free(free_ring);
    free_ring = NULL;
    ring_capacity = ring_head = ring_length = 0;
    pthread_mutex_unlock(&slab_lock);
}

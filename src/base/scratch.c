/*
 * Scratch buffers kept on an open file, so a call's staging and sieving
 * buffers are not allocated and faulted in again on every call. A slot
 * serves one call at a time; a thread that finds it busy gets a private
 * allocation instead.
 */
#include "base/alloc.h"

void *ferry__scratch_take(ferry__scratch_slot_t *slot, size_t size)
{
    if (atomic_exchange(&slot->busy, 1)) return ferry__malloc(size);
    if (slot->size < size) {
        ferry__free(slot->buf);
        slot->buf = ferry__malloc(size);
        slot->size = slot->buf ? size : 0;
    }
    if (!slot->buf) atomic_store(&slot->busy, 0);
    return slot->buf;
}

void ferry__scratch_give(ferry__scratch_slot_t *slot, void *buf)
{
    if (!buf) return;
    if (buf == slot->buf) atomic_store(&slot->busy, 0);
    else ferry__free(buf);
}

void ferry__scratch_release(ferry__scratch_slot_t *slot)
{
    ferry__free(slot->buf);
    slot->buf = NULL;
    slot->size = 0;
}

/*
 * The module's allocation, counted per set: what a set holds now and at
 * most (ferry_ckpt_peak_memory). A leaf of the module: every file that
 * allocates calls down to it.
 */
#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

void *ferry__ckpt_alloc(ferry_ckpt_t ck, size_t size)
{
    void *p = ferry__malloc(size ? size : 1);
    if (p) {
        ck->mem_now += (long long)size;
        if (ck->mem_now > ck->mem_peak) ck->mem_peak = ck->mem_now;
    }
    return p;
}

void ferry__ckpt_release(ferry_ckpt_t ck, void *p, size_t size)
{
    if (!p) return;
    ck->mem_now -= (long long)size;
    ferry__free(p);
}

unsigned char *ferry__ckpt_kept_buffer(ferry_ckpt_t ck, size_t need)
{
    if (need > ck->stage_cap || !ck->stage) { /* grown, never shrunk: the set's largest need so far */
        ferry__ckpt_release(ck, ck->stage, ck->stage_cap);
        ck->stage_cap = 0;
        ck->stage = ferry__ckpt_alloc(ck, need);
        if (!ck->stage) return NULL;
        ck->stage_cap = need;
    }
    return ck->stage;
}

long long ferry_ckpt_peak_memory(ferry_ckpt_t ck)
{
    return ck ? ck->mem_peak : 0;
}

/*
 * Multi-level checkpoints, the level-1 image and its files: a rank's blocks
 * packed in native order (C order, no halos) behind a header that names the
 * step, the decomposition and every block's checksum, written under a
 * temporary name, synced and renamed (docs/checkpoint.md "Multi-level
 * checkpoints"). The image is only ever read back by the same rank of the
 * same decomposition on a machine of the same byte order (checked): a
 * restart elsewhere takes level 3.
 *
 * Called by levels.c (the write, the restart's levels 1 and 2) and drain.c;
 * calls down into walk.c and durable.c only.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

static const char l1_magic[8] = {'F', 'E', 'R', 'R', 'Y', 'L', '1', '\n'};
enum { L1_ORDER = 0x01020304, L1_VERSION = 1 };

static size_t head_bytes(ferry_ckpt_t ck)
{
    return sizeof(ferry__ckpt_l1_head_t) + (size_t)ck->nvars * sizeof(ferry__ckpt_l1_var_t);
}

size_t ferry__ckpt_l1_size(ferry_ckpt_t ck, int r)
{
    size_t bytes = head_bytes(ck);
    for (int i = 0; i < ck->nvars; i++)
        bytes += (size_t)ferry__ckpt_elems(&ck->vars[i].blocks[(size_t)r * 2 * FERRY__CKPT_D + FERRY__CKPT_D]) *
                 (size_t)ck->vars[i].esize;
    return bytes;
}

/* The names, types and global shapes of the set's variables, hashed. */
static uint64_t defs_hash(ferry_ckpt_t ck)
{
    ferry__ckpt_bytes_t b = {0};
    for (int i = 0; i < ck->nvars; i++) {
        const ferry__ckpt_var_t *v = &ck->vars[i];
        ferry__ckpt_bytes_put(&b, v->name, strlen(v->name) + 1);
        ferry__ckpt_bytes_put(&b, &v->nctype, sizeof v->nctype);
        ferry__ckpt_bytes_put(&b, v->global, sizeof v->global);
    }
    uint64_t h = b.failed ? 0 : ferry__ckpt_fnv1a(b.p, b.len);
    ferry__free(b.p);
    return h;
}

/* The block of v as it lies packed at data (C order, no halos). */
static ferry__ckpt_block_t packed_block(ferry_ckpt_t ck, const ferry__ckpt_var_t *v, unsigned char *data)
{
    ferry__ckpt_block_t b = ferry__ckpt_block_of(ck, v, NULL, ck->strategy);
    b.base = data;
    b.mem_stride[FERRY__CKPT_D - 1] = 1;
    for (int d = FERRY__CKPT_D - 2; d >= 0; d--) b.mem_stride[d] = b.mem_stride[d + 1] * b.count[d + 1];
    return b;
}

/* Copies the block b to or from packed (C order), one innermost run at a time. */
static void copy_block(const ferry__ckpt_block_t *b, unsigned char *packed, int to_packed)
{
    size_t run = (size_t)b->count[3] * (size_t)b->esize;
    if (!run || !b->count[0] || !b->count[1] || !b->count[2]) return;
    for (MPI_Offset a = 0; a < b->count[0]; a++)
        for (MPI_Offset c = 0; c < b->count[1]; c++)
            for (MPI_Offset d = 0; d < b->count[2]; d++, packed += run) {
                unsigned char *at =
                    b->base + (a * b->mem_stride[0] + c * b->mem_stride[1] + d * b->mem_stride[2]) * b->esize;
                if (to_packed) memcpy(packed, at, run);
                else memcpy(at, packed, run);
            }
}

static uint64_t head_sum(const unsigned char *image, size_t len)
{
    ferry__ckpt_l1_head_t h;
    memcpy(&h, image, sizeof h);
    h.head_sum = 0;
    uint64_t sum = ferry__ckpt_fnv1a((const unsigned char *)&h, sizeof h);
    return sum ^ ferry__ckpt_fnv1a(image + sizeof h, len - sizeof h) * 0x100000001B3ull;
}

int ferry__ckpt_l1_pack(ferry_ckpt_t ck, long long step, double time, void *const *bufs)
{
    ferry__ckpt_levels_t *lv = ck->levels;
    size_t need = ferry__ckpt_l1_size(ck, ck->rank), hb = head_bytes(ck);
    if (need > lv->image_cap) {
        ferry__ckpt_release(ck, lv->image, lv->image_cap);
        lv->image_cap = 0;
        if (!(lv->image = ferry__ckpt_alloc(ck, need)))
            return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_write: no memory for a %zu-byte level-1 image", need);
        lv->image_cap = need;
    }
    ferry__ckpt_l1_head_t h = {.order = L1_ORDER, .version = L1_VERSION, .step = step, .time = time};
    memcpy(h.magic, l1_magic, sizeof h.magic);
    h.nprocs = ck->nprocs, h.rank = ck->rank, h.nvars = ck->nvars, h.strategy = ck->strategy;
    h.defs_hash = defs_hash(ck);
    h.data_bytes = (int64_t)(need - hb);
    unsigned char *data = lv->image + hb;
    for (int i = 0; i < ck->nvars; i++) {
        const ferry__ckpt_var_t *v = &ck->vars[i];
        ferry__ckpt_l1_var_t rec = {.sum = 0};
        ferry__ckpt_block_t b = ferry__ckpt_block_of(ck, v, bufs[i], ck->strategy);
        memcpy(rec.start, v->start, sizeof rec.start);
        memcpy(rec.count, v->count, sizeof rec.count);
        if (ferry__ckpt_elems(v->count)) {
            copy_block(&b, data, 1);
            ferry__ckpt_block_t packed = packed_block(ck, v, data);
            rec.sum = ferry__ckpt_walk(&packed, FERRY__CKPT_SUM);
            data += ferry__ckpt_elems(v->count) * v->esize;
        }
        memcpy(lv->image + sizeof h + (size_t)i * sizeof rec, &rec, sizeof rec);
    }
    memcpy(lv->image, &h, sizeof h);
    h.head_sum = head_sum(lv->image, hb);
    memcpy(lv->image, &h, sizeof h);
    lv->image_len = need;
    return 0;
}

/* MPI_ERR_IO naming what of the header does not fit this set, rank and step; 0 when it fits. */
static int check_head(ferry_ckpt_t ck, const unsigned char *image, size_t len, long long step)
{
    ferry__ckpt_l1_head_t h;
    size_t hb = head_bytes(ck);
    if (len < sizeof h) return ferry__error_set(MPI_ERR_IO, "shorter than its header");
    memcpy(&h, image, sizeof h);
    const char *why = memcmp(h.magic, l1_magic, sizeof h.magic) ? "not a level-1 image"
                      : h.order != L1_ORDER || h.version != L1_VERSION ? "another byte order or version"
                      : h.nvars != ck->nvars || len < hb ? "another number of variables"
                      : h.head_sum != head_sum(image, hb) ? "a header that fails its checksum"
                      : h.step != step ? "another step"
                      : h.nprocs != ck->nprocs || h.rank != ck->rank ? "another rank count or rank"
                      : (h.strategy == FERRY_CKPT_STACK) != (ck->strategy == FERRY_CKPT_STACK) /* steer's blocks are gather's */
                              || h.defs_hash != defs_hash(ck) ? "other definitions"
                      : (size_t)h.data_bytes != len - hb ? "another length"
                                                          : NULL;
    for (int i = 0; !why && i < ck->nvars; i++) {
        ferry__ckpt_l1_var_t rec;
        memcpy(&rec, image + sizeof h + (size_t)i * sizeof rec, sizeof rec);
        if (memcmp(rec.start, ck->vars[i].start, sizeof rec.start) || memcmp(rec.count, ck->vars[i].count, sizeof rec.count))
            why = "another decomposition";
    }
    return why ? ferry__error_set(MPI_ERR_IO, "%s", why) : 0;
}

int ferry__ckpt_l1_unpack(ferry_ckpt_t ck, const unsigned char *image, size_t len, long long step, void *const *bufs)
{
    FERRY_TRY(check_head(ck, image, len, step));
    size_t hb = head_bytes(ck);
    unsigned char *data = (unsigned char *)image + hb;
    for (int i = 0; i < ck->nvars; i++) { /* every checksum first: a bad image never touches a buffer */
        const ferry__ckpt_var_t *v = &ck->vars[i];
        ferry__ckpt_l1_var_t rec;
        memcpy(&rec, image + sizeof(ferry__ckpt_l1_head_t) + (size_t)i * sizeof rec, sizeof rec);
        ferry__ckpt_block_t packed = packed_block(ck, v, data);
        if (ferry__ckpt_elems(v->count) && ferry__ckpt_walk(&packed, FERRY__CKPT_SUM) != rec.sum)
            return ferry__error_set(MPI_ERR_IO, "variable %s fails its checksum", v->name);
        data += ferry__ckpt_elems(v->count) * v->esize;
    }
    data = (unsigned char *)image + hb;
    for (int i = 0; i < ck->nvars; i++) {
        const ferry__ckpt_var_t *v = &ck->vars[i];
        ferry__ckpt_block_t b = ferry__ckpt_block_of(ck, v, bufs[i], ck->strategy);
        if (ferry__ckpt_elems(v->count)) copy_block(&b, data, 0);
        data += ferry__ckpt_elems(v->count) * v->esize;
    }
    memcpy(&ck->levels->time, image + offsetof(ferry__ckpt_l1_head_t, time), sizeof ck->levels->time);
    return 0;
}

/* Writes all of p to fd, looping on partial writes. */
static int write_all(int fd, const unsigned char *p, size_t len)
{
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n, len -= (size_t)n;
    }
    return 0;
}

int ferry__ckpt_l1_store(const char *path, const unsigned char *p, size_t len)
{
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_write: %s: name too long", path);
    errno = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), err = 0;
    if (fd < 0 || write_all(fd, p, len) != 0 || fsync(fd) != 0) err = errno ? errno : EIO;
    if (fd >= 0 && close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) err = errno;
    if (!err) return 0;
    if (fd >= 0) unlink(tmp);
    return ferry__error_set(err == ENOSPC || err == EDQUOT ? MPI_ERR_NO_SPACE : MPI_ERR_IO,
                            "ferry_ckpt_write: level-1 file %s: %s", path, strerror(err));
}

int ferry__ckpt_l1_load(const char *path, unsigned char *p, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return ferry__error_set(errno == ENOENT ? MPI_ERR_NO_SUCH_FILE : MPI_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    int cls = fstat(fd, &st) != 0 ? ferry__error_set(MPI_ERR_IO, "%s: %s", path, strerror(errno))
              : (size_t)st.st_size != len
                  ? ferry__error_set(MPI_ERR_IO, "%s holds %lld bytes, not %zu", path, (long long)st.st_size, len)
                  : 0;
    for (size_t done = 0; !cls && done < len;) {
        ssize_t n = read(fd, p + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) cls = ferry__error_set(MPI_ERR_IO, "%s: short read: %s", path, n ? strerror(errno) : "end of file");
        else done += (size_t)n;
    }
    close(fd);
    return cls;
}

int ferry__ckpt_l1_path(ferry_ckpt_t ck, long long step, int r, int partner_copy, char *out, size_t len)
{
    const ferry__ckpt_levels_t *lv = ck->levels;
    int n = snprintf(out, len, "%s/%s.%012lld.r%d%s", lv->dir, lv->name, step, r, partner_copy ? ".partner" : "");
    if (n < 0 || (size_t)n >= len || step < 0)
        return ferry__error_set(MPI_ERR_ARG, "ferry_ckpt: level-1 name of step %lld in %s: negative or too long",
                                step, lv->dir);
    return 0;
}

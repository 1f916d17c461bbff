/*
 * What a file system tells a client about where a file's bytes live:
 * Lustre through its ioctl, GlusterFS through the client's own description
 * of itself (the .meta directory of a FUSE mount lists the translator graph
 * it runs, with every option). Both only refine the st_blksize layout that
 * posix.c starts from; anything unreadable leaves it as it was.
 */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>

#include "fs/fs_int.h"

/* Lustre's layout, read with its LL_IOC_LOV_GETSTRIPE ioctl without its
 * headers (the lov_user_md_v1 prefix is a stable ABI). */
enum { LUSTRE_MAGIC = 0x0BD00BD0, FUSE_MAGIC = 0x65735546 };
struct lustre_layout_prefix {
    uint32_t magic, pattern;
    uint64_t object_id, object_seq;
    uint32_t stripe_size;
    uint16_t stripe_count, stripe_offset;
    char objects[64 * 24]; /* room for the per-target entries the ioctl appends */
};
#define FERRY_LL_IOC_LOV_GETSTRIPE _IOW('f', 155, long)

static void lustre_layout(int fd, ferry__fs_layout_t *layout)
{
    struct lustre_layout_prefix lum;
    memset(&lum, 0, sizeof lum);
    lum.magic = 0x0BD10BD0; /* LOV_USER_MAGIC_V1 */
    lum.stripe_count = 64;
    if (ioctl(fd, FERRY_LL_IOC_LOV_GETSTRIPE, &lum) != 0 || lum.stripe_size == 0 || lum.stripe_count == 0) return;
    layout->stripe_size = lum.stripe_size;
    layout->stripe_count = lum.stripe_count;
    snprintf(layout->kind, sizeof layout->kind, "lustre");
}

/* The GlusterFS mount holding `real` (a resolved path): its mount point and
 * volume name, from /proc/self/mountinfo (the longest matching mount). */
static int gluster_mount_of(const char *real, char *mount, size_t mount_len, char *volume, size_t volume_len)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (!f) return 0;
    char line[4096], point[PATH_MAX], type[64], source[512];
    size_t best = 0;
    while (fgets(line, sizeof line, f)) {
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 ||
            sscanf(dash + 3, "%63s %511s", type, source) != 2 || strcmp(type, "fuse.glusterfs") != 0)
            continue;
        size_t n = strlen(point);
        const char *colon = strrchr(source, ':');
        if (n < best || strncmp(real, point, n) != 0 || (real[n] != '/' && real[n] != 0 && n > 1) || !colon) continue;
        best = n;
        snprintf(mount, mount_len, "%s", point);
        snprintf(volume, volume_len, "%s", colon + 1);
    }
    fclose(f);
    return best > 0;
}

/* A path under the client's active graph; 0 when it does not fit. */
static int meta_path(char *path, size_t len, const char *mount, const char *xlator, const char *tail)
{
    int n = snprintf(path, len, "%s/.meta/graphs/active/%s/%s", mount, xlator, tail);
    return n > 0 && (size_t)n < len;
}

/* One option of one translator of the client's active graph, as text. */
static int gluster_option(const char *mount, const char *xlator, const char *option, char *value, size_t len)
{
    char path[PATH_MAX + 512], tail[128];
    snprintf(tail, sizeof tail, "options/%s", option);
    if (!meta_path(path, sizeof path, mount, xlator, tail)) return 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int ok = fgets(value, (int)len, f) != NULL;
    fclose(f);
    value[strcspn(value, "\n")] = 0;
    return ok;
}

/* How many subvolumes (bricks, or disperse sets) a translator spreads over. */
static int gluster_subvolumes(const char *mount, const char *xlator)
{
    char path[PATH_MAX + 512];
    if (!meta_path(path, sizeof path, mount, xlator, "subvolumes")) return 0;
    DIR *d = opendir(path);
    if (!d) return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* "4MB", "64KB", "1GB" as GlusterFS writes sizes (powers of 1024). */
static MPI_Offset gluster_size(const char *text)
{
    char *end;
    long long n = strtoll(text, &end, 10);
    if (n <= 0) return 0;
    switch (*end) {
    case 'K': case 'k': return (MPI_Offset)n << 10;
    case 'M': case 'm': return (MPI_Offset)n << 20;
    case 'G': case 'g': return (MPI_Offset)n << 30;
    default: return (MPI_Offset)n;
    }
}

/* Sharded: shards of shard-block-size, hashed over the distribute
 * translator's bricks. Dispersed: every file cut into 512-byte fragments
 * over a set's data bricks. Otherwise a file lives whole on one brick. */
static void gluster_layout(const char *mount, const char *volume, ferry__fs_layout_t *layout)
{
    char xlator[300], value[64];
    snprintf(xlator, sizeof xlator, "%s-dht", volume);
    int bricks = gluster_subvolumes(mount, xlator);
    snprintf(xlator, sizeof xlator, "%s-shard", volume);
    MPI_Offset shard = gluster_option(mount, xlator, "shard-block-size", value, sizeof value) ? gluster_size(value) : 0;
    snprintf(xlator, sizeof xlator, "%s-disperse-0", volume);
    int set = gluster_subvolumes(mount, xlator);
    int redundancy = gluster_option(mount, xlator, "redundancy", value, sizeof value) ? atoi(value) : 0;
    if (shard > 0 && bricks > 0) {
        layout->stripe_size = shard;
        layout->stripe_count = bricks;
        snprintf(layout->kind, sizeof layout->kind, "glusterfs sharded %lld B over %d bricks", (long long)shard, bricks);
    } else if (set > redundancy && redundancy > 0) {
        layout->stripe_size = 512;
        layout->stripe_count = set - redundancy;
        layout->block_size = 512 * (MPI_Offset)(set - redundancy);
        snprintf(layout->kind, sizeof layout->kind, "glusterfs dispersed %d+%d", set - redundancy, redundancy);
    } else {
        snprintf(layout->kind, sizeof layout->kind, "glusterfs, one brick a file (%d bricks)", bricks > 0 ? bricks : 1);
    }
}

void ferry__fs_network_layout(int fd, const char *path, int kind, ferry__fs_layout_t *layout)
{
    struct statfs fs;
    int have_fs = fstatfs(fd, &fs) == 0;
    if (kind == FERRY_FS_KIND_LUSTRE || (have_fs && (uint32_t)fs.f_type == LUSTRE_MAGIC)) lustre_layout(fd, layout);
    if (!have_fs || (uint32_t)fs.f_type != FUSE_MAGIC) return;
    char real[PATH_MAX], mount[PATH_MAX], volume[256];
    if (realpath(path, real) && gluster_mount_of(real, mount, sizeof mount, volume, sizeof volume))
        gluster_layout(mount, volume, layout);
}

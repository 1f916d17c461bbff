/*
 * File names as ROMIO's users write them: an optional file-system prefix
 * before the path ("lustre:/scratch/run/out.nc", "ufs:testfile"), which
 * job scripts and HDF5 users write to pick ROMIO's driver for a file.
 *
 * The prefixes are ROMIO's list (MPICH's adio/common/ad_fstype.c,
 * fstype_prefix[]), matched without regard to case as ROMIO matches them.
 * ferry reaches every file through the POSIX driver, so a prefix chooses
 * the layout code (fs.h, FERRY_FS_KIND_*) and is stripped:
 *
 *   lustre:                                the Lustre layout (its ioctl), whatever statfs says
 *   ufs: nfs: xfs: gpfs: panfs: pvfs2:     a plain UNIX layout (block size, one target): no Lustre probing
 *   testfs:                                the same (ROMIO's testfs only logs calls; ferry does the I/O)
 *   daos: ime: quobyte:                    refused, MPI_ERR_IO as ROMIO refuses a driver it was built
 *                                          without: their ROMIO drivers reach the file system through
 *                                          its user-space library, not a POSIX path ferry could open
 *
 * A name without one of those prefixes is a path, colons and all
 * ("./a:b", "/tmp/x:y", "run:12:30.dat"), with one exception: "word:/..."
 * where word holds no '/' and no directory "word:" exists can only be a
 * mistyped or unknown prefix ("lustr:/scratch/f"), and is refused with
 * MPI_ERR_NO_SUCH_FILE naming it (the open would have failed with that
 * class anyway, less clearly). MPICH 4.0 refuses every unknown prefix, and
 * every name with a colon that is not a prefix, with MPI_ERR_IO; MPICH 4.1
 * took names with unknown prefixes as plain paths, as ferry does where
 * they can be one.
 *
 * ROMIO_FSTYPE_FORCE (MPICH 4.1's ROMIO: a prefix such as "lustre:" for
 * names that carry no colon) is honoured the same way; an unknown word
 * there is ignored, as ROMIO ignores it.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "error/error.h"
#include "fs/fs.h"

enum { KIND_UNSUPPORTED = -1 };

static const struct prefix {
    const char *word;
    int kind;
} prefixes[] = {
    {"ufs", FERRY_FS_KIND_UNIX},    {"nfs", FERRY_FS_KIND_UNIX},     {"xfs", FERRY_FS_KIND_UNIX},
    {"pvfs2", FERRY_FS_KIND_UNIX},  {"gpfs", FERRY_FS_KIND_UNIX},    {"panfs", FERRY_FS_KIND_UNIX},
    {"lustre", FERRY_FS_KIND_LUSTRE}, {"daos", KIND_UNSUPPORTED},    {"testfs", FERRY_FS_KIND_UNIX},
    {"ime", KIND_UNSUPPORTED},      {"quobyte", KIND_UNSUPPORTED},
};
enum { PREFIXES = sizeof prefixes / sizeof prefixes[0] };

/* The prefix `word` (len characters, no colon), or NULL. */
static const struct prefix *known_prefix(const char *word, size_t len)
{
    for (int i = 0; i < PREFIXES; i++)
        if (strlen(prefixes[i].word) == len && strncasecmp(prefixes[i].word, word, len) == 0) return &prefixes[i];
    return NULL;
}

/* "word:" names an existing directory (so "word:/x" is a path through it). */
static int directory_named(const char *word, size_t len)
{
    char dir[512];
    if (len + 2 > sizeof dir) return 0;
    memcpy(dir, word, len);
    memcpy(dir + len, ":", 2);
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static int unsupported(const char *op, const char *name, const struct prefix *p)
{
    return ferry__error_set(MPI_ERR_IO,
                            "ferry: %s '%s': the '%s:' prefix selects ROMIO's driver for a file system reached "
                            "through its own user-space library, which ferry does not have; ferry opens files "
                            "through POSIX paths (a FUSE or kernel mount of it, without the prefix)",
                            op, name, p->word);
}

/* ROMIO_FSTYPE_FORCE for a name without a colon: its prefix's kind. */
static int forced_kind(const char *op, const char *name, ferry__fs_name_t *out)
{
    const char *force = getenv("ROMIO_FSTYPE_FORCE");
    const char *colon = force ? strchr(force, ':') : NULL;
    const struct prefix *p = colon ? known_prefix(force, (size_t)(colon - force)) : NULL;
    if (!p) return 0;
    if (p->kind == KIND_UNSUPPORTED) return unsupported(op, name, p);
    out->kind = p->kind;
    return 0;
}

int ferry__fs_resolve(const char *name, const char *op, ferry__fs_name_t *out)
{
    out->path = name;
    out->kind = FERRY_FS_KIND_AUTO;
    const char *colon = strchr(name, ':');
    if (!colon) return forced_kind(op, name, out);
    size_t len = (size_t)(colon - name);
    const struct prefix *p = known_prefix(name, len);
    if (p && p->kind == KIND_UNSUPPORTED) return unsupported(op, name, p);
    if (p && colon[1] == '\0')
        return ferry__error_set(MPI_ERR_BAD_FILE, "ferry: %s '%s': no path after the prefix", op, name);
    if (p) {
        out->path = colon + 1;
        out->kind = p->kind;
        return 0;
    }
    if (len == 0 || memchr(name, '/', len) || colon[1] != '/' || directory_named(name, len)) return 0;
    return ferry__error_set(MPI_ERR_NO_SUCH_FILE,
                            "ferry: %s '%s': '%.*s:' is not a file-system prefix ferry knows (ufs, nfs, xfs, "
                            "pvfs2, gpfs, panfs, lustre, testfs) and no directory '%.*s:' exists",
                            op, name, (int)len, name, (int)len, name);
}

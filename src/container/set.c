/*
 * The serial API: a container's whole set of files, read without MPI.
 *
 * Loading reads every file's metadata (file 0 first: it gives the file
 * count), checks the files belong together and that their stream tables
 * name every stream exactly once, and keeps a stream -> (file, local stream)
 * map. Memory is O(streams).
 */
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"

/* The cause without what would repeat: "ferry: ", then "ferry container '<path>': ", or "<what> '<path>': "
 * (a host call's failure, ferry__error_host), or "<what>: " (error/'s agreement). */
static const char *cause_alone(const char *cause, const char *path, const char *what)
{
    char prefix[1200];
    if (strncmp(cause, "ferry: ", 7) == 0) cause += 7;
    snprintf(prefix, sizeof prefix, "ferry container '%s': ", path);
    if (strncmp(cause, prefix, strlen(prefix)) == 0) return cause + strlen(prefix);
    snprintf(prefix, sizeof prefix, "%s '%s': ", what, path);
    if (strncmp(cause, prefix, strlen(prefix)) == 0) return cause + strlen(prefix);
    snprintf(prefix, sizeof prefix, "%s: ", what);
    return strncmp(cause, prefix, strlen(prefix)) == 0 ? cause + strlen(prefix) : cause;
}

int ferry__container_fail(int cls, const char *path, int rank, const char *what)
{
    char cause[1024];
    snprintf(cause, sizeof cause, "%s", ferry__error_message());
    const char *shown = cause_alone(cause, path, what);
    if (rank >= 0) return ferry__error_set(cls, "ferry container '%s' rank %d: %s: %s", path, rank, what, shown);
    return ferry__error_set(cls, "ferry container '%s': %s: %s", path, what, shown);
}

const char *ferry_container_error_message(void)
{
    return ferry__error_message();
}

static int incomplete(const char *path, const ferry__container_file_t *f, const char *name)
{
    return ferry__error_set(MPI_ERR_BAD_FILE,
                            "ferry container '%s': incomplete (%s %s); 'ferry-container recover %s' completes it with "
                            "every flushed byte", path, name, ferry__container_damage_text(f), path);
}

/* Loads file k and checks it belongs to the set file 0 describes; the slot stays empty on failure. */
static int load_member(ferry_container_set_t set, uint32_t k, int writable)
{
    char *name = ferry__container_file_path(set->path, k);
    if (!name) return ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory", set->path);
    ferry__container_file_t *f = &set->files[k];
    int cls = ferry__container_file_load(name, writable, f);
    const ferry__container_super_t *s = &f->super;
    if (!cls && s->id != set->id)
        cls = ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': file %u of %u ('%s') belongs to another "
                               "container (id %016llx, file 0's %016llx)", set->path, (unsigned)k,
                               (unsigned)set->nfiles, name, (unsigned long long)s->id, (unsigned long long)set->id);
    else if (!cls && (s->file_index != k || s->file_count != set->nfiles || s->streams != set->streams))
        cls = ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': file %u of %u ('%s') says it is file %u of %u "
                               "with %u streams (swapped or renamed?)", set->path, (unsigned)k, (unsigned)set->nfiles,
                               name, (unsigned)s->file_index, (unsigned)s->file_count, (unsigned)s->streams);
    if (cls && f->fs) ferry__container_file_release(f);
    ferry__free(name);
    return cls;
}

/* Whether the container has a buddy set (its file 0 or 1 is there). */
static int has_buddy_set(ferry_container_set_t set)
{
    int found = 0;
    for (uint32_t b = 0; b < 2 && b < set->nfiles && !found; b++) {
        char *name = ferry__container_buddy_file_path(set->path, b);
        found = name && access(name, F_OK) == 0;
        ferry__free(name);
    }
    return found;
}

/* Slot k holds primary file k (cls: how its load went). Read-only, a primary that is missing, fails
 * its checks, or is incomplete where a complete one is wanted gives way to its buddy copy, with a
 * note. Returns 0 or the primary's failure; *lost = 1 when the copy failed too (cause says both). */
static int fill_slot(ferry_container_set_t set, uint32_t k, int cls, int allow_incomplete, char *cause, int *lost)
{
    ferry__container_file_t *f = &set->files[k], copy;
    if (!cls && (f->complete || allow_incomplete)) return 0;
    char why[600], *name = ferry__container_file_path(set->path, k), *buddy = NULL;
    if (cls) snprintf(why, sizeof why, "%s", ferry__error_message());
    else snprintf(why, sizeof why, "'%s' %s", name ? name : "", ferry__container_damage_text(f));
    int copy_cls = ferry__container_load_copy(set, k, &copy);
    if (!copy_cls) {
        ferry__container_file_release(f);
        *f = copy;
        set->from_buddy[k] = 1;
        buddy = ferry__container_buddy_file_path(set->path, (k + 1) % set->nfiles);
        char note[1200];
        snprintf(note, sizeof note, "file %u ('%s'): %s; its streams are read from the buddy copy '%s'",
                 (unsigned)k, name ? name : "", why, buddy ? buddy : "");
        ferry__container_add_note(set, note);
    } else if (cls && (copy_cls != MPI_ERR_NO_SUCH_FILE || has_buddy_set(set))) {
        *lost = 1;
        snprintf(cause, 1200, "%s; and its buddy copy: %s", why, ferry__error_message());
    } else if (cls) {
        ferry__error_set(cls, "%s", why); /* no buddy set: the primary's failure, as it was */
    }
    ferry__free(name);
    ferry__free(buddy);
    return copy_cls ? cls : 0;
}

/* File 0 gives the set's file and stream counts and id; when it cannot be loaded (read-only), the
 * buddy set's file 0 does. */
static int load_first(ferry_container_set_t set, int writable, ferry__container_file_t *first, char *why)
{
    int cls = ferry__container_file_load(set->path, writable, first);
    if (!cls) {
        set->nfiles = first->super.file_count;
        set->streams = first->super.streams;
        set->id = first->super.id;
        return 0;
    }
    snprintf(why, 600, "%s", ferry__error_message());
    if (!writable) ferry__container_learn_from_copy(set); /* when it can: slot 0 then tries the copy */
    return ferry__error_set(cls, "%s", why);
}

static int map_streams(ferry_container_set_t set)
{
    uint64_t total = 0;
    for (uint32_t k = 0; k < set->nfiles; k++) total += set->files[k].super.local_streams;
    if (total != set->streams)
        return ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': the files hold %llu streams, the superblock "
                                "says %u", set->path, (unsigned long long)total, (unsigned)set->streams);
    set->file_of = ferry__malloc(set->streams * sizeof *set->file_of);
    set->local_of = ferry__malloc(set->streams * sizeof *set->local_of);
    if (!set->file_of || !set->local_of) return ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory",
                                                                 set->path);
    memset(set->file_of, 0xff, set->streams * sizeof *set->file_of);
    for (uint32_t k = 0; k < set->nfiles; k++)
        for (uint32_t t = 0; t < set->files[k].super.local_streams; t++) {
            uint32_t id = set->files[k].entries[t].stream;
            if (set->file_of[id] != UINT32_MAX)
                return ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': stream %u is in two files",
                                        set->path, (unsigned)id);
            set->file_of[id] = k;
            set->local_of[id] = t;
        }
    return 0;
}

/* Incomplete files: refused, or given the lengths their trailers recorded. */
static int settle_incomplete(ferry_container_set_t set, int allow_incomplete)
{
    set->complete = 1;
    for (uint32_t k = 0; k < set->nfiles; k++) {
        ferry__container_file_t *f = &set->files[k];
        if (f->complete) continue;
        set->complete = 0;
        if (!allow_incomplete) {
            char *name = ferry__container_file_path(set->path, k);
            int cls = incomplete(set->path, f, name ? name : "a file of the set");
            ferry__free(name);
            return cls;
        }
        ferry__container_scan(f);
    }
    return 0;
}

static int load_set(ferry_container_set_t set, int allow_incomplete, int writable)
{
    ferry__container_file_t first;
    char why[600] = "", cause[1200] = "";
    int first_cls = load_first(set, writable, &first, why), lost_cls = 0;
    if (first_cls && set->nfiles == 0) return first_cls;
    if (set->nfiles > set->streams || set->nfiles == 0) {
        if (!first_cls) ferry__container_file_release(&first);
        return ferry__error_set(MPI_ERR_BAD_FILE, "ferry container '%s': more files than streams", set->path);
    }
    set->files = ferry__calloc(set->nfiles, sizeof *set->files);
    set->from_buddy = ferry__calloc(set->nfiles, 1);
    if (!set->files || !set->from_buddy) {
        if (!first_cls) ferry__container_file_release(&first);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory", set->path);
    }
    if (!first_cls) set->files[0] = first;
    for (uint32_t k = 0; k < set->nfiles; k++) {
        int cls = k == 0 ? first_cls : load_member(set, k, writable), lost = 0;
        if (k == 0 && first_cls) ferry__error_set(first_cls, "%s", why);
        cls = writable && !cls ? 0 : writable ? cls : fill_slot(set, k, cls, allow_incomplete, cause, &lost);
        if (lost && !lost_cls) lost_cls = cls;
        else if (cls && !lost) return cls;
    }
    if (lost_cls) return ferry__container_lost_streams(set, lost_cls, cause);
    FERRY_TRY(map_streams(set));
    return settle_incomplete(set, allow_incomplete);
}

int ferry__container_set_load(const char *path, int allow_incomplete, int writable, ferry_container_set_t *out)
{
    *out = NULL;
    ferry_container_set_t set = ferry__calloc(1, sizeof *set);
    if (set) set->path = ferry__strdup(path);
    if (!set || !set->path) {
        ferry__container_set_free(set);
        return ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory", path);
    }
    set->reader_of = -1;
    int cls = load_set(set, allow_incomplete, writable);
    if (cls) {
        ferry__container_set_free(set);
        return cls;
    }
    *out = set;
    return 0;
}

void ferry__container_set_free(ferry_container_set_t set)
{
    if (!set) return;
    for (uint32_t k = 0; set->files && k < set->nfiles; k++) ferry__container_file_release(&set->files[k]);
    for (uint32_t t = 0; set->writers && t < set->streams; t++) ferry__container_stream_release(&set->writers[t]);
    ferry__container_stream_release(&set->reader);
    ferry__free(set->writers);
    ferry__free(set->files);
    ferry__free(set->file_of);
    ferry__free(set->local_of);
    ferry__free(set->from_buddy);
    ferry__free(set->notes);
    ferry__free(set->path);
    ferry__free(set);
}

int ferry_container_serial_open(const char *path, int flags, ferry_container_set_t *set)
{
    if (!path || !set) return ferry__error_set(MPI_ERR_ARG, "ferry_container_serial_open: NULL argument");
    return ferry__container_set_load(path, flags & FERRY_CONTAINER_INCOMPLETE_OK, 0, set);
}

int ferry_container_serial_describe(ferry_container_set_t set, int *streams, int *files, int *complete)
{
    if (!set || !streams || !files || !complete)
        return ferry__error_set(MPI_ERR_ARG, "ferry_container_serial_describe: NULL argument");
    *streams = (int)set->streams;
    *files = (int)set->nfiles;
    *complete = set->complete;
    return 0;
}

static int check_stream(ferry_container_set_t set, int stream, const char *what)
{
    if (!set) return ferry__error_set(MPI_ERR_ARG, "%s: NULL container", what);
    if (stream < 0 || (uint32_t)stream >= set->streams)
        return ferry__error_set(MPI_ERR_ARG, "ferry container '%s': %s: no stream %d (the container has %u)",
                                set->path, what, stream, (unsigned)set->streams);
    return 0;
}

/* The file, geometry and length of a stream of a checked set. */
static ferry__container_file_t *stream_place(ferry_container_set_t set, int stream, ferry__container_geometry_t *g,
                                             uint64_t *length)
{
    ferry__container_file_t *f = &set->files[set->file_of[stream]];
    uint32_t t = set->local_of[stream];
    *g = ferry__container_file_geometry(f, t);
    *length = set->creating ? set->writers[stream].length : f->ends[t].length;
    return f;
}

int ferry_container_serial_stream(ferry_container_set_t set, int stream, ferry_container_info_t *info)
{
    FERRY_TRY(check_stream(set, stream, "ferry_container_serial_stream"));
    if (!info) return ferry__error_set(MPI_ERR_ARG, "ferry_container_serial_stream: NULL info");
    ferry__container_geometry_t g;
    uint64_t length;
    const ferry__container_file_t *f = stream_place(set, stream, &g, &length);
    memset(info, 0, sizeof *info);
    info->stream = stream;
    info->streams = (int)set->streams;
    info->files = (int)set->nfiles;
    info->file_index = (int)set->file_of[stream];
    info->length = (MPI_Offset)length;
    info->chunk_size = (MPI_Offset)g.chunk_size;
    info->chunk_capacity = (MPI_Offset)ferry__container_capacity(&g);
    info->chunks = (MPI_Offset)ferry__container_chunks_for(&g, length);
    info->block_size = (MPI_Offset)f->super.block_size;
    info->data_checksums = (f->super.flags & FERRY__CONTAINER_FLAG_CHECKSUMS) != 0;
    info->write_failed = (f->ends[set->local_of[stream]].flags & FERRY__CONTAINER_STREAM_FAILED) != 0;
    return 0;
}

/* The set's checked reader, on stream (the last one read keeps its cache). */
static int checked_reader(ferry_container_set_t set, int stream, ferry__container_stream_t **reader)
{
    *reader = &set->reader;
    if (set->reader_of == stream) return 0;
    ferry__container_stream_release(&set->reader);
    set->reader_of = -1;
    ferry__container_stream_init_t init = {.stream = (uint32_t)stream, .file_index = set->file_of[stream],
                                           .checksums = 1};
    ferry__container_file_t *f = stream_place(set, stream, &init.geo, &init.length);
    init.fs = f->fs;
    init.id = f->super.id;
    FERRY_TRY(ferry__container_stream_init(&set->reader, &init));
    set->reader_of = stream;
    return 0;
}

int ferry_container_serial_read(ferry_container_set_t set, int stream, MPI_Offset position, void *buf, size_t len,
                                size_t *done)
{
    FERRY_TRY(check_stream(set, stream, "ferry_container_serial_read"));
    if (!done || (!buf && len) || position < 0)
        return ferry__error_set(MPI_ERR_ARG, "ferry_container_serial_read: NULL buffer or negative position");
    ferry__container_geometry_t g;
    uint64_t length;
    ferry__container_file_t *f = stream_place(set, stream, &g, &length);
    ferry__container_stream_t *reader;
    int cls;
    *done = 0;
    if (set->creating || !(f->super.flags & FERRY__CONTAINER_FLAG_CHECKSUMS)) {
        cls = ferry__container_pread(f->fs, &g, length, (uint64_t)position, buf, len, done);
    } else {
        cls = checked_reader(set, stream, &reader);
        if (!cls) reader->position = (uint64_t)position;
        if (!cls) cls = ferry__container_stream_read(reader, buf, len, done);
    }
    return cls ? ferry__container_fail(cls, set->path, -1, "ferry_container_serial_read") : 0;
}

int ferry_container_serial_chunk(ferry_container_set_t set, int stream, MPI_Offset chunk, int *file_index,
                                 MPI_Offset *offset, MPI_Offset *used)
{
    FERRY_TRY(check_stream(set, stream, "ferry_container_serial_chunk"));
    ferry__container_geometry_t g;
    uint64_t length;
    stream_place(set, stream, &g, &length);
    if (!file_index || !offset || !used || chunk < 0 || (uint64_t)chunk >= ferry__container_chunks_for(&g, length))
        return ferry__error_set(MPI_ERR_ARG, "ferry container '%s': stream %d has no chunk %lld", set->path, stream,
                                (long long)chunk);
    *file_index = (int)set->file_of[stream];
    *offset = (MPI_Offset)ferry__container_chunk_at(&g, (uint64_t)chunk);
    *used = (MPI_Offset)ferry__container_used_in(&g, length, (uint64_t)chunk);
    return 0;
}

int ferry_container_serial_file(ferry_container_set_t set, int index, ferry_container_file_info_t *info)
{
    if (!set || !info || index < 0 || (uint32_t)index >= set->nfiles)
        return ferry__error_set(MPI_ERR_ARG, "ferry_container_serial_file: no such file");
    const ferry__container_file_t *f = &set->files[index];
    memset(info, 0, sizeof *info);
    info->index = index;
    info->major = (int)f->super.major;
    info->minor = (int)f->super.minor;
    info->streams = (int)f->super.local_streams;
    info->complete = f->complete ? (int)f->how : 0;
    info->size = f->size;
    info->block_size = (MPI_Offset)f->super.block_size;
    info->data_start = (MPI_Offset)f->super.data_start;
    info->row_size = (MPI_Offset)f->super.row_size;
    info->rows = (MPI_Offset)f->rows;
    info->id = (unsigned long long)f->super.id;
    return 0;
}

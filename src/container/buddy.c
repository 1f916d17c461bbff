/*
 * Buddy copies (params.buddy): every stream is written twice, into its
 * file of the container and into a second set of files, the buddy set
 * (PATH.buddy, PATH.buddy.000001, ...), in which file (k + 1) mod n holds
 * the streams of primary file k, with the same stream table and therefore
 * the same geometry. With one file per node, node k's streams then also
 * lie in the file of node k + 1, so losing one node's file loses no
 * stream. Neither copy needs communication to grow: each rank writes its
 * stream at the same offsets into two files. The buddy set is a container
 * of its own (its id is the primary's XOR a mask), readable by every
 * reader as it is; the readers of the primary fall back to it for the
 * streams of a primary file that is missing or fails its checks (set.c).
 *
 * Open: after the primary open, the root of each primary file creates,
 * empties and heads its buddy file (the same rank writes both end tables
 * at close), an agreement, then every rank opens its buddy file and starts
 * the copy of its stream, an agreement.
 */
#include <string.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"

ferry__container_super_t ferry__container_buddy_super(const ferry__container_super_t *primary)
{
    ferry__container_super_t s = *primary;
    s.file_index = (primary->file_index + 1) % primary->file_count;
    s.id = primary->id ^ FERRY__CONTAINER_BUDDY_ID_MASK;
    return s;
}

static int is_root(ferry_container_t c)
{
    int file_rank = c->rank;
    if (c->file_comm != MPI_COMM_NULL) MPI_Comm_rank(c->file_comm, &file_rank);
    return file_rank == 0;
}

static uint32_t buddy_index(ferry_container_t c)
{
    return (c->streams->file_index + 1) % c->file_count;
}

/* A root: its buddy file created, emptied and headed with its own stream table. */
static int head_buddy(ferry_container_t c)
{
    ferry__fs_file_t *fs;
    ferry__container_super_t s = ferry__container_buddy_super(&c->super);
    s.file_count = c->file_count; /* (rank 0's copy of file 0's superblock has it; so do the others') */
    FERRY_TRY(ferry__container_handle_file(c, FERRY__CONTAINER_BUDDY_FILE + buddy_index(c),
                                           FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, &fs));
    FERRY_TRY(ferry__container_empty_file(c, fs));
    return ferry__container_write_header(fs, &s, c->entries);
}

static int start_copy(ferry_container_t c, size_t buffer_size)
{
    ferry__fs_file_t *fs;
    const ferry__container_stream_t *s = c->streams;
    FERRY_TRY(ferry__container_handle_file(c, FERRY__CONTAINER_BUDDY_FILE + buddy_index(c),
                                           FERRY_FS_READ | FERRY_FS_WRITE, &fs));
    c->buddy = ferry__calloc(1, sizeof *c->buddy);
    if (!c->buddy) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    ferry__container_stream_init_t init = {
        .fs = fs, .id = s->id ^ FERRY__CONTAINER_BUDDY_ID_MASK, .stream = s->stream, .file_index = buddy_index(c),
        .geo = s->geo, .writing = 1, .checksums = s->checksums, .durable = s->durable, .buffer_size = buffer_size};
    FERRY_TRY(ferry__container_stream_init(c->buddy, &init));
    c->buddy->meta_calls = &c->meta_calls;
    return 0;
}

int ferry__container_buddy_start(ferry_container_t c, size_t buffer_size)
{
    const char *what = "ferry_container_open_write";
    int cls = is_root(c) ? head_buddy(c) : 0;
    if (cls) cls = ferry__container_fail(cls, c->path, c->rank, what);
    FERRY_TRY(ferry__container_agree(c, cls, what)); /* every buddy file headed before any rank writes */
    cls = start_copy(c, buffer_size);
    if (cls) cls = ferry__container_fail(cls, c->path, c->rank, what);
    return ferry__container_agree(c, cls, what);
}

int ferry__container_write_stream(ferry_container_t c, ferry__container_stream_t *s, const void *buf, size_t len,
                                  size_t *done)
{
    int cls = ferry__container_stream_write(s, buf, len, done);
    if (!c->buddy || s != c->streams) return cls;
    size_t copied = 0;
    int copy_cls = ferry__container_stream_write(c->buddy, buf, len, &copied);
    if (!copy_cls || cls) return cls;
    char cause[512];
    snprintf(cause, sizeof cause, "%s", ferry__error_message());
    return ferry__error_set(copy_cls, "the stream's buddy copy in '%s': %s", c->buddy->fs->path, cause);
}

int ferry__container_move(ferry_container_t c, ferry__container_stream_t *s, uint64_t position)
{
    int cls = ferry__container_stream_seek(s, position);
    if (!c->buddy || s != c->streams) return cls;
    int copy_cls = ferry__container_stream_seek(c->buddy, position);
    return cls ? cls : copy_cls;
}

/* ---- readers: the buddy copy of a primary file ---- */

int ferry__container_load_copy(ferry_container_set_t set, uint32_t k, ferry__container_file_t *f)
{
    uint32_t b = (k + 1) % set->nfiles;
    char *name = ferry__container_buddy_file_path(set->path, b);
    if (!name) return ferry__error_set(MPI_ERR_NO_MEM, "ferry container '%s': out of memory", set->path);
    int cls = ferry__container_file_load(name, 0, f);
    const ferry__container_super_t *s = &f->super;
    if (!cls && (s->id != (set->id ^ FERRY__CONTAINER_BUDDY_ID_MASK) || s->file_index != b ||
                 s->file_count != set->nfiles || s->streams != set->streams))
        cls = ferry__error_set(MPI_ERR_BAD_FILE, "'%s' is not the buddy copy of file %u of this container", name,
                               (unsigned)k);
    else if (!cls && !f->complete)
        cls = ferry__error_set(MPI_ERR_BAD_FILE, "'%s' %s", name, ferry__container_damage_text(f));
    if (cls && f->fs) ferry__container_file_release(f);
    ferry__free(name);
    return cls;
}

int ferry__container_learn_from_copy(ferry_container_set_t set)
{
    ferry__container_file_t f;
    char *name = ferry__container_buddy_file_path(set->path, 0);
    int cls = name ? ferry__container_file_load(name, 0, &f) : MPI_ERR_NO_MEM;
    ferry__free(name);
    if (cls) return cls;
    set->nfiles = f.super.file_count;
    set->streams = f.super.streams;
    set->id = f.super.id ^ FERRY__CONTAINER_BUDDY_ID_MASK;
    ferry__container_file_release(&f);
    return 0;
}

void ferry__container_add_note(ferry_container_set_t set, const char *line)
{
    size_t old = set->notes ? strlen(set->notes) : 0, len = old + strlen(line) + 2;
    char *grown = ferry__realloc(set->notes, len);
    if (!grown) return; /* a note lost to memory: the reads themselves are right */
    snprintf(grown + old, len - old, "%s\n", line);
    set->notes = grown;
}

const char *ferry_container_serial_notes(ferry_container_set_t set)
{
    return set && set->notes ? set->notes : "";
}

/* The streams no loaded file names (their file and its copy are both lost), listed into text. */
static void list_lost(ferry_container_set_t set, char *text, size_t len)
{
    unsigned char *named = ferry__calloc(set->streams ? set->streams : 1, 1);
    size_t at = 0;
    text[0] = '\0';
    for (uint32_t k = 0; named && k < set->nfiles; k++)
        for (uint32_t t = 0; set->files[k].fs && t < set->files[k].super.local_streams; t++)
            if (set->files[k].entries[t].stream < set->streams) named[set->files[k].entries[t].stream] = 1;
    for (uint32_t id = 0; named && id < set->streams && at + 32 < len; id++)
        if (!named[id]) at += (size_t)snprintf(text + at, len - at, "%s%u", at ? ", " : "", (unsigned)id);
    if (!named) snprintf(text, len, "(unknown: out of memory)");
    ferry__free(named);
}

int ferry__container_lost_streams(ferry_container_set_t set, int cls, const char *cause)
{
    char lost[400];
    list_lost(set, lost, sizeof lost);
    return ferry__error_set(cls, "ferry container '%s': stream(s) %s cannot be read: %s", set->path, lost, cause);
}

/*
 * Collective mode (SIONlib's collectors): the ranks of a file form groups
 * (collector_size consecutive ranks, or one group per node), and the first
 * rank of each group, its collector, is the only one that writes the
 * group's chunks. A member's writes go to its outbox (what it wrote since
 * its last flush, as file offsets and bytes, joined where they follow each
 * other); a flush is collective over the group: one gather of the outbox
 * sizes, one gatherv of the outboxes, the collector writes every member's
 * data, then (the format's rule: a flush's data before any trailer that
 * records them) every member's trailers, and one broadcast gives every
 * member the collector's outcome and message. The file is the one
 * independent writers make, byte for byte: the same pieces at the same
 * offsets, the trailers encoded by their own streams (the collector only
 * computes the data CRC of a chunk that was not written by appending,
 * from the file, which only it writes).
 *
 * Why the collector does not write one range per row: chunk b of rank r+1
 * lies right after chunk b of rank r, but rank r's trailer ends that chunk,
 * and a trailer may not reach the file before the data it records (kill -9
 * between the two would leave a trailer naming bytes that are not there).
 * Data and trailers of one flush are therefore two passes: data pieces of
 * neighbouring ranks are never adjacent, and each member's pieces go out
 * as its outbox joined them (one pwrite per contiguous run).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "container/container_int.h"
#include "error/error.h"
#include "progress/progress.h"

/* Records: a kind word, the file offset, a length word, then the payload. */
enum { KIND_END = 0, KIND_DATA = 1, KIND_TRAILER = 2, KIND_TRAILER_CRC = 3, HEAD = 24, UNIT = 64, MESSAGE = 512 };
/* A trailer record's payload: the chunk's start (for a CRC the collector computes), the encoded trailer. */
enum { TRAILER_PAYLOAD = 8 + FERRY__CONTAINER_TRAILER_SIZE };

struct ferry__container_outbox {
    unsigned char *bytes;
    size_t len, cap;
    size_t last_data; /* where the last data record starts, SIZE_MAX when the last record is not data */
    size_t data_end;  /* the data records end here; trailers follow */
};

static uint64_t word_at(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

static void put_word(unsigned char *p, uint64_t w)
{
    memcpy(p, &w, sizeof w);
}

ferry__container_outbox_t *ferry__container_outbox_new(void)
{
    ferry__container_outbox_t *o = ferry__calloc(1, sizeof *o);
    if (o) o->last_data = SIZE_MAX;
    return o;
}

void ferry__container_outbox_free(ferry__container_outbox_t *o)
{
    if (!o) return;
    ferry__free(o->bytes);
    ferry__free(o);
}

/* Room for more bytes, growing by doubling; the message is padded to whole units later. */
static int reserve(ferry__container_outbox_t *o, size_t more)
{
    if (o->len + more + UNIT <= o->cap) return 0;
    size_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + more + UNIT) {
        if (cap > SIZE_MAX / 2) return ferry__error_set(MPI_ERR_NO_MEM, "outbox beyond the address space");
        cap *= 2;
    }
    unsigned char *grown = ferry__realloc(o->bytes, cap);
    if (!grown)
        return ferry__error_set(MPI_ERR_NO_MEM, "out of memory for %zu unflushed bytes (collective mode keeps what "
                                "a rank wrote since its last flush)", o->len + more);
    o->bytes = grown;
    o->cap = cap;
    return 0;
}

int ferry__container_outbox_data(ferry__container_outbox_t *o, uint64_t at, const void *data, size_t len)
{
    FERRY_TRY(reserve(o, HEAD + len));
    if (o->last_data != SIZE_MAX) {
        unsigned char *last = o->bytes + o->last_data;
        if (word_at(last + 8) + word_at(last + 16) == at) { /* it follows the last piece: one write */
            put_word(last + 16, word_at(last + 16) + len);
            memcpy(o->bytes + o->len, data, len);
            o->len += len;
            o->data_end = o->len;
            return 0;
        }
    }
    unsigned char *head = o->bytes + o->len;
    put_word(head, KIND_DATA);
    put_word(head + 8, at);
    put_word(head + 16, len);
    memcpy(head + HEAD, data, len);
    o->last_data = o->len;
    o->len += HEAD + len;
    o->data_end = o->len;
    return 0;
}

int ferry__container_outbox_trailer(ferry__container_outbox_t *o, uint64_t at, uint64_t chunk_start,
                                    int collector_crc, const unsigned char *raw)
{
    FERRY_TRY(reserve(o, HEAD + TRAILER_PAYLOAD));
    unsigned char *head = o->bytes + o->len;
    put_word(head, collector_crc ? KIND_TRAILER_CRC : KIND_TRAILER);
    put_word(head + 8, at);
    put_word(head + 16, TRAILER_PAYLOAD);
    put_word(head + HEAD, chunk_start);
    memcpy(head + HEAD + 8, raw, FERRY__CONTAINER_TRAILER_SIZE);
    o->len += HEAD + TRAILER_PAYLOAD;
    o->last_data = SIZE_MAX;
    return 0;
}

const unsigned char *ferry__container_outbox_next_trailer(const ferry__container_outbox_t *o, size_t *cursor)
{
    if (*cursor < o->data_end) *cursor = o->data_end;
    if (*cursor + HEAD + TRAILER_PAYLOAD > o->len) return NULL;
    const unsigned char *raw = o->bytes + *cursor + HEAD + 8;
    *cursor += HEAD + TRAILER_PAYLOAD;
    return raw;
}

void ferry__container_outbox_drop_trailers(ferry__container_outbox_t *o)
{
    o->len = o->data_end;
    o->last_data = SIZE_MAX; /* the last data record may have been followed: start a new one */
}

void ferry__container_outbox_clear(ferry__container_outbox_t *o)
{
    o->len = o->data_end = 0;
    o->last_data = SIZE_MAX;
}

/* ---- the collector ---- */

/* One record of a received message, checked against the message's bounds. */
typedef struct record {
    uint64_t kind, at, len;
    unsigned char *payload;
} record_t;

static int next_record(unsigned char *msg, size_t size, size_t *pos, record_t *r)
{
    if (*pos + HEAD > size || (r->kind = word_at(msg + *pos)) == KIND_END) return 0;
    r->at = word_at(msg + *pos + 8);
    r->len = word_at(msg + *pos + 16);
    r->payload = msg + *pos + HEAD;
    int trailer = r->kind == KIND_TRAILER || r->kind == KIND_TRAILER_CRC;
    if ((r->kind != KIND_DATA && !trailer) || r->len > size - *pos - HEAD ||
        (trailer && r->len != TRAILER_PAYLOAD) || r->at > (uint64_t)INT64_MAX - r->len)
        return -1;
    *pos += HEAD + r->len;
    return 1;
}

/* The data CRC of the first used bytes of the chunk at chunk_start, read back from the file. */
static int crc_from_file(ferry__fs_file_t *fs, uint64_t chunk_start, uint64_t used, uint32_t *crc)
{
    enum { PIECE = 1 << 20 };
    unsigned char *buf = ferry__malloc(used < PIECE ? (size_t)used + 1 : PIECE);
    if (!buf) return ferry__error_set(MPI_ERR_NO_MEM, "out of memory to checksum a chunk");
    int cls = 0;
    *crc = 0;
    for (uint64_t done = 0; done < used && !cls;) {
        size_t want = used - done < PIECE ? (size_t)(used - done) : PIECE, got = 0;
        cls = ferry__fs_pread(fs, NULL, buf, want, (MPI_Offset)(chunk_start + done), &got);
        if (!cls && got < want) cls = ferry__error_set(MPI_ERR_IO, "'%s': a chunk being checksummed is short",
                                                       fs->path);
        if (!cls) *crc = ferry__container_crc(*crc, buf, got);
        done += got;
    }
    ferry__free(buf);
    return cls;
}

static int write_trailer_record(ferry__fs_file_t *fs, const record_t *r)
{
    unsigned char raw[FERRY__CONTAINER_TRAILER_SIZE];
    memcpy(raw, r->payload + 8, sizeof raw);
    if (r->kind == KIND_TRAILER_CRC) {
        ferry__container_trailer_t tr;
        if (!ferry__container_decode_trailer(raw, &tr)) return ferry__error_set(MPI_ERR_INTERN, "a bad trailer");
        FERRY_TRY(crc_from_file(fs, word_at(r->payload), tr.used, &tr.data_crc));
        ferry__container_encode_trailer(&tr, raw);
    }
    return ferry__fs_pwrite(fs, NULL, raw, sizeof raw, (MPI_Offset)r->at);
}

/* Writes the data records of every member's message (trailers = 0), or their trailer records. */
static int write_pass(ferry__fs_file_t *fs, unsigned char *all, const int *units, int members, int trailers)
{
    size_t base = 0;
    for (int m = 0; m < members; m++) {
        size_t size = (size_t)units[m] * UNIT, pos = 0;
        record_t r;
        int got;
        while ((got = next_record(all + base, size, &pos, &r)) > 0) {
            if ((r.kind != KIND_DATA) != trailers) continue;
            FERRY_TRY(trailers ? write_trailer_record(fs, &r)
                               : ferry__fs_pwrite(fs, NULL, r.payload, r.len, (MPI_Offset)r.at));
        }
        if (got < 0) return ferry__error_set(MPI_ERR_INTERN, "member %d's outbox is malformed", m);
        base += size;
    }
    return 0;
}

static int sync_durable(ferry_container_t c, ferry__fs_file_t *fs)
{
    if (!c->durable) return 0;
    c->meta_calls++;
    return ferry__fs_sync(fs);
}

/* The collector: every member's data, then every member's trailers (durable: a sync after each). */
static int collector_writes(ferry_container_t c, unsigned char *all, const int *units, int members, int *phase)
{
    ferry__fs_file_t *fs = c->streams->fs;
    *phase = FERRY__COLLECT_DATA;
    FERRY_TRY(write_pass(fs, all, units, members, 0));
    FERRY_TRY(sync_durable(c, fs));
    *phase = FERRY__COLLECT_TRAILERS;
    FERRY_TRY(write_pass(fs, all, units, members, 1));
    FERRY_TRY(sync_durable(c, fs));
    *phase = FERRY__COLLECT_DONE;
    return 0;
}

/* What the collector tells its group: the class, what was written (FERRY__COLLECT_*), its message. */
typedef struct outcome {
    int64_t cls, phase;
    char message[MESSAGE - 16];
} outcome_t;

static void set_outcome(outcome_t *out, int cls, int phase)
{
    out->cls = cls;
    out->phase = phase;
    snprintf(out->message, sizeof out->message, "%s", cls ? ferry__error_message() : "");
}

/* The collector between the gather of the sizes and the gatherv: every member could take part, and
 * the counts, displacements and buffer of the gatherv. */
static void collector_prepares(const int64_t *sizes, int members, int *counts, int *displs, unsigned char **all,
                               outcome_t *out)
{
    int64_t total = 0;
    for (int m = 0; m < members; m++) {
        if (sizes[2 * m + 1] && !out->cls) {
            ferry__error_set((int)sizes[2 * m + 1], "rank %d of the collector group could not prepare its flush "
                             "(its own message names the cause); nothing was written", m);
            set_outcome(out, (int)sizes[2 * m + 1], FERRY__COLLECT_NOTHING);
        }
        counts[m] = (int)sizes[2 * m];
        displs[m] = (int)total;
        total += sizes[2 * m];
        if (total > INT32_MAX && !out->cls)
            set_outcome(out, ferry__error_set(MPI_ERR_NO_MEM, "the group's unflushed bytes exceed 128 GiB"),
                        FERRY__COLLECT_NOTHING);
    }
    if (out->cls) return;
    *all = ferry__malloc(total ? (size_t)total * UNIT : 1);
    if (!*all)
        set_outcome(out, ferry__error_set(MPI_ERR_NO_MEM, "the collector has no memory for the group's %lld "
                                          "unflushed bytes", (long long)total * UNIT), FERRY__COLLECT_NOTHING);
}

/* This member's message: its outbox padded with zeros (KIND_END) to whole units; *units 0 after a failure. */
static int64_t message_units(ferry__container_stream_t *s, int local)
{
    ferry__container_outbox_t *o = s->outbox;
    size_t units = (o->len + UNIT - 1) / UNIT;
    if (local || units == 0) return 0;
    memset(o->bytes + o->len, 0, units * UNIT - o->len); /* reserve() kept a unit of room */
    return (int64_t)units;
}

/* One flush of a collector group, as each member sees it. */
typedef struct group_flush {
    ferry_container_t c;
    const char *what; /* the API call, for messages */
    int rank, members;
    int64_t mine[2]; /* this member's message units and its own failure to prepare */
    outcome_t out;   /* the collector's */
} group_flush_t;

/* The host's broadcast of the collector's outcome (the go-ahead, or what it wrote). A rank whose
 * broadcast failed has no outcome from the collector: it fails with the host's cause, nothing known to
 * be written (the data stay queued, and the next flush writes them again where they belong, then their
 * trailers). Returns that failure. */
static int share_outcome(group_flush_t *g, const char *call)
{
    int rc = ferry__progress_bcast(&g->out, (int)sizeof g->out, MPI_BYTE, 0, g->c->collect_comm);
    int cls = ferry__container_host(g->c, rc, g->what, call);
    if (cls) set_outcome(&g->out, cls, FERRY__COLLECT_NOTHING);
    return cls;
}

/* The host calls of a flush, as messages name them. */
static const char sizes_call[] = "MPI_Gather (the members' outbox sizes to their collector)",
                  go_ahead[] = "MPI_Bcast (the collector's go-ahead)",
                  outcome[] = "MPI_Bcast (what the collector wrote)",
                  outboxes[] = "MPI_Gatherv (the members' unflushed bytes to their collector)";

/* The collector's part after the gather of the sizes (gathered: the host's return; sizes NULL when
 * out of memory): the go-ahead, the gatherv, the writes, the outcome. */
static void collect_and_write(group_flush_t *g, int gathered, const int64_t *sizes)
{
    int members = g->members, *counts = ferry__calloc((size_t)members * 2, sizeof *counts);
    int *displs = counts ? counts + members : NULL;
    int host = ferry__container_host(g->c, gathered, g->what, sizes_call);
    unsigned char *all = NULL;
    if (host) set_outcome(&g->out, host, FERRY__COLLECT_NOTHING); /* sizes are not the members' */
    else if (!counts || !sizes)
        set_outcome(&g->out, ferry__error_set(MPI_ERR_NO_MEM, "out of memory"), FERRY__COLLECT_NOTHING);
    else collector_prepares(sizes, members, counts, displs, &all, &g->out);
    if (!share_outcome(g, go_ahead) && !g->out.cls) {
        int rc = ferry__progress_gatherv(g->c->streams->outbox->bytes, (int)g->mine[0], g->c->collect_unit, all, counts,
                                         displs, g->c->collect_unit, 0, g->c->collect_comm);
        int phase = FERRY__COLLECT_NOTHING, cls = ferry__container_host(g->c, rc, g->what, outboxes);
        if (!cls) cls = collector_writes(g->c, all, counts, members, &phase); /* all holds every outbox */
        set_outcome(&g->out, cls, phase);
        share_outcome(g, outcome);
    }
    ferry__free(all);
    ferry__free(counts);
}

/* A member's part after the gather of the sizes: the go-ahead, the gatherv, the outcome. Its gather
 * and gatherv only send: whether what it sent arrived, the collector's outcome says. Returns its own
 * failure to receive an outcome. */
static int member_sends(group_flush_t *g)
{
    int host = share_outcome(g, go_ahead);
    if (host || g->out.cls) return host;
    ferry__progress_gatherv(g->c->streams->outbox->bytes, (int)g->mine[0], g->c->collect_unit, NULL, NULL, NULL,
                            g->c->collect_unit, 0, g->c->collect_comm); /* sends only: see above */
    return share_outcome(g, outcome);
}

/* Collective over the collector group: the members' outboxes to the collector, which writes them; every
 * member settles its stream by the collector's outcome. A host collective that fails fails the flush on
 * every rank that receives in it and on every rank the collector tells; nothing is then taken as
 * written (COLLECT_NOTHING), the data stay queued for the next flush. */
static int group_flush(ferry_container_t c, const char *what)
{
    ferry__container_stream_t *s = c->streams;
    int local = ferry__container_stream_prepare(s);
    group_flush_t g = {c, what, 0, 0, {message_units(s, local), local}, {0, FERRY__COLLECT_DONE, ""}};
    MPI_Comm_rank(c->collect_comm, &g.rank);
    MPI_Comm_size(c->collect_comm, &g.members);
    if (!local && (s->outbox->len + UNIT - 1) / UNIT > INT32_MAX)
        g.mine[0] = 0, g.mine[1] = local = ferry__error_set(MPI_ERR_NO_MEM, "more than 128 GiB unflushed");
    int64_t *sizes = g.rank == 0 ? ferry__calloc((size_t)g.members * 2, sizeof *sizes) : NULL;
    int rc = ferry__progress_gather(g.mine, 2, MPI_INT64_T, sizes, 2, MPI_INT64_T, 0, c->collect_comm), host = 0;
    if (g.rank == 0) collect_and_write(&g, rc, sizes); /* its own failures are the outcome's */
    else host = member_sends(&g);                      /* its gather only sent: see member_sends */
    ferry__free(sizes);
    g.out.message[sizeof g.out.message - 1] = '\0';
    ferry__container_stream_settle(s, (int)g.out.cls, (int)g.out.phase);
    if (local) return local; /* this rank's own cause */
    if (host || !g.out.cls || g.rank == 0) return host ? host : (int)g.out.cls;
    return ferry__error_set((int)g.out.cls, "the collector of this rank's group (its first rank) failed: %s",
                            g.out.message);
}

int ferry__container_flush_stream(ferry_container_t c, const char *what)
{
    if (c->collect_comm != MPI_COMM_NULL) return group_flush(c, what);
    int cls = ferry__container_stream_flush(c->streams, FERRY__CONTAINER_SYNC_AFTER);
    int copy_cls = c->buddy ? ferry__container_stream_flush(c->buddy, FERRY__CONTAINER_SYNC_AFTER) : 0;
    return cls ? cls : copy_cls;
}

/* A new group: collector_size consecutive ranks of the file's communicator, or its ranks of one node. */
static int split_groups(ferry_container_t c, int collector_size, MPI_Comm *group)
{
    MPI_Comm file_comm = c->file_comm == MPI_COMM_NULL ? c->comm : c->file_comm;
    int file_rank, rc;
    MPI_Comm_rank(file_comm, &file_rank);
    if (collector_size == FERRY_CONTAINER_COLLECTOR_PER_NODE)
        rc = MPI_Comm_split_type(file_comm, MPI_COMM_TYPE_SHARED, file_rank, MPI_INFO_NULL, group);
    else
        rc = MPI_Comm_split(file_comm, file_rank / collector_size, file_rank, group);
    if (rc == MPI_SUCCESS && *group != MPI_COMM_NULL) return 0;
    *group = MPI_COMM_NULL;
    if (rc != MPI_SUCCESS)
        return ferry__container_host(c, rc, "ferry_container_open_write",
                                     collector_size == FERRY_CONTAINER_COLLECTOR_PER_NODE
                                         ? "MPI_Comm_split_type (a collector group per node)"
                                         : "MPI_Comm_split (the collector groups)");
    return ferry__error_set(MPI_ERR_INTERN, "forming the collector groups gave this rank no group");
}

/* What each handle in collective mode needs of its own: the unit type and the stream's outbox. */
static int start_handle(ferry_container_t c)
{
    if (MPI_Type_contiguous(UNIT, MPI_BYTE, &c->collect_unit) != MPI_SUCCESS ||
        MPI_Type_commit(&c->collect_unit) != MPI_SUCCESS)
        return ferry__error_set(MPI_ERR_INTERN, "making the collectors' datatype failed");
    c->streams->outbox = ferry__container_outbox_new();
    return c->streams->outbox ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
}

/* The groups are split once per private communicator, files and collector_size (comm.c caches
 * them: a communicator's creation costs the host collectives, hundreds of milliseconds with 16 to
 * 64 busy-waiting ranks on 2 cores); every open agrees once. */
int ferry__container_collect_start(ferry_container_t c, int files, int collector_size)
{
    if (collector_size == 0) return 0;
    const char *what = "ferry_container_open_write";
    MPI_Comm group = ferry__container_group_find(c->comm, files, collector_size);
    struct ferry__container_group *node = NULL;
    int cls = 0, fresh = group == MPI_COMM_NULL; /* alike on every rank: they opened the same containers */
    if (fresh) {
        node = ferry__container_group_node();
        cls = split_groups(c, collector_size, &group);
        if (!cls && !node) cls = ferry__error_set(MPI_ERR_NO_MEM, "out of memory");
    }
    c->collect_comm = group;
    if (!cls) cls = start_handle(c);
    if (cls) cls = ferry__container_fail(cls, c->path, c->rank, what);
    cls = ferry__container_agree(c, cls, what);
    if (fresh && !cls) {
        ferry__container_group_keep(c->comm, node, files, collector_size, group);
    } else if (fresh) { /* not cached: every rank drops its part */
        free(node);
        if (group != MPI_COMM_NULL) MPI_Comm_free(&group);
        c->collect_comm = MPI_COMM_NULL;
    }
    return cls;
}

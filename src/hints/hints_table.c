/*
 * The hint table and the code that parses, validates and reports from it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hints/hints_int.h"

/* HINT_SIZE: a byte count in an MPI_Offset field, within [min, max]; k/m/g suffixes.
 * HINT_COUNT: a number of things (aggregators, storage targets) in an MPI_Offset
 * field, within [min, max]; decimal digits only ("2k" aggregators is a mistake).
 * HINT_SWITCH: one word of `words` (its index) in an int field.
 * HINT_WORDS: a comma-separated subset of `words` (a bit set) in an int field.
 * HINT_PER_NODE: ROMIO's cb_config_list, "*:N" or "*:*" (0), in an int field. */
typedef enum { HINT_SIZE, HINT_COUNT, HINT_SWITCH, HINT_WORDS, HINT_PER_NODE, HINT_READ_ONLY } hint_type_t;

typedef struct hint_spec {
    const char *name;
    hint_type_t type;
    size_t field; /* offsetof in ferry__hints_t */
    MPI_Offset default_value, min_value, max_value;
    const char *words; /* HINT_SWITCH, HINT_WORDS: the allowed words, comma-separated, in index order */
    const char *consumer;
    const char *meaning;
} hint_spec_t;

static const char switch_words[] = "automatic,enable,disable";
static const char bool_words[] = "false,true";
static const char shm_words[] = "auto,enable,disable";
static const char strategy_words[] = "auto,even,block_cyclic,stripe_group,independent";
static const char access_words[] =
    "read_once,write_once,read_mostly,write_mostly,sequential,reverse_sequential,random";

#define FIELD(name) offsetof(ferry__hints_t, name)
static const hint_spec_t hint_table[] = {
    {"ferry_version", HINT_READ_ONLY, 0, 0, 0, 0, NULL, "mpiio",
     "ferry's version; its presence in get_info shows ferry serves the file"},
    {"ferry_pack_buffer_size", HINT_SIZE, FIELD(pack_buffer_size), 16 << 20, 4096, (MPI_Offset)1 << 32, NULL, "indep",
     "bytes of user data staged per batch of file-system calls; bounds ferry's scratch memory"},
    {"romio_ds_read", HINT_SWITCH, FIELD(ds_read), FERRY_HINT_AUTOMATIC, 0, 0, switch_words, "indep",
     "data sieving for noncontiguous reads: automatic chooses per batch by the cost model (docs/indep.md)"},
    {"romio_ds_write", HINT_SWITCH, FIELD(ds_write), FERRY_HINT_AUTOMATIC, 0, 0, switch_words, "indep",
     "data sieving for noncontiguous writes (writes lock their byte range either way: docs/indep.md)"},
    {"ind_rd_buffer_size", HINT_SIZE, FIELD(ind_rd_buffer_size), 1 << 20, 1, 1 << 30, NULL, "indep",
     "bytes per data sieving read window; 1 MiB stays in a core's cache between the kernel's copy into it and "
     "the copy out (ROMIO's 4 MiB measured 10-20% slower on tmpfs, docs/benchmarks-noncontig.md); any positive "
     "size is taken, as ROMIO takes it (its test syshints sets 49), though windows below a page make sieving slow"},
    {"ind_wr_buffer_size", HINT_SIZE, FIELD(ind_wr_buffer_size), 1 << 20, 1, 1 << 30, NULL, "indep",
     "bytes per data sieving write window (read, patched and written back under a byte-range lock); any positive "
     "size, as for ind_rd_buffer_size"},
    {"access_style", HINT_WORDS, FIELD(access_style), 0, 0, 0, access_words, "indep",
     "how the file will be accessed; random enables guided prefetching of noncontiguous reads"},
    {"ferry_develop", HINT_SWITCH, FIELD(develop), 0, 0, 0, bool_words, "mpiio",
     "develop mode: collective calls check that arguments which must match across ranks do (MPI_ERR_NOT_SAME); "
     "FERRY_DEVELOP=1 in the environment turns it on for every file, including the checks at open"},
    {"ferry_prefetch_size", HINT_SIZE, FIELD(prefetch_size), 8 << 20, 0, 1 << 30, NULL, "indep",
     "bytes of upcoming noncontiguous reads announced to the kernel ahead (0 disables prefetching)"},
    {"ferry_write_behind", HINT_SIZE, FIELD(write_behind), 4 << 20, 0, 1 << 30, NULL, "coll",
     "a rank that writes at least this many bytes in one collective call starts their writeback to storage "
     "(sync_file_range) before the call's closing agreement lines the ranks up, as independent writers' own "
     "timing would overlap it with the others' writing (0 disables; nothing on memory-backed files)"},
    {"cb_buffer_size", HINT_SIZE, FIELD(cb_buffer_size), 1 << 20, 8192, 1 << 30, NULL, "coll",
     "bytes an aggregator uses per collective call: a third for the file window, a third for each of the two "
     "steps in flight (the data it receives or sends); 1 MiB keeps a window in cache and lets the kernel read "
     "ahead of cold reads (docs/coll.md); 16 MiB by default on a network file system's client, where every step "
     "crosses nodes and every call the network (docs/cluster.md)"},
    {"cb_nodes", HINT_COUNT, FIELD(cb_nodes), 0, 0, 1 << 24, NULL, "coll",
     "aggregators of collective calls (at most the ranks allowed by cb_config_list); 0: per node, one per third of "
     "cb_buffer_size of the call's data, at most the node's ranks (docs/coll.md)"},
    {"cb_config_list", HINT_PER_NODE, FIELD(cb_per_node), 0, 0, 1 << 20, NULL, "coll",
     "\"*:N\": at most N aggregators per node, \"*:*\" (default): any rank may aggregate; host lists are rejected"},
    {"ferry_cb_strategy", HINT_SWITCH, FIELD(cb_strategy), FERRY_CB_AUTO, 0, 0, strategy_words, "coll",
     "file domains of collective calls: auto picks by the cost model in docs/coll.md; independent skips two-phase"},
    {"romio_cb_write", HINT_SWITCH, FIELD(cb_write), FERRY_HINT_AUTOMATIC, 0, 0, switch_words, "coll",
     "collective buffering for collective writes: disable makes each rank write its own data"},
    {"romio_cb_read", HINT_SWITCH, FIELD(cb_read), FERRY_HINT_AUTOMATIC, 0, 0, switch_words, "coll",
     "collective buffering for collective reads: disable makes each rank read its own data"},
    {"IBM_io_buffer_size", HINT_SIZE, FIELD(cb_block_size), 0, 0, 1 << 30, NULL, "coll",
     "block_cyclic: bytes per block bound round-robin to aggregators, rounded up to file-system blocks (0: 16 "
     "blocks); also each aggregator's window"},
    {"IBM_largeblock_io", HINT_SWITCH, FIELD(cb_largeblock), 0, 0, 0, bool_words, "coll",
     "true: no data shipping, every rank accesses its own data (as ferry_cb_strategy=independent)"},
    {"striping_unit", HINT_SIZE, FIELD(striping_unit), 0, 0, (MPI_Offset)1 << 32, NULL, "coll",
     "stripe size stripe_group assumes (0: the file system's layout)"},
    {"striping_factor", HINT_COUNT, FIELD(striping_factor), 0, 0, 1 << 16, NULL, "coll",
     "storage targets stripe_group assumes (0: the file system's layout)"},
    {"ferry_cb_group_size", HINT_COUNT, FIELD(cb_group_size), 1, 1, 1 << 16, NULL, "coll",
     "stripe_group: storage targets per aggregator (1: one-to-one, 2: one-to-two)"},
    {"ferry_view_cache_limit", HINT_SIZE, FIELD(view_cache_limit), 64 << 20, 0, (MPI_Offset)1 << 40, NULL, "coll",
     "bytes each rank may spend caching every rank's view for two-phase calls (estimated at the first collective "
     "call after set_view: the gathered views, and about ten times the distinct ones' trees in the word format, "
     "16 B per block, rebuilt as host datatypes); views that would need more are not cached and collective calls go "
     "independent (docs/coll.md)"},
    {"ferry_cb_shm", HINT_SWITCH, FIELD(cb_shm), FERRY_HINT_AUTOMATIC, 0, 0, shm_words, "coll",
     "enable: two-phase data between ranks of one node go through a node-shared window (MPI_Win_allocate_shared, "
     "two step slots of a file window each per rank; one window for every file on MPI_COMM_WORLD's ranks, made at the "
     "first two-phase call that wants it and kept until MPI_Finalize, grown when a call needs larger slots; files on "
     "other communicators make their own at first use and free it at close) instead of messages, where the host can "
     "make it; auto (for now) and disable keep messages (docs/coll.md)"},
};
#undef FIELD
enum { TABLE_LENGTH = sizeof hint_table / sizeof hint_table[0] };
enum { NETWORK_CB_BUFFER_SIZE = 16 << 20 };
_Static_assert(TABLE_LENGTH <= 64, "ferry__hints_t.given has a bit per hint");

static MPI_Offset *size_field(ferry__hints_t *hints, const hint_spec_t *spec)
{
    return (MPI_Offset *)((char *)hints + spec->field);
}

static int *int_field(ferry__hints_t *hints, const hint_spec_t *spec)
{
    return (int *)((char *)hints + spec->field);
}

void ferry__hints_defaults(ferry__hints_t *hints)
{
    memset(hints, 0, sizeof *hints);
    for (int i = 0; i < TABLE_LENGTH; i++) {
        if (hint_table[i].type == HINT_SIZE || hint_table[i].type == HINT_COUNT)
            *size_field(hints, &hint_table[i]) = hint_table[i].default_value;
        if (hint_table[i].type == HINT_SWITCH || hint_table[i].type == HINT_WORDS ||
            hint_table[i].type == HINT_PER_NODE)
            *int_field(hints, &hint_table[i]) = (int)hint_table[i].default_value;
    }
}

/* Index of word (length len) in a comma-separated list, or -1. */
static int word_index(const char *words, const char *word, size_t len)
{
    int index = 0;
    for (const char *p = words; *p; index++) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, word, len) == 0) return index;
        p += n + (p[n] == ',');
    }
    return -1;
}

/* Parses a comma-separated subset of words into a bit set; -1 on an unknown word. */
static int parse_words(const char *words, const char *text, int *bits)
{
    *bits = 0;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, ",");
        int index = word_index(words, p, n);
        if (index < 0) return -1;
        *bits |= 1 << index;
        p += n + (p[n] == ',');
    }
    return 0;
}

/* Writes the words of bit set `bits` as a comma-separated list. */
static void format_words(const char *words, int bits, char *out, size_t cap)
{
    out[0] = '\0';
    int index = 0;
    for (const char *p = words; *p; index++) {
        size_t n = strcspn(p, ",");
        if (bits & (1 << index))
            snprintf(out + strlen(out), cap - strlen(out), "%s%.*s", out[0] ? "," : "", (int)n, p);
        p += n + (p[n] == ',');
    }
}

/* Parses a decimal byte count with an optional k/m/g suffix (powers of 1024). */
static int parse_size(const char *text, MPI_Offset *value)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || v < 0) return -1;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end != '\0' || v > (INT64_MAX >> shift)) return -1;
    *value = (MPI_Offset)v << shift;
    return 0;
}

/* Parses a decimal count: digits only, no suffix. */
static int parse_count(const char *text, MPI_Offset *value)
{
    if (text[strspn(text, "0123456789")] != '\0') return -1;
    return parse_size(text, value);
}

static void reject(ferry__hints_t *hints, const char *key, const char *value, const char *why)
{
    ferry__hints_note_rejected(hints, key, value, why);
}

/* A byte size or a count within the spec's bounds; 1 when taken. */
static int take_size(ferry__hints_t *hints, const hint_spec_t *spec, const char *value)
{
    MPI_Offset parsed;
    int count = spec->type == HINT_COUNT;
    if ((count ? parse_count(value, &parsed) : parse_size(value, &parsed)) != 0) {
        reject(hints, spec->name, value, count ? "not a count (decimal digits)" : "not a byte count");
        return 0;
    }
    if (parsed < spec->min_value || parsed > spec->max_value) {
        char why[96];
        snprintf(why, sizeof why, "outside [%" PRId64 ", %" PRId64 "]", (int64_t)spec->min_value,
                 (int64_t)spec->max_value);
        reject(hints, spec->name, value, why);
        return 0;
    }
    *size_field(hints, spec) = parsed;
    return 1;
}

/* Sets the hint of spec from value, or notes why not; returns 1 when taken. */
static int take_value(ferry__hints_t *hints, const hint_spec_t *spec, const char *value)
{
    const char *why = NULL;
    if (spec->type == HINT_READ_ONLY) {
        why = "read-only";
    } else if (spec->type == HINT_SWITCH) {
        int index = word_index(spec->words, value, strlen(value));
        if (index < 0) why = "not one of the allowed words";
        else *int_field(hints, spec) = index;
    } else if (spec->type == HINT_WORDS) {
        int bits;
        if (parse_words(spec->words, value, &bits) != 0) why = "unknown word";
        else *int_field(hints, spec) = bits;
    } else if (spec->type == HINT_PER_NODE) {
        MPI_Offset n = 0;
        if (strcmp(value, "*:*") == 0) *int_field(hints, spec) = 0;
        else if (strncmp(value, "*:", 2) == 0 && parse_count(value + 2, &n) == 0 && n >= 1 && n <= spec->max_value)
            *int_field(hints, spec) = (int)n;
        else why = "only \"*:N\" and \"*:*\" are supported";
    } else {
        return take_size(hints, spec, value);
    }
    if (why) reject(hints, spec->name, value, why);
    return why == NULL;
}

static void apply_one(ferry__hints_t *hints, const hint_spec_t *spec, const char *value)
{
    if (!take_value(hints, spec, value)) return;
    ferry__hints_forget_rejected(hints, spec->name);
    hints->given |= (uint64_t)1 << (spec - hint_table);
}


static const hint_spec_t *find_spec(const char *key)
{
    for (int i = 0; i < TABLE_LENGTH; i++)
        if (strcmp(hint_table[i].name, key) == 0) return &hint_table[i];
    return NULL;
}

/* What the program, a hints file or set_info left at the table's default
 * is the file system's to choose; 16 MiB is ROMIO's default too. */
void ferry__hints_fit_network(ferry__hints_t *hints)
{
    const hint_spec_t *spec = find_spec("cb_buffer_size");
    if (!(hints->given & ((uint64_t)1 << (spec - hint_table)))) hints->cb_buffer_size = NETWORK_CB_BUFFER_SIZE;
}

/* A key the table does not know: ferry's own reports (a program may pass
 * back what get_info gave it) are skipped, another ferry_ key is a typo
 * worth a note, anything else is echoed. */
static void keep_unknown(ferry__hints_t *hints, const char *key, const char *value)
{
    if (strncmp(key, "ferry_stats_", 12) == 0 || strncmp(key, "ferry_hints_", 12) == 0) return;
    if (strncmp(key, "ferry_", 6) == 0) reject(hints, key, value, "not a ferry hint");
    else ferry__hints_echo(hints, key, value);
}

void ferry__hints_apply(ferry__hints_t *hints, MPI_Info info)
{
    int nkeys = 0;
    if (info == MPI_INFO_NULL || MPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS) return;
    char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
    for (int i = 0; i < nkeys; i++) {
        int flag = 0;
        if (MPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS) continue;
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
        if (!flag) continue;
        const hint_spec_t *spec = find_spec(key);
        if (spec) apply_one(hints, spec, value);
        else keep_unknown(hints, key, value);
    }
}

int ferry__hints_report(const ferry__hints_t *hints, MPI_Info info)
{
    char value[160];
    for (int i = 0; i < TABLE_LENGTH; i++) {
        const hint_spec_t *spec = &hint_table[i];
        ferry__hints_t *h = (ferry__hints_t *)hints;
        if (spec->type == HINT_READ_ONLY)
            snprintf(value, sizeof value, "%s", FERRY_VERSION);
        else if (spec->type == HINT_SWITCH)
            format_words(spec->words, 1 << *int_field(h, spec), value, sizeof value);
        else if (spec->type == HINT_WORDS)
            format_words(spec->words, *int_field(h, spec), value, sizeof value);
        else if (spec->type == HINT_PER_NODE && *int_field(h, spec) == 0)
            snprintf(value, sizeof value, "*:*");
        else if (spec->type == HINT_PER_NODE)
            snprintf(value, sizeof value, "*:%d", *int_field(h, spec));
        else
            snprintf(value, sizeof value, "%" PRId64, (int64_t)*size_field(h, spec));
        if (spec->type == HINT_WORDS && value[0] == '\0') continue; /* no style given */
        if (MPI_Info_set(info, (char *)spec->name, value) != MPI_SUCCESS) return MPI_ERR_INFO;
    }
    return ferry__hints_report_notes(hints, info);
}

void ferry__hints_print_table(FILE *out)
{
    fprintf(out, "| hint | type | default | bounds | consumer | meaning |\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < TABLE_LENGTH; i++) {
        const hint_spec_t *s = &hint_table[i];
        if (s->type == HINT_READ_ONLY)
            fprintf(out, "| `%s` | read-only | | | %s | %s |\n", s->name, s->consumer, s->meaning);
        else if (s->type == HINT_SWITCH)
            fprintf(out, "| `%s` | one of | %.*s | %s | %s | %s |\n", s->name, (int)strcspn(s->words, ","), s->words,
                    s->words, s->consumer, s->meaning);
        else if (s->type == HINT_PER_NODE)
            fprintf(out, "| `%s` | `*:N` | `*:*` | N >= 1 | %s | %s |\n", s->name, s->consumer, s->meaning);
        else if (s->type == HINT_WORDS)
            fprintf(out, "| `%s` | list of | (none) | %s | %s | %s |\n", s->name, s->words, s->consumer, s->meaning);
        else
            fprintf(out, "| `%s` | %s | %" PRId64 " | %" PRId64 "..%" PRId64 " | %s | %s |\n", s->name,
                    s->type == HINT_COUNT ? "count" : "bytes", (int64_t)s->default_value, (int64_t)s->min_value,
                    (int64_t)s->max_value, s->consumer, s->meaning);
    }
}

/* One "key value" line of a system hints file into info; blank lines and
 * '#' comments are skipped, and so are keys or values too long for an
 * MPI_Info. The first line of a key wins, as in ROMIO's reader
 * (adio/common/system_hints.c), so a repeated key keeps its first value. */
static void add_system_line(MPI_Info info, char *line)
{
    char *key = line + strspn(line, " \t");
    if (*key == '#' || *key == '\n' || *key == '\0') return;
    char *end = key + strcspn(key, " \t\n");
    if (*end == '\0' || *end == '\n') return; /* a key without a value */
    *end = '\0';
    char *value = end + 1 + strspn(end + 1, " \t");
    size_t length = strcspn(value, "\r\n");
    while (length > 0 && (value[length - 1] == ' ' || value[length - 1] == '\t')) length--; /* trailing blanks */
    value[length] = '\0';
    int valuelen = 0, already = 0;
    if (!*value || strlen(key) >= MPI_MAX_INFO_KEY || length >= MPI_MAX_INFO_VAL) return;
    MPI_Info_get_valuelen(info, key, &valuelen, &already);
    if (!already) MPI_Info_set(info, key, value);
}

/* Applies the hints file named by environment variable `variable`, if set;
 * an unreadable one is noted. */
static void apply_system_file(ferry__hints_t *hints, const char *variable)
{
    const char *path = getenv(variable);
    if (!path || !*path) return;
    FILE *file = fopen(path, "r");
    if (!file) {
        reject(hints, variable, path, "cannot read the file");
        return;
    }
    MPI_Info info;
    if (MPI_Info_create(&info) == MPI_SUCCESS) {
        char line[MPI_MAX_INFO_KEY + MPI_MAX_INFO_VAL + 8];
        while (fgets(line, sizeof line, file)) add_system_line(info, line);
        ferry__hints_apply(hints, info);
        MPI_Info_free(&info);
    }
    fclose(file);
}

void ferry__hints_apply_system(ferry__hints_t *hints)
{
    /* ROMIO's file first, so ferry's own wins where both set a key. */
    apply_system_file(hints, "ROMIO_HINTS");
    apply_system_file(hints, "FERRY_HINTS");
}

uint64_t ferry__hints_collective_fingerprint(const ferry__hints_t *hints)
{
    const MPI_Offset fields[] = {hints->cb_buffer_size,  hints->cb_nodes,      hints->cb_per_node,
                                 hints->cb_strategy,     hints->cb_write,      hints->cb_read,
                                 hints->cb_block_size,   hints->cb_largeblock, hints->striping_unit,
                                 hints->striping_factor, hints->cb_group_size, hints->view_cache_limit,
                                 hints->cb_shm};
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the values */
    const unsigned char *p = (const unsigned char *)fields;
    for (size_t i = 0; i < sizeof fields; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

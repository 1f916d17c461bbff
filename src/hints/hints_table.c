/*
 * The hint table and the code that parses, validates and reports from it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hints/hints.h"

typedef enum { HINT_SIZE, HINT_READ_ONLY } hint_type_t;

typedef struct hint_spec {
    const char *name;
    hint_type_t type;
    size_t field; /* offsetof in ferry__hints_t (HINT_SIZE) */
    MPI_Offset default_value, min_value, max_value;
    const char *consumer;
    const char *meaning;
} hint_spec_t;

static const hint_spec_t hint_table[] = {
    {"ferry_version", HINT_READ_ONLY, 0, 0, 0, 0, "mpiio",
     "ferry's version; its presence in get_info shows ferry serves the file"},
    {"ferry_pack_buffer_size", HINT_SIZE, offsetof(ferry__hints_t, pack_buffer_size), 16 << 20, 4096,
     (MPI_Offset)1 << 32, "indep",
     "bytes of noncontiguous user memory staged per file-system call; bounds ferry's scratch memory"},
};
enum { HINT_COUNT = sizeof hint_table / sizeof hint_table[0] };

static MPI_Offset *size_field(ferry__hints_t *hints, const hint_spec_t *spec)
{
    return (MPI_Offset *)((char *)hints + spec->field);
}

void ferry__hints_defaults(ferry__hints_t *hints)
{
    memset(hints, 0, sizeof *hints);
    for (int i = 0; i < HINT_COUNT; i++)
        if (hint_table[i].type == HINT_SIZE) *size_field(hints, &hint_table[i]) = hint_table[i].default_value;
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

static void reject(ferry__hints_t *hints, const char *key, const char *value, const char *why)
{
    size_t used = strlen(hints->rejected);
    if (used + 1 >= sizeof hints->rejected) return;
    snprintf(hints->rejected + used, sizeof hints->rejected - used, "%s%s=%.64s (%s)", used ? "; " : "", key, value,
             why);
}

static void apply_one(ferry__hints_t *hints, const hint_spec_t *spec, const char *value)
{
    if (spec->type == HINT_READ_ONLY) {
        reject(hints, spec->name, value, "read-only");
        return;
    }
    MPI_Offset parsed;
    if (parse_size(value, &parsed) != 0) {
        reject(hints, spec->name, value, "not a byte count");
    } else if (parsed < spec->min_value || parsed > spec->max_value) {
        char why[96];
        snprintf(why, sizeof why, "outside [%" PRId64 ", %" PRId64 "]", (int64_t)spec->min_value,
                 (int64_t)spec->max_value);
        reject(hints, spec->name, value, why);
    } else {
        *size_field(hints, spec) = parsed;
    }
}

void ferry__hints_apply(ferry__hints_t *hints, MPI_Info info)
{
    if (info == MPI_INFO_NULL) return;
    hints->rejected[0] = '\0';
    char value[MPI_MAX_INFO_VAL + 1];
    for (int i = 0; i < HINT_COUNT; i++) {
        int flag = 0;
        MPI_Info_get(info, (char *)hint_table[i].name, MPI_MAX_INFO_VAL, value, &flag);
        if (flag) apply_one(hints, &hint_table[i], value);
    }
}

int ferry__hints_report(const ferry__hints_t *hints, MPI_Info info)
{
    char value[64];
    for (int i = 0; i < HINT_COUNT; i++) {
        const hint_spec_t *spec = &hint_table[i];
        if (spec->type == HINT_READ_ONLY)
            snprintf(value, sizeof value, "%s", FERRY_VERSION);
        else
            snprintf(value, sizeof value, "%" PRId64, (int64_t)*size_field((ferry__hints_t *)hints, spec));
        if (MPI_Info_set(info, (char *)spec->name, value) != MPI_SUCCESS) return MPI_ERR_INFO;
    }
    if (hints->rejected[0] && MPI_Info_set(info, "ferry_hints_rejected", (char *)hints->rejected) != MPI_SUCCESS)
        return MPI_ERR_INFO;
    return 0;
}

void ferry__hints_print_table(FILE *out)
{
    fprintf(out, "| hint | type | default | bounds | consumer | meaning |\n|---|---|---|---|---|---|\n");
    for (int i = 0; i < HINT_COUNT; i++) {
        const hint_spec_t *s = &hint_table[i];
        if (s->type == HINT_READ_ONLY)
            fprintf(out, "| `%s` | read-only | | | %s | %s |\n", s->name, s->consumer, s->meaning);
        else
            fprintf(out, "| `%s` | bytes | %" PRId64 " | %" PRId64 "..%" PRId64 " | %s | %s |\n", s->name,
                    (int64_t)s->default_value, (int64_t)s->min_value, (int64_t)s->max_value, s->consumer,
                    s->meaning);
    }
}

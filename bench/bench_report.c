/*
 * The results of one workload run as JSON (--json FILE; schema in
 * docs/report.md): the environment, the host MPI, the command, every
 * option's value, and one entry per table line with each contender's
 * figure and ferry's speed ratios to the others.
 *
 * Rank 0 alone records rows; the other ranks' bench_row returns NULL and
 * every setter ignores NULL, so workloads call them unconditionally.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

enum { TEXT_MAX = 96, EXTRAS_MAX = 16 };

typedef struct named_value {
    char name[TEXT_MAX];
    double value;
} named_value_t;

struct bench_row {
    char table[160], label[TEXT_MAX], op[16], unit[16];
    int n, extras;
    named_value_t values[BENCH_MAX_CONTENDERS], extra[EXTRAS_MAX];
};

struct bench_report {
    bench_row_t *rows;
    int count, cap;
    char started_utc[32];
    double load_start;
};

static double load_average(void)
{
    double load = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf", &load) != 1) load = -1;
    if (f) fclose(f);
    return load;
}

void bench_report_begin(bench_common_t *c)
{
    if (c->rank != 0 || !c->json) return;
    c->report = calloc(1, sizeof *c->report);
    if (!c->report) return;
    time_t now = time(NULL);
    struct tm utc;
    gmtime_r(&now, &utc);
    strftime(c->report->started_utc, sizeof c->report->started_utc, "%Y-%m-%dT%H:%M:%SZ", &utc);
    c->report->load_start = load_average();
}

bench_row_t *bench_row(bench_common_t *c, const char *table, const char *label, const char *op, const char *unit)
{
    bench_report_t *r = c->report;
    if (!r) return NULL;
    if (r->count == r->cap) {
        int cap = r->cap ? 2 * r->cap : 32;
        bench_row_t *rows = realloc(r->rows, (size_t)cap * sizeof *rows);
        if (!rows) return NULL;
        r->rows = rows;
        r->cap = cap;
    }
    bench_row_t *row = &r->rows[r->count++];
    memset(row, 0, sizeof *row);
    snprintf(row->table, sizeof row->table, "%s", table);
    snprintf(row->label, sizeof row->label, "%s", label);
    snprintf(row->op, sizeof row->op, "%s", op ? op : "");
    snprintf(row->unit, sizeof row->unit, "%s", unit);
    return row;
}

static void put(named_value_t *list, int *n, int cap, const char *name, double value)
{
    if (*n >= cap) return;
    snprintf(list[*n].name, sizeof list[*n].name, "%s", name);
    list[(*n)++].value = value;
}

void bench_row_value(bench_row_t *row, const char *contender, double value)
{
    if (row) put(row->values, &row->n, BENCH_MAX_CONTENDERS, contender, value);
}

void bench_row_extra(bench_row_t *row, const char *key, double value)
{
    if (row) put(row->extra, &row->extras, EXTRAS_MAX, key, value);
}

/* ---- writing ---- */

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(out, "\\%c", ch);
        else if (ch < 0x20) fprintf(out, "\\u%04x", ch);
        else fputc(ch, out);
    }
    fputc('"', out);
}

static void json_number(FILE *out, double v)
{
    if (isfinite(v)) fprintf(out, "%.10g", v);
    else fprintf(out, "null");
}

static void json_key(FILE *out, const char *key, int first)
{
    fprintf(out, "%s", first ? "" : ", ");
    json_string(out, key);
    fprintf(out, ": ");
}

static void field_text(FILE *out, const char *key, const char *value, int first)
{
    json_key(out, key, first);
    json_string(out, value ? value : "");
}

static void field_number(FILE *out, const char *key, double value, int first)
{
    json_key(out, key, first);
    json_number(out, value);
}

/* Times, memory held and bytes exchanged are better low; speeds and shares high. */
static int higher_is_better(const char *unit)
{
    return strcmp(unit, "s") != 0 && strcmp(unit, "ms") != 0 && strcmp(unit, "us") != 0 && strcmp(unit, "ns") != 0 &&
           strcmp(unit, "MiB") != 0 && strcmp(unit, "B") != 0;
}

static int is_ferry(const char *contender)
{
    return strncmp(contender, "ferry", 5) == 0;
}

/* Every ferry contender against every other contender, as a speed ratio (> 1: ferry faster). */
static void write_ratios(FILE *out, const bench_row_t *row)
{
    int first = 1, higher = higher_is_better(row->unit);
    for (int f = 0; f < row->n; f++) {
        for (int o = 0; is_ferry(row->values[f].name) && o < row->n; o++) {
            if (is_ferry(row->values[o].name)) continue;
            char key[2 * TEXT_MAX + 2];
            snprintf(key, sizeof key, "%s/%s", row->values[f].name, row->values[o].name);
            double a = row->values[f].value, b = row->values[o].value;
            json_key(out, key, first);
            json_number(out, higher ? a / b : b / a);
            first = 0;
        }
    }
}

static void write_values(FILE *out, const named_value_t *list, int n)
{
    for (int i = 0; i < n; i++) {
        json_key(out, list[i].name, i == 0);
        json_number(out, list[i].value);
    }
}

static void write_row(FILE *out, const bench_row_t *row, int first)
{
    fprintf(out, "%s\n    {", first ? "" : ",");
    field_text(out, "table", row->table, 1);
    field_text(out, "case", row->label, 0);
    field_text(out, "op", row->op, 0);
    field_text(out, "unit", row->unit, 0);
    fprintf(out, ", \"higher_is_better\": %s, \"contenders\": {", higher_is_better(row->unit) ? "true" : "false");
    write_values(out, row->values, row->n);
    fprintf(out, "}, \"ratios\": {");
    write_ratios(out, row);
    fprintf(out, "}, \"extra\": {");
    write_values(out, row->extra, row->extras);
    fprintf(out, "}}");
}

/* The command as one shell-ready line: arguments with spaces or quotes are single-quoted. */
static void write_command(FILE *out, const bench_common_t *c)
{
    char line[4096] = "ferry-bench";
    for (int i = 0; i < c->argc; i++) {
        size_t used = strlen(line);
        int plain = strspn(c->argv[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+") ==
                    strlen(c->argv[i]);
        snprintf(line + used, sizeof line - used, plain ? " %s" : " '%s'", c->argv[i]);
    }
    json_string(out, line);
}

static const char *fs_name(long type)
{
    static const struct {
        long magic;
        const char *name;
    } known[] = {{0x01021994, "tmpfs"}, {0xEF53, "ext4"},      {0x58465342, "xfs"},  {0x9123683E, "btrfs"},
                 {0x0BD00BD0, "lustre"}, {0x47504653, "gpfs"}, {0x6969, "nfs"},      {0x794C7630, "overlayfs"},
                 {0x858458f6, "ramfs"},  {0x65735546, "fuse"}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].magic == type) return known[i].name;
    return "other";
}

static void write_environment(FILE *out, const bench_common_t *c)
{
    struct utsname u;
    struct statfs fs;
    char host[256] = "";
    uname(&u);
    gethostname(host, sizeof host - 1);
    int have_fs = c->dir && statfs(c->dir, &fs) == 0;
    fprintf(out, "  \"environment\": {");
    field_text(out, "hostname", host, 1);
    field_text(out, "kernel", u.release, 0);
    field_number(out, "cpus", (double)sysconf(_SC_NPROCESSORS_ONLN), 0);
    field_number(out, "ranks", c->nprocs, 0);
    field_text(out, "dir", c->dir, 0);
    field_text(out, "fs_type", have_fs ? fs_name((long)fs.f_type) : "", 0);
    field_text(out, "ferry_version", FERRY_VERSION_STRING, 0);
    field_text(out, "ferry_hints_file", getenv("FERRY_HINTS"), 0);
    field_number(out, "load_start", c->report->load_start, 0);
    field_number(out, "load_end", load_average(), 0);
    fprintf(out, "},\n");
}

static void write_host(FILE *out, const bench_host_t *host)
{
    fprintf(out, "  \"host_mpi\": {");
    field_text(out, "name", host->name, 1);
    field_text(out, "version", host->version, 0);
    field_text(out, "io", host->io, 0);
    field_text(out, "library", host->library, 0);
    fprintf(out, "},\n");
}

/* Every option's value: numbers as numbers, words and text as strings. */
static void write_parameters(FILE *out, const bench_common_t *c)
{
    fprintf(out, "  \"parameters\": {");
    for (int i = 0; cli_option_at(c->spec, i); i++) {
        const cli_option_t *o = cli_option_at(c->spec, i);
        char value[256];
        cli_format_value(o, c->config, value, sizeof value);
        json_key(out, o->name, i == 0);
        if (o->kind == CLI_SIZE) fprintf(out, "%lld", *(const long long *)((const char *)c->config + o->offset));
        else if (o->kind == CLI_TEXT || o->kind == CLI_CHOICE) json_string(out, value);
        else fprintf(out, "%s", value);
    }
    fprintf(out, "},\n");
}

static int write_json(const bench_common_t *c, int failed)
{
    FILE *out = fopen(c->json, "w");
    if (!out) {
        perror(c->json);
        return 1;
    }
    fprintf(out, "{\n  ");
    field_text(out, "schema", "ferry-bench/1", 1);
    fprintf(out, ",\n  ");
    field_text(out, "workload", c->argv[0], 1);
    fprintf(out, ",\n  \"command\": ");
    write_command(out, c);
    fprintf(out, ",\n  ");
    field_text(out, "launcher", getenv("FERRY_BENCH_LAUNCHER"), 1);
    fprintf(out, ",\n  ");
    field_text(out, "started", c->report->started_utc, 1);
    fprintf(out, ",\n  ");
    field_number(out, "seconds", bench_now() - c->started, 1);
    fprintf(out, ",\n");
    write_environment(out, c);
    write_host(out, &c->host);
    write_parameters(out, c);
    fprintf(out, "  \"results\": [");
    for (int i = 0; i < c->report->count; i++) write_row(out, &c->report->rows[i], i == 0);
    fprintf(out, "\n  ],\n  \"failed\": %s\n}\n", failed ? "true" : "false");
    return fclose(out) != 0;
}

int bench_finish(bench_common_t *c, int failed)
{
    int bad_json = 0;
    if (c->report) {
        bad_json = write_json(c, failed);
        free(c->report->rows);
        free(c->report);
        c->report = NULL;
    }
    MPI_Bcast(&bad_json, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return failed || bad_json ? 1 : 0;
}

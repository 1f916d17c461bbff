/*
 * ferry-trace: merges a job's FERRY_TRACE files and prints per-rank
 * summaries, every error, and the slowest file-system calls.
 *
 * usage: ferry-trace [-n slowest] <trace-dir | trace files...>  (ferry-trace --help)
 * Reads the tab-separated key=value lines ferry writes (docs/trace.md).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

enum { MAX_RANKS = 4096, MAX_OPS = 8, FIELD_MAX = 1100 };

typedef struct record {
    double t, us;
    int rank, error, call;
    long long offset, len, result;
    char op[16];
    char text[FIELD_MAX]; /* error message, or the call's path */
} record_t;

typedef struct rank_summary {
    long long calls[MAX_OPS], bytes[MAX_OPS], errors;
    double us[MAX_OPS];
    int seen;
} rank_summary_t;

static const char *const ops[MAX_OPS] = {"open", "pread", "pwrite", "fsync", "ftruncate", "fallocate", "unlink", "other"};

static record_t *records;
static size_t record_count, record_cap;

static int op_index(const char *op)
{
    for (int i = 0; i < MAX_OPS - 1; i++)
        if (!strcmp(op, ops[i])) return i;
    return MAX_OPS - 1;
}

/* Copies the value of key in a tab-separated line into out; 0 when found. */
static int field(const char *line, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    for (const char *p = line; p; p = strchr(p, '\t')) {
        if (*p == '\t') p++;
        if (!strncmp(p, key, klen) && p[klen] == '=') {
            const char *v = p + klen + 1;
            size_t n = strcspn(v, "\t\n");
            if (n >= cap) n = cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return 0;
        }
    }
    return -1;
}

static long long number(const char *line, const char *key)
{
    char value[64];
    return field(line, key, value, sizeof value) == 0 ? strtoll(value, NULL, 10) : 0;
}

static void parse_line(const char *line)
{
    char kind[16], value[64];
    if (field(line, "kind", kind, sizeof kind) != 0) return;
    if (record_count == record_cap) {
        record_cap = record_cap ? 2 * record_cap : 1024;
        records = realloc(records, record_cap * sizeof *records);
        if (!records) {
            perror("ferry-trace");
            exit(1);
        }
    }
    record_t *r = &records[record_count++];
    memset(r, 0, sizeof *r);
    r->t = field(line, "t", value, sizeof value) == 0 ? strtod(value, NULL) : 0;
    r->rank = (int)number(line, "rank");
    r->error = !strcmp(kind, "error");
    r->call = !strcmp(kind, "call");
    if (r->call) {
        field(line, "op", r->op, sizeof r->op);
        r->offset = number(line, "offset");
        r->len = number(line, "len");
        r->result = number(line, "result");
        r->us = field(line, "us", value, sizeof value) == 0 ? strtod(value, NULL) : 0;
        field(line, "path", r->text, sizeof r->text);
    } else if (r->error) {
        char cls[64] = "";
        field(line, "class", cls, sizeof cls);
        char message[FIELD_MAX - 80] = "";
        field(line, "message", message, sizeof message);
        snprintf(r->text, sizeof r->text, "%s: %s", cls, message);
    }
}

static void read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) parse_line(line);
    free(line);
    fclose(f);
}

static void read_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, "ferry-trace.", 12) != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        read_file(path);
    }
    closedir(d);
}

static int by_time(const void *a, const void *b)
{
    double x = ((const record_t *)a)->t, y = ((const record_t *)b)->t;
    return (x > y) - (x < y);
}

static int by_duration(const void *a, const void *b)
{
    double x = (*(record_t *const *)a)->us, y = (*(record_t *const *)b)->us;
    return (x < y) - (x > y);
}

static void print_summaries(void)
{
    static rank_summary_t ranks[MAX_RANKS];
    for (size_t i = 0; i < record_count; i++) {
        const record_t *r = &records[i];
        if (r->rank < 0 || r->rank >= MAX_RANKS) continue;
        rank_summary_t *s = &ranks[r->rank];
        s->seen = 1;
        if (r->error) s->errors++;
        if (!r->call) continue;
        int op = op_index(r->op);
        s->calls[op]++;
        s->us[op] += r->us;
        if (r->result > 0 && (op == 1 || op == 2)) s->bytes[op] += r->result;
    }
    printf("per-rank summary\n%5s %8s %8s %12s %8s %12s %8s %12s %7s\n", "rank", "opens", "preads", "read bytes",
           "pwrites", "write bytes", "fsyncs", "io seconds", "errors");
    for (int k = 0; k < MAX_RANKS; k++) {
        const rank_summary_t *s = &ranks[k];
        if (!s->seen) continue;
        double us = 0;
        for (int op = 0; op < MAX_OPS; op++) us += s->us[op];
        printf("%5d %8lld %8lld %12lld %8lld %12lld %8lld %12.6f %7lld\n", k, s->calls[0], s->calls[1], s->bytes[1],
               s->calls[2], s->bytes[2], s->calls[3], us * 1e-6, s->errors);
    }
}

static void print_errors(void)
{
    size_t n = 0;
    printf("\nerrors\n");
    for (size_t i = 0; i < record_count; i++)
        if (records[i].error) {
            printf("  t=%.6f rank %d  %s\n", records[i].t, records[i].rank, records[i].text);
            n++;
        }
    if (n == 0) printf("  none\n");
}

static void print_slowest(int limit)
{
    record_t **calls = malloc((record_count + 1) * sizeof *calls);
    size_t n = 0;
    for (size_t i = 0; i < record_count; i++)
        if (records[i].call) calls[n++] = &records[i];
    qsort(calls, n, sizeof *calls, by_duration);
    printf("\nslowest calls\n");
    for (size_t i = 0; i < n && i < (size_t)limit; i++)
        printf("  %10.1f us  rank %d  %-9s offset=%lld len=%lld result=%lld %s\n", calls[i]->us, calls[i]->rank,
               calls[i]->op, calls[i]->offset, calls[i]->len, calls[i]->result, calls[i]->text);
    if (n == 0) printf("  none (trace with FERRY_TRACE=all to record calls)\n");
    free(calls);
}

typedef struct trace_config {
    int slowest;
    cli_positional_t inputs;
} trace_config_t;

static const trace_config_t trace_defaults = {.slowest = 10};

static const cli_option_t trace_options[] = {
    {"slowest", 'n', CLI_INT, offsetof(trace_config_t, slowest), 0, 1000000, NULL,
     "how many of the slowest file-system calls to list"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};

static const cli_spec_t trace_spec = {
    "ferry-trace", "ferry-trace [options] <trace-dir | trace files...>",
    "Merges a job's FERRY_TRACE files (docs/trace.md) and prints per-rank summaries, every error and the slowest "
    "file-system calls.",
    trace_options, NULL, sizeof(trace_config_t), &trace_defaults, "FILE...", offsetof(trace_config_t, inputs)};

int main(int argc, char **argv)
{
    trace_config_t cfg;
    int rc = cli_parse(&trace_spec, argc, argv, &cfg, stdout, stderr);
    if (rc != CLI_RUN) return rc;
    if (cfg.inputs.count == 0) {
        fprintf(stderr, "ferry-trace: no trace directory or files given (see ferry-trace --help)\n");
        return 2;
    }
    for (int i = 0; i < cfg.inputs.count; i++) {
        struct stat st;
        if (stat(cfg.inputs.values[i], &st) == 0 && S_ISDIR(st.st_mode)) read_dir(cfg.inputs.values[i]);
        else read_file(cfg.inputs.values[i]);
    }
    if (record_count > 0) qsort(records, record_count, sizeof *records, by_time); /* records is NULL when none */
    printf("ferry-trace: %zu records\n", record_count);
    print_summaries();
    print_errors();
    print_slowest(cfg.slowest);
    free(records);
    return 0;
}

/*
 * Parsing, validation and help from a tool's option table (cli.h).
 */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void *field_of(const cli_option_t *o, void *config)
{
    return (char *)config + o->offset;
}

static const void *const_field_of(const cli_option_t *o, const void *config)
{
    return (const char *)config + o->offset;
}

const cli_option_t *cli_option_at(const cli_spec_t *spec, int i)
{
    const cli_option_t *tables[2] = {spec->options, spec->shared};
    for (int t = 0; t < 2; t++) {
        for (const cli_option_t *o = tables[t]; o && o->name; o++)
            if (i-- == 0) return o;
    }
    return NULL;
}

long long cli_parse_size(const char *text)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || v < 0) return -1;
    static const char suffixes[] = "kmgt";
    const char *s = *end ? strchr(suffixes, *end | 0x20) : NULL;
    int shift = s ? 10 * (int)(s - suffixes + 1) : 0;
    if (s) end++;
    if (*end != '\0' || v > (0x7fffffffffffffffLL >> shift)) return -1;
    return v << shift;
}

/* Index of word in a comma-separated list, or -1. */
static int choice_index(const char *choices, const char *word)
{
    size_t len = strlen(word);
    int index = 0;
    for (const char *p = choices; *p; index++) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, word, len) == 0) return index;
        p += n + (p[n] == ',');
    }
    return -1;
}

static int parse_number(const cli_option_t *o, const char *text, double *value)
{
    char *end = NULL;
    errno = 0;
    if (o->kind == CLI_SIZE) {
        long long v = cli_parse_size(text);
        *value = (double)v;
        return v >= 0 ? 0 : -1;
    }
    if (o->kind == CLI_REAL) *value = strtod(text, &end);
    else *value = (double)strtoll(text, &end, 10);
    return errno == 0 && end != text && *end == '\0' && isfinite(*value) ? 0 : -1;
}

static void store_number(const cli_option_t *o, void *config, const char *text, double value)
{
    void *field = field_of(o, config);
    switch (o->kind) {
    case CLI_SIZE: *(long long *)field = cli_parse_size(text); break;
    case CLI_INT: *(int *)field = (int)value; break;
    case CLI_U64: *(unsigned long long *)field = strtoull(text, NULL, 10); break;
    default: *(double *)field = value; break;
    }
}

/* Stores text as o's value; 0, or -1 with *why set. */
static int store(const cli_option_t *o, void *config, char *text, const char **why)
{
    if (o->kind == CLI_TEXT) {
        *(const char **)field_of(o, config) = text;
        return 0;
    }
    if (o->kind == CLI_CHOICE) {
        int index = choice_index(o->choices, text);
        *why = "not one of the allowed words";
        if (index < 0) return -1;
        *(int *)field_of(o, config) = index;
        return 0;
    }
    double value;
    *why = o->kind == CLI_SIZE ? "not a byte count (digits and an optional k, m, g or t)" : "not a number";
    if (parse_number(o, text, &value) != 0) return -1;
    *why = "out of range";
    if (value < o->min || value > o->max) return -1;
    store_number(o, config, text, value);
    return 0;
}

/* The option an argument names ("--name", "--name=v", "-x"), or NULL. */
static const cli_option_t *lookup(const cli_spec_t *spec, const char *arg, const char **inline_value)
{
    *inline_value = NULL;
    if (arg[0] == '-' && arg[1] != '-' && arg[1] && !arg[2]) {
        for (int i = 0; cli_option_at(spec, i); i++)
            if (cli_option_at(spec, i)->short_name == arg[1]) return cli_option_at(spec, i);
        return NULL;
    }
    if (strncmp(arg, "--", 2) != 0) return NULL;
    const char *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    for (int i = 0; cli_option_at(spec, i); i++) {
        const cli_option_t *o = cli_option_at(spec, i);
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) {
            *inline_value = eq ? eq + 1 : NULL;
            return o;
        }
    }
    return NULL;
}

static int refuse(const cli_spec_t *spec, FILE *err, const char *what, const char *arg, const char *why)
{
    if (err) fprintf(err, "%s: %s '%s'%s%s (see %s --help)\n", spec->name, what, arg, why ? ": " : "", why ? why : "",
                     spec->name);
    return CLI_EXIT_USAGE;
}

static int is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static cli_positional_t *positional_of(const cli_spec_t *spec, void *config)
{
    return (cli_positional_t *)((char *)config + spec->positional_offset);
}

/* Positionals are gathered at the front of argv[1..]: slots already read, so nothing is lost. */
static int take_positional(const cli_spec_t *spec, char *arg, void *config, FILE *err)
{
    if (!spec->positional) return refuse(spec, err, "unexpected argument", arg, NULL);
    cli_positional_t *p = positional_of(spec, config);
    p->values[p->count++] = arg;
    return CLI_RUN;
}

/* One option at argv[*i] (advancing *i past its value). */
static int take_option(const cli_spec_t *spec, int argc, char **argv, int *i, void *config, FILE *err)
{
    const char *inline_value;
    const cli_option_t *o = lookup(spec, argv[*i], &inline_value);
    if (!o) return refuse(spec, err, "unknown option", argv[*i], NULL);
    if (o->kind == CLI_FLAG) {
        if (inline_value) return refuse(spec, err, "option takes no value", argv[*i], NULL);
        *(int *)field_of(o, config) = 1;
        return CLI_RUN;
    }
    char *value = (char *)inline_value;
    if (!value && *i + 1 >= argc) return refuse(spec, err, "option needs a value", argv[*i], NULL);
    if (!value) value = argv[++*i];
    const char *why = NULL;
    if (store(o, config, value, &why) != 0) {
        char what[96];
        snprintf(what, sizeof what, "invalid value for --%s:", o->name);
        return refuse(spec, err, what, value, why);
    }
    return CLI_RUN;
}

int cli_parse(const cli_spec_t *spec, int argc, char **argv, void *config, FILE *out, FILE *err)
{
    if (spec->defaults) memcpy(config, spec->defaults, spec->config_size);
    if (spec->positional) *positional_of(spec, config) = (cli_positional_t){0, argv + 1};
    for (int i = 1; i < argc; i++)
        if (is_help(argv[i])) {
            if (out) cli_print_help(spec, out);
            return CLI_EXIT_OK;
        }
    int options_end = 0;
    for (int i = 1; i < argc; i++) {
        int rc;
        if (!options_end && strcmp(argv[i], "--") == 0) options_end = 1, rc = CLI_RUN;
        else if (!options_end && argv[i][0] == '-' && argv[i][1]) rc = take_option(spec, argc, argv, &i, config, err);
        else rc = take_positional(spec, argv[i], config, err);
        if (rc != CLI_RUN) return rc;
    }
    return CLI_RUN;
}

/* A byte count the way people write it: 1g, 256m, 4k, or plain bytes. */
static void format_size(long long v, char *out, size_t cap)
{
    static const char suffixes[] = "kmgt";
    int s = -1;
    while (s < 3 && v != 0 && v % 1024 == 0) v /= 1024, s++;
    if (s >= 0) snprintf(out, cap, "%lld%c", v, suffixes[s]);
    else snprintf(out, cap, "%lld", v);
}

/* The word of index i in a comma-separated list. */
static void choice_word(const char *choices, int i, char *out, size_t cap)
{
    const char *p = choices;
    while (i-- > 0 && *p) p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',');
    snprintf(out, cap, "%.*s", (int)strcspn(p, ","), p);
}

char *cli_format_value(const cli_option_t *o, const void *config, char *out, size_t cap)
{
    const void *field = const_field_of(o, config);
    switch (o->kind) {
    case CLI_SIZE: format_size(*(const long long *)field, out, cap); break;
    case CLI_INT: case CLI_FLAG: snprintf(out, cap, "%d", *(const int *)field); break;
    case CLI_U64: snprintf(out, cap, "%llu", *(const unsigned long long *)field); break;
    case CLI_REAL: snprintf(out, cap, "%g", *(const double *)field); break;
    case CLI_CHOICE: choice_word(o->choices, *(const int *)field, out, cap); break;
    case CLI_TEXT: snprintf(out, cap, "%s", *(const char *const *)field ? *(const char *const *)field : ""); break;
    }
    return out;
}

/* What --help shows after the flag: the kind of value, or for text the option's own name ("DIR"). */
static const char *placeholder(const cli_option_t *o, char *out, size_t cap)
{
    static const char *const names[] = {[CLI_SIZE] = "BYTES", [CLI_INT] = "N", [CLI_U64] = "N", [CLI_REAL] = "X",
                                        [CLI_TEXT] = "", [CLI_CHOICE] = "WORD", [CLI_FLAG] = ""};
    snprintf(out, cap, "%s", o->kind == CLI_TEXT ? o->name : names[o->kind]);
    for (char *p = out; *p; p++) *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
    return out;
}

/* "default 3, 1..32" or "default B, one of S,A,B,C". */
static void describe_values(const cli_option_t *o, const void *defaults, char *out, size_t cap)
{
    char value[64] = "", lo[32], hi[32];
    if (defaults) cli_format_value(o, defaults, value, sizeof value);
    int used = snprintf(out, cap, "default %s", value[0] ? value : "none");
    if (o->kind == CLI_CHOICE) snprintf(out + used, cap - (size_t)used, "; one of %s", o->choices);
    if (o->kind == CLI_SIZE) {
        format_size((long long)o->min, lo, sizeof lo);
        format_size((long long)o->max, hi, sizeof hi);
        snprintf(out + used, cap - (size_t)used, "; %s..%s", lo, hi);
    } else if (o->kind == CLI_INT || o->kind == CLI_U64) {
        snprintf(out + used, cap - (size_t)used, "; %.0f..%.0f", o->min, o->max);
    } else if (o->kind == CLI_REAL) {
        snprintf(out + used, cap - (size_t)used, "; %g..%g", o->min, o->max);
    }
    if (o->kind == CLI_FLAG) snprintf(out, cap, "off unless given");
}

void cli_print_help(const cli_spec_t *spec, FILE *out)
{
    fprintf(out, "usage: %s\n%s\noptions:\n", spec->usage, spec->summary);
    for (int i = 0; cli_option_at(spec, i); i++) {
        const cli_option_t *o = cli_option_at(spec, i);
        char flag[96], values[160], value_name[32];
        snprintf(flag, sizeof flag, "%s%c%s--%s %s", o->short_name ? "-" : "", o->short_name ? o->short_name : ' ',
                 o->short_name ? ", " : "  ", o->name, placeholder(o, value_name, sizeof value_name));
        describe_values(o, spec->defaults, values, sizeof values);
        fprintf(out, "  %-28s %s (%s)\n", o->short_name ? flag : flag + 3, o->meaning, values);
    }
    fprintf(out, "  %-28s print this help and exit\n", "-h, --help");
}

void cli_print_program_help(const cli_program_t *program, FILE *out, int with_commands)
{
    fprintf(out, "usage: %s\n%s\ncommands:\n", program->usage, program->summary);
    for (const cli_command_t *c = program->commands; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->spec->summary);
    for (const cli_command_t *c = program->commands; with_commands && c->name; c++) {
        fprintf(out, "\n");
        cli_print_help(c->spec, out);
    }
}

/* Refuses a command given too few or too many positional arguments. */
static int check_arg_count(const cli_command_t *c, const void *config, FILE *err)
{
    if (!c->spec->positional) return CLI_RUN; /* none allowed: cli_parse refused any */
    int count = ((const cli_positional_t *)((const char *)config + c->spec->positional_offset))->count;
    if (count >= c->min_args && (c->max_args < 0 || count <= c->max_args)) return CLI_RUN;
    if (err)
        fprintf(err, "%s: %s arguments (%d given): usage: %s (see %s --help)\n", c->spec->name,
                count < c->min_args ? "too few" : "too many", count, c->spec->usage, c->spec->name);
    return CLI_EXIT_USAGE;
}

/* The index of the command named word, or -1. */
static int find_command(const cli_program_t *program, const char *word)
{
    for (int i = 0; program->commands[i].name; i++)
        if (strcmp(program->commands[i].name, word) == 0) return i;
    return -1;
}

int cli_parse_command(const cli_program_t *program, int argc, char **argv, void *config, FILE *out, FILE *err)
{
    if (argc >= 2 && is_help(argv[1])) {
        if (out) cli_print_program_help(program, out, 1);
        return CLI_EXIT_OK;
    }
    int command = argc >= 2 ? find_command(program, argv[1]) : -1;
    if (command < 0) {
        if (err && argc >= 2)
            fprintf(err, "%s: unknown %s '%s'\n", program->name, argv[1][0] == '-' ? "option" : "command", argv[1]);
        if (err && argc < 2) fprintf(err, "%s: no command given\n", program->name);
        if (err) cli_print_program_help(program, err, 0);
        return CLI_EXIT_USAGE;
    }
    const cli_command_t *c = &program->commands[command];
    int rc = cli_parse(c->spec, argc - 1, argv + 1, config, out, err);
    *(int *)((char *)config + program->command_offset) = command;
    return rc != CLI_RUN ? rc : check_arg_count(c, config, err);
}

int cli_launcher_rank(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (getenv(names[i])) return atoi(getenv(names[i]));
    return 0;
}

/*
 * cli: the command lines of ferry's tools (ferry-bench, ferry-trace,
 * ferry-ckpt, ferry-container), each from one table of options.
 *
 * A tool lists its options once: name, kind of value, where the value goes
 * (offsetof in the tool's configuration struct), accepted range or words,
 * and one line of meaning. Parsing, refusal of unknown options and invalid
 * values, and --help all derive from that table, so help can never omit an
 * option the parser accepts. Plain C, no MPI: the caller decides which
 * process prints.
 *
 * Accepted forms: "--name value", "--name=value", "-x value" (options with
 * a short name), "--flag"; "--" ends the options. Values: sizes in bytes
 * with an optional k/m/g/t suffix (powers of 1024), decimal integers,
 * reals, words of a fixed list, free text.
 *
 * A program of commands ("ferry-ckpt info FILE") has one spec per command
 * (cli_program_t): "--help" alone prints the program's help, "<command>
 * --help" the command's, both on stdout with exit status 0; no command, an
 * unknown one, an unknown option or a wrong number of arguments is refused
 * on stderr with exit status 2.
 */
#ifndef FERRY_CLI_H
#define FERRY_CLI_H

#include <stddef.h>
#include <stdio.h>

typedef enum {
    CLI_SIZE,   /* long long: bytes, k/m/g/t suffixes */
    CLI_INT,    /* int */
    CLI_U64,    /* unsigned long long (seeds) */
    CLI_REAL,   /* double */
    CLI_TEXT,   /* const char *, borrowed from argv */
    CLI_CHOICE, /* int: the index of one word of `choices` */
    CLI_FLAG,   /* int: set to 1, takes no value */
} cli_kind_t;

typedef struct cli_option {
    const char *name;    /* long name without "--"; NULL ends a table */
    char short_name;     /* 0, or the letter of "-x" */
    cli_kind_t kind;
    size_t offset;       /* of the value in the tool's configuration struct */
    double min, max;     /* SIZE, INT, U64, REAL: accepted values, inclusive */
    const char *choices; /* CHOICE: comma-separated words, in index order */
    const char *meaning; /* one line for --help */
} cli_option_t;

/* Positional arguments, for tools that take them (spec->positional). */
typedef struct cli_positional {
    int count;
    char **values; /* borrowed from argv */
} cli_positional_t;

typedef struct cli_spec {
    const char *name;             /* "ferry-bench contig", for messages */
    const char *usage;            /* the usage line after "usage: " */
    const char *summary;          /* what the tool or workload does, one or two lines */
    const cli_option_t *options;  /* the tool's own table */
    const cli_option_t *shared;   /* a table every tool of a family shares, or NULL */
    size_t config_size;
    const void *defaults;         /* config_size bytes copied into the config before parsing */
    const char *positional;       /* NULL: none allowed; else its name in help ("FILE...") */
    size_t positional_offset;     /* of a cli_positional_t in the config */
} cli_spec_t;

enum { CLI_RUN = -1, CLI_EXIT_OK = 0, CLI_EXIT_USAGE = 2 };

/* Fills config from defaults, then from argv[1..argc). Returns CLI_RUN, or
 * an exit status: CLI_EXIT_OK after printing help on `out` (--help, -h),
 * CLI_EXIT_USAGE after a message naming the bad argument on `err`. Either
 * stream may be NULL (print nothing: the non-printing ranks). */
int cli_parse(const cli_spec_t *spec, int argc, char **argv, void *config, FILE *out, FILE *err);

/* A command of a program: the word after the program's name, and its spec
 * (usage, summary, options, positional arguments); every command of a
 * program fills the same configuration struct. */
typedef struct cli_command {
    const char *name;       /* NULL ends a table */
    const cli_spec_t *spec; /* its name is "<program> <command>" */
    int min_args, max_args; /* how many positional arguments it takes; max -1: no limit */
} cli_command_t;

typedef struct cli_program {
    const char *name;              /* "ferry-ckpt", for messages */
    const char *usage;             /* the usage lines after "usage: " */
    const char *summary;           /* what the program does */
    const cli_command_t *commands; /* ends with a NULL name */
    size_t command_offset;         /* of an int in the configuration: the index of the command given */
} cli_program_t;

/* Parses argv as "<program> <command> [options] [arguments]": fills config
 * from the command's spec as cli_parse does, stores the command's index in
 * program->commands at command_offset and checks the argument count.
 * Returns CLI_RUN, or an exit status after printing, as cli_parse does. */
int cli_parse_command(const cli_program_t *program, int argc, char **argv, void *config, FILE *out, FILE *err);

/* The program's usage, summary and command list; with_commands: every command's help after them. */
void cli_print_program_help(const cli_program_t *program, FILE *out, int with_commands);

/* The rank an MPI launcher gave this process, from the environment, so before
 * MPI_Init (0 when started alone): MPI tools answer --help and refuse bad
 * command lines before MPI starts, printing on that rank 0 only. */
int cli_launcher_rank(void);

/* Prints the usage line, summary and every option with its default and range. */
void cli_print_help(const cli_spec_t *spec, FILE *out);

/* The i-th option of the spec (own table, then shared), NULL past the end. */
const cli_option_t *cli_option_at(const cli_spec_t *spec, int i);

/* Writes an option's current value in config as text ("1g", "3", "B");
 * NULL text options as "" . Returns out. */
char *cli_format_value(const cli_option_t *o, const void *config, char *out, size_t cap);

/* Parses "256m", "1g", "4096" (strict: nothing may follow the suffix); -1 on error. */
long long cli_parse_size(const char *text);

#endif

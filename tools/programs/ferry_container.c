/*
 * ferry-container: look into, take apart, check and repair ferry
 * task-local containers (docs/container.md), through the serial API only
 * (no MPI_Init).
 *
 *   ferry-container dump [--chunks] PATH        files, streams, chunks, usage, overhead
 *   ferry-container cat PATH STREAM [OUT]       one stream's bytes (stdout by default)
 *   ferry-container split PATH [PREFIX]         every stream to PREFIX.<stream, 6 digits>
 *   ferry-container defrag [--block-size B] IN OUT   one chunk per stream
 *   ferry-container verify PATH                 every structure and checksum
 *   ferry-container recover PATH                complete a container whose writers died
 * Options anywhere after the command: --progress / --no-progress (cat, split,
 * defrag, verify; default: a bar on a terminal for 64 MiB or more),
 * --incomplete (cat, split, defrag: read what an incomplete container's last
 * flushes recorded). Each command's options come from one table (tools/cli):
 * `ferry-container --help` and `ferry-container <command> --help` print them
 * on stdout; an option a command does not take is refused.
 *
 * Exit status: 0 success (and --help); 1 verify found damage; 2 usage; 3 the
 * container is incomplete (run recover); 4 it cannot be read or an output
 * cannot be written.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ferry_container.h"

enum { EXIT_OK = 0, EXIT_DAMAGED = 1, EXIT_USAGE = 2, EXIT_INCOMPLETE = 3, EXIT_UNREADABLE = 4 };
enum { COPY_UNIT = 1 << 20 };

typedef struct options {
    int command;                   /* its index in commands[] */
    int progress;                  /* -1 automatic, 0 off, 1 on: from the two flags */
    int progress_on, progress_off; /* --progress, --no-progress */
    int incomplete, chunks;
    long long block_size; /* bytes; 0: the input's */
    cli_positional_t args;
} options_t;

typedef struct progress_bar {
    int on;
    const char *label;
    int shown; /* last percentage drawn, -1 none */
} progress_bar_t;

static void bar_start(progress_bar_t *bar, const options_t *o, const char *label, MPI_Offset total)
{
    bar->on = o->progress == 1 || (o->progress == -1 && isatty(2) && total >= ((MPI_Offset)64 << 20));
    bar->label = label;
    bar->shown = -1;
}

static void bar_draw(void *arg, MPI_Offset done, MPI_Offset total)
{
    progress_bar_t *bar = arg;
    int pct = total > 0 ? (int)(100.0 * (double)done / (double)total) : 100;
    if (!bar->on || pct == bar->shown) return;
    bar->shown = pct;
    char marks[41];
    memset(marks, '#', (size_t)(pct * 40 / 100));
    memset(marks + pct * 40 / 100, ' ', (size_t)(40 - pct * 40 / 100));
    marks[40] = '\0';
    fprintf(stderr, "\r%s [%s] %3d%% %.1f/%.1f MiB", bar->label, marks, pct, (double)done / 1048576.0,
            (double)total / 1048576.0);
    if (pct >= 100) fprintf(stderr, "\n");
    fflush(stderr);
}

static int fail(const char *what, int status)
{
    fprintf(stderr, "ferry-container: %s: %s\n", what, ferry_container_error_message());
    return status;
}

/* Opens PATH; an incomplete container is refused unless allowed. */
static int open_set(const char *path, int allow_incomplete, ferry_container_set_t *set, int *status)
{
    int streams, files, complete;
    *status = EXIT_OK;
    if (ferry_container_serial_open(path, FERRY_CONTAINER_INCOMPLETE_OK, set) != MPI_SUCCESS)
        return *status = fail(path, EXIT_UNREADABLE);
    /* A buddy copy standing in for a missing or damaged file: say which, on every command. */
    for (const char *note = ferry_container_serial_notes(*set); *note;) {
        const char *end = strchr(note, '\n');
        int len = end ? (int)(end - note) : (int)strlen(note);
        fprintf(stderr, "ferry-container: note: %.*s\n", len, note);
        note += len + (end ? 1 : 0);
    }
    ferry_container_serial_describe(*set, &streams, &files, &complete);
    if (complete || allow_incomplete) return 0;
    fprintf(stderr, "ferry-container: %s is incomplete (its writers never closed it): 'ferry-container recover %s' "
                    "completes it with every flushed byte ('ferry-container dump %s' shows them)\n", path, path, path);
    ferry_container_serial_close(set);
    return *status = EXIT_INCOMPLETE;
}

static MPI_Offset set_bytes(ferry_container_set_t set, int streams)
{
    MPI_Offset total = 0;
    for (int s = 0; s < streams; s++) {
        ferry_container_info_t info;
        if (ferry_container_serial_stream(set, s, &info) == MPI_SUCCESS) total += info.length;
    }
    return total;
}

/* Copies a stream to an open stdio file (or, with to_set, into a new container). */
typedef struct copy_job {
    ferry_container_set_t from, to_set;
    int stream;
    FILE *to;
    progress_bar_t *bar;
    MPI_Offset *done, total;
} copy_job_t;

static int copy_stream(const copy_job_t *job, unsigned char *buf)
{
    for (MPI_Offset pos = 0;;) {
        size_t got = 0;
        if (ferry_container_serial_read(job->from, job->stream, pos, buf, COPY_UNIT, &got) != MPI_SUCCESS)
            return fail("read", EXIT_UNREADABLE);
        if (got == 0) return EXIT_OK;
        if (job->to && fwrite(buf, 1, got, job->to) != got) {
            fprintf(stderr, "ferry-container: write: %s\n", strerror(errno));
            return EXIT_UNREADABLE;
        }
        if (job->to_set && ferry_container_serial_write(job->to_set, job->stream, buf, got) != MPI_SUCCESS)
            return fail("write", EXIT_UNREADABLE);
        pos += (MPI_Offset)got;
        *job->done += (MPI_Offset)got;
        bar_draw(job->bar, *job->done, job->total);
    }
}

/* An output that did not get the whole stream (a chunk failed its checks,
 * or the copy failed) is removed, so no file passes for the stream. */
static void discard(const char *name)
{
    if (remove(name) == 0) fprintf(stderr, "ferry-container: removed the incomplete output %s\n", name);
}

static int parse_stream(const char *text, int streams, int *stream)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || v < 0 || v >= streams) {
        fprintf(stderr, "ferry-container: no stream '%s' (the container has %d)\n", text, streams);
        return EXIT_USAGE;
    }
    *stream = (int)v;
    return EXIT_OK;
}

/* Copies stream to out_name (stdout when NULL). */
static int cat_stream(const options_t *o, ferry_container_set_t set, int stream, const char *out_name)
{
    FILE *out = out_name ? fopen(out_name, "wb") : stdout;
    unsigned char *buf = malloc(COPY_UNIT);
    int status = out && buf ? EXIT_OK : EXIT_UNREADABLE;
    if (!out) fprintf(stderr, "ferry-container: %s: %s\n", out_name, strerror(errno));
    ferry_container_info_t info;
    ferry_container_serial_stream(set, stream, &info);
    MPI_Offset done = 0;
    progress_bar_t bar;
    bar_start(&bar, o, "cat", info.length);
    copy_job_t job = {set, NULL, stream, out, &bar, &done, info.length};
    if (!status) status = copy_stream(&job, buf);
    int to_stdout = out == stdout;
    if (out && (to_stdout ? fflush(out) : fclose(out)) != 0) status = EXIT_UNREADABLE;
    if (status && out && !to_stdout) discard(out_name);
    free(buf);
    return status;
}

static int cmd_cat(const options_t *o)
{
    ferry_container_set_t set;
    int status, streams, files, complete, stream = 0;
    if (open_set(o->args.values[0], o->incomplete, &set, &status)) return status;
    ferry_container_serial_describe(set, &streams, &files, &complete);
    status = parse_stream(o->args.values[1], streams, &stream);
    if (!status) status = cat_stream(o, set, stream, o->args.count == 3 ? o->args.values[2] : NULL);
    ferry_container_serial_close(&set);
    return status;
}

static int split_one(const options_t *o, const copy_job_t *base, int stream, unsigned char *buf)
{
    char name[4096];
    snprintf(name, sizeof name, "%s.%06d", o->args.count == 2 ? o->args.values[1] : o->args.values[0], stream);
    copy_job_t job = *base;
    job.stream = stream;
    job.to = fopen(name, "wb");
    if (!job.to) {
        fprintf(stderr, "ferry-container: %s: %s\n", name, strerror(errno));
        return EXIT_UNREADABLE;
    }
    int status = copy_stream(&job, buf);
    if (fclose(job.to) != 0 && !status) status = EXIT_UNREADABLE;
    if (status) discard(name);
    return status;
}

static int cmd_split(const options_t *o)
{
    ferry_container_set_t set;
    int status, streams, files, complete;
    if (open_set(o->args.values[0], o->incomplete, &set, &status)) return status;
    ferry_container_serial_describe(set, &streams, &files, &complete);
    unsigned char *buf = malloc(COPY_UNIT);
    MPI_Offset done = 0;
    progress_bar_t bar;
    copy_job_t base = {set, NULL, 0, NULL, &bar, &done, set_bytes(set, streams)};
    bar_start(&bar, o, "split", base.total);
    status = buf ? EXIT_OK : EXIT_UNREADABLE;
    for (int s = 0; s < streams && !status; s++) status = split_one(o, &base, s, buf);
    free(buf);
    ferry_container_serial_close(&set);
    return status;
}

/* One chunk per stream: each chunk holds the whole stream and its trailer. */
static MPI_Offset *defrag_chunks(ferry_container_set_t set, int streams, MPI_Offset block)
{
    MPI_Offset *sizes = malloc((size_t)streams * sizeof *sizes);
    for (int s = 0; sizes && s < streams; s++) {
        ferry_container_info_t info;
        ferry_container_serial_stream(set, s, &info);
        MPI_Offset b = block > 0 ? block : info.block_size;
        sizes[s] = (info.length + 64 + b - 1) / b * b;
    }
    return sizes;
}

/* Copies every stream of set into a new container at path. */
static int defrag_into(const options_t *o, ferry_container_set_t set, const char *path, unsigned char *buf)
{
    ferry_container_set_t out = NULL;
    int streams, files, complete, status = EXIT_OK;
    ferry_container_serial_describe(set, &streams, &files, &complete);
    ferry_container_info_t first;
    ferry_container_serial_stream(set, 0, &first);
    MPI_Offset *sizes = defrag_chunks(set, streams, o->block_size);
    ferry_container_layout_t layout = {streams, sizes, o->block_size ? o->block_size : first.block_size,
                                       first.data_checksums};
    if (!sizes) status = EXIT_UNREADABLE;
    if (!status && ferry_container_serial_create(path, &layout, &out) != MPI_SUCCESS)
        status = fail(o->args.values[1], EXIT_UNREADABLE);
    MPI_Offset done = 0;
    progress_bar_t bar;
    copy_job_t job = {set, out, 0, NULL, &bar, &done, set_bytes(set, streams)};
    bar_start(&bar, o, "defrag", job.total);
    for (job.stream = 0; job.stream < streams && !status; job.stream++) status = copy_stream(&job, buf);
    /* Closing completes the container, so after a failed copy the file is
     * removed first: what the close completes is then no file's. */
    if (out && status) remove(path);
    if (out && ferry_container_serial_close(&out) != MPI_SUCCESS && !status)
        status = fail(o->args.values[1], EXIT_UNREADABLE);
    free(sizes);
    return status;
}

/* The new container is written beside OUT and renamed over it when whole,
 * so a failed defrag leaves no container at OUT (and an old one intact). */
static int cmd_defrag(const options_t *o)
{
    ferry_container_set_t set;
    int status;
    if (open_set(o->args.values[0], o->incomplete, &set, &status)) return status;
    size_t len = strlen(o->args.values[1]) + 16;
    char *partial = malloc(len);
    unsigned char *buf = malloc(COPY_UNIT);
    status = partial && buf ? EXIT_OK : EXIT_UNREADABLE;
    if (!status) snprintf(partial, len, "%s.part%d", o->args.values[1], (int)getpid() % 100000);
    if (!status) status = defrag_into(o, set, partial, buf);
    if (!status && rename(partial, o->args.values[1]) != 0) {
        fprintf(stderr, "ferry-container: rename %s to %s: %s\n", partial, o->args.values[1], strerror(errno));
        status = EXIT_UNREADABLE;
    }
    if (status && partial) remove(partial);
    free(partial);
    free(buf);
    ferry_container_serial_close(&set);
    return status;
}

static void print_problem(void *arg, const char *problem)
{
    (void)arg;
    printf("problem: %s\n", problem);
}

static int cmd_verify(const options_t *o)
{
    progress_bar_t bar;
    struct stat st;
    bar_start(&bar, o, "verify", stat(o->args.values[0], &st) == 0 ? (MPI_Offset)st.st_size : 0);
    ferry_container_check_t check = {bar_draw, &bar, print_problem, 0, 0, 0, 0};
    int rc = ferry_container_verify(o->args.values[0], &check);
    if (rc != MPI_SUCCESS && check.problems == 0) return fail(o->args.values[0], rc == MPI_ERR_BAD_FILE ? 1 : 4);
    printf("%s: %lld chunks, %lld stream bytes checked, %lld problems%s\n", o->args.values[0], (long long)check.chunks,
           (long long)check.bytes, check.problems, check.incomplete ? " (incomplete: run recover)" : "");
    if (check.problems) return EXIT_DAMAGED;
    return check.incomplete ? EXIT_INCOMPLETE : EXIT_OK;
}

static int cmd_recover(const options_t *o)
{
    MPI_Offset bytes = 0;
    int was_complete = 0;
    if (ferry_container_recover(o->args.values[0], &bytes, &was_complete) != MPI_SUCCESS)
        return fail(o->args.values[0], EXIT_UNREADABLE);
    printf("%s: %s; %lld stream bytes\n", o->args.values[0],
           was_complete ? "already complete, nothing to do" : "recovered", (long long)bytes);
    return EXIT_OK;
}

/* ferry_container_dump.c */
int ferry_container_tool_dump(ferry_container_set_t set, const char *path, int chunks);

static int cmd_dump(const options_t *o)
{
    ferry_container_set_t set;
    int status;
    if (open_set(o->args.values[0], 1, &set, &status)) return status;
    status = ferry_container_tool_dump(set, o->args.values[0], o->chunks);
    ferry_container_serial_close(&set);
    return status;
}

#define OPTION(field) offsetof(options_t, field)
static const cli_option_t progress_options[] = {
    {"progress", 0, CLI_FLAG, OPTION(progress_on), 0, 0, NULL,
     "draw a progress bar on stderr (without either flag: on a terminal, for 64 MiB or more)"},
    {"no-progress", 0, CLI_FLAG, OPTION(progress_off), 0, 0, NULL, "draw none (wins over --progress)"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};
static const cli_option_t read_options[] = {
    {"incomplete", 0, CLI_FLAG, OPTION(incomplete), 0, 0, NULL,
     "read an incomplete container as far as its last flushes recorded"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};
static const cli_option_t defrag_options[] = {
    {"block-size", 0, CLI_SIZE, OPTION(block_size), 512, 1 << 30, NULL,
     "the new container's block size, a power of two (default: the input's)"},
    {"incomplete", 0, CLI_FLAG, OPTION(incomplete), 0, 0, NULL,
     "read an incomplete container as far as its last flushes recorded"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};
static const cli_option_t dump_options[] = {
    {"chunks", 0, CLI_FLAG, OPTION(chunks), 0, 0, NULL, "also list every chunk"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL},
};
static const options_t defaults = {-1, -1, 0, 0, 0, 0, 0, {0, NULL}};

#define SPEC(command, usage, summary, options, shared, names)                                                          \
    {                                                                                                                  \
        "ferry-container " command, "ferry-container " command " " usage, summary, options, shared, sizeof(options_t), \
            &defaults, names, OPTION(args)                                                                             \
    }
enum { DUMP, CAT, SPLIT, DEFRAG, VERIFY, RECOVER };
static const cli_spec_t specs[] = {
    [DUMP] = SPEC("dump", "[--chunks] PATH", "files, streams, chunks, usage and overhead of a container", dump_options,
                  NULL, "PATH"),
    [CAT] = SPEC("cat", "[options] PATH STREAM [OUT]", "one stream's bytes, to OUT or stdout", read_options,
                 progress_options, "PATH STREAM [OUT]"),
    [SPLIT] = SPEC("split", "[options] PATH [PREFIX]", "every stream to PREFIX.<stream, 6 digits> (PREFIX: PATH)",
                   read_options, progress_options, "PATH [PREFIX]"),
    [DEFRAG] = SPEC("defrag", "[options] IN OUT", "a copy of IN with one chunk per stream, renamed to OUT when whole",
                    defrag_options, progress_options, "IN OUT"),
    [VERIFY] = SPEC("verify", "[options] PATH", "checks every structure and checksum (exit status 1: damaged)", NULL,
                    progress_options, "PATH"),
    [RECOVER] = SPEC("recover", "PATH", "completes a container whose writers died, with every flushed byte", NULL, NULL,
                     "PATH"),
};
static const cli_command_t commands[] = {
    [DUMP] = {"dump", &specs[DUMP], 1, 1},
    [CAT] = {"cat", &specs[CAT], 2, 3},
    [SPLIT] = {"split", &specs[SPLIT], 1, 2},
    [DEFRAG] = {"defrag", &specs[DEFRAG], 2, 2},
    [VERIFY] = {"verify", &specs[VERIFY], 1, 1},
    [RECOVER] = {"recover", &specs[RECOVER], 1, 1},
    {NULL, NULL, 0, 0},
};
static int (*const runs[])(const options_t *) = {[DUMP] = cmd_dump,     [CAT] = cmd_cat,       [SPLIT] = cmd_split,
                                                 [DEFRAG] = cmd_defrag, [VERIFY] = cmd_verify, [RECOVER] = cmd_recover};
static const cli_program_t program = {
    "ferry-container",
    "ferry-container <command> [options] ARGS   (dump | cat | split | defrag | verify | recover)\n"
    "       ferry-container --help | ferry-container <command> --help",
    "Looks into, takes apart, checks and repairs ferry task-local containers (docs/container.md), without MPI.",
    commands, OPTION(command)};

int main(int argc, char **argv)
{
    options_t o;
    int rc = cli_parse_command(&program, argc, argv, &o, stdout, stderr);
    if (rc != CLI_RUN) return rc;
    o.progress = o.progress_off ? 0 : o.progress_on ? 1 : -1;
    return runs[o.command](&o);
}

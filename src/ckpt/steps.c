/*
 * The set's files on disk: listing its steps and keeping the newest K after
 * a commit. Rank 0's work only (the callers share the answer).
 *
 * Calls go down only (api.c's ferry_ckpt_path): the writer (txn.c) prunes
 * and the reader (restart.c) lists through here, so neither calls the other.
 */
#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

static int newest_first(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x < y) - (x > y);
}

int ferry__ckpt_list_steps(const char *base, const char *suffix, long long **steps)
{
    char *d = ferry__strdup(base), *b = ferry__strdup(base);
    DIR *dir = d && b ? opendir(dirname(d)) : NULL;
    const char *name = b ? basename(b) : "";
    size_t len = strlen(name);
    int n = 0, cap = 0;
    *steps = NULL;
    for (struct dirent *e; dir && n >= 0 && (e = readdir(dir));) {
        char *end;
        if (strncmp(e->d_name, name, len) != 0 || e->d_name[len] != '.') continue;
        long long step = strtoll(e->d_name + len + 1, &end, 10);
        if (end == e->d_name + len + 1 || strcmp(end, suffix) != 0 || step < 0) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            long long *grown = ferry__realloc(*steps, (size_t)cap * sizeof *grown);
            if (!grown) n = -1;
            else *steps = grown;
        }
        if (n >= 0) (*steps)[n++] = step;
    }
    if (dir) closedir(dir);
    ferry__free(d);
    ferry__free(b);
    if (n > 0) qsort(*steps, (size_t)n, sizeof **steps, newest_first);
    return n;
}

/* Temporary files of the set are what failed writes could not remove (the storage server that
 * held one was down: tools/cluster-faults); with a step committed, no write of the set is in
 * flight, so they go. */
static void remove_temporaries(ferry_ckpt_t ck)
{
    long long *steps;
    int n = ferry__ckpt_list_steps(ck->base, ".nc.tmp", &steps);
    char path[4200];
    for (int i = 0; i < n; i++)
        if (ferry_ckpt_path(ck, steps[i], path, (int)sizeof path - 4) == MPI_SUCCESS) {
            strcat(path, ".tmp");
            if (unlink(path) == 0) fprintf(stderr, "ferry_ckpt: removed %s, left by a failed write\n", path);
        }
    ferry__free(steps);
}

/* A set is one series whose steps rise: the step just committed is the newest, whatever its
 * number. Steps above it are from an earlier run, or a future abandoned when a restart fell back
 * past them; they would shadow it at restart, so they go, with a message. Of the rest, the newest
 * K stay; the committed step always does. Failed writes' temporary files go too. */
void ferry__ckpt_prune(ferry_ckpt_t ck, long long committed)
{
    long long *steps;
    remove_temporaries(ck);
    int n = ferry__ckpt_list_steps(ck->base, ".nc", &steps), kept = 0;
    char path[4200];
    for (int i = 0; i < n; i++) {
        int superseded = steps[i] > committed, keep = steps[i] == committed || (!superseded && kept < ck->keep);
        kept += !superseded;
        if (keep || ferry_ckpt_path(ck, steps[i], path, (int)sizeof path) != MPI_SUCCESS) continue;
        if (unlink(path) == 0 && superseded)
            fprintf(stderr, "ferry_ckpt: step %lld of %s starts a new series: removed step %lld of an earlier one\n",
                    committed, ck->base, steps[i]);
    }
    ferry__free(steps);
}

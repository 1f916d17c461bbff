/*
 * Fault injection for tests: make the n-th open/read/write/sync/resize/
 * allocate/delete system call on chosen ranks fail with a chosen errno,
 * transfer only half of what was asked ("short"), be interrupted (EINTR), or
 * (reads) end early as at an end of file a caching client believes in ("stale").
 *
 * Spec (FERRY_FAULT environment variable, or ferry__fs_fault_arm()):
 *     rule[;rule...]       rule = op:nth[+][:effect][@rank[,rank...]]
 *     op     open | read | write | sync | resize | allocate | delete | lock | advise | seek
 *     nth    1-based count of that call in this process; "3+" = the 3rd and every later one
 *     effect an errno name (ENOSPC, EIO, EDQUOT, EACCES, EROFS, EINTR, ...), "short", "slow"
 *            (the call succeeds after 1 ms: widens races, tests/coll/coll_racing_writer) or "stale"
 *            (a read returns 0 bytes: tests/fs/fs_stale_size); default EIO
 *     ranks  ranks of MPI_COMM_WORLD the rule applies to; default every rank
 * e.g. FERRY_FAULT="write:1:ENOSPC@1" fails the first write on rank 1.
 *
 * The injector redirects the POSIX driver's system-call table, so errors
 * take the same path as real ones.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error/error.h"
#include "fs/fs.h"
#include "fs/fs_int.h"

enum { OP_OPEN, OP_READ, OP_WRITE, OP_SYNC, OP_RESIZE, OP_ALLOCATE, OP_DELETE, OP_LOCK, OP_ADVISE, OP_SEEK, OP_COUNT };
enum { MAX_RULES = 16, EFFECT_SHORT = -1, EFFECT_SLOW = -2, EFFECT_STALE = -3 };

static const char *const op_names[OP_COUNT] = {"open",   "read",   "write", "sync",  "resize",
                                               "allocate", "delete", "lock", "advise", "seek"};

static const struct {
    const char *name;
    int value;
} errno_names[] = {
    {"EIO", EIO}, {"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EACCES", EACCES}, {"EPERM", EPERM},
    {"EROFS", EROFS}, {"ENOENT", ENOENT}, {"EEXIST", EEXIST}, {"EINTR", EINTR}, {"EISDIR", EISDIR},
    {"ENOTDIR", ENOTDIR}, {"ENAMETOOLONG", ENAMETOOLONG}, {"EBUSY", EBUSY}, {"ENOMEM", ENOMEM},
    {"EFBIG", EFBIG}, {"EAGAIN", EAGAIN}, {"ENOLCK", ENOLCK}, {"EOPNOTSUPP", EOPNOTSUPP}, {"EINVAL", EINVAL},
};

typedef struct fault_rule {
    int op;
    long nth;
    int and_later;
    int effect; /* an errno, or EFFECT_SHORT, _SLOW, _STALE */
} fault_rule_t;

static fault_rule_t rules[MAX_RULES];
static int rule_count;
static atomic_long calls[OP_COUNT];

/* The effect to apply to this call of op, 0 for none. */
static int next_effect(int op)
{
    long n = atomic_fetch_add(&calls[op], 1) + 1;
    for (int i = 0; i < rule_count; i++)
        if (rules[i].op == op && (n == rules[i].nth || (rules[i].and_later && n > rules[i].nth)))
            return rules[i].effect;
    return 0;
}

static int fail_with(int effect)
{
    errno = effect;
    return -1;
}

static void slow_down(int effect)
{
    struct timespec pause = {0, 1000000};
    if (effect == EFFECT_SLOW) nanosleep(&pause, NULL);
}

static int fault_open(const char *path, int flags, mode_t mode)
{
    int effect = next_effect(OP_OPEN);
    return effect > 0 ? fail_with(effect) : ferry__posix_real_syscalls.open(path, flags, mode);
}

static ssize_t fault_pread(int fd, void *buf, size_t len, off_t offset)
{
    int effect = next_effect(OP_READ);
    if (effect > 0) return fail_with(effect);
    if (effect == EFFECT_STALE) return 0;
    if (effect == EFFECT_SHORT && len > 1) len /= 2;
    slow_down(effect);
    return ferry__posix_real_syscalls.pread(fd, buf, len, offset);
}

static ssize_t fault_pwrite(int fd, const void *buf, size_t len, off_t offset)
{
    int effect = next_effect(OP_WRITE);
    if (effect > 0) return fail_with(effect);
    if (effect == EFFECT_SHORT && len > 1) len /= 2;
    slow_down(effect);
    return ferry__posix_real_syscalls.pwrite(fd, buf, len, offset);
}

static int fault_fsync(int fd)
{
    int effect = next_effect(OP_SYNC);
    return effect > 0 ? fail_with(effect) : ferry__posix_real_syscalls.fsync(fd);
}

static int fault_ftruncate(int fd, off_t size)
{
    int effect = next_effect(OP_RESIZE);
    return effect > 0 ? fail_with(effect) : ferry__posix_real_syscalls.ftruncate(fd, size);
}

static int fault_fallocate(int fd, off_t offset, off_t len)
{
    int effect = next_effect(OP_ALLOCATE);
    return effect > 0 ? effect : ferry__posix_real_syscalls.fallocate(fd, offset, len);
}

static int fault_unlink(const char *path)
{
    int effect = next_effect(OP_DELETE);
    return effect > 0 ? fail_with(effect) : ferry__posix_real_syscalls.unlink(path);
}

static int fault_lock(int fd, int cmd, struct flock *lock)
{
    int effect = next_effect(OP_LOCK);
    return effect > 0 ? fail_with(effect) : ferry__posix_real_syscalls.lock(fd, cmd, lock);
}

static int fault_advise(int fd, off_t offset, off_t len, int advice)
{
    int effect = next_effect(OP_ADVISE);
    return effect > 0 ? effect : ferry__posix_real_syscalls.advise(fd, offset, len, advice);
}

static off_t fault_seek(int fd, off_t offset, int whence)
{
    int effect = next_effect(OP_SEEK);
    return effect > 0 ? fail_with(effect) : ferry__posix_real_syscalls.seek(fd, offset, whence);
}

const ferry__posix_syscalls_t ferry__posix_fault_syscalls = {
    fault_open, fault_pread,  fault_pwrite, fault_fsync,  fault_ftruncate,
    fault_fallocate, fault_unlink, fault_lock, fault_advise, fault_seek,
};

static int parse_effect(const char *text, int *effect)
{
    if (!strcmp(text, "short")) return *effect = EFFECT_SHORT, 0;
    if (!strcmp(text, "slow")) return *effect = EFFECT_SLOW, 0;
    if (!strcmp(text, "stale")) return *effect = EFFECT_STALE, 0;
    for (size_t i = 0; i < sizeof errno_names / sizeof errno_names[0]; i++)
        if (!strcmp(text, errno_names[i].name)) return *effect = errno_names[i].value, 0;
    char *end;
    long value = strtol(text, &end, 10);
    if (*end || value <= 0) return -1;
    *effect = (int)value;
    return 0;
}

static int applies_to_rank(const char *ranks, int my_rank)
{
    if (!ranks) return 1;
    for (const char *p = ranks; *p;) {
        char *end;
        long r = strtol(p, &end, 10);
        if (end == p) return -1;
        if (r == my_rank) return 1;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return 0;
}

/* Parses one rule (modified in place); returns 0, 1 (valid, not for this rank) or -1. */
static int parse_rule(char *text, int my_rank, fault_rule_t *rule)
{
    char *ranks = strchr(text, '@');
    if (ranks) *ranks++ = '\0';
    int here = applies_to_rank(ranks, my_rank);
    char *op = strtok(text, ":"), *nth = strtok(NULL, ":"), *effect = strtok(NULL, ":");
    if (here < 0 || !op || !nth || strtok(NULL, ":")) return -1;
    rule->op = -1;
    for (int i = 0; i < OP_COUNT; i++)
        if (!strcmp(op, op_names[i])) rule->op = i;
    char *end;
    rule->nth = strtol(nth, &end, 10);
    rule->and_later = *end == '+';
    if (rule->op < 0 || rule->nth < 1 || (*end && strcmp(end, "+"))) return -1;
    rule->effect = EIO;
    if (effect && parse_effect(effect, &rule->effect) != 0) return -1;
    return here ? 0 : 1;
}

void ferry__fs_fault_disarm(void)
{
    ferry__fs_layers_rebuild(0);
    rule_count = 0;
    for (int i = 0; i < OP_COUNT; i++) atomic_store(&calls[i], 0);
}

int ferry__fs_fault_arm(const char *spec)
{
    ferry__fs_fault_disarm();
    int my_rank = 0, initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    char copy[1024];
    if (!spec || strlen(spec) >= sizeof copy)
        return ferry__error_set(MPI_ERR_ARG, "ferry: fault spec missing or too long");
    strcpy(copy, spec);
    char *save = NULL;
    for (char *rule = strtok_r(copy, ";", &save); rule; rule = strtok_r(NULL, ";", &save)) {
        int parsed = rule_count < MAX_RULES ? parse_rule(rule, my_rank, &rules[rule_count]) : -1;
        if (parsed < 0) {
            ferry__fs_fault_disarm();
            return ferry__error_set(MPI_ERR_ARG, "ferry: bad fault rule in '%s' (see src/fs/fault.c)", spec);
        }
        if (parsed == 0) rule_count++;
    }
    ferry__fs_layers_rebuild(1);
    return 0;
}

/*
 * What get_info reports besides the table's values: refused values and the
 * echo of keys ferry does not act on.
 *
 * Both live inside ferry__hints_t (fixed arrays, so the struct copies by
 * value) and survive every later ferry__hints_apply: open's system files,
 * then the program's info, then set_info and set_view each add to them. A
 * refusal stays until a valid value of its key arrives; an echoed key keeps
 * the value given last.
 */
#include <stdio.h>
#include <string.h>

#include "hints/hints_int.h"

/* Copies text into out (cap bytes), at most max characters, newlines as blanks. */
static void one_line(char *out, size_t cap, const char *text, size_t max)
{
    size_t n = 0;
    for (; text[n] && n < max && n + 1 < cap; n++) out[n] = text[n] == '\n' ? ' ' : text[n];
    out[n] = '\0';
}

/* The line of `key` in the rejected list, or NULL. */
static char *rejected_line(char *list, const char *key)
{
    size_t len = strlen(key);
    for (char *line = list; *line; line += strcspn(line, "\n") + 1)
        if (strncmp(line, key, len) == 0 && line[len] == '=') return line;
    return NULL;
}

void ferry__hints_forget_rejected(ferry__hints_t *hints, const char *key)
{
    char *line = rejected_line(hints->rejected, key);
    if (!line) return;
    char *next = line + strcspn(line, "\n") + 1;
    memmove(line, next, strlen(next) + 1);
}

void ferry__hints_note_rejected(ferry__hints_t *hints, const char *key, const char *value, const char *why)
{
    char k[MPI_MAX_INFO_KEY + 1], v[65];
    one_line(k, sizeof k, key, sizeof k - 1);
    one_line(v, sizeof v, value, 64);
    ferry__hints_forget_rejected(hints, k);
    size_t used = strlen(hints->rejected);
    int n = snprintf(hints->rejected + used, sizeof hints->rejected - used, "%s=%s (%s)\n", k, v, why);
    if (n < 0 || (size_t)n >= sizeof hints->rejected - used) hints->rejected[used] = '\0'; /* no room: not noted */
}

/* Offset of key's pair in the echo, or -1. */
static int echo_find(const ferry__hints_t *hints, const char *key)
{
    for (int at = 0; at < hints->echoed_used;) {
        const char *k = hints->echoed + at;
        if (strcmp(k, key) == 0) return at;
        at += (int)strlen(k) + 1;
        at += (int)strlen(hints->echoed + at) + 1;
    }
    return -1;
}

void ferry__hints_echo(ferry__hints_t *hints, const char *key, const char *value)
{
    int at = echo_find(hints, key);
    if (at >= 0) { /* drop the old pair; the new one goes last */
        int len = (int)strlen(hints->echoed + at) + 1;
        len += (int)strlen(hints->echoed + at + len) + 1;
        memmove(hints->echoed + at, hints->echoed + at + len, (size_t)(hints->echoed_used - at - len));
        hints->echoed_used -= len;
    }
    size_t klen = strlen(key) + 1, vlen = strlen(value) + 1;
    if (klen + vlen > sizeof hints->echoed - (size_t)hints->echoed_used) {
        ferry__hints_note_rejected(hints, key, value, "not echoed: too many unknown hints");
        return;
    }
    memcpy(hints->echoed + hints->echoed_used, key, klen);
    memcpy(hints->echoed + hints->echoed_used + klen, value, vlen);
    hints->echoed_used += (int)(klen + vlen);
    ferry__hints_forget_rejected(hints, key);
}

/* Open MPI refuses an info value of MPI_MAX_INFO_VAL (256) characters or
 * more, through MPI_COMM_WORLD's handler, which aborts by default: a longer
 * note is cut to MPI_MAX_INFO_VAL - 1 characters ending in "...". */
static int set_note(MPI_Info info, const char *key, const char *text)
{
    char value[MPI_MAX_INFO_VAL];
    size_t len = strlen(text), max = sizeof value - 1;
    if (len > max) {
        memcpy(value, text, max - 3);
        memcpy(value + max - 3, "...", 4);
    } else {
        memcpy(value, text, len + 1);
    }
    return MPI_Info_set(info, (char *)key, value) == MPI_SUCCESS ? 0 : MPI_ERR_INFO;
}

/* Appends `word` to list (cap bytes) after separator `sep` unless list is empty. */
static void append(char *list, size_t cap, const char *sep, const char *word, size_t len)
{
    size_t used = strlen(list);
    snprintf(list + used, cap - used, "%s%.*s", used ? sep : "", (int)len, word);
}

int ferry__hints_report_notes(const ferry__hints_t *hints, MPI_Info info)
{
    char list[FERRY_HINTS_ECHOED_MAX + FERRY_HINTS_REJECTED_MAX] = "";
    for (int at = 0; at < hints->echoed_used;) {
        const char *key = hints->echoed + at, *value = key + strlen(key) + 1;
        if (MPI_Info_set(info, (char *)key, (char *)value) != MPI_SUCCESS) return MPI_ERR_INFO;
        append(list, sizeof list, ",", key, strlen(key));
        at = (int)(value + strlen(value) + 1 - hints->echoed);
    }
    if (list[0] && set_note(info, "ferry_hints_ignored", list) != 0) return MPI_ERR_INFO;
    list[0] = '\0';
    for (const char *line = hints->rejected; *line; line += strcspn(line, "\n") + 1)
        append(list, sizeof list, "; ", line, strcspn(line, "\n"));
    return list[0] ? set_note(info, "ferry_hints_rejected", list) : 0;
}

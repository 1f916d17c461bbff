/*
 * Shared by the hints module's own files only.
 *
 * notes.c keeps what get_info reports besides the table's values: the
 * values refused (one line per key, the latest refusal) and the keys ferry
 * does not act on, echoed with the value last given.
 */
#ifndef FERRY_HINTS_INT_H
#define FERRY_HINTS_INT_H

#include "hints/hints.h"

/* Records that key=value was refused for `why`, replacing an earlier
 * refusal of the same key. */
void ferry__hints_note_rejected(ferry__hints_t *hints, const char *key, const char *value, const char *why);

/* A valid value of key arrived: its earlier refusal no longer applies. */
void ferry__hints_forget_rejected(ferry__hints_t *hints, const char *key);

/* Keeps key=value (a key the table does not know) for get_info, replacing
 * an earlier value of the key; a pair that does not fit is noted as refused. */
void ferry__hints_echo(ferry__hints_t *hints, const char *key, const char *value);

/* Writes the echoed pairs, ferry_hints_ignored and ferry_hints_rejected
 * into info: 0 or MPI_ERR_INFO. */
int ferry__hints_report_notes(const ferry__hints_t *hints, MPI_Info info);

#endif

/*
 * Error codes and messages.
 *
 * Each error a caller sees gets an error code of its standard class created
 * with MPI_Add_error_code and a string set with MPI_Add_error_string. Codes
 * are recycled from a small ring per class (MPI-3.1 8.5 lets a string be
 * replaced), so a long-running job does not exhaust the host's code space:
 * a code's string stays valid until FERRY_CODES_PER_CLASS newer errors of
 * the same class have been raised.
 */
#include "error/error.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/process.h"
#include "progress/progress.h"
#include "trace/trace.h"

enum { FERRY_MESSAGE_MAX = 1024, FERRY_CODES_PER_CLASS = 16, FERRY_MAX_CLASS = 128 };

static _Thread_local char error_message[FERRY_MESSAGE_MAX];
static pthread_once_t teardown_once = PTHREAD_ONCE_INIT; /* registers the code table's tear-down */

/* Registry of host error codes, by class, with ferry's own copy of each
 * code's message: MPICH 4.0 loses the string of a code added to a
 * predefined class (MPI_Error_string answers with an unrelated error stack),
 * so ferry_Error_string answers from this copy. Guarded by code_lock. */
static pthread_mutex_t code_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int codes[FERRY_CODES_PER_CLASS];
    char *messages[FERRY_CODES_PER_CLASS]; /* owned */
    int count;
    int next;
} code_ring[FERRY_MAX_CLASS];

int ferry__error_set(int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, ap);
    va_end(ap);
    return cls;
}

const char *ferry__error_message(void)
{
    return error_message;
}

static const struct {
    int cls;
    const char *name;
} class_names[] = {
    {MPI_ERR_BUFFER, "MPI_ERR_BUFFER"},
    {MPI_ERR_COUNT, "MPI_ERR_COUNT"},
    {MPI_ERR_TYPE, "MPI_ERR_TYPE"},
    {MPI_ERR_COMM, "MPI_ERR_COMM"},
    {MPI_ERR_GROUP, "MPI_ERR_GROUP"},
    {MPI_ERR_ARG, "MPI_ERR_ARG"},
    {MPI_ERR_OTHER, "MPI_ERR_OTHER"},
    {MPI_ERR_INTERN, "MPI_ERR_INTERN"},
    {MPI_ERR_REQUEST, "MPI_ERR_REQUEST"},
    {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE"},
    {MPI_ERR_ACCESS, "MPI_ERR_ACCESS"},
    {MPI_ERR_AMODE, "MPI_ERR_AMODE"},
    {MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE"},
    {MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION"},
    {MPI_ERR_DUP_DATAREP, "MPI_ERR_DUP_DATAREP"},
    {MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS"},
    {MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE"},
    {MPI_ERR_FILE, "MPI_ERR_FILE"},
    {MPI_ERR_INFO_KEY, "MPI_ERR_INFO_KEY"},
    {MPI_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE"},
    {MPI_ERR_INFO, "MPI_ERR_INFO"},
    {MPI_ERR_IO, "MPI_ERR_IO"},
    {MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM"},
    {MPI_ERR_NOT_SAME, "MPI_ERR_NOT_SAME"},
    {MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE"},
    {MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE"},
    {MPI_ERR_QUOTA, "MPI_ERR_QUOTA"},
    {MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION"},
};

int ferry__error_host(int rc, const char *op, const char *filename, const char *call)
{
    if (rc == MPI_SUCCESS) return 0;
    char host[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0;
    if (MPI_Error_string(rc, host, &len) != MPI_SUCCESS) snprintf(host, sizeof host, "error code %d", rc);
    return ferry__error_set(MPI_ERR_INTERN, "ferry: %s '%s': the host MPI's %s failed: %s", op, filename, call, host);
}

const char *ferry__error_class_name(int cls)
{
    for (size_t i = 0; i < sizeof class_names / sizeof class_names[0]; i++)
        if (class_names[i].cls == cls) return class_names[i].name;
    return "MPI_ERR_UNKNOWN";
}

/* Returns a host error code of class cls whose string is message. Falls back
 * to the bare class when the host refuses to add codes. */
static void finalize(void)
{
    pthread_mutex_lock(&code_lock);
    for (int cls = 0; cls < FERRY_MAX_CLASS; cls++)
        for (int i = 0; i < FERRY_CODES_PER_CLASS; i++) ferry__free(code_ring[cls].messages[i]);
    memset(code_ring, 0, sizeof code_ring);
    pthread_mutex_unlock(&code_lock);
}

static void register_teardown(void)
{
    (void)ferry__process_at_finalize(finalize); /* without MPI there are no codes to free */
}

static int register_code(int cls, const char *message)
{
    if (cls <= 0 || cls >= FERRY_MAX_CLASS) return cls;
    pthread_once(&teardown_once, register_teardown);
    pthread_mutex_lock(&code_lock);
    int code = cls;
    if (code_ring[cls].count < FERRY_CODES_PER_CLASS) {
        int fresh;
        if (MPI_Add_error_code(cls, &fresh) == MPI_SUCCESS) code_ring[cls].codes[code_ring[cls].count++] = fresh;
    }
    if (code_ring[cls].count > 0) {
        int slot = code_ring[cls].next;
        code = code_ring[cls].codes[slot];
        code_ring[cls].next = (slot + 1) % code_ring[cls].count;
        ferry__free(code_ring[cls].messages[slot]);
        code_ring[cls].messages[slot] = ferry__strdup(message);
        /* Open MPI refuses (through MPI_COMM_WORLD's handler: it aborts)
         * strings longer than MPI_MAX_ERROR_STRING. */
        char text[MPI_MAX_ERROR_STRING];
        size_t len = strnlen(message, sizeof text - 1);
        memcpy(text, message, len);
        text[len] = '\0';
        MPI_Add_error_string(code, text);
    }
    pthread_mutex_unlock(&code_lock);
    return code;
}

int ferry__error_agree(MPI_Comm comm, int local_cls, const char *what)
{
    return ferry__error_agree_flag(comm, local_cls, what, NULL);
}

int ferry__error_agree_flag(MPI_Comm comm, int local_cls, const char *what, int *flag)
{
    int64_t value = flag ? *flag : 0;
    int cls = ferry__error_agree_max(comm, local_cls, what, &value, flag ? 1 : 0);
    if (flag) *flag = value != 0;
    return cls;
}

enum { AGREE_MAX_VALUES = 6 };

int ferry__error_agree_max(MPI_Comm comm, int local_cls, const char *what, int64_t *values, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (n > AGREE_MAX_VALUES) n = AGREE_MAX_VALUES;
    /* One int64 per rank: the lowest failing rank wins the MAX, its class
     * rides in the low bits; the values to maximize ride along. */
    int64_t mine[1 + AGREE_MAX_VALUES] = {local_cls ? ((int64_t)(size - rank) << 24) | (int64_t)local_cls : 0};
    int64_t reduced[1 + AGREE_MAX_VALUES] = {0};
    for (int i = 0; i < n; i++) mine[1 + i] = values[i];
    int rc = ferry__progress_allreduce(mine, reduced, 1 + n, MPI_INT64_T, MPI_MAX, comm);
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) values[i] = reduced[1 + i];
    int64_t worst = reduced[0];
    if (rc != MPI_SUCCESS) return ferry__error_set(MPI_ERR_INTERN, "ferry: %s: agreement reduction failed", what);
    if (worst == 0) return 0;
    /* Every rank knows a failure happened and where: the failing rank's own
     * message (which names the file and the cause) reaches the others. */
    int failed_rank = size - (int)(worst >> 24);
    int failed_cls = (int)(worst & 0xffffff);
    char cause[FERRY_MESSAGE_MAX];
    if (rank == failed_rank) snprintf(cause, sizeof cause, "%s", error_message);
    if (ferry__progress_bcast(cause, sizeof cause, MPI_CHAR, failed_rank, comm) != MPI_SUCCESS) cause[0] = '\0';
    cause[sizeof cause - 1] = '\0';
    if (local_cls) return local_cls;
    const char *shown = strncmp(cause, "ferry: ", 7) == 0 ? cause + 7 : cause;
    return ferry__error_set(failed_cls, "ferry: %s failed on rank %d with %s: %s (rank %d succeeded locally)", what,
                            failed_rank, ferry__error_class_name(failed_cls), shown, rank);
}

int ferry__error_code(int cls)
{
    if (cls == 0) return MPI_SUCCESS;
    int code = register_code(cls, error_message);
    ferry__trace_error(cls, code, error_message);
    return code;
}

int ferry__error_return_default(int cls)
{
    if (cls == 0) return MPI_SUCCESS;
    int code = ferry__error_code(cls);
    ferry__errhandler_invoke(NULL, FERRY_FILE_NULL, MPI_COMM_WORLD, code);
    return code;
}

/* The host's string for a code that is not ferry's; through its own
 * definition, as the drop-in exports PMPI_Error_string as ferry_Error_string. */
static int host_error_string(int errorcode, char *string, int *resultlen)
{
    typedef int error_string_fn(int, char *, int *);
    error_string_fn *host = (error_string_fn *)ferry__host_function("PMPI_Error_string");
    return (host ? host : PMPI_Error_string)(errorcode, string, resultlen);
}

int ferry_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen) return MPI_ERR_ARG;
    int found = 0;
    pthread_mutex_lock(&code_lock);
    for (int cls = 0; cls < FERRY_MAX_CLASS && !found; cls++)
        for (int i = 0; i < code_ring[cls].count; i++)
            if (code_ring[cls].codes[i] == errorcode && code_ring[cls].messages[i]) {
                snprintf(string, MPI_MAX_ERROR_STRING, "%s", code_ring[cls].messages[i]);
                found = 1;
                break;
            }
    pthread_mutex_unlock(&code_lock);
    if (!found) return host_error_string(errorcode, string, resultlen);
    *resultlen = (int)strlen(string);
    return MPI_SUCCESS;
}


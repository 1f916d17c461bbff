/*
 * Nonblocking independent access (MPI-3.1 13.4.2, 13.4.3).
 *
 * For now the transfer happens at initiation and the request returned is a
 * generalized request that is already complete, which the standard allows;
 * MPI_Wait/MPI_Test on it return the transfer's status. Background progress
 * and the nonblocking collectives come with the nonblocking issue.
 */
#include "mpiio/access.h"
#include "mpiio/mpiio.h"

typedef struct completed_transfer {
    MPI_Count bytes;
} completed_transfer_t;

static int query_completed(void *extra_state, MPI_Status *status)
{
    ferry__status_set_bytes(status, ((completed_transfer_t *)extra_state)->bytes);
    return MPI_SUCCESS;
}

static int free_completed(void *extra_state)
{
    ferry__free(extra_state);
    return MPI_SUCCESS;
}

static int cancel_completed(void *extra_state, int complete)
{
    (void)extra_state;
    (void)complete; /* already complete: cancelling has no effect */
    return MPI_SUCCESS;
}

static int start_access(const ferry__access_t *call, ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                        MPI_Datatype type, MPI_Request *request)
{
    int cls = ferry__check_file(fh, call->name);
    if (cls) return ferry__error_return(FERRY_FILE_NULL, cls);
    if (!request) return ferry__error_return(fh, ferry__error_set(MPI_ERR_REQUEST, "ferry: %s: NULL request", call->name));
    *request = MPI_REQUEST_NULL;
    completed_transfer_t *state = ferry__calloc(1, sizeof *state);
    if (!state)
        return ferry__error_return(fh, ferry__error_set(MPI_ERR_NO_MEM, "ferry: %s '%s': out of memory", call->name,
                                                        fh->filename));
    cls = ferry__access_transfer(call, fh, 0, offset, buf, count, type, &state->bytes);
    if (cls == 0) cls = ferry__memory_bytes(fh, type, count, state->bytes, &state->bytes);
    if (cls == 0 && MPI_Grequest_start(query_completed, free_completed, cancel_completed, state, request) != MPI_SUCCESS)
        cls = ferry__error_set(MPI_ERR_INTERN, "ferry: %s '%s': cannot start a request", call->name, fh->filename);
    if (cls != 0) {
        ferry__free(state);
        return ferry__error_return(fh, cls);
    }
    MPI_Grequest_complete(*request);
    return MPI_SUCCESS;
}

static const ferry__access_t iread_at_call = {"iread_at", 0, 0, 0, 0};
static const ferry__access_t iwrite_at_call = {"iwrite_at", 1, 0, 0, 0};
static const ferry__access_t iread_call = {"iread", 0, 1, 0, 0};
static const ferry__access_t iwrite_call = {"iwrite", 1, 1, 0, 0};

int ferry_File_iread_at_c(ferry_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Request *request)
{
    return start_access(&iread_at_call, fh, offset, buf, count, datatype, request);
}
int ferry_File_iwrite_at_c(ferry_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Request *request)
{
    return start_access(&iwrite_at_call, fh, offset, (void *)buf, count, datatype, request);
}
int ferry_File_iread_c(ferry_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request)
{
    return start_access(&iread_call, fh, 0, buf, count, datatype, request);
}
int ferry_File_iwrite_c(ferry_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    return start_access(&iwrite_call, fh, 0, (void *)buf, count, datatype, request);
}
int ferry_File_iread_at(ferry_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    return ferry_File_iread_at_c(fh, offset, buf, count, datatype, request);
}
int ferry_File_iwrite_at(ferry_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                         MPI_Request *request)
{
    return ferry_File_iwrite_at_c(fh, offset, buf, count, datatype, request);
}
int ferry_File_iread(ferry_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return ferry_File_iread_c(fh, buf, count, datatype, request);
}
int ferry_File_iwrite(ferry_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return ferry_File_iwrite_c(fh, buf, count, datatype, request);
}

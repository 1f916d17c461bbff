/*
 * The Fortran handle registry: MPI_Fint indices for ferry_File handles.
 * Index 0 is FERRY_FILE_NULL, as MPI_FILE_NULL converts to 0 in both hosts.
 */
#include <pthread.h>

#include "core/core.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static ferry_File *registry; /* registry[i] for i in 1..capacity-1; NULL when free */
static MPI_Fint capacity;

MPI_Fint ferry__handle_to_fortran(ferry_File fh)
{
    if (!ferry__handle_live(fh)) return 0; /* MPI_FILE_NULL, or a handle that is not an open file */
    pthread_mutex_lock(&registry_lock);
    if (fh->fortran_handle == 0) {
        MPI_Fint slot = 1;
        while (slot < capacity && registry[slot] != NULL) slot++;
        if (slot >= capacity) {
            MPI_Fint grown = capacity ? capacity * 2 : 16;
            ferry_File *bigger = ferry__realloc(registry, (size_t)grown * sizeof *bigger);
            if (bigger) {
                for (MPI_Fint i = capacity; i < grown; i++) bigger[i] = NULL;
                registry = bigger;
                capacity = grown;
            }
        }
        if (slot < capacity) {
            registry[slot] = fh;
            fh->fortran_handle = slot;
        }
    }
    MPI_Fint index = fh->fortran_handle;
    pthread_mutex_unlock(&registry_lock);
    return index;
}

ferry_File ferry__handle_from_fortran(MPI_Fint index)
{
    pthread_mutex_lock(&registry_lock);
    ferry_File fh = (index > 0 && index < capacity) ? registry[index] : FERRY_FILE_NULL;
    pthread_mutex_unlock(&registry_lock);
    return fh;
}

void ferry__handle_forget(ferry_File fh)
{
    pthread_mutex_lock(&registry_lock);
    if (fh->fortran_handle > 0 && fh->fortran_handle < capacity) registry[fh->fortran_handle] = NULL;
    fh->fortran_handle = 0;
    pthread_mutex_unlock(&registry_lock);
}

void ferry__handle_finalize(void)
{
    pthread_mutex_lock(&registry_lock);
    ferry__free(registry);
    registry = NULL;
    capacity = 0;
    pthread_mutex_unlock(&registry_lock);
}

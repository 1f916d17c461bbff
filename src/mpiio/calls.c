/*
 * The data-access entry points' descriptors: what each one does, in one
 * table (access.h names the rows).
 */
#include "mpiio/access.h"

#define WRITE .write = 1
#define INDIVIDUAL .individual = 1
#define COLLECTIVE .collective = 1
#define SHARED .shared = 1

const ferry__access_t ferry__calls[FERRY_CALLS] = {
    [FERRY_CALL_READ_AT] = {.name = "read_at"},
    [FERRY_CALL_READ_AT_ALL] = {.name = "read_at_all", COLLECTIVE},
    [FERRY_CALL_WRITE_AT] = {.name = "write_at", WRITE},
    [FERRY_CALL_WRITE_AT_ALL] = {.name = "write_at_all", WRITE, COLLECTIVE},
    [FERRY_CALL_READ] = {.name = "read", INDIVIDUAL},
    [FERRY_CALL_READ_ALL] = {.name = "read_all", INDIVIDUAL, COLLECTIVE},
    [FERRY_CALL_WRITE] = {.name = "write", WRITE, INDIVIDUAL},
    [FERRY_CALL_WRITE_ALL] = {.name = "write_all", WRITE, INDIVIDUAL, COLLECTIVE},
    [FERRY_CALL_READ_SHARED] = {.name = "read_shared", SHARED},
    [FERRY_CALL_WRITE_SHARED] = {.name = "write_shared", WRITE, SHARED},
    [FERRY_CALL_READ_ORDERED] = {.name = "read_ordered", COLLECTIVE, SHARED},
    [FERRY_CALL_WRITE_ORDERED] = {.name = "write_ordered", WRITE, COLLECTIVE, SHARED},
    [FERRY_CALL_READ_AT_ALL_BEGIN] = {.name = "read_at_all_begin", COLLECTIVE},
    [FERRY_CALL_WRITE_AT_ALL_BEGIN] = {.name = "write_at_all_begin", WRITE, COLLECTIVE},
    [FERRY_CALL_READ_ALL_BEGIN] = {.name = "read_all_begin", INDIVIDUAL, COLLECTIVE},
    [FERRY_CALL_WRITE_ALL_BEGIN] = {.name = "write_all_begin", WRITE, INDIVIDUAL, COLLECTIVE},
    [FERRY_CALL_READ_ORDERED_BEGIN] = {.name = "read_ordered_begin", COLLECTIVE, SHARED},
    [FERRY_CALL_WRITE_ORDERED_BEGIN] = {.name = "write_ordered_begin", WRITE, COLLECTIVE, SHARED},
    [FERRY_CALL_IREAD_AT] = {.name = "iread_at"},
    [FERRY_CALL_IWRITE_AT] = {.name = "iwrite_at", WRITE},
    [FERRY_CALL_IREAD] = {.name = "iread", INDIVIDUAL},
    [FERRY_CALL_IWRITE] = {.name = "iwrite", WRITE, INDIVIDUAL},
    [FERRY_CALL_IREAD_AT_ALL] = {.name = "iread_at_all", COLLECTIVE},
    [FERRY_CALL_IWRITE_AT_ALL] = {.name = "iwrite_at_all", WRITE, COLLECTIVE},
    [FERRY_CALL_IREAD_ALL] = {.name = "iread_all", INDIVIDUAL, COLLECTIVE},
    [FERRY_CALL_IWRITE_ALL] = {.name = "iwrite_all", WRITE, INDIVIDUAL, COLLECTIVE},
    [FERRY_CALL_IREAD_SHARED] = {.name = "iread_shared", SHARED},
    [FERRY_CALL_IWRITE_SHARED] = {.name = "iwrite_shared", WRITE, SHARED},
};

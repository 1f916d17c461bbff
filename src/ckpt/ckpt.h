/*
 * ckpt: checkpoint/restart of distributed arrays into netCDF files
 * (include/ferry_ckpt.h is the public API; docs/checkpoint.md the design,
 * docs/format/netcdf.md the file layout).
 *
 * What other code (tools/programs/ferry_ckpt.c) may use besides the public API: the
 * in-memory model of a netCDF classic header (CDF-2 or CDF-5), its decoder,
 * and the reading of a file's header region through ferry.
 *
 * Invariants: a decoded model never points outside the bytes it came from;
 * names are NUL-terminated copies; attribute values stay big-endian as in
 * the file. Every length read from a file is bounds-checked, so a corrupt
 * or truncated header is MPI_ERR_IO, never a crash.
 */
#ifndef FERRY_CKPT_MODULE_H
#define FERRY_CKPT_MODULE_H

#include <stddef.h>
#include <stdint.h>

#include "ferry_ckpt.h"

/* netCDF external types (nc_type). */
enum { NC_BYTE = 1, NC_CHAR = 2, NC_SHORT = 3, NC_INT = 4, NC_FLOAT = 5, NC_DOUBLE = 6, NC_INT64 = 10 };

typedef struct ferry__ckpt_nc_att {
    char *name;
    int type;
    int64_t nelems;
    unsigned char *values; /* nelems * size of type, big-endian, owned */
    int64_t at;            /* decoded: where the values lie in the decoded bytes */
} ferry__ckpt_nc_att_t;

typedef struct ferry__ckpt_nc_atts {
    int count;
    ferry__ckpt_nc_att_t *atts;
} ferry__ckpt_nc_atts_t;

typedef struct ferry__ckpt_nc_dim {
    char *name;
    int64_t len;
} ferry__ckpt_nc_dim_t;

typedef struct ferry__ckpt_nc_var {
    char *name;
    int ndims;
    int *dimids;
    ferry__ckpt_nc_atts_t atts;
    int type;
    int64_t vsize, begin;
} ferry__ckpt_nc_var_t;

/* A netCDF classic header. A dimension of length 0 is the record (unlimited)
 * dimension; a variable whose first dimension it is, a record variable: its
 * record k lies at begin + k * recsize (ferry__ckpt_nc_recsize). */
typedef struct ferry__ckpt_nc {
    int version; /* 2 (CDF-2) or 5 (CDF-5) */
    int64_t numrecs;
    int ndims, nvars;
    ferry__ckpt_nc_dim_t *dims;
    ferry__ckpt_nc_atts_t gatts;
    ferry__ckpt_nc_var_t *vars;
} ferry__ckpt_nc_t;

/* Decodes a header from buf. Returns 0 (*used: its length), MPI_ERR_IO
 * with a message for a corrupt header, or MPI_ERR_TRUNCATE when len ends
 * inside it (read more and try again). out is owned: ferry__ckpt_nc_free. */
int ferry__ckpt_nc_decode(const unsigned char *buf, size_t len, ferry__ckpt_nc_t *out, size_t *used);
void ferry__ckpt_nc_free(ferry__ckpt_nc_t *nc);
/* netCDF's name rules (netCDF-C's NC_check_name): not empty; valid UTF-8; first a letter, a digit,
 * '_' or a multibyte character; no control character, no '/'; at most 256 bytes; no trailing
 * space. NULL for a valid name, else what is wrong ("holds a '/'"). */
enum { FERRY__CKPT_NC_MAX_NAME = 256 };
const char *ferry__ckpt_nc_name_problem(const char *name);
/* Bytes per value of an nc_type; 0 for types ferry does not write. */
int ferry__ckpt_nc_type_size(int type);
const char *ferry__ckpt_nc_type_name(int type);
/* The attribute name in atts, or NULL. */
const ferry__ckpt_nc_att_t *ferry__ckpt_nc_att(const ferry__ckpt_nc_atts_t *atts, const char *name);
/* Value k of an integer or floating attribute, as a 64-bit integer. */
int64_t ferry__ckpt_nc_att_int(const ferry__ckpt_nc_att_t *att, int64_t k);
double ferry__ckpt_nc_att_double(const ferry__ckpt_nc_att_t *att, int64_t k);
/* A text attribute into out (NUL-terminated, cut to len); "" when absent. */
void ferry__ckpt_nc_att_text(const ferry__ckpt_nc_atts_t *atts, const char *name, char *out, size_t len);
/* The step of the file at path: its ferry_step, else the digits of a name "<...>.<digits>.nc"
 * (a netCDF file ferry did not write, named like a checkpoint), else -1. */
long long ferry__ckpt_nc_step(const ferry__ckpt_nc_t *nc, const char *path);
/* The variable named name, or -1. */
int ferry__ckpt_nc_find_var(const ferry__ckpt_nc_t *nc, const char *name);
/* Bytes of a variable's data (product of its dimensions times the type size;
 * of one record for a record variable). */
int64_t ferry__ckpt_nc_var_bytes(const ferry__ckpt_nc_t *nc, const ferry__ckpt_nc_var_t *v);
/* Whether v is a record variable. */
int ferry__ckpt_nc_is_record(const ferry__ckpt_nc_t *nc, const ferry__ckpt_nc_var_t *v);
/* Bytes of one record: the record variables' vsizes added up. */
int64_t ferry__ckpt_nc_recsize(const ferry__ckpt_nc_t *nc);

/* The checkpoint checksum of n big-endian values of size esize starting at
 * element index first of a variable (docs/checkpoint.md: the sum over
 * elements of value bits times an odd number derived from the index). */
uint64_t ferry__ckpt_checksum_be(const unsigned char *data, int64_t n, int esize, int64_t first);

/* Collective over comm: reads path's header (and the index variables after
 * it) through ferry and decodes it on every rank. *region (owned, free with
 * ferry_ckpt's allocator via ferry__ckpt_region_free) holds the bytes up to the first data variable. */
int ferry__ckpt_read_header(MPI_Comm comm, const char *path, int io, ferry__ckpt_nc_t *nc, unsigned char **region,
                            size_t *region_len);
void ferry__ckpt_region_free(unsigned char *region);

/* The header checksum (docs/checkpoint.md): the global attribute
 * ferry_header_checksum, 16 hex digits, sums (ferry__ckpt_checksum_be, bytes) the
 * file's bytes before its first data variable, the header and any index
 * variables, read with the attribute's value as 16 '0' characters. A flipped
 * step, time, dimension or decomposition is caught as a flipped value is by
 * the variables' checksums. nc was decoded from region, whose first `used`
 * bytes are the header. */
#define FERRY__CKPT_HEADER_CHECKSUM "ferry_header_checksum"
/* The bytes it covers: up to the first data variable (one with a
 * ferry_checksum), or the header when there is none. */
int64_t ferry__ckpt_header_covered(const ferry__ckpt_nc_t *nc, int64_t used);
/* Whether nc carries a header checksum (a ferry checkpoint, not a foreign netCDF file). */
int ferry__ckpt_nc_sealed(const ferry__ckpt_nc_t *nc);
/* Writes the checksum of region[0, covered) into the attribute's value. */
void ferry__ckpt_header_seal(const ferry__ckpt_nc_t *nc, unsigned char *region, int64_t covered);
/* 0 when the checksum matches, or when the file has none and no other
 * attribute of ferry's (a netCDF file ferry did not write); MPI_ERR_IO naming
 * path otherwise: a file carrying ferry's attributes must carry the checksum,
 * so damage to its name cannot switch the check off. */
int ferry__ckpt_header_check(const ferry__ckpt_nc_t *nc, unsigned char *region, size_t len, int64_t used,
                             const char *path);

#endif

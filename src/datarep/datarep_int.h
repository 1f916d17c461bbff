/*
 * datarep internals, shared by the module's files only.
 *
 *   registry.c   the representations: built-in ones and ferry_Register_datarep
 *   contents.c   reading a datatype's envelope and contents
 *   basic.c      predefined types in external32 (table 13.2)
 *   scalar.c     the conversions of their scalars
 *   signature.c  a type's signature (its predefined items in stream order)
 *                as a small tree: counts multiply, lists are never expanded
 *   layout.c     file layouts, sizes and extents in a representation
 *   convert.c    windowed pack/unpack between memory and the file stream
 *
 * Streams. The native stream of (buf, count, type) is what the datatype
 * engine packs: every predefined item's bytes in typemap order. The file
 * stream is the same items, each in its file representation, back to back
 * ("all data is byte aligned", MPI-3.1 13.5.2). An item is one predefined
 * datatype of the signature (MPI_DOUBLE_INT is one item of two parts).
 */
#ifndef FERRY_DATAREP_INT_H
#define FERRY_DATAREP_INT_H

#include <stdint.h>

#include "datarep/datarep.h"
#include "datatype/datatype.h"

typedef enum { FERRY__DR_NATIVE, FERRY__DR_EXTERNAL32, FERRY__DR_USER } ferry__dr_kind_t;

/* One direction's user conversion function: MPI_Register_datarep's (count
 * an int) or MPI_Register_datarep_c's (count an MPI_Count); both NULL means
 * no conversion in that direction. */
typedef struct ferry__dr_conversion {
    MPI_Datarep_conversion_function *fn;
    ferry_Datarep_conversion_function_c *fn_c;
} ferry__dr_conversion_t;

struct ferry__datarep {
    char name[MPI_MAX_DATAREP_STRING];
    ferry__dr_kind_t kind;
    ferry__dr_conversion_t read, write; /* user representations */
    MPI_Datarep_extent_function *extent_fn;
    void *extra_state;
    struct ferry__datarep *next; /* registered list */
};

/* --- basic.c: how one scalar is converted to and from external32. */
typedef enum {
    FERRY__DR_COPY,    /* bytes as they are (characters, MPI_BYTE) */
    FERRY__DR_SWAP,    /* same-size integer or IEEE float: byte order only */
    FERRY__DR_INT,     /* two's complement of another size: sign-extend or narrow (range checked) */
    FERRY__DR_UINT,    /* unsigned of another size: zero-extend or narrow (range checked) */
    FERRY__DR_BOOL,    /* C _Bool, C++ bool, Fortran LOGICAL: nonzero is true, stored as 1 */
    FERRY__DR_LDOUBLE, /* native long double <-> IEEE binary128 */
    FERRY__DR_NONE     /* no external32 form */
} ferry__dr_conv_t;

typedef struct ferry__dr_part {
    unsigned char conv, msize, fsize; /* one scalar: conversion, native bytes, file bytes */
    unsigned char count;              /* scalars in the part (2 for complex types) */
} ferry__dr_part_t;

/* A predefined datatype as an item of the signature. */
typedef struct ferry__dr_basic {
    MPI_Datatype type;
    int nparts; /* 1, or 2 for MPI_DOUBLE_INT and friends */
    ferry__dr_part_t part[2];
    MPI_Count msize, fsize; /* one item in the native and the file stream */
} ferry__dr_basic_t;

/* Describes predefined `type` (named, or f90 with `combiner`) for rep:
 * external32 from the table, user representations through their extent
 * function, native as it is. MPI_ERR_TYPE / MPI_ERR_CONVERSION when rep
 * cannot represent it. */
int ferry__dr_basic(const ferry__datarep_t *rep, MPI_Datatype type, int combiner, ferry__dr_basic_t *out);

/* --- scalar.c */
static inline int ferry__dr_host_le(void)
{
    const union {
        uint16_t word;
        unsigned char first;
    } probe = {1};
    return probe.first == 1;
}
/* The native long double is one we convert: x87 extended or binary128. */
int ferry__dr_ldouble_supported(void);

/* n items, native -> external32 (`put`) and back (`get`). Return 0 or
 * MPI_ERR_CONVERSION (a value the destination cannot hold). */
int ferry__dr_put(const ferry__dr_basic_t *b, const unsigned char *native, unsigned char *file, MPI_Count n);
int ferry__dr_get(const ferry__dr_basic_t *b, const unsigned char *file, unsigned char *native, MPI_Count n);

/* For a window that holds only file bytes [lo, hi) of an item: which file
 * byte determines native byte j of the item (-1: several, as for long
 * double, so the item cannot be stored in pieces). */
int ferry__dr_source_byte(const ferry__dr_basic_t *b, MPI_Count j);

/* --- contents.c: the datatype module's contents reader (datatype.h). */
typedef ferry__datatype_contents_t ferry__dr_contents_t;

/* Envelope, and for derived types the contents. Release with
 * ferry__datatype_contents_release. */
int ferry__dr_contents_get(MPI_Datatype type, ferry__dr_contents_t *c);

/* --- signature.c: LEAF (one item), REP (n copies of parts[0]) or SEQ (n parts). */
typedef struct ferry__dr_pos {
    MPI_Count m, f, i; /* native bytes, file bytes, items */
} ferry__dr_pos_t;

typedef struct ferry__dr_sig ferry__dr_sig_t;
typedef struct ferry__dr_run {
    const ferry__dr_basic_t *leaf;
    MPI_Count n;        /* items of leaf in a row */
    ferry__dr_pos_t at; /* where the run starts in the element */
} ferry__dr_run_t;

struct ferry__dr_sig {
    ferry__dr_basic_t leaf; /* LEAF */
    int kind;               /* 0 LEAF, 1 REP, 2 SEQ */
    MPI_Count n;
    ferry__dr_sig_t **parts;
    ferry__dr_pos_t *prefix; /* SEQ: stream before part i, n + 1 entries */
    ferry__dr_pos_t size;    /* one element */
    int same_size;           /* every item has msize == fsize */
    ferry__dr_run_t *runs;   /* root of a struct-like signature: one element as at most
                              * FERRY__DR_RUNS runs of one leaf, so locating needs no descent */
    MPI_Count nruns;
};

enum { FERRY__DR_RUNS = 256 };

/* The signature of type in rep; *sig is NULL for a type of size 0. Free
 * with ferry__dr_sig_free. */
int ferry__dr_sig_build(const ferry__datarep_t *rep, MPI_Datatype type, ferry__dr_sig_t **sig);
void ferry__dr_sig_free(ferry__dr_sig_t *sig);

/* The item holding file-stream byte f of `count` elements of sig: its
 * start, and how many items of the same leaf follow each other from it. */
typedef struct ferry__dr_spot {
    const ferry__dr_basic_t *leaf;
    ferry__dr_pos_t at;
    MPI_Count run;
    MPI_Count elem, index; /* flat signatures (sig->runs): the element and run */
} ferry__dr_spot_t;
void ferry__dr_locate(const ferry__dr_sig_t *sig, MPI_Count count, MPI_Count f, ferry__dr_spot_t *spot);
/* Flat signatures: the run after spot's, from its first item. */
void ferry__dr_next_run(const ferry__dr_sig_t *sig, ferry__dr_spot_t *spot);

/* --- convert.c */
enum { FERRY__DR_ITEM_MAX = 64 }; /* file bytes of an element kept across windows */

/* A cut element's leading file bytes, kept from the window that ended
 * inside it for the window that continues it (reads fed in ascending
 * windows). Only a continuation of exactly these bytes matches; anything
 * else clears it. */
typedef struct ferry__dr_carry {
    MPI_Count item; /* the element's file-stream position */
    MPI_Count have; /* leading bytes held; -1: none */
    unsigned char bytes[FERRY__DR_ITEM_MAX];
} ferry__dr_carry_t;

/* Feeds file bytes [lo, hi) of the cut element at `at` (src holds them) to
 * carry; returns 1 with the whole element's file bytes in `whole` when they
 * complete an element whose leading bytes the carry holds. */
int ferry__dr_carry_feed(ferry__dr_carry_t *carry, const ferry__dr_spot_t *at, const unsigned char *src,
                         MPI_Count lo, MPI_Count hi, unsigned char *whole);

/* --- user.c: one window of a user-registered representation's stream. */
typedef struct ferry__dr_user_window {
    const ferry__datarep_t *rep;
    const ferry__dr_sig_t *sig;
    const ferry__datarep_memory_t *mem;
    ferry__dr_carry_t *carry; /* the stream's, for elements cut between read windows */
    int write;                /* 1: memory to file (pack), 0: file to memory */
} ferry__dr_user_window_t;

/* Converts file-stream bytes [skip, skip + len) at `file` to or from memory
 * with the user's conversion functions (whole items per call; an item the
 * window cuts goes through a small buffer when writing and through the
 * carry when reading). */
int ferry__dr_user_walk(const ferry__dr_user_window_t *w, MPI_Count skip, void *file, MPI_Count len);

#endif

/*
 * Datatype oracles: random MPI datatypes and the brute-force byte map.
 *
 * The byte map of (count, type) lists, for every stream byte, the offset
 * from buf of the memory byte it comes from. It is computed with nothing
 * but the host's MPI_Pack: memory is filled with the bytes of each position
 * number, one byte plane per pack, and the packed planes spell the
 * positions. Naive pack/unpack and every navigation answer then follow from
 * the map by a linear scan.
 */
#ifndef FERRY_ORACLE_H
#define FERRY_ORACLE_H

#include <stdint.h>

#include "ferry.h"

/* Limits for random types: stream bytes and bytes spanned per element. */
enum { OR_MAX_SIZE = 1 << 12, OR_MAX_SPAN = 1 << 16 };

/* A random derived (or predefined) datatype built with every combiner, up
 * to `depth` levels deep, within the limits above; committed. Free with
 * or_type_free. */
MPI_Datatype or_random_type(uint64_t *state, int depth);

/* Frees a type unless it is predefined. */
void or_type_free(MPI_Datatype *type);

/* A readable one-line description of a type's construction (static storage). */
const char *or_describe(MPI_Datatype type);

/* Debugging: packs every component of type, innermost first, naming each
 * on stderr, to find the one a host crashes on. */
void or_probe(MPI_Datatype type, int depth);

/* Byte span of (count, type): offsets [*lo, *hi) from buf cover every byte. */
void or_span(MPI_Datatype type, MPI_Count count, MPI_Count *lo, MPI_Count *hi);

/* The byte map of (count, type), count * size entries (caller frees);
 * NULL when the host crashed (SIGFPE) packing the type or packed bytes
 * outside the type's true extent, counted here: */
MPI_Count *or_byte_map(MPI_Datatype type, MPI_Count count);
extern int or_host_crashes, or_host_strays;

/* Stream bytes [skip, skip + len) by the map. */
void or_naive_pack(const char *buf, const MPI_Count *map, MPI_Count skip, MPI_Count len, char *dst);
void or_naive_unpack(const char *src, const MPI_Count *map, MPI_Count skip, MPI_Count len, char *buf);

#endif

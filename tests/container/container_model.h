/*
 * The container tests' model of a stream: its bytes are a function of the
 * seed and the stream id (random bytes, with an optional run of zeros the
 * writer skips over by seeking), so any rank and any program can rebuild
 * what any stream must hold. The writer follows a random plan of write
 * sizes from 1 byte to several chunks, seeks back to rewrite what it wrote
 * (the same bytes), and flushes now and then.
 */
#ifndef CONTAINER_MODEL_H
#define CONTAINER_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "ferry_container.h"

typedef struct ct_model {
    uint64_t seed;       /* of this stream's bytes and plan */
    size_t length;
    size_t hole_start, hole_end; /* [hole_start, hole_end) reads as zeros; empty when equal */
    size_t max_piece;    /* largest single write */
} ct_model_t;

/* The model of stream `stream` under seed: length up to max_length. */
void ct_model(uint64_t seed, int stream, size_t max_length, size_t max_piece, ct_model_t *m);
/* The stream's bytes, m->length of them, into buf. */
void ct_expected(const ct_model_t *m, unsigned char *buf);
/* Writes the stream through c following the model's plan; flushes with
 * probability 1/flush_one_in per write (0: never). Fails the test on error.
 * Returns the length recorded by the last flush. */
size_t ct_write(ferry_container_t c, const ct_model_t *m, int flush_one_in);
/* Reads the selected stream of c from position 0 in random pieces and
 * checks every byte, eof and bytes_avail on the way. */
void ct_check_read(ferry_container_t c, const ct_model_t *m);
/* Serial: checks stream `stream` of set holds exactly the model's bytes. */
void ct_check_serial(ferry_container_set_t set, int stream, const ct_model_t *m);
/* Serial: every chunk of every stream starts on a block boundary, has a
 * whole number of blocks, and no two chunks overlap. */
void ct_check_alignment(ferry_container_set_t set);

#endif

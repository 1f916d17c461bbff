/*
 * core: the file object, allocation, the handle registry and library set-up.
 *
 * struct ferry_file is the one object every module works on. mpiio/ creates
 * and frees it and sets most fields; other modules write their own state in
 * it too: coll/ its coll state and collective counters, indep/ its staging
 * and sieve slots, locks_refused and counters, sharedfp/ sharedfp_used,
 * async/ its async state (mpiio/nonblocking.c runs a request on a copy),
 * error/ the error handler, core/ fortran_handle and open_sequence. One
 * owner per field is issue 14's refactor. All allocation goes
 * through ferry__malloc/ferry__calloc/ferry__free so a test can make the
 * n-th allocation fail.
 */
#ifndef FERRY_CORE_H
#define FERRY_CORE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ferry.h"
#include "fs/fs.h"
#include "hints/hints.h"
#include "stats/stats.h"
#include "view/view.h"


/* A reusable scratch buffer of an open file (scratch.c). */
typedef struct ferry__scratch_slot {
    void *buf; /* owned */
    size_t size;
    atomic_int busy;
} ferry__scratch_slot_t;

struct ferry_file {
    MPI_Comm comm; /* private duplicate: ferry's traffic never mixes with the caller's */
    int rank;
    int nprocs;
    char *filename; /* owned */
    int amode;
    ferry__fs_file_t *fs; /* open file on this rank */
    ferry__hints_t hints;
    MPI_Errhandler errhandler;
    ferry_File_errhandler_function *errfn; /* captured at set time; NULL for predefined handlers */
    MPI_Offset position; /* individual file pointer, in etypes relative to the view */
    MPI_Win sharedfp;    /* the shared file pointer's window (sharedfp/sharedfp.h) */
    atomic_int sharedfp_used; /* this rank moved the shared pointer since it was last reset to 0 */
    ferry__view_t view;
    int atomicity;
    MPI_Fint fortran_handle; /* 0 until ferry_File_c2f asks for one */
    uint64_t open_sequence;  /* this rank's open order: finalize closes files in it (live.c) */
    ferry__stats_t stats;
    int locks_refused; /* the file system refused a byte-range lock: no sieving writes from now on */
    int develop;       /* develop mode, agreed over ranks (mpiio/develop.c) */
    int readable;      /* the open file can be read back, even when opened MPI_MODE_WRONLY (data sieving) */
    ferry__fs_layout_t layout; /* of the file system under the file, read at open */
    ferry__scratch_slot_t staging, sieve; /* indep/'s buffers, kept between calls */
    unsigned config_epoch;     /* bumped by set_view and set_info: coll/ re-agrees its inputs */
    struct ferry__coll_state *coll; /* coll/'s per-file state (view cache, nodes), NULL until used */
    struct ferry__async_file *async; /* background requests (async/), NULL until the first; owned */
    struct {
        const char *kind;  /* the active split collective's begin call, NULL when none */
        const void *buf;   /* its buffer, which the end call must name again */
        MPI_Count bytes;   /* what it moved */
        const char *misused_begin, *misused_active; /* a begin refused while another was active, for the next
                                                      * collective to report on every rank (mpiio/split.c) */
    } split;
};

/* Lazily initializes ferry's process state (keyvals, finalize hook); safe to
 * call from any thread once MPI is initialized. Returns 0 or an error class. */
int ferry__core_init(void);

/* Registers fn to run once at MPI_Finalize, from core's hook: after the files
 * the program left open are closed, before core's own registries go; the
 * last registered runs first. A module with process state that must go
 * before MPI does (keyvals, threads) stops it there rather than in a hook
 * of its own, whose place among MPI_COMM_SELF's attributes would depend on
 * when the module was first used. Returns 0 or MPI_ERR_INTERN (too many). */
int ferry__core_at_finalize(void (*fn)(void));

/* The host MPI library's definition of function `name` (host.c), for the
 * PMPI_ names the drop-in interposes; NULL when the host has none. Cast it
 * to the function's type before calling. */
typedef void (*ferry__host_fn_t)(void);
ferry__host_fn_t ferry__host_function(const char *name);

void *ferry__malloc(size_t size);
void *ferry__calloc(size_t count, size_t size);
void *ferry__realloc(void *ptr, size_t size);
void ferry__free(void *ptr);
char *ferry__strdup(const char *s);

/* Test hook: the n-th allocation from now on (1-based) fails; 0 disarms. */
void ferry__alloc_fail_after(long n);

/* Borrows at least size bytes from slot (a private allocation when another
 * thread holds it); NULL when out of memory. Give it back with
 * ferry__scratch_give; ferry__scratch_release frees the slot's buffer. */
void *ferry__scratch_take(ferry__scratch_slot_t *slot, size_t size);
void ferry__scratch_give(ferry__scratch_slot_t *slot, void *buf);
void ferry__scratch_release(ferry__scratch_slot_t *slot);

/* Fortran handle registry. c2f assigns an index on first use. */
MPI_Fint ferry__handle_to_fortran(ferry_File fh);
ferry_File ferry__handle_from_fortran(MPI_Fint index);
void ferry__handle_forget(ferry_File fh);
void ferry__handle_finalize(void);

/* File handles (live.c): the structs live in slots ferry keeps until
 * MPI_Finalize, so entry points refuse closed, stale and garbage handles
 * without reading through them. create: a zeroed struct (NULL when out of
 * memory); destroy: gives it back (its slot is reused only after many
 * other opens). register: at open (marks it open and numbers it in this
 * rank's open order); unregister: at close. live: 1 when fh is an open
 * file (a few comparisons and an atomic load). All thread-safe. */
ferry_File ferry__handle_create(void);
void ferry__handle_destroy(ferry_File fh);
void ferry__handle_register(ferry_File fh);
void ferry__handle_unregister(ferry_File fh);
int ferry__handle_live(ferry_File fh);
/* 0 when fh is an open file, else MPI_ERR_FILE with a message naming op. */
int ferry__handle_check_live(ferry_File fh, const char *op);

/* Finalize: mpiio/ sets the function that closes a file (collective over the
 * file's ranks, no error handler); ferry__handle_close_all calls it for
 * every file still open, in this rank's open order (see live.c);
 * ferry__handle_live_finalize frees the slots. */
typedef void ferry__handle_closer_t(ferry_File fh);
void ferry__handle_set_closer(ferry__handle_closer_t *close_fn);
void ferry__handle_close_all(void);
void ferry__handle_live_finalize(void);

#endif

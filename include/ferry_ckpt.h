/*
 * ferry_ckpt: checkpoint/restart of distributed arrays into netCDF files.
 *
 * Each rank owns a block of every variable's global array (start and count
 * in the global index space) inside a local buffer with halos (ghost cells)
 * around it. A checkpoint writes every variable of one step in one call
 * into a standard netCDF file (CDF-5 by default, CDF-2 on request) that
 * ncdump, netCDF4-python and xarray read without ferry; a restart reads the
 * newest valid checkpoint into any decomposition, on any number of ranks.
 *
 * Strategies (seed 004, POLCOMS):
 *   FERRY_CKPT_STEER   every block goes to its place in the global array
 *                      (row-major), through a subarray file view: the file
 *                      is the global image.
 *   FERRY_CKPT_STACK   every rank's halo-free block is stored contiguously,
 *                      in rank order, with index variables <v>_start,
 *                      <v>_count, <v>_offset (docs/checkpoint.md).
 *   FERRY_CKPT_GATHER  the reference: rank 0 assembles each global array
 *                      and writes it (root memory: the largest variable).
 *   FERRY_CKPT_AUTO    gather where it measured faster, steer elsewhere:
 *                      gather when every rank of the set is on one node
 *                      (MPI_Comm_split_type) and its global arrays take at
 *                      most ferry_ckpt_auto_limit bytes (default 2 MiB),
 *                      else steer; chosen from the definitions, the
 *                      same on every rank; the file and info.strategy say
 *                      which (a series file names none: it reads steer)
 *                      (docs/checkpoint.md "Which strategy at which size").
 *                      Zeroed options stay FERRY_CKPT_STEER.
 * Transfers are collective (default) or independent, through ferry's
 * MPI-IO or the host MPI's own MPI_File_* (FERRY_CKPT_IO_HOST), the same
 * code either way. Halos are excluded by MPI datatypes, never by copies.
 * Values are stored big-endian (netCDF's encoding): the write swaps each
 * block in place and back, the read swaps after reading.
 *
 * Transactions: ferry_ckpt_write(step) writes "<base>.<step>.nc.tmp",
 * syncs it, then renames it to "<base>.<step>.nc" and keeps the newest K
 * checkpoints (hint ferry_ckpt_keep, default 2). A set is one series: the
 * step just written is the newest, so checkpoints of the set with a higher
 * step (an earlier run's, or a future abandoned by a restart that fell back)
 * are removed once it is committed, with a message on stderr; the step just
 * written is never removed. Every variable carries a checksum attribute and
 * the header one of its own; ferry_ckpt_restart takes the newest checkpoint
 * that is complete and passes its checksums, falling back to older ones with
 * a message on stderr. A write that fails (a full device included, on
 * ferry's MPI-IO and the host's) returns an error on every rank, removes its
 * temporary file and leaves the previous checkpoints as they were; a job
 * killed at any moment never damages an earlier checkpoint.
 *
 * Definitions are local calls; every collective call (write, restart, read)
 * first checks that all ranks defined the same dimensions, variables and
 * options and make the same call: a difference is MPI_ERR_NOT_SAME on every
 * rank naming it (and blocks of two ranks that overlap, MPI_ERR_ARG at a
 * write), never a hang. Names follow netCDF's rules (netCDF-C's
 * NC_check_name: UTF-8, no '/', no control characters, no trailing space,
 * first a letter, digit, '_' or multibyte character), at most 200 bytes;
 * a stacked set also reserves its layout's own names (docs/format/netcdf.md).
 *
 * Hints (MPI_Info in the options; the rest go to MPI_File_open):
 *   ferry_ckpt_keep   checkpoints kept, >= 1 (default 2)
 *   ferry_ckpt_auto_limit  FERRY_CKPT_AUTO's largest gathered set in bytes
 *                     (default 2097152)
 *   ferry_ckpt_align  data alignment in bytes (default: the directory's
 *                     st_blksize, at least 512)
 *
 * Every function returns MPI_SUCCESS or an MPI error code whose class is
 * standard and whose string (ferry_Error_string) names the operation, the
 * file and the cause; a NULL argument where one is required is MPI_ERR_ARG
 * (in a collective call, on every rank). Functions marked collective must be
 * called by every rank of the communicator with the same arguments except
 * buffers and the rank's own block.
 */
#ifndef FERRY_CKPT_H
#define FERRY_CKPT_H

#include "ferry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ferry_ckpt *ferry_ckpt_t;

enum { FERRY_CKPT_STEER = 0, FERRY_CKPT_STACK = 1, FERRY_CKPT_GATHER = 2, FERRY_CKPT_AUTO = 3 };
enum { FERRY_CKPT_IO_FERRY = 0, FERRY_CKPT_IO_HOST = 1 };
enum { FERRY_CKPT_CDF5 = 0, FERRY_CKPT_CDF2 = 1 };
enum { FERRY_CKPT_MAX_DIMS = 4 };

typedef struct ferry_ckpt_options {
    int strategy;    /* FERRY_CKPT_STEER (0, default), _STACK, _GATHER or _AUTO */
    int independent; /* 0: collective transfers; 1: independent ones */
    int format;      /* FERRY_CKPT_CDF5 (0, default) or FERRY_CKPT_CDF2 (every variable under 4 GiB) */
    int io;          /* FERRY_CKPT_IO_FERRY (0, default) or FERRY_CKPT_IO_HOST */
    MPI_Info info;   /* borrowed for the call; MPI_INFO_NULL or 0 for none */
    int series;      /* 1: every write appends its step as a record of one file "<base>.nc" along the
                        record dimension time (steer or gather; see ferry_ckpt_write) */
    /* Multi-level checkpoints (docs/checkpoint.md "Multi-level checkpoints"); new fields at the end,
     * zero (the default of a designated or zero initialiser) leaves them off. */
    const char *local_dir; /* node-local directory (a tmpfs, a local disk): level 1, every rank's own
                              block file; a "%n" in it becomes the node's number; NULL: off */
    int partner;           /* 1: level 2, a copy of every rank's level-1 file on a rank of the next node */
    int drain;             /* 1: level 3, the ordinary netCDF checkpoint in base's directory, written
                              from the level-1 copy in the background (ferry_ckpt_drain_wait) */
} ferry_ckpt_options_t;

/* One variable: the global array and this rank's block of it. */
typedef struct ferry_ckpt_var {
    const char *name;
    MPI_Datatype type;        /* MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_LONG (CDF-5) */
    int ndims;                /* 1 to FERRY_CKPT_MAX_DIMS */
    const int *dimids;        /* from ferry_ckpt_def_dim, slowest varying first (C order) */
    const MPI_Offset *start;  /* this rank's block in the global index space */
    const MPI_Offset *count;  /* its extent; a zero anywhere: the rank owns nothing */
    const int *halo;          /* ghost cells on each side of the local buffer, per dimension; NULL: none */
    const char *mask;         /* optional: name of the variable flagging valid points (an attribute) */
    const char *units;        /* optional: the units attribute */
} ferry_ckpt_var_t;

/* What a restart or read found. */
typedef struct ferry_ckpt_info {
    long long step;
    double time;
    int writer_ranks;  /* how many ranks wrote the file */
    int strategy;      /* how it was written (steer, stack or gather; never auto) */
    int fallbacks;     /* newer checkpoints skipped because they were incomplete or corrupt */
    char path[4096];   /* levels 1-2: rank 0's level-1 file (the name of its partner copy when it took one) */
    int level;         /* where the restart found it: 1 node-local, 2 a partner's copy, 3 the netCDF file */
} ferry_ckpt_info_t;

/* Collective. A checkpoint set named by base ("dir/name"); opt may be NULL
 * (steer, collective, CDF-5, ferry). Free with ferry_ckpt_free. */
FERRY_API int ferry_ckpt_create(MPI_Comm comm, const char *base, const ferry_ckpt_options_t *opt, ferry_ckpt_t *ck);
/* Local (the same on every rank, checked at the next collective call): a
 * dimension of the global index space. MPI_ERR_ARG for a name netCDF refuses
 * or one already defined. */
FERRY_API int ferry_ckpt_def_dim(ferry_ckpt_t ck, const char *name, MPI_Offset len, int *dimid);
/* Local (the same on every rank but the block, checked at the next
 * collective call): a variable, with this rank's block (copied). */
FERRY_API int ferry_ckpt_def_var(ferry_ckpt_t ck, const ferry_ckpt_var_t *var, int *varid);
enum { FERRY_CKPT_GLOBAL = -1, FERRY_CKPT_TIME = -2 };
/* Local (the same on every rank, checked at the next collective call): the
 * netCDF attribute name of variable varid, or of the file (FERRY_CKPT_GLOBAL),
 * as nc_put_att: n values of type (MPI_CHAR for text, or a variable type),
 * copied; an attribute of that name is replaced. Examples: long_name, units,
 * _FillValue (one value of the variable's type: points no rank's block
 * covers then hold it instead of 0), title, history, Conventions; in a series
 * FERRY_CKPT_TIME names the time variable (units "days since 2000-01-01",
 * calendar). Names beginning "ferry_" are ferry's own (MPI_ERR_ARG). */
FERRY_API int ferry_ckpt_put_att(ferry_ckpt_t ck, int varid, const char *name, MPI_Datatype type, MPI_Offset n,
                                 const void *values);
/* Collective: writes every variable (bufs[varid]: the rank's local buffer with
 * halos; NULL allowed where the rank owns nothing) as checkpoint step, then
 * commits it, removes the set's checkpoints of higher steps (an earlier
 * series) and drops those beyond the newest K. The buffers are byte-swapped
 * in place during the call and restored before it returns, also when it
 * fails. A set with local_dir writes the step to node-local storage and the
 * partner's, and drains it to the shared directory in the background
 * (docs/checkpoint.md "Multi-level checkpoints"): the buffers are only read. */
FERRY_API int ferry_ckpt_write(ferry_ckpt_t ck, long long step, double time, void *const *bufs);
/* Collective: the same into one named file (temporary name, sync, rename). */
FERRY_API int ferry_ckpt_write_file(ferry_ckpt_t ck, const char *path, long long step, double time,
                                    void *const *bufs);
/* Collective: reads the newest valid checkpoint of the set into this rank's
 * blocks (halos untouched; points no writer owned read as 0). info may be NULL.
 * MPI_ERR_NO_SUCH_FILE when no checkpoint is valid (damaged, incomplete and
 * foreign files are skipped with a message). When the newest intact
 * checkpoint does not hold a declared variable, or holds it with another type
 * or global shape, the declarations are wrong, not the files: MPI_ERR_ARG,
 * MPI_ERR_TYPE or MPI_ERR_DIMS naming the variable, and no fallback. A set with
 * local_dir takes the newest step whole at any level, the fastest first (its
 * node-local files, the partners' copies, the netCDF file; info.level). */
FERRY_API int ferry_ckpt_restart(ferry_ckpt_t ck, void *const *bufs, ferry_ckpt_info_t *info);
/* Collective: reads one file (checksums verified) into this rank's blocks. A
 * netCDF file ferry did not write (no checksums) is read unverified; its
 * info.step is the number in its name "<...>.<digits>.nc", or -1. */
FERRY_API int ferry_ckpt_read_file(ferry_ckpt_t ck, const char *path, void *const *bufs, ferry_ckpt_info_t *info);
/* Collective: MPI_SUCCESS when path is a complete checkpoint whose header and
 * data match their checksums; otherwise an error (MPI_ERR_IO for corrupt
 * data, MPI_ERR_UNSUPPORTED_OPERATION for a netCDF file without checksums)
 * whose string says what is wrong. */
FERRY_API int ferry_ckpt_verify(MPI_Comm comm, const char *path);
/* Collective (a set with local_dir and drain): waits for the drain of the last multi-level write to
 * the shared directory and returns its outcome (MPI_SUCCESS when no drain is pending). A failed
 * drain leaves the step at levels 1 and 2 and the set's earlier netCDF checkpoints as they were. */
FERRY_API int ferry_ckpt_drain_wait(ferry_ckpt_t ck);
/* Local: the file name of step in the set. */
FERRY_API int ferry_ckpt_path(ferry_ckpt_t ck, long long step, char *path, int len);
/* Local: the most memory the module held at once on this rank so far (gather:
 * the root's global array; steer and stack: metadata only), in bytes. */
FERRY_API long long ferry_ckpt_peak_memory(ferry_ckpt_t ck);
/* Local: frees ck (NULL and *ck == NULL are no-ops). */
FERRY_API int ferry_ckpt_free(ferry_ckpt_t *ck);

#ifdef __cplusplus
}
#endif

#endif

/*
 * ckpt internals, shared by the files of src/ckpt only.
 *
 * A checkpoint set (struct ferry_ckpt) holds the declared dimensions and
 * variables; every variable is kept as a 4-D array (leading dimensions of
 * length 1), so one set of loops and datatypes serves 1-D to 4-D. Every
 * transfer goes through a backend table (io.c: ferry_File_* or the host's
 * MPI_File_*) chosen per file, with file views and memory datatypes built
 * here: the module never reaches into ferry's collective or independent
 * engines.
 *
 * Invariants: blocks[] and offsets[] are identical on every rank after
 * def_var; a user buffer is swapped to big-endian only between the start
 * and the end of one write call, and always swapped back; files are
 * written under a temporary name and renamed only after a successful sync
 * on every rank.
 */
#ifndef FERRY_CKPT_INT_H
#define FERRY_CKPT_INT_H

#include "ckpt/ckpt.h"
#include "error/error.h"

enum { FERRY__CKPT_D = FERRY_CKPT_MAX_DIMS };
/* The default ferry_ckpt_stage_limit: a rank's blocks up to 64 MiB are staged (docs/checkpoint.md). */
#define FERRY__CKPT_STAGE_LIMIT (64LL << 20)
/* FERRY_CKPT_AUTO gathers sets of at most this many bytes whose ranks share one node (docs/checkpoint.md). */
#define FERRY__CKPT_AUTO_LIMIT (2LL << 20)

/* An open file under one backend. */
typedef struct ferry__ckpt_file {
    const struct ferry__ckpt_io *io;
    ferry_File ff;
    MPI_File mf;
    const char *path;    /* borrowed */
    const char *datarep; /* of data views: "external32", or "native" with blocks swapped in place */
    int swaps;           /* datarep is native: ckpt swaps blocks to big-endian around transfers */
    int staged;          /* (with swaps) the blocks go from ckpt's staging buffer, packed big-endian in the
                          * checksum's pass (write.c): the user's buffers are only read */
} ferry__ckpt_file_t;

/* One MPI-IO implementation: ferry's or the host's (io.c). converts: its
 * external32 view converts typed memory to big-endian while it packs (ferry),
 * so no pass over the user's blocks is needed; otherwise (the host: MPICH's
 * ROMIO corrupts its heap on external32 with derived memory types) ckpt
 * swaps the blocks in place before the write and back after. */
typedef struct ferry__ckpt_io {
    const char *name;
    int converts;
    int agrees; /* its collective calls fail on every rank or on none (ferry's end in one agreement) */
    /* its writes may report success for bytes a full device refused, and its sync may hang after a
     * failed write (Open MPI 4.1.4's OMPIO, durable.c): ckpt reserves space first and syncs by path */
    int untrusted;
    int (*open)(MPI_Comm comm, const char *path, int amode, MPI_Info info, ferry__ckpt_file_t *f);
    int (*close)(ferry__ckpt_file_t *f);
    int (*set_view)(ferry__ckpt_file_t *f, MPI_Datatype filetype, const char *datarep);
    /* Transfers fill *st: ferry__ckpt_io_transfer* compare its count with what was asked. */
    int (*write)(ferry__ckpt_file_t *f, const void *buf, int count, MPI_Datatype type, MPI_Status *st);
    int (*write_all)(ferry__ckpt_file_t *f, const void *buf, int count, MPI_Datatype type, MPI_Status *st);
    int (*read)(ferry__ckpt_file_t *f, void *buf, int count, MPI_Datatype type, MPI_Status *st);
    int (*read_all)(ferry__ckpt_file_t *f, void *buf, int count, MPI_Datatype type, MPI_Status *st);
    int (*write_at)(ferry__ckpt_file_t *f, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
                    MPI_Status *st);
    int (*write_at_all)(ferry__ckpt_file_t *f, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
                        MPI_Status *st);
    int (*read_at)(ferry__ckpt_file_t *f, MPI_Offset off, void *buf, int count, MPI_Datatype type, MPI_Status *st);
    int (*read_at_all)(ferry__ckpt_file_t *f, MPI_Offset off, void *buf, int count, MPI_Datatype type, MPI_Status *st);
    int (*set_size)(ferry__ckpt_file_t *f, MPI_Offset size);
    int (*get_size)(ferry__ckpt_file_t *f, MPI_Offset *size);
    int (*sync)(ferry__ckpt_file_t *f);
} ferry__ckpt_io_t;

const ferry__ckpt_io_t *ferry__ckpt_io_get(int which);
/* Collective: opens path with the backend; 0 or an error class with message. */
int ferry__ckpt_file_open(const ferry__ckpt_io_t *io, MPI_Comm comm, const char *path, int amode, MPI_Info info,
                          ferry__ckpt_file_t *f);
/* Collective: closes f (no-op when not open). */
int ferry__ckpt_file_close(ferry__ckpt_file_t *f);
/* rc from a backend call: 0, or records "ferry_ckpt: <op> on <path> (<io>): <why>" and returns the class. */
int ferry__ckpt_io_check(const ferry__ckpt_file_t *f, int rc, const char *op);
/* How a transfer goes: bits of FERRY__CKPT_WRITE (else read) and FERRY__CKPT_COLLECTIVE (else independent). */
enum { FERRY__CKPT_WRITE = 1, FERRY__CKPT_COLLECTIVE = 2 };
/* Collective: ferry__ckpt_io_check of a collective call, agreed over comm when the backend does not agree itself. */
int ferry__ckpt_io_collective(MPI_Comm comm, const ferry__ckpt_file_t *f, int rc, const char *op);
/* A transfer through the current view: 0 only when the backend returned MPI_SUCCESS and its
 * status counts every byte asked for (Open MPI's OMPIO returns MPI_SUCCESS with a count of 0 on
 * the rank whose write hit ENOSPC); a short transfer is MPI_ERR_NO_SPACE (write) or MPI_ERR_IO. */
int ferry__ckpt_io_transfer(ferry__ckpt_file_t *f, int how, void *buf, int count, MPI_Datatype type);
/* An explicit-offset transfer (byte offsets under the default view). */
int ferry__ckpt_io_transfer_at(ferry__ckpt_file_t *f, int how, MPI_Offset off, void *buf, int count, MPI_Datatype type);

typedef struct ferry__ckpt_var {
    char *name, *mask;  /* owned; mask may be NULL */
    ferry__ckpt_nc_atts_t atts; /* the user's attributes (ferry_ckpt_put_att, units), owned */
    MPI_Datatype type;
    int nctype, esize, ndims;
    int dimids[FERRY__CKPT_D];
    MPI_Offset global[FERRY__CKPT_D], start[FERRY__CKPT_D], count[FERRY__CKPT_D], mem[FERRY__CKPT_D];
    int halo[FERRY__CKPT_D];
    MPI_Offset *blocks;  /* [nprocs][2 * FERRY__CKPT_D]: every rank's start then count, 4-D; owned */
    MPI_Offset *offsets; /* [nprocs + 1]: element offset of each rank's block in the stacked variable; owned */
} ferry__ckpt_var_t;

typedef struct ferry__ckpt_dim {
    char *name;
    MPI_Offset len;
} ferry__ckpt_dim_t;

struct ferry_ckpt {
    MPI_Comm comm; /* duplicate, owned */
    int rank, nprocs;
    char *base;
    int strategy, independent, format, io_kind, keep;
    MPI_Offset align;
    MPI_Info info; /* duplicate or MPI_INFO_NULL, owned */
    ferry__ckpt_dim_t *dims;
    int ndims;
    ferry__ckpt_var_t *vars;
    int nvars;
    ferry__ckpt_nc_atts_t gatts; /* the user's global attributes, owned */
    int series;               /* every write appends a record to <base>.nc (series.c) */
    ferry__ckpt_nc_atts_t time_atts; /* a series' time variable's attributes, owned */
    long long mem_now, mem_peak;
    int shared; /* every variable's blocks[] and offsets[] hold every rank's block (defs.c) */
    /* Steer and stack writes pack every block big-endian into one buffer while they sum it (one pass
     * over the data; a native view, which ferry's collective path can aggregate) when the largest
     * rank's blocks take at most stage_limit bytes (hint ferry_ckpt_stage_limit); gather's rank 0
     * assembles its global arrays in the same buffer when the largest takes at most stage_limit
     * bytes. The buffer is kept from one write to the next (no allocation and page faults per step,
     * whatever the allocator did with freed memory in between), freed with the set. */
    MPI_Offset stage_limit;
    unsigned char *stage;
    size_t stage_cap;
    struct ferry__ckpt_kept *kept; /* owned; NULL until a steer or stack write */
    struct ferry__ckpt_levels *levels; /* multi-level checkpoints (levels.c); NULL: off */
    long long defs_version;            /* counts definition changes (a drain's shadow set follows them) */
    /* FERRY_CKPT_AUTO: strategy is the choice for the current definitions (ferry__ckpt_defs_changed) */
    int automatic, one_node;
    long long auto_limit;
};

/* memory.c: allocation that counts what the module holds (ferry_ckpt_peak_memory). */
void *ferry__ckpt_alloc(ferry_ckpt_t ck, size_t size);
void ferry__ckpt_release(ferry_ckpt_t ck, void *p, size_t size);
/* The set's kept buffer (ck->stage), grown to at least need bytes; NULL when out of memory (the
 * buffer is then gone). Freed with the set. */
unsigned char *ferry__ckpt_kept_buffer(ferry_ckpt_t ck, size_t need);

/* blocks.c: element counts and datatypes of blocks. */
MPI_Offset ferry__ckpt_elems(const MPI_Offset count[FERRY__CKPT_D]);
/* A C-order subarray of old (sizes, subsizes, starts in 4-D); MPI_ERR_COUNT beyond int. */
int ferry__ckpt_subarray(const MPI_Offset sizes[FERRY__CKPT_D], const MPI_Offset sub[FERRY__CKPT_D],
                         const MPI_Offset starts[FERRY__CKPT_D], MPI_Datatype old, MPI_Datatype *type);
/* n contiguous elements of old; MPI_ERR_COUNT beyond int. */
int ferry__ckpt_contiguous(MPI_Offset n, MPI_Datatype old, MPI_Datatype *type);
/* The memory type of the part (start relative to the rank's block) of v's local buffer. */
int ferry__ckpt_memtype(const ferry__ckpt_var_t *v, const MPI_Offset part_start[FERRY__CKPT_D],
                        const MPI_Offset part_count[FERRY__CKPT_D], MPI_Datatype *type);
/* The file bytes of one element of v. Owned by the caller. */
int ferry__ckpt_elem_bytes(const ferry__ckpt_var_t *v, MPI_Datatype *type);

/* walk.c: passes over a rank's block in its local buffer. */
typedef enum { FERRY__CKPT_SUM, FERRY__CKPT_SUM_SWAP, FERRY__CKPT_SWAP, FERRY__CKPT_ZERO } ferry__ckpt_pass_t;
typedef struct ferry__ckpt_block {
    unsigned char *base; /* the block's first element */
    int esize;
    MPI_Offset count[FERRY__CKPT_D];
    MPI_Offset mem_stride[FERRY__CKPT_D];  /* elements */
    MPI_Offset file_stride[FERRY__CKPT_D]; /* elements; the last is 1 */
    MPI_Offset file_first;          /* element index of the block's first element in the file variable */
} ferry__ckpt_block_t;
/* The rank's block of v in buf, indexed as in a file of the given strategy. */
ferry__ckpt_block_t ferry__ckpt_block_of(const ferry_ckpt_t ck, const ferry__ckpt_var_t *v, void *buf, int strategy);
/* Applies pass to every element; returns the checksum for FERRY__CKPT_SUM and FERRY__CKPT_SUM_SWAP. */
uint64_t ferry__ckpt_walk(const ferry__ckpt_block_t *b, ferry__ckpt_pass_t pass);
/* The checksum of the block (as FERRY__CKPT_SUM), its elements copied big-endian into out in C order. */
uint64_t ferry__ckpt_walk_pack(const ferry__ckpt_block_t *b, unsigned char *out);
/* Sets every element of the block to value (esize bytes, native). */
void ferry__ckpt_walk_fill(const ferry__ckpt_block_t *b, const unsigned char *value);

/* plan.c: one view and one transfer for many variables. */
typedef struct ferry__ckpt_piece {
    MPI_Aint disp;      /* file byte of the filetype's origin */
    MPI_Datatype ftype; /* owned */
    void *addr;         /* memory origin */
    MPI_Datatype mtype; /* owned */
} ferry__ckpt_piece_t;
typedef struct ferry__ckpt_plan {
    ferry__ckpt_piece_t *pieces;
    int count, cap;
} ferry__ckpt_plan_t;
int ferry__ckpt_plan_add(ferry_ckpt_t ck, ferry__ckpt_plan_t *plan, const ferry__ckpt_piece_t *piece);
/* Collective: sets the view of every piece and transfers them in one call. */
int ferry__ckpt_plan_run(ferry__ckpt_file_t *f, ferry__ckpt_plan_t *plan, int how);
/* The plan's pieces sorted, combined into one struct filetype and one memory type (committed, the caller's). */
int ferry__ckpt_plan_types(ferry__ckpt_plan_t *plan, MPI_Datatype *ftype, MPI_Datatype *mtype);
/* Collective: one view of ftype (MPI_DATATYPE_NULL: nothing of this rank's) and one transfer of mtype. */
int ferry__ckpt_plan_move(ferry__ckpt_file_t *f, MPI_Datatype ftype, MPI_Datatype mtype, int how);
/* The combined types of the last steer or stack write, kept for the next one (write.c): ferry decodes
 * a datatype once and keeps the result with its handle, and nothing is rebuilt. Valid while the
 * definitions, the variables' file offsets and the memory the blocks come from (the staging buffer
 * or the user's buffers) stay the same; begin and addr ([nvars] each, owned) are that key. */
typedef struct ferry__ckpt_kept {
    int valid, staged;
    MPI_Datatype ftype, mtype; /* MPI_DATATYPE_NULL: this rank writes nothing */
    MPI_Offset *begin;
    void **addr;
} ferry__ckpt_kept_t;
void ferry__ckpt_kept_free(ferry__ckpt_kept_t *k);
void ferry__ckpt_plan_free(ferry_ckpt_t ck, ferry__ckpt_plan_t *plan);

/* layout.c: the file a write produces. */
typedef struct ferry__ckpt_layout {
    ferry__ckpt_nc_t nc;
    unsigned char *region; /* header and index variables, up to the first data variable; owned */
    MPI_Offset region_len, total;
    MPI_Offset *begin;  /* [nvars] file offset of each declared variable's data (record 0 in a series); owned */
    MPI_Offset recsize; /* a series file's bytes per record */
} ferry__ckpt_layout_t;
/* Rank 0's or everyone's: the header for one step with checksums sums[nvars]. */
int ferry__ckpt_layout_build(ferry_ckpt_t ck, const uint64_t *sums, long long step, double time,
                             ferry__ckpt_layout_t *layout);
void ferry__ckpt_layout_free(ferry_ckpt_t ck, ferry__ckpt_layout_t *layout);
/* nc.c: encoding (the decoder is in ckpt.h). */
typedef struct ferry__ckpt_bytes {
    unsigned char *p;
    size_t len, cap;
    int failed;
} ferry__ckpt_bytes_t;
int ferry__ckpt_nc_encode(const ferry__ckpt_nc_t *nc, ferry__ckpt_bytes_t *out);
void ferry__ckpt_bytes_put_be(ferry__ckpt_bytes_t *b, uint64_t v, int size);
void ferry__ckpt_bytes_put(ferry__ckpt_bytes_t *b, const void *p, size_t n);
int ferry__ckpt_nc_add_att(ferry__ckpt_nc_atts_t *atts, const char *name, int type, int64_t n, const void *native);
/* The same with values big-endian already. */
int ferry__ckpt_nc_add_att_be(ferry__ckpt_nc_atts_t *atts, const char *name, int type, int64_t n, const void *be);
void ferry__ckpt_nc_free_atts(ferry__ckpt_nc_atts_t *atts);
/* atts.c: appends copies of from's attributes to to. */
int ferry__ckpt_copy_atts(const ferry__ckpt_nc_atts_t *from, ferry__ckpt_nc_atts_t *to);
/* The big-endian bytes of v's _FillValue, or NULL. */
const unsigned char *ferry__ckpt_var_fill(const ferry__ckpt_var_t *v);
int ferry__ckpt_nc_nctype(MPI_Datatype type);

/* fill.c: the points of steered variables with a _FillValue that no block covers (holes). */
typedef struct ferry__ckpt_gaps {
    MPI_Offset *seg; /* [n][2]: element index and length of each run of holes in this rank's rows; owned */
    int n, cap;
    MPI_Offset longest;
} ferry__ckpt_gaps_t;
typedef struct ferry__ckpt_holes {
    ferry__ckpt_gaps_t *vars; /* [nvars]; owned */
    int any;           /* some variable has holes to fill (the same on every rank) */
} ferry__ckpt_holes_t;
/* Local: this rank's share of the holes; adds their fill values' checksums to sums[nvars]. */
int ferry__ckpt_holes_find(ferry_ckpt_t ck, ferry__ckpt_holes_t *h, uint64_t *sums);
/* Collective (when h->any): writes the fill values (begin[i]: where variable i's data begin). */
int ferry__ckpt_holes_write(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const MPI_Offset *begin,
                            const ferry__ckpt_holes_t *h);
void ferry__ckpt_holes_free(ferry_ckpt_t ck, ferry__ckpt_holes_t *h);
/* Local: v's fill value in native order into out (8 bytes); 0 when it has none. */
int ferry__ckpt_var_fill_native(const ferry__ckpt_var_t *v, unsigned char out[8]);

/* write.c, read.c */
/* The piece of v's block in an image file (steer, gather) whose data begin at begin. */
int ferry__ckpt_image_piece(const ferry__ckpt_var_t *v, void *buf, MPI_Offset begin, ferry__ckpt_piece_t *p);
int ferry__ckpt_write_data(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_layout_t *layout,
                           void *const *bufs);
/* Every block's checksum, swapping the blocks to big-endian on the way when swap. */
int ferry__ckpt_checksums(ferry_ckpt_t ck, void *const *bufs, uint64_t *sums, int swap);
/* Whether this write stages (steer, stack; every rank's blocks within the limit): the same on every
 * rank, from the shared blocks. */
int ferry__ckpt_stage_fits(ferry_ckpt_t ck);
/* Every block's checksum, packing it big-endian into ck->stage in the same pass (variable after
 * variable, each block in C order). */
int ferry__ckpt_stage_blocks(ferry_ckpt_t ck, void *const *bufs, uint64_t *sums);
/* gather.c: rank 0 reads v whole and sends every rank its block (collective). */
int ferry__ckpt_scatter_read(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_var_t *v, void *buf,
                             MPI_Offset begin);
int ferry__ckpt_gather_write(ferry_ckpt_t ck, ferry__ckpt_file_t *f, ferry__ckpt_layout_t *layout, void *const *bufs,
                             uint64_t *sums);
int ferry__ckpt_read_data(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc,
                          const unsigned char *region, size_t region_len, void *const *bufs);
/* read.c, local: 0 when nc holds every declared variable with its type and global shape; else
 * MPI_ERR_ARG (missing), MPI_ERR_TYPE or MPI_ERR_DIMS naming the variable and path. */
int ferry__ckpt_match_decls(ferry_ckpt_t ck, const ferry__ckpt_nc_t *nc, const char *path);
/* verify.c. Collective: the checksums of the variables which[0, n) of nc, their data (one record's,
 * for record variables) at begin + shift, summed over ranks into total[n]; each rank reads a slice. */
typedef struct ferry__ckpt_sum_req {
    const int *which;
    int n;
    MPI_Offset shift;
} ferry__ckpt_sum_req_t;
int ferry__ckpt_sum_vars(MPI_Comm comm, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc,
                         const ferry__ckpt_sum_req_t *req, uint64_t *total);
/* verify.c: collective; 0 when every checksum matches. */
int ferry__ckpt_verify_file(MPI_Comm comm, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc);

/* defs.c: the first step of every collective call of a set. Collective: agrees on every rank's
 * local_cls (a bad argument) and on a hash of the definitions and of call (a line naming the call
 * and its step or file); differing definitions are MPI_ERR_NOT_SAME naming the first difference on
 * every rank; after new definitions every rank's blocks are shared (blocks[], offsets[]). */
int ferry__ckpt_defs_agree(ferry_ckpt_t ck, int local_cls, const char *what, const char *call);
/* Local: MPI_ERR_ARG when this rank's block of a variable overlaps another rank's (before a write). */
int ferry__ckpt_check_overlaps(ferry_ckpt_t ck, const char *what);
/* vars.c, local: 0 when name is a valid netCDF name not yet used by a variable (is_var) or
 * dimension of the set nor by the stacked layout's own; MPI_ERR_ARG naming what otherwise. */
int ferry__ckpt_check_new_name(ferry_ckpt_t ck, const char *what, const char *name, int is_var);
/* Local: definitions changed (def_dim, def_var): the next collective call shares the blocks again. */
void ferry__ckpt_defs_changed(ferry_ckpt_t ck);

/* durable.c. Rank 0: fsync of path's directory (0 or -1 with errno). */
int ferry__ckpt_sync_directory(const char *path);
/* Collective: rank 0 reserves bytes for path (fallocate); *reserved 0 where the file system cannot
 * (the caller verifies the file instead); MPI_ERR_NO_SPACE when the device is full. */
int ferry__ckpt_reserve(ferry_ckpt_t ck, const char *path, MPI_Offset bytes, int *reserved);
/* Collective: every rank fsyncs path (closed), agreed. */
int ferry__ckpt_sync_path(ferry_ckpt_t ck, const char *path);

/* txn.c. One write in progress: its layout, checksums ([nvars + 1] each, owned), holes to fill, and
 * for a series the record it writes. */
typedef struct ferry__ckpt_txn {
    ferry__ckpt_layout_t layout;
    uint64_t *sums, *total;
    ferry__ckpt_holes_t holes;
    long long step;
    double time;
    long long record;     /* series: the record written; -1: a file of its own */
    MPI_Offset record_at; /* series: the record's first byte */
} ferry__ckpt_txn_t;
/* Collective: writes the checkpoint into file (a new one; a series file's record t->record),
 * synced; the user's buffers restored. */
int ferry__ckpt_txn_write(ferry_ckpt_t ck, const char *file, ferry__ckpt_txn_t *t, void *const *bufs);
/* steps.c, rank 0: the steps of the set's "<base>.<digits><suffix>" files (suffix ".nc": its
 * checkpoints, ".nc.tmp": temporary files), newest first, in *steps (owned, ferry__free); returns
 * how many, or -1 without memory. */
int ferry__ckpt_list_steps(const char *base, const char *suffix, long long **steps);
/* steps.c: rank 0, after step was committed: removes the set's steps above it (an earlier
 * series), all but the newest K of the others (never step itself) and the temporary files failed
 * writes left. */
void ferry__ckpt_prune(ferry_ckpt_t ck, long long step);

/* api.c, local: "<base>.<step, 12 digits>.nc" into path; MPI_ERR_ARG for a negative step or a short buffer. */
int ferry__ckpt_step_path(ferry_ckpt_t ck, long long step, char *path, size_t len);

/* series.c (a series set: every step a record of one file, "<base>.nc"). Collective, after the
 * definitions are agreed: appends step (a lower one starts the series again). */
int ferry__ckpt_series_write(ferry_ckpt_t ck, long long step, double time, void *const *bufs);
/* The record variables of a series file, in file order (the data variables follow). */
enum { FERRY__CKPT_REC_TIME, FERRY__CKPT_REC_STEP, FERRY__CKPT_REC_SUMS, FERRY__CKPT_REC_DATA };
/* nc_access.c: whether nc is a series file. */
int ferry__ckpt_nc_is_series(const ferry__ckpt_nc_t *nc);
/* verify.c, collective: the checksums of record of the open series file f (header nc), agreed. */
int ferry__ckpt_series_verify(MPI_Comm comm, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc, int64_t record);
/* verify.c, collective: ferry_ckpt_verify's check of path (record < 0), or the checksums of one
 * record of a series file (written, not yet counted), as an error class. */
int ferry__ckpt_verify_path(MPI_Comm comm, const char *path, long long record);
/* Collective: the newest record of the series file f whose checksums match, into bufs; info (may be
 * NULL) gets its step and time and counts the newer records skipped. */
int ferry__ckpt_series_read(ferry_ckpt_t ck, ferry__ckpt_file_t *f, ferry__ckpt_nc_t *nc, void *const *bufs,
                            ferry_ckpt_info_t *info);
/* read.c, collective: an image file's (or record's) data into bufs, as the set's strategy reads. */
int ferry__ckpt_read_image(ferry_ckpt_t ck, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc, void *const *bufs);

/* defs.c: FNV-1a 64 of n bytes. */
uint64_t ferry__ckpt_fnv1a(const unsigned char *p, size_t n);

/* Multi-level checkpoints (docs/checkpoint.md). Level 1: every rank's blocks, packed in native
 * order behind a small header (step, time, decomposition, checksums), in "<local_dir>/<name>.<step,
 * 12 digits>.r<rank>"; level 2: the same bytes on the partner rank (the same local index on the
 * next node) as "....r<rank>.partner"; level 3: the set's ordinary netCDF checkpoint, drained from
 * the level-1 copy (drain.c). */
typedef struct ferry__ckpt_levels {
    char *dir, *name;     /* the node-local directory ("%n" expanded) and the set's base name; owned */
    int partner, drain;   /* levels 2 and 3 asked for */
    int node, nodes;      /* this rank's node and how many nodes the set spans */
    int *holder;          /* [nprocs]: the rank keeping rank r's partner copy, or -1 (one node); owned */
    unsigned char *image; /* this rank's last level-1 image (header and data); owned */
    size_t image_len, image_cap;
    double time;          /* the time of the last image unpacked */
    struct ferry__ckpt_drain *drain_state; /* drain.c; NULL until the first drain */
} ferry__ckpt_levels_t;
/* levels.c. Collective (ferry_ckpt_create): the node map and the directory; 0 or an error class. */
int ferry__ckpt_levels_setup(ferry_ckpt_t ck, const ferry_ckpt_options_t *opt);
/* Collective, for FERRY_CKPT_AUTO: ck->one_node, 1 when every rank of the set is on one node (the same on every rank). */
int ferry__ckpt_find_one_node(ferry_ckpt_t ck);
void ferry__ckpt_levels_free(ferry_ckpt_t ck);
/* Collective, after the definitions are agreed: writes step at level 1 (and 2), keeps the image
 * for the drain, prunes the node-local files. */
int ferry__ckpt_levels_write(ferry_ckpt_t ck, long long step, double time, void *const *bufs);
/* Local: this rank's newest level-1 or level-2 step below bound (own or held files), or -1. */
long long ferry__ckpt_levels_newest(ferry_ckpt_t ck, long long bound);
/* Collective: reads step from level 1, else level 2, into bufs; *level 1 or 2; MPI_ERR_NO_SUCH_FILE
 * (agreed) when neither level holds the step whole for this decomposition. */
int ferry__ckpt_levels_read(ferry_ckpt_t ck, long long step, void *const *bufs, int *level, ferry_ckpt_info_t *info);
/* levels_io.c: the image's parts. */
typedef struct ferry__ckpt_l1_head {
    char magic[8];
    uint32_t order, version;
    int64_t step;
    double time;
    int32_t nprocs, rank, nvars, strategy;
    uint64_t defs_hash; /* names, types, global shapes */
    int64_t data_bytes;
    uint64_t head_sum; /* FNV-1a of the header and variable records, this field 0 */
} ferry__ckpt_l1_head_t;
typedef struct ferry__ckpt_l1_var {
    int64_t start[FERRY__CKPT_D], count[FERRY__CKPT_D];
    uint64_t sum; /* the block's checksum (walk.c, the set's strategy) */
} ferry__ckpt_l1_var_t;
/* The image size of rank r's blocks. */
size_t ferry__ckpt_l1_size(ferry_ckpt_t ck, int r);
/* Local: packs this rank's blocks into ck->levels->image. */
int ferry__ckpt_l1_pack(ferry_ckpt_t ck, long long step, double time, void *const *bufs);
/* Local: 0 when image (len bytes) is rank r's image of step for this set's decomposition, and (r
 * this rank) unpacks it into bufs with its checksums verified; else MPI_ERR_IO with why. */
int ferry__ckpt_l1_unpack(ferry_ckpt_t ck, const unsigned char *image, size_t len, long long step, void *const *bufs);
/* Local: writes len bytes to path (through "<path>.tmp", fsync, rename); 0 or MPI_ERR_IO/NO_SPACE. */
int ferry__ckpt_l1_store(const char *path, const unsigned char *p, size_t len);
/* Local: reads path, exactly len bytes expected, into p; 0 or MPI_ERR_IO / MPI_ERR_NO_SUCH_FILE. */
int ferry__ckpt_l1_load(const char *path, unsigned char *p, size_t len);
/* The path of rank r's level-1 file of step (holder: its partner copy) into out. */
int ferry__ckpt_l1_path(ferry_ckpt_t ck, long long step, int r, int partner_copy, char *out, size_t len);
/* drain.c. Collective: starts draining the image to level 3 (a thread at MPI_THREAD_MULTIPLE,
 * else at the next ferry_ckpt_drain_wait or write). */
int ferry__ckpt_drain_start(ferry_ckpt_t ck, long long step, double time);
/* Collective: waits for (or runs) the pending drain; its outcome, or 0 when none. */
int ferry__ckpt_drain_finish(ferry_ckpt_t ck);
/* Local (ferry_ckpt_free): joins a drain thread, drops a pending drain with a message. */
void ferry__ckpt_drain_free(ferry_ckpt_t ck);

/* Local hex form of a checksum (16 digits and NUL). */
void ferry__ckpt_hex(uint64_t sum, char out[17]);

#endif

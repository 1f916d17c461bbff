/*
 * Reading a checkpoint's header and checking its data against the
 * checksums in it, in parallel: each rank reads a contiguous slice of
 * every variable (whatever wrote the file) in pieces of at most 4 MiB and
 * sums it; one reduction gives each variable's checksum.
 */
#include <stdio.h>
#include <string.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"
#include "progress/progress.h"

enum { SLICE_PIECE = 4 << 20, FIRST_READ = 64 << 10 };

void ferry__ckpt_region_free(unsigned char *region)
{
    ferry__free(region);
}

/* Rank 0: reads a growing prefix until the header decodes, then the region up to the first data variable. */
static int root_read_header(ferry__ckpt_file_t *f, unsigned char **region, size_t *len)
{
    MPI_Offset size = 0, want = FIRST_READ;
    FERRY_TRY(ferry__ckpt_io_check(f, f->io->get_size(f, &size), "get_size"));
    for (;;) {
        size_t n = (size_t)(want < size ? want : size);
        unsigned char *p = ferry__realloc(*region, n + 1);
        if (!p) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for the header of %s", f->path);
        *region = p;
        FERRY_TRY(ferry__ckpt_io_transfer_at(f, 0, 0, p, (int)n, MPI_BYTE));
        ferry__ckpt_nc_t nc;
        size_t used;
        int cls = ferry__ckpt_nc_decode(p, n, &nc, &used);
        if (cls == MPI_ERR_TRUNCATE && (MPI_Offset)n < size && want < ((MPI_Offset)1 << 30)) {
            want *= 4;
            continue;
        }
        if (cls == MPI_ERR_TRUNCATE)
            return ferry__error_set(MPI_ERR_IO, "ferry_ckpt: %s is truncated inside its header (%lld bytes)", f->path,
                                    (long long)size);
        if (cls) {
            char why[300];
            snprintf(why, sizeof why, "%s", ferry__error_message());
            return ferry__error_set(cls, "%s (%s)", why, f->path);
        }
        /* The region ends where the first data variable begins (a series: the first record). */
        int64_t end = ferry__ckpt_header_covered(&nc, INT64_MAX);
        for (int i = 0; end == INT64_MAX && ferry__ckpt_nc_is_series(&nc) && i < nc.nvars; i++)
            if (nc.vars[i].begin < end || i == 0) end = nc.vars[i].begin;
        ferry__ckpt_nc_free(&nc);
        *len = end < (int64_t)n ? (size_t)end : n; /* the bytes beyond are data, not the region */
        if (end <= (int64_t)n || (MPI_Offset)n >= size || end > (int64_t)1 << 30) return 0;
        want = end;
    }
}

/* Collective: rank 0's header bytes (*region, *len) on every rank; agreed. */
static int share_region(MPI_Comm comm, int rank, const char *path, unsigned char **region, unsigned long long *len)
{
    const char *what = "ferry_ckpt: reading the header", *op = "ferry_ckpt: sharing the header of";
    int rc = ferry__progress_bcast(len, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
    int cls = ferry__error_host(rc, op, path, "MPI_Bcast");
    if (!cls && rank != 0 && !(*region = ferry__malloc((size_t)*len + 1)))
        cls = ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for the header of %s", path);
    FERRY_TRY(ferry__error_agree(comm, cls, what));
    rc = ferry__progress_bcast(*region, (int)*len, MPI_BYTE, 0, comm);
    return ferry__error_agree(comm, ferry__error_host(rc, op, path, "MPI_Bcast"), what);
}

int ferry__ckpt_read_header(MPI_Comm comm, const char *path, int io, ferry__ckpt_nc_t *nc, unsigned char **region,
                            size_t *region_len)
{
    ferry__ckpt_file_t f;
    int rank, cls = ferry__ckpt_file_open(ferry__ckpt_io_get(io), comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    unsigned long long len = 0;
    MPI_Comm_rank(comm, &rank);
    *region = NULL;
    if (!cls && rank == 0) {
        size_t n = 0;
        cls = root_read_header(&f, region, &n);
        len = n;
    }
    int close_cls = ferry__ckpt_file_close(&f);
    cls = ferry__error_agree(comm, cls ? cls : close_cls, "ferry_ckpt: reading the header");
    if (!cls) cls = share_region(comm, rank, path, region, &len);
    size_t used;
    if (!cls) cls = ferry__ckpt_nc_decode(*region, (size_t)len, nc, &used);
    if (!cls && (cls = ferry__ckpt_header_check(nc, *region, (size_t)len, (int64_t)used, path)) != 0)
        ferry__ckpt_nc_free(nc);
    if (cls) {
        ferry__ckpt_region_free(*region);
        *region = NULL;
        return cls;
    }
    *region_len = (size_t)len;
    return 0;
}

/* Sums of this rank's slice of each variable the request names: [req->n]. */
static int slice_sums(MPI_Comm comm, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc,
                      const ferry__ckpt_sum_req_t *req, uint64_t *sums, unsigned char *piece)
{
    int rank, nprocs, cls = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nprocs);
    for (int j = 0; j < req->n && !cls; j++) {
        const ferry__ckpt_nc_var_t *v = &nc->vars[req->which[j]];
        int esize = ferry__ckpt_nc_type_size(v->type);
        int64_t n = ferry__ckpt_nc_var_bytes(nc, v) / esize, lo = n * rank / nprocs, hi = n * (rank + 1) / nprocs;
        int64_t per = SLICE_PIECE / esize, rounds = ((n + nprocs - 1) / nprocs + per - 1) / per;
        sums[j] = 0;
        for (int64_t k = 0; k < rounds && !cls; k++) {
            int64_t from = lo + k * per, m = from < hi ? (hi - from < per ? hi - from : per) : 0;
            cls = ferry__ckpt_io_transfer_at(f, FERRY__CKPT_COLLECTIVE, v->begin + req->shift + from * esize, piece,
                                             (int)(m * esize), MPI_BYTE);
            sums[j] += ferry__ckpt_checksum_be(piece, m, esize, from);
        }
    }
    return cls;
}

int ferry__ckpt_sum_vars(MPI_Comm comm, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc,
                         const ferry__ckpt_sum_req_t *req, uint64_t *total)
{
    uint64_t *sums = ferry__calloc((size_t)req->n + 1, sizeof *sums);
    unsigned char *piece = ferry__malloc(SLICE_PIECE);
    int cls = !sums || !piece ? ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory to verify %s", f->path) : 0;
    cls = ferry__error_agree(comm, cls, "ferry_ckpt verify");
    if (!cls) cls = ferry__error_agree(comm, slice_sums(comm, f, nc, req, sums, piece), "ferry_ckpt verify");
    int rc = cls || !req->n ? MPI_SUCCESS : ferry__progress_allreduce(sums, total, req->n, MPI_UINT64_T, MPI_SUM, comm);
    if (!cls && rc != MPI_SUCCESS)
        cls = ferry__error_agree(comm, ferry__error_host(rc, "ferry_ckpt verify", f->path, "MPI_Allreduce"),
                                 "ferry_ckpt verify");
    ferry__free(sums);
    ferry__free(piece);
    return cls;
}

/* Compares the summed checksums of the variables which[n] with their attributes. */
static int compare_sums(const ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc, const int *which, int n,
                        const uint64_t *sums)
{
    for (int j = 0; j < n; j++) {
        char stored[40], computed[17];
        ferry__ckpt_nc_att_text(&nc->vars[which[j]].atts, "ferry_checksum", stored, sizeof stored);
        ferry__ckpt_hex(sums[j], computed);
        if (strcmp(stored, computed) != 0)
            return ferry__error_set(MPI_ERR_IO,
                                    "ferry_ckpt: %s: variable %s fails its checksum (stored %s, data give %s)", f->path,
                                    nc->vars[which[j]].name, stored, computed);
    }
    return 0;
}

/* Whether the file holds every variable's data (every record's, for record variables). */
static int check_size(ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc)
{
    MPI_Offset size = 0, need = 0;
    int64_t recsize = ferry__ckpt_nc_recsize(nc);
    FERRY_TRY(ferry__ckpt_io_check(f, f->io->get_size(f, &size), "get_size"));
    for (int i = 0; i < nc->nvars; i++) {
        const ferry__ckpt_nc_var_t *v = &nc->vars[i];
        int record = ferry__ckpt_nc_is_record(nc, v);
        if (record && nc->numrecs == 0) continue;
        int64_t end = v->begin + (record ? (nc->numrecs - 1) * recsize : 0) + ferry__ckpt_nc_var_bytes(nc, v);
        if (end > need) need = end;
    }
    if (size < need)
        return ferry__error_set(MPI_ERR_IO, "ferry_ckpt: %s is incomplete: %lld bytes, its header needs %lld", f->path,
                                (long long)size, (long long)need);
    return 0;
}

int ferry__ckpt_verify_file(MPI_Comm comm, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc)
{
    FERRY_TRY(check_size(f, nc));
    int *which = ferry__malloc((size_t)nc->nvars * sizeof *which + 1), n = 0;
    uint64_t *total = ferry__calloc((size_t)nc->nvars + 1, sizeof *total);
    int cls = ferry__error_agree(
        comm, which && total ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory to verify %s", f->path),
        "ferry_ckpt verify");
    for (int i = 0; !cls && i < nc->nvars; i++)
        if (ferry__ckpt_nc_att(&nc->vars[i].atts, "ferry_checksum")) which[n++] = i;
    ferry__ckpt_sum_req_t req = {which, n, 0};
    if (!cls) cls = ferry__ckpt_sum_vars(comm, f, nc, &req, total);
    if (!cls) cls = compare_sums(f, nc, which, n, total);
    ferry__free(which);
    ferry__free(total);
    return cls;
}

/* --- the header checksum (ckpt.h) ---------------------------------------- */

int64_t ferry__ckpt_header_covered(const ferry__ckpt_nc_t *nc, int64_t used)
{
    int64_t end = INT64_MAX;
    for (int i = 0; i < nc->nvars; i++)
        if (ferry__ckpt_nc_att(&nc->vars[i].atts, "ferry_checksum") && nc->vars[i].begin < end) end = nc->vars[i].begin;
    return end == INT64_MAX ? used : end;
}

/* The attribute's 16 characters in region, or NULL when it has none of that form inside the covered bytes. */
static unsigned char *header_sum_value(const ferry__ckpt_nc_t *nc, unsigned char *region, int64_t covered)
{
    const ferry__ckpt_nc_att_t *a = ferry__ckpt_nc_att(&nc->gatts, FERRY__CKPT_HEADER_CHECKSUM);
    if (!a || a->type != NC_CHAR || a->nelems != 16 || a->at < 0 || a->at + 16 > covered) return NULL;
    return region + a->at;
}

/* The sum of region[0, covered) with the value read as 16 '0's and numrecs as zeros (a series
 * file's record count changes as records are added; nothing else in its header does). */
static void header_sum(const ferry__ckpt_nc_t *nc, unsigned char *value, unsigned char *region, int64_t covered,
                       char hex[17])
{
    unsigned char saved[16], records[8];
    size_t nsize = nc->version == 5 ? 8 : 4;
    memcpy(saved, value, sizeof saved);
    memset(value, '0', sizeof saved);
    memcpy(records, region + 4, nsize);
    memset(region + 4, 0, nsize);
    ferry__ckpt_hex(ferry__ckpt_checksum_be(region, covered, 1, 0), hex);
    memcpy(value, saved, sizeof saved);
    memcpy(region + 4, records, nsize);
}

void ferry__ckpt_header_seal(const ferry__ckpt_nc_t *nc, unsigned char *region, int64_t covered)
{
    unsigned char *value = header_sum_value(nc, region, covered);
    char hex[17];
    if (!value) return;
    header_sum(nc, value, region, covered, hex);
    memcpy(value, hex, 16);
}

int ferry__ckpt_nc_sealed(const ferry__ckpt_nc_t *nc)
{
    return ferry__ckpt_nc_att(&nc->gatts, FERRY__CKPT_HEADER_CHECKSUM) != NULL;
}

/* Whether a list holds an attribute whose name begins "ferry_" (the prefix is ferry's own). */
static int has_ferry_att(const ferry__ckpt_nc_atts_t *atts)
{
    for (int i = 0; i < atts->count; i++)
        if (atts->atts[i].name && strncmp(atts->atts[i].name, "ferry_", 6) == 0) return 1;
    return 0;
}

int ferry__ckpt_header_check(const ferry__ckpt_nc_t *nc, unsigned char *region, size_t len, int64_t used,
                             const char *path)
{
    int ferrys = has_ferry_att(&nc->gatts);
    for (int i = 0; i < nc->nvars && !ferrys; i++) ferrys = has_ferry_att(&nc->vars[i].atts);
    if (!ferry__ckpt_nc_sealed(nc) && ferrys)
        return ferry__error_set(MPI_ERR_IO,
                                "ferry_ckpt: %s carries ferry's attributes but no %s: its header is damaged "
                                "(or it was written before ferry sealed headers, 2026-11-26)",
                                path, FERRY__CKPT_HEADER_CHECKSUM);
    if (!ferry__ckpt_nc_sealed(nc)) return 0;
    int64_t covered = ferry__ckpt_header_covered(nc, used);
    unsigned char *value = covered <= (int64_t)len ? header_sum_value(nc, region, covered) : NULL;
    char hex[17];
    if (value) header_sum(nc, value, region, covered, hex);
    if (value && memcmp(value, hex, 16) == 0) return 0;
    return ferry__error_set(
        MPI_ERR_IO, "ferry_ckpt: %s fails its header checksum: the header or the index variables are corrupt", path);
}

int ferry__ckpt_series_verify(MPI_Comm comm, ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc, int64_t record)
{
    int n = nc->nvars - FERRY__CKPT_REC_DATA, *which = ferry__malloc((size_t)n * sizeof *which + 1);
    uint64_t *total = ferry__calloc((size_t)n + 1, sizeof *total);
    char *stored = ferry__malloc((size_t)n * 16 + 1), computed[17];
    int cls = ferry__error_agree(
        comm, which && total && stored ? 0 : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory"),
        "ferry_ckpt verify");
    MPI_Offset shift = record * ferry__ckpt_nc_recsize(nc);
    for (int j = 0; !cls && j < n; j++) which[j] = FERRY__CKPT_REC_DATA + j;
    ferry__ckpt_sum_req_t req = {which, n, shift};
    if (!cls) cls = ferry__ckpt_sum_vars(comm, f, nc, &req, total);
    if (!cls)
        cls = ferry__error_agree(comm,
                                 ferry__ckpt_io_transfer_at(f, FERRY__CKPT_COLLECTIVE,
                                                            nc->vars[FERRY__CKPT_REC_SUMS].begin + shift, stored,
                                                            16 * n, MPI_BYTE),
                                 "ferry_ckpt verify");
    for (int j = 0; !cls && j < n; j++) {
        ferry__ckpt_hex(total[j], computed);
        if (memcmp(stored + 16 * j, computed, 16) != 0)
            cls = ferry__error_set(
                MPI_ERR_IO,
                "ferry_ckpt: %s: record %lld of variable %s fails its checksum (stored %.16s, data give %s)", f->path,
                (long long)record, nc->vars[FERRY__CKPT_REC_DATA + j].name, stored + 16 * j, computed);
    }
    ferry__free(which), ferry__free(total), ferry__free(stored);
    return cls;
}

/* Collective: opens path through ferry and checks it: every checksum (record < 0; a series file: also
 * its every record) and that it is a ferry checkpoint, or the checksums of one record. */
int ferry__ckpt_verify_path(MPI_Comm comm, const char *path, long long record)
{
    ferry__ckpt_nc_t nc;
    unsigned char *region;
    size_t region_len;
    FERRY_TRY(ferry__ckpt_read_header(comm, path, FERRY_CKPT_IO_FERRY, &nc, &region, &region_len));
    ferry__ckpt_file_t f;
    int cls =
        ferry__ckpt_file_open(ferry__ckpt_io_get(FERRY_CKPT_IO_FERRY), comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &f);
    if (!cls && record >= 0) cls = ferry__ckpt_series_verify(comm, &f, &nc, record);
    if (!cls && record < 0) cls = ferry__ckpt_verify_file(comm, &f, &nc);
    for (int64_t r = 0; !cls && record < 0 && ferry__ckpt_nc_is_series(&nc) && r < nc.numrecs; r++)
        cls = ferry__ckpt_series_verify(comm, &f, &nc, r);
    int closed = ferry__ckpt_file_close(&f); /* a no-op when the open failed */
    cls = cls ? cls : closed;
    if (!cls && record < 0 && !ferry__ckpt_nc_sealed(&nc))
        cls = ferry__error_set(MPI_ERR_UNSUPPORTED_OPERATION,
                               "ferry_ckpt_verify: %s is a complete netCDF file, but "
                               "not a ferry checkpoint: it carries no checksums to verify",
                               path);
    ferry__ckpt_nc_free(&nc);
    ferry__ckpt_region_free(region);
    return cls;
}

int ferry_ckpt_verify(MPI_Comm comm, const char *path)
{
    if (comm == MPI_COMM_NULL)
        return ferry__error_code(ferry__error_set(MPI_ERR_COMM, "ferry_ckpt_verify: MPI_COMM_NULL"));
    int cls = ferry__error_agree(comm, path ? 0 : ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_verify: a NULL path"),
                                 "ferry_ckpt_verify");
    return ferry__error_code(cls ? cls : ferry__ckpt_verify_path(comm, path, -1));
}

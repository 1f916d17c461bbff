/*
 * A series (issue 30): with the option series, every ferry_ckpt_write appends
 * its step as one record of a single file "<base>.nc", along the record
 * (unlimited) dimension time, which xarray decodes as the time axis (with
 * units such as "days since 2000-01-01" on the time variable).
 *
 *   [header, numrecs = n][record 0: time, ferry_step, ferry_checksum, data...][record 1] ...
 *
 * A record is committed by one small write: numrecs, at byte 4 of the file
 * (inside its first sector), written and synced by rank 0 after the record's
 * data, time, step and checksums are written and synced beyond the records
 * counted. A failure or a kill before it leaves the file as it was (the
 * partial record lies past numrecs, and the file is cut back to its start);
 * nothing else in the header changes from record to record (the header
 * checksum reads numrecs as zeros). A step lower than or equal to a record's
 * starts the series again from there, as a lower step does in a set of
 * files: numrecs is first cut to the records below it (committed on its own),
 * then the new record is written. Restart takes the newest record whose
 * checksums match. Series files use the image layout (steer or gather).
 *
 * Calls go down only: commit.c calls the writing half, restart.c the reading
 * half; a record is written through txn.c and read through verify.c and
 * read.c, none of which calls back here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt_int.h"
#include "base/alloc.h"

static int nsize(const ferry__ckpt_nc_t *nc)
{
    return nc->version == 5 ? 8 : 4;
}

static void put_be(unsigned char *p, uint64_t v, int size)
{
    for (int i = 0; i < size; i++) p[i] = (unsigned char)(v >> (8 * (size - 1 - i)));
}

static uint64_t get_be(const unsigned char *p, int size)
{
    uint64_t v = 0;
    for (int i = 0; i < size; i++) v = v << 8 | p[i];
    return v;
}

/* Rank 0: n bytes at off of fd, all of them. */
static int pread_all(int fd, void *buf, size_t n, off_t off)
{
    for (size_t done = 0; done < n;) {
        ssize_t got = pread(fd, (char *)buf + done, n - done, off + (off_t)done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        done += (size_t)got;
    }
    return 0;
}

static int pwrite_all(int fd, const void *buf, size_t n, off_t off)
{
    for (size_t done = 0; done < n;) {
        ssize_t put = pwrite(fd, (const char *)buf + done, n - done, off + (off_t)done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) return -1;
        done += (size_t)put;
    }
    return 0;
}

static int os_error(const char *what, const char *path)
{
    int err = errno ? errno : EIO;
    return ferry__error_set(err == ENOSPC || err == EDQUOT ? MPI_ERR_NO_SPACE : MPI_ERR_IO, "ferry_ckpt: %s %s: %s",
                            what, path, strerror(err));
}

/* Rank 0: numrecs = n, written and synced (the commit of a record, or of a series cut back). */
static int set_numrecs(int fd, const ferry__ckpt_layout_t *layout, int64_t n, const char *path)
{
    unsigned char bytes[8];
    int size = nsize(&layout->nc);
    put_be(bytes, (uint64_t)n, size);
    if (pwrite_all(fd, bytes, (size_t)size, 4) != 0 || fsync(fd) != 0)
        return os_error("cannot commit a record of", path);
    return 0;
}

/* Rank 0: a new series file: the header, no record (written aside, synced, renamed). */
static int create(const char *path, const ferry__ckpt_layout_t *layout)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666), cls = 0;
    if (fd < 0) return os_error("cannot create", tmp);
    if (pwrite_all(fd, layout->region, (size_t)layout->region_len, 0) != 0 || fsync(fd) != 0)
        cls = os_error("cannot write", tmp);
    close(fd);
    if (!cls && rename(tmp, path) != 0) cls = os_error("cannot rename to it", tmp);
    if (!cls && ferry__ckpt_sync_directory(path) != 0) cls = os_error("cannot sync the directory of", path);
    if (cls) unlink(tmp);
    return cls;
}

/* Rank 0: the file's header is this set's (numrecs aside), and how many records it counts. */
static int check_header(int fd, const char *path, const ferry__ckpt_layout_t *layout, int64_t *numrecs)
{
    size_t n = (size_t)layout->region_len, size = (size_t)nsize(&layout->nc);
    unsigned char *have = ferry__malloc(n);
    if (!have) return ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt: no memory for the header of %s", path);
    int cls = pread_all(fd, have, n, 0) != 0
                  ? ferry__error_set(MPI_ERR_IO, "ferry_ckpt: cannot read the header of %s", path)
                  : 0;
    if (!cls) {
        *numrecs = (int64_t)get_be(have + 4, (int)size);
        memcpy(have + 4, layout->region + 4, size);
        if (memcmp(have, layout->region, n) != 0)
            cls = ferry__error_set(MPI_ERR_FILE_EXISTS,
                                   "ferry_ckpt_write: the series file %s holds other definitions (or "
                                   "another ferry's header) than this set: remove it or give the set another name",
                                   path);
    }
    ferry__free(have);
    return cls;
}

/* Rank 0: the first record whose step is at least step (records hold rising steps), or numrecs. */
static int first_record_from(int fd, const char *path, const ferry__ckpt_layout_t *layout, int64_t numrecs,
                             long long step, int64_t *first)
{
    const ferry__ckpt_nc_var_t *v = &layout->nc.vars[FERRY__CKPT_REC_STEP];
    int size = ferry__ckpt_nc_type_size(v->type);
    unsigned char bytes[8];
    for (*first = 0; *first < numrecs; (*first)++) {
        if (pread_all(fd, bytes, (size_t)size, (off_t)(v->begin + *first * layout->recsize)) != 0)
            return ferry__error_set(MPI_ERR_IO, "ferry_ckpt: cannot read the steps of %s", path);
        uint64_t bits = get_be(bytes, size);
        long long have = size == 4 ? (long long)(int32_t)bits : (long long)(int64_t)bits;
        if (have >= step) break;
    }
    return 0;
}

/* Rank 0: opens (or creates) the series file and finds where step goes: *record. A series started
 * again is cut back to the records below it first, committed on its own. */
static int root_prepare(ferry_ckpt_t ck, const char *path, const ferry__ckpt_layout_t *layout, long long step,
                        int64_t *record)
{
    int fd = open(path, O_RDWR);
    *record = 0;
    if (fd < 0 && errno == ENOENT) return create(path, layout);
    if (fd < 0) return os_error("cannot open", path);
    int64_t numrecs = 0;
    int cls = check_header(fd, path, layout, &numrecs);
    if (!cls) cls = first_record_from(fd, path, layout, numrecs, step, record);
    if (!cls && *record < numrecs) {
        fprintf(stderr, "ferry_ckpt: step %lld of %s starts the series again: dropped its records %lld to %lld\n", step,
                path, (long long)*record, (long long)numrecs - 1);
        cls = set_numrecs(fd, layout, *record, path);
    }
    close(fd);
    return cls;
}

static int write_record(ferry_ckpt_t ck, const char *path, ferry__ckpt_txn_t *t, void *const *bufs)
{
    int64_t record = 0;
    int cls = ck->rank == 0 ? root_prepare(ck, path, &t->layout, t->step, &record) : 0;
    cls = ferry__error_agree_max(ck->comm, cls, "ferry_ckpt_write", &record, 1);
    if (cls) return cls;
    t->record = record;
    t->record_at = t->layout.region_len + record * t->layout.recsize;
    for (int i = 0; i < ck->nvars; i++) t->layout.begin[i] += record * t->layout.recsize;
    t->layout.total = t->record_at + t->layout.recsize;
    return ferry__ckpt_txn_write(ck, path, t, bufs);
}

/* Collective: rank 0 counts the record written (numrecs = record + 1); on failure, cuts the file back
 * to the records counted, so a failed record holds no space. */
static int commit_record(ferry_ckpt_t ck, const char *path, const ferry__ckpt_txn_t *t, int cls)
{
    if (ck->rank == 0 && !cls) {
        int fd = open(path, O_WRONLY);
        cls = fd < 0 ? os_error("cannot open", path) : set_numrecs(fd, &t->layout, t->record + 1, path);
        if (fd >= 0) close(fd);
    }
    if (ck->rank == 0 && cls && t->record >= 0 && truncate(path, (off_t)t->record_at) != 0 && errno != ENOENT)
        fprintf(stderr, "ferry_ckpt: cannot cut %s back after a failed write: %s\n", path, strerror(errno));
    return ferry__error_agree(ck->comm, cls, "ferry_ckpt_write");
}

int ferry__ckpt_series_write(ferry_ckpt_t ck, long long step, double time, void *const *bufs)
{
    char path[4200];
    ferry__ckpt_txn_t t = {.sums = ferry__calloc((size_t)ck->nvars + 1, sizeof(uint64_t)),
                           .total = ferry__calloc((size_t)ck->nvars + 1, sizeof(uint64_t)),
                           .step = step,
                           .time = time,
                           .record = -1};
    int cls = t.sums && t.total ? ferry__ckpt_step_path(ck, step, path, sizeof path)
                                : ferry__error_set(MPI_ERR_NO_MEM, "ferry_ckpt_write: no memory");
    if (!cls && ck->nvars == 0)
        cls = ferry__error_set(MPI_ERR_ARG, "ferry_ckpt_write: the series %s has no variable", path);
    if (!cls && ck->format == FERRY_CKPT_CDF2 && step > INT32_MAX)
        cls = ferry__error_set(MPI_ERR_ARG,
                               "ferry_ckpt_write: step %lld does not fit CDF-2's 32-bit ferry_step (use CDF-5)", step);
    if (!cls) cls = ferry__ckpt_check_overlaps(ck, "ferry_ckpt_write");
    int built = cls ? cls : ferry__ckpt_layout_build(ck, NULL, step, time, &t.layout);
    cls = ferry__error_agree(ck->comm, built, "ferry_ckpt_write");
    if (!cls) cls = commit_record(ck, path, &t, write_record(ck, path, &t, bufs));
    if (!built) ferry__ckpt_layout_free(ck, &t.layout);
    ferry__ckpt_holes_free(ck, &t.holes);
    ferry__free(t.sums);
    ferry__free(t.total);
    return cls;
}

/* ---- reading ------------------------------------------------------------ */

/* Collective: record's time and step (8 bytes each, read by every rank). */
static int record_stamp(ferry__ckpt_file_t *f, const ferry__ckpt_nc_t *nc, int64_t record, ferry_ckpt_info_t *info)
{
    unsigned char time[8], step[8];
    MPI_Offset shift = record * ferry__ckpt_nc_recsize(nc);
    int ssize = ferry__ckpt_nc_type_size(nc->vars[FERRY__CKPT_REC_STEP].type);
    FERRY_TRY(ferry__ckpt_io_transfer_at(f, FERRY__CKPT_COLLECTIVE, nc->vars[FERRY__CKPT_REC_TIME].begin + shift, time,
                                         8, MPI_BYTE));
    FERRY_TRY(ferry__ckpt_io_transfer_at(f, FERRY__CKPT_COLLECTIVE, nc->vars[FERRY__CKPT_REC_STEP].begin + shift, step,
                                         ssize, MPI_BYTE));
    uint64_t bits = get_be(time, 8), s = get_be(step, ssize);
    memcpy(&info->time, &bits, sizeof bits);
    info->step = ssize == 4 ? (long long)(int32_t)s : (long long)(int64_t)s;
    return 0;
}

/* Moves every record variable's begin by shift (to read a record through the image reader). */
static void shift_records(ferry__ckpt_nc_t *nc, MPI_Offset shift)
{
    for (int i = 0; i < nc->nvars; i++)
        if (ferry__ckpt_nc_is_record(nc, &nc->vars[i])) nc->vars[i].begin += shift;
}

int ferry__ckpt_series_read(ferry_ckpt_t ck, ferry__ckpt_file_t *f, ferry__ckpt_nc_t *nc, void *const *bufs,
                            ferry_ckpt_info_t *info)
{
    ferry_ckpt_info_t stamp = {0};
    int cls = MPI_ERR_NO_SUCH_FILE;
    for (int64_t r = nc->numrecs - 1; r >= 0 && cls; r--) {
        cls = ferry__ckpt_series_verify(ck->comm, f, nc, r);
        MPI_Offset shift = r * ferry__ckpt_nc_recsize(nc);
        if (!cls) cls = ferry__error_agree(ck->comm, record_stamp(f, nc, r, &stamp), "ferry_ckpt read");
        shift_records(nc, shift);
        if (!cls) cls = ferry__ckpt_read_image(ck, f, nc, bufs);
        shift_records(nc, -shift);
        if (cls && ck->rank == 0)
            fprintf(stderr, "ferry_ckpt: restart: skipping record %lld of %s: %s\n", (long long)r, f->path,
                    ferry__error_message());
        if (cls && info) info->fallbacks++;
    }
    if (cls)
        return ferry__error_set(MPI_ERR_NO_SUCH_FILE, "ferry_ckpt: no valid record in %s (%lld tried)", f->path,
                                (long long)nc->numrecs);
    if (info) info->step = stamp.step, info->time = stamp.time;
    return 0;
}

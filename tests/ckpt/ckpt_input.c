/*
 * Bad input and misleading answers (issue 30, items 4-7): netCDF's name
 * rules at definition and when reading; NULL arguments are MPI_ERR_ARG on
 * every rank, never a crash; a file with ferry's attributes but no header
 * checksum is refused (damage cannot switch the check off); restart with
 * declarations that do not match the set says so (not "no valid
 * checkpoint"); a netCDF file ferry did not write does not verify as
 * "valid", restart skips it and a read takes its step from its name; a
 * failed write leaves no temporary file.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_cases.h"
#include "fs/fs.h"

enum { N = 48 };

static ferry_ckpt_t make_set(const char *name, int strategy, MPI_Datatype type, ckpt_case_var_t *v)
{
    cc_set_t s = {.base = ft_path(name), .opt = {.strategy = strategy}, .type = type, .n = N, .halo = 1, .seed = 3, .var = "eta"};
    return cc_make_set(&s, v);
}

/* ---- a minimal CDF-2 file written by hand (docs/format/netcdf.md) ---- */

static void put32(unsigned char **p, uint32_t v)
{
    for (int i = 3; i >= 0; i--) *(*p)++ = (unsigned char)(v >> (8 * i));
}

static void put_name(unsigned char **p, const char *name)
{
    size_t n = strlen(name);
    put32(p, (uint32_t)n);
    memcpy(*p, name, n);
    memset(*p + n, 0, (4 - n % 4) % 4);
    *p += n + (4 - n % 4) % 4;
}

/* Rank 0 writes a CDF-2 file: dimensions d0, d1 of length N, no attributes, one double variable
 * var(d0, d1) holding zeros. */
static void write_foreign(const char *path, const char *d0, const char *d1, const char *var)
{
    if (ft_rank == 0) {
        static unsigned char buf[256 + N * N * 8];
        unsigned char *p = buf;
        memcpy(p, "CDF\002", 4), p += 4;
        put32(&p, 0);                  /* numrecs */
        put32(&p, 0x0A), put32(&p, 2); /* dimensions */
        put_name(&p, d0), put32(&p, N);
        put_name(&p, d1), put32(&p, N);
        put32(&p, 0), put32(&p, 0);    /* no global attributes */
        put32(&p, 0x0B), put32(&p, 1); /* one variable */
        put_name(&p, var);
        put32(&p, 2), put32(&p, 0), put32(&p, 1);
        put32(&p, 0), put32(&p, 0); /* no attributes */
        put32(&p, 6), put32(&p, N * N * 8);
        uint64_t begin = (uint64_t)(p - buf) + 8;
        put32(&p, (uint32_t)(begin >> 32)), put32(&p, (uint32_t)begin);
        memset(p, 0, N * N * 8);
        FILE *f = fopen(path, "wb");
        FT_CHECK(f && fwrite(buf, 1, (size_t)(p - buf) + N * N * 8, f) == (size_t)(p - buf) + N * N * 8);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- item 4: names ---- */

static void names(void)
{
    static const char *const bad[] = {"a/b", "", " x", "-x", "x ", "x\ty", "\xff", "\xc0\x80", "x\x7fy", "\xed\xa0\x80"};
    static const char *const good[] = {"2d", "_x", "temp\xc3\xa9rature", "x-y", "a b", "x+y:z"};
    ckpt_case_var_t v;
    ferry_ckpt_t ck = make_set("names", FERRY_CKPT_STEER, MPI_DOUBLE, &v);
    int id;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        FT_FAILS_NAMING(MPI_ERR_ARG, "netCDF's name rules", ferry_ckpt_def_dim(ck, bad[i], 4, &id));
    char long_name[300];
    memset(long_name, 'a', 257), long_name[257] = '\0';
    FT_FAILS_NAMING(MPI_ERR_ARG, "longer than", ferry_ckpt_def_dim(ck, long_name, 4, &id));
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) FT_OK(ferry_ckpt_def_dim(ck, good[i], 4, &id));
    FT_FAILS_NAMING(MPI_ERR_ARG, "already defined", ferry_ckpt_def_dim(ck, "x-y", 5, &id));
    MPI_Offset s[1] = {0}, c[1] = {0};
    ferry_ckpt_var_t d = {.name = "a/b", .type = MPI_INT, .ndims = 1, .dimids = &id, .start = s, .count = c};
    FT_FAILS_NAMING(MPI_ERR_ARG, "holds a '/'", ferry_ckpt_def_var(ck, &d, &id));
    d.name = "eta";
    FT_FAILS_NAMING(MPI_ERR_ARG, "already defined", ferry_ckpt_def_var(ck, &d, &id));
    d.name = "temp\xc3\xa9rature";
    FT_OK(ferry_ckpt_def_var(ck, &d, &id));
    cc_fill(&v, 0, 1);
    FT_OK(ferry_ckpt_write(ck, 1, 0.0, (void *[]){v.buf, NULL}));
    ferry_ckpt_free(&ck);
    free(v.buf);
    /* The stacked layout's own names. */
    ck = make_set("names_stack", FERRY_CKPT_STACK, MPI_DOUBLE, &v);
    FT_FAILS_NAMING(MPI_ERR_ARG, "stacked layout", ferry_ckpt_def_dim(ck, "ferry_rank", 4, &id));
    FT_FAILS_NAMING(MPI_ERR_ARG, "stacked layout", ferry_ckpt_def_dim(ck, "eta_stacked", 4, &id));
    FT_OK(ferry_ckpt_def_dim(ck, "z", 4, &id));
    d.name = "eta_start";
    FT_FAILS_NAMING(MPI_ERR_ARG, "stacked layout", ferry_ckpt_def_var(ck, &d, &id));
    d.name = "q_offset";
    FT_OK(ferry_ckpt_def_var(ck, &d, &id));
    d.name = "q";
    FT_FAILS_NAMING(MPI_ERR_ARG, "stacked layout", ferry_ckpt_def_var(ck, &d, &id));
    free(v.buf);
    ferry_ckpt_free(&ck);
    /* Files that break the rules, from elsewhere: verify says what is wrong. */
    write_foreign(ft_path("twice.nc"), "x", "x", "v");
    FT_FAILS_NAMING(MPI_ERR_IO, "two dimensions named 'x'", ferry_ckpt_verify(MPI_COMM_WORLD, ft_path("twice.nc")));
    write_foreign(ft_path("slash.nc"), "x", "y", "a/b");
    FT_FAILS_NAMING(MPI_ERR_IO, "holds a '/'", ferry_ckpt_verify(MPI_COMM_WORLD, ft_path("slash.nc")));
}

/* ---- item 6: NULL arguments ---- */

static void null_args(void)
{
    ferry_ckpt_t ck;
    ckpt_case_var_t v;
    char path[4200];
    int id;
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_create(MPI_COMM_WORLD, ft_path("null"), NULL, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_create(MPI_COMM_WORLD, NULL, NULL, &ck));
    FT_CHECK(ck == NULL);
    /* One rank without an output: every rank fails. */
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_create(MPI_COMM_WORLD, ft_path("null"), NULL, ft_rank == 1 ? NULL : &ck));
    ck = make_set("null", FERRY_CKPT_STEER, MPI_DOUBLE, &v);
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_def_dim(ck, "x", 4, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_def_dim(NULL, "x", 4, &id));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_def_dim(ck, NULL, 4, &id));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_def_var(ck, NULL, &id));
    ferry_ckpt_var_t d = {.name = "w", .type = MPI_INT, .ndims = 1, .dimids = &id, .start = NULL, .count = NULL};
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_def_var(ck, &d, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_def_var(NULL, &d, &id));
    d.name = NULL;
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_def_var(ck, &d, &id));
    cc_fill(&v, 0, 1);
    FT_FAILS_NAMING(MPI_ERR_ARG, "NULL buffer array", ferry_ckpt_write(ck, 1, 0.0, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_write(ck, 1, 0.0, ft_rank == 1 ? NULL : (void *[]){v.buf}));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_write(NULL, 1, 0.0, (void *[]){v.buf}));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_write_file(ck, NULL, 1, 0.0, (void *[]){v.buf}));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_path(ck, 1, NULL, 100));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_path(ck, 1, path, 0));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_path(NULL, 1, path, sizeof path));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_restart(ck, NULL, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_restart(NULL, (void *[]){v.buf}, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_read_file(ck, NULL, (void *[]){v.buf}, NULL));
    FT_FAILS(MPI_ERR_ARG, ferry_ckpt_verify(MPI_COMM_WORLD, NULL));
    FT_EQ(ferry_ckpt_peak_memory(NULL), 0);
    FT_OK(ferry_ckpt_free(NULL));
    /* The set still works after all that. */
    FT_OK(ferry_ckpt_write(ck, 1, 0.0, (void *[]){v.buf}));
    free(v.buf);
    FT_OK(ferry_ckpt_free(&ck));
    FT_OK(ferry_ckpt_free(&ck));
}

/* ---- item 5: the header checksum cannot be switched off ---- */

/* Rank 0 replaces the first occurrence of from by to (same length) in the file's header. */
static void patch_header(const char *path, const char *from, const char *to)
{
    if (ft_rank == 0) {
        static unsigned char head[1 << 16];
        int fd = open(path, O_RDWR);
        FT_CHECK(fd >= 0);
        ssize_t n = pread(fd, head, sizeof head, 0);
        unsigned char *at = memmem(head, n > 0 ? (size_t)n : 0, from, strlen(from));
        FT_CHECK(at != NULL);
        FT_CHECK(pwrite(fd, to, strlen(to), at - head) == (ssize_t)strlen(to));
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void header_checksum_required(void)
{
    ckpt_case_var_t v;
    ferry_ckpt_t ck = make_set("sealed", FERRY_CKPT_STEER, MPI_DOUBLE, &v);
    char path[4200];
    for (long long step = 2; step <= 3; step++) {
        cc_fill(&v, 0, step);
        FT_OK(ferry_ckpt_write(ck, step, 0.0, (void *[]){v.buf}));
    }
    FT_OK(ferry_ckpt_path(ck, 3, path, sizeof path));
    patch_header(path, "ferry_header_checksum", "ferry_header_checksuM"); /* one byte */
    cc_set_header_step(path, 3, 7);                                                 /* and a second one */
    FT_FAILS_NAMING(MPI_ERR_IO, "no ferry_header_checksum", ferry_ckpt_verify(MPI_COMM_WORLD, path));
    ferry_ckpt_info_t info;
    memset(v.buf, 0x5A, v.bytes);
    FT_OK(ferry_ckpt_restart(ck, (void *[]){v.buf}, &info));
    FT_EQ(info.step, 2);
    FT_EQ(info.fallbacks, 1);
    cc_check(&v, 0, 2);
    free(v.buf);
    FT_OK(ferry_ckpt_free(&ck));
}

/* ---- item 7: answers that say what is wrong ---- */

static void mismatched_declarations(void)
{
    ckpt_case_var_t v, w;
    ferry_ckpt_t ck = make_set("decl", FERRY_CKPT_STACK, MPI_DOUBLE, &v);
    cc_fill(&v, 0, 1);
    FT_OK(ferry_ckpt_write(ck, 1, 0.0, (void *[]){v.buf}));
    ferry_ckpt_free(&ck);
    ck = make_set("decl", FERRY_CKPT_STEER, MPI_INT, &w);
    cc_fill(&w, 0, 1);
    FT_FAILS_NAMING(MPI_ERR_TYPE, "is double in", ferry_ckpt_restart(ck, (void *[]){w.buf}, NULL));
    ferry_ckpt_free(&ck);
    free(w.buf);
    /* Another shape. */
    ferry_ckpt_options_t o = {0};
    FT_OK(ferry_ckpt_create(MPI_COMM_WORLD, ft_path("decl"), &o, &ck));
    w = v;
    w.buf = NULL;
    w.global[1] = N + 1;
    cc_define(ck, &w, "eta", &(int){0});
    cc_fill(&w, 0, 1);
    FT_FAILS_NAMING(MPI_ERR_DIMS, "another global shape", ferry_ckpt_restart(ck, (void *[]){w.buf}, NULL));
    ferry_ckpt_free(&ck);
    free(w.buf);
    /* A variable the checkpoint does not hold. */
    ck = make_set("decl", FERRY_CKPT_GATHER, MPI_DOUBLE, &w);
    cc_fill(&w, 0, 1);
    MPI_Offset s[2] = {0, 0}, c[2] = {0, 0};
    int dims[2] = {0, 1}, id;
    ferry_ckpt_var_t extra = {.name = "salt", .type = MPI_DOUBLE, .ndims = 2, .dimids = dims, .start = s, .count = c};
    FT_OK(ferry_ckpt_def_var(ck, &extra, &id));
    FT_FAILS_NAMING(MPI_ERR_ARG, "holds no variable salt", ferry_ckpt_restart(ck, (void *[]){w.buf, NULL}, NULL));
    ferry_ckpt_free(&ck);
    free(w.buf);
    /* The checkpoint is untouched and the right declarations restart from it. */
    ck = make_set("decl", FERRY_CKPT_STEER, MPI_DOUBLE, &w);
    FT_FAILS_NAMING(MPI_ERR_BUFFER, "no buffer for variable eta", ferry_ckpt_restart(ck, (void *[]){ft_rank == 1 ? NULL : v.buf}, NULL));
    cc_fill(&w, 0, 0);
    memset(w.buf, 0x5A, w.bytes);
    FT_OK(ferry_ckpt_restart(ck, (void *[]){w.buf}, NULL));
    cc_check(&w, 0, 1);
    free(v.buf), free(w.buf);
    ferry_ckpt_free(&ck);
}

/* A netCDF file ferry did not write, named like step 3 of the set, beside ferry's step 2. */
static void foreign_file(void)
{
    ckpt_case_var_t v;
    ferry_ckpt_t ck = make_set("foreign", FERRY_CKPT_STEER, MPI_DOUBLE, &v);
    char path[4200];
    FT_OK(ferry_ckpt_path(ck, 3, path, sizeof path));
    write_foreign(path, "eta_d0", "eta_d1", "eta");
    ferry_ckpt_info_t info;
    cc_fill(&v, 0, 1);
    FT_FAILS_NAMING(MPI_ERR_NO_SUCH_FILE, "no valid checkpoint", ferry_ckpt_restart(ck, (void *[]){v.buf}, &info));
    FT_FAILS_NAMING(MPI_ERR_UNSUPPORTED_OPERATION, "no checksums to verify", ferry_ckpt_verify(MPI_COMM_WORLD, path));
    FT_OK(ferry_ckpt_read_file(ck, path, (void *[]){v.buf}, &info)); /* asked for by name: read, unverified */
    FT_EQ(info.step, 3);
    cc_fill(&v, 0, 2);
    FT_OK(ferry_ckpt_write_file(ck, ft_path("other.nc"), 2, 0.0, (void *[]){v.buf}));
    FT_OK(ferry_ckpt_read_file(ck, ft_path("other.nc"), (void *[]){v.buf}, &info));
    FT_EQ(info.step, 2);
    FT_OK(ferry_ckpt_write(ck, 2, 0.0, (void *[]){v.buf})); /* step 3 is a higher step: a new series removes it */
    FT_CHECK(!cc_exists(path));
    MPI_Barrier(MPI_COMM_WORLD); /* every rank has looked before rank 0 writes it again */
    write_foreign(path, "eta_d0", "eta_d1", "eta");
    memset(v.buf, 0x5A, v.bytes);
    FT_OK(ferry_ckpt_restart(ck, (void *[]){v.buf}, &info)); /* skips the foreign step 3 */
    FT_EQ(info.step, 2);
    FT_EQ(info.fallbacks, 1);
    cc_check(&v, 0, 2);
    free(v.buf);
    ferry_ckpt_free(&ck);
}

/* A write that fails after its temporary file exists removes it (and leaves the previous step). */
static void failed_write_leaves_no_tmp(void)
{
    ckpt_case_var_t v;
    ferry_ckpt_t ck = make_set("tmpgone", FERRY_CKPT_STACK, MPI_DOUBLE, &v);
    char path[4200], tmp[4300];
    cc_fill(&v, 0, 1);
    FT_OK(ferry_ckpt_write(ck, 1, 0.0, (void *[]){v.buf})); /* also sets up the file layers the injection goes into */
    FT_OK(ferry_ckpt_path(ck, 2, path, sizeof path));
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FT_EQ(ferry__fs_fault_arm("write:1+:EIO"), 0);
    FT_FAILS(MPI_ERR_IO, ferry_ckpt_write(ck, 2, 0.0, (void *[]){v.buf}));
    ferry__fs_fault_disarm();
    FT_CHECK(!cc_exists(tmp) && !cc_exists(path));
    FT_OK(ferry_ckpt_path(ck, 1, path, sizeof path));
    FT_OK(ferry_ckpt_verify(MPI_COMM_WORLD, path));
    free(v.buf);
    ferry_ckpt_free(&ck);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } parts[] = {{"names", names},
                 {"null", null_args},
                 {"sealed", header_checksum_required},
                 {"decl", mismatched_declarations},
                 {"foreign", foreign_file},
                 {"tmp", failed_write_leaves_no_tmp}};
    ft_init(&argc, &argv);
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) /* all, or the one named by argv[1] */
        if (argc < 2 || strcmp(argv[1], parts[i].name) == 0) parts[i].run();
    return ft_finish();
}

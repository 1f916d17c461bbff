/*
 * A series: every step a record of one file along the record dimension time
 * (issue 30). Three steps appended; restart takes the newest and another
 * decomposition reads the same values, holes holding the _FillValue (or 0
 * without one); a damaged record is skipped; a lower step starts the series
 * again from its place; other definitions in the same file are refused; a
 * partial record past the ones counted (a killed write) is ignored. And
 * the _FillValue in files of their own: steered and gathered files hold it in
 * their holes, a stacked file's reader puts it where no writer was.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt_cases.h"

enum { NY = 40, NX = 24, COVERED = 34 }; /* rows COVERED..NY-1 belong to no rank: holes */

static const double temp_fill = -999.0;

/* A set of temp(y, x) double with a _FillValue and salt(y, x) float without, the blocks of a
 * bisection of the first COVERED rows (or, when whole, of all rows). */
static ferry_ckpt_t series_set(const char *name, int strategy, int whole, ckpt_case_var_t v[2], int extra)
{
    int series = strategy != FERRY_CKPT_STACK && !strstr(name, "single");
    ferry_ckpt_options_t o = {.strategy = strategy, .series = series};
    ferry_ckpt_t ck;
    FT_OK(ferry_ckpt_create(MPI_COMM_WORLD, ft_path(name), &o, &ck));
    const char *title = "ferry series test", *units = "days since 2000-01-01 00:00:00";
    FT_OK(ferry_ckpt_put_att(ck, FERRY_CKPT_GLOBAL, "title", MPI_CHAR, (MPI_Offset)strlen(title), title));
    FT_OK(ferry_ckpt_put_att(ck, FERRY_CKPT_GLOBAL, "Conventions", MPI_CHAR, 6, "CF-1.8"));
    if (series) FT_OK(ferry_ckpt_put_att(ck, FERRY_CKPT_TIME, "units", MPI_CHAR, (MPI_Offset)strlen(units), units));
    else FT_FAILS(MPI_ERR_ARG, ferry_ckpt_put_att(ck, FERRY_CKPT_TIME, "units", MPI_CHAR, (MPI_Offset)strlen(units), units));
    for (int k = 0; k < 2; k++) {
        int id;
        memset(&v[k], 0, sizeof v[k]);
        v[k].ndims = 2;
        v[k].halo = 1;
        v[k].type = k ? MPI_FLOAT : MPI_DOUBLE;
        v[k].global[0] = whole ? NY : COVERED, v[k].global[1] = NX;
        cc_block(2, v[k].global, ft_rank, ft_size, 17 + (uint64_t)k, v[k].start, v[k].count);
        v[k].global[0] = NY;
        cc_define(ck, &v[k], k ? "salt" : "temp", &id);
        if (!k) FT_OK(ferry_ckpt_put_att(ck, id, "_FillValue", MPI_DOUBLE, 1, &temp_fill));
        FT_OK(ferry_ckpt_put_att(ck, id, "long_name", MPI_CHAR, 4, k ? "salt" : "temp"));
    }
    if (extra) FT_OK(ferry_ckpt_put_att(ck, 1, "valid_max", MPI_FLOAT, 1, &(float){40.0f}));
    return ck;
}

static void write_steps(ferry_ckpt_t ck, ckpt_case_var_t v[2], long long from, long long to)
{
    for (long long s = from; s <= to; s++) {
        cc_fill(&v[0], 0, s);
        cc_fill(&v[1], 1, s);
        FT_OK(ferry_ckpt_write(ck, s, s + 0.5, (void *[]){v[0].buf, v[1].buf}));
    }
}

/* Every point of the reader's blocks: the step's value where a writer owned it, else the fill or 0. */
static void check_read(ckpt_case_var_t v[2], long long step)
{
    for (int k = 0; k < 2; k++) {
        int es = cc_esize(v[k].type);
        MPI_Offset mx = v[k].count[1] + 2;
        for (MPI_Offset y = 0; y < v[k].count[0]; y++)
            for (MPI_Offset x = 0; x < v[k].count[1]; x++) {
                long long g = (v[k].start[0] + y) * NX + v[k].start[1] + x;
                unsigned char want[8] = {0}, *have = (unsigned char *)v[k].buf + ((y + 1) * mx + x + 1) * es;
                if (v[k].start[0] + y < COVERED) cc_value(v[k].type, g, k, step, want);
                else if (!k) memcpy(want, &temp_fill, 8);
                if (memcmp(want, have, (size_t)es) != 0) ft_fail(__FILE__, __LINE__, "variable %d point %lld differs", k, g);
            }
    }
}

static void restart_expect(const char *name, int strategy, long long step, int fallbacks)
{
    ckpt_case_var_t r[2];
    ferry_ckpt_t ck = series_set(name, strategy, 1, r, 0); /* another decomposition: every row */
    ferry_ckpt_info_t info;
    cc_fill(&r[0], 0, 0);
    cc_fill(&r[1], 1, 0);
    FT_OK(ferry_ckpt_restart(ck, (void *[]){r[0].buf, r[1].buf}, &info));
    FT_EQ(info.step, step);
    FT_CHECK(info.time == step + 0.5);
    FT_EQ(info.fallbacks, fallbacks);
    check_read(r, step);
    free(r[0].buf), free(r[1].buf);
    FT_OK(ferry_ckpt_free(&ck));
}

/* Rank 0 flips a byte of record's temp (the first data variable after the bookkeeping). */
static void damage_record(const char *path, MPI_Offset at)
{
    if (ft_rank == 0) {
        int fd = open(path, O_RDWR);
        unsigned char b;
        FT_CHECK(fd >= 0 && pread(fd, &b, 1, at) == 1);
        b ^= 0x21;
        FT_CHECK(pwrite(fd, &b, 1, at) == 1);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void series(int strategy)
{
    const char *name = strategy == FERRY_CKPT_GATHER ? "gathered" : "steered";
    ckpt_case_var_t v[2];
    ferry_ckpt_t ck = series_set(name, strategy, 0, v, 0);
    char path[4200];
    FT_OK(ferry_ckpt_path(ck, 7, path, sizeof path));
    FT_CHECK(strstr(path, ".000") == NULL); /* one file for every step */
    write_steps(ck, v, 1, 3);
    FT_OK(ferry_ckpt_verify(MPI_COMM_WORLD, path));
    restart_expect(name, strategy, 3, 0);
    restart_expect(name, FERRY_CKPT_STEER + FERRY_CKPT_GATHER - strategy, 3, 0); /* read by the other strategy */
    /* The last record damaged: restart falls back to record 2 (step 2). Records: 32-byte aligned
     * header region, then per record time (8), step (8), 2 x 16 checksum chars, temp, salt. */
    long long recsize = 8 + 8 + 32 + NY * NX * 8 + NY * NX * 4, region;
    {
        off_t size = 0;
        if (ft_rank == 0) {
            int fd = open(path, O_RDONLY);
            size = lseek(fd, 0, SEEK_END);
            close(fd);
        }
        MPI_Bcast(&size, sizeof size, MPI_BYTE, 0, MPI_COMM_WORLD);
        region = (long long)size - 3 * recsize;
    }
    damage_record(path, region + 2 * recsize + 48 + 100 * 8);
    FT_FAILS_NAMING(MPI_ERR_IO, "record 2 of variable temp fails its checksum", ferry_ckpt_verify(MPI_COMM_WORLD, path));
    restart_expect(name, strategy, 2, 1);
    /* A lower step starts the series again at its place: records 1 and 2 again. */
    write_steps(ck, v, 2, 2);
    FT_OK(ferry_ckpt_verify(MPI_COMM_WORLD, path));
    restart_expect(name, strategy, 2, 0);
    /* Other definitions (one attribute more) cannot add to this file. */
    ckpt_case_var_t w[2];
    ferry_ckpt_t other = series_set(name, strategy, 0, w, 1);
    cc_fill(&w[0], 0, 5), cc_fill(&w[1], 1, 5);
    FT_FAILS_NAMING(MPI_ERR_FILE_EXISTS, "holds other definitions", ferry_ckpt_write(other, 5, 5.5, (void *[]){w[0].buf, w[1].buf}));
    restart_expect(name, strategy, 2, 0);
    free(w[0].buf), free(w[1].buf), free(v[0].buf), free(v[1].buf);
    FT_OK(ferry_ckpt_free(&other));
    FT_OK(ferry_ckpt_free(&ck));
}

/* What a kill inside a series write leaves: a partial record past the records counted. It is not
 * read, verify passes, and the next write takes its place. */
static void killed_record(void)
{
    ckpt_case_var_t v[2];
    ferry_ckpt_t ck = series_set("killed", FERRY_CKPT_STEER, 0, v, 0);
    char path[4200];
    FT_OK(ferry_ckpt_path(ck, 1, path, sizeof path));
    write_steps(ck, v, 1, 2);
    if (ft_rank == 0) { /* 5000 bytes of a record 2 that was never counted */
        static unsigned char junk[5000];
        memset(junk, 0xA5, sizeof junk);
        int fd = open(path, O_WRONLY | O_APPEND);
        FT_CHECK(fd >= 0 && write(fd, junk, sizeof junk) == (ssize_t)sizeof junk);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    FT_OK(ferry_ckpt_verify(MPI_COMM_WORLD, path));
    restart_expect("killed", FERRY_CKPT_STEER, 2, 0);
    write_steps(ck, v, 3, 3);
    FT_OK(ferry_ckpt_verify(MPI_COMM_WORLD, path));
    restart_expect("killed", FERRY_CKPT_STEER, 3, 0);
    free(v[0].buf), free(v[1].buf);
    FT_OK(ferry_ckpt_free(&ck));
}

/* Files of their own with holes: the writer's strategy puts the fill value into them (steer,
 * gather) or the reader does (stack); verify counts it. */
static void single_files(int strategy)
{
    static const char *names[] = {"single_steer", "single_stack", "single_gather"};
    ckpt_case_var_t v[2];
    ferry_ckpt_t ck = series_set(names[strategy], strategy, 0, v, 0);
    char path[4200];
    write_steps(ck, v, 4, 4);
    FT_OK(ferry_ckpt_path(ck, 4, path, sizeof path));
    FT_OK(ferry_ckpt_verify(MPI_COMM_WORLD, path));
    restart_expect(names[strategy], strategy, 4, 0);
    free(v[0].buf), free(v[1].buf);
    FT_OK(ferry_ckpt_free(&ck));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    series(FERRY_CKPT_STEER);
    series(FERRY_CKPT_GATHER);
    killed_record();
    for (int strategy = 0; strategy < 3; strategy++) single_files(strategy);
    return ft_finish();
}

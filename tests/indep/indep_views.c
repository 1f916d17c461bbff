/*
 * Independent noncontiguous I/O through random file views, judged by a
 * brute-force byte model (the host's MPI_Pack byte maps of the filetype and
 * the memory type) and compared with the host's own MPI-IO, which gets the
 * same data stream as plain bytes.
 *
 * Host bug kept visible here: MPICH 4.0.2's ROMIO fills the holes of an
 * independent data-sieving write past end of file with stale buffer bytes
 * (e.g. view vector(2,3,4,MPI_INT) at disp 5, write_at 60 bytes at offset 7
 * into a new file: byte 17 reads 0xff, not 0). Rounds where the host's file
 * differs from the model are reported on stderr, not failed.
 *
 * Every rank gets its own slice of a random monotone filetype, interleaved
 * with the other ranks' slices, so concurrent sieving writes must not lose
 * each other's bytes. Each round: all ranks write through ferry (file A)
 * and through the host (file B) with the same arguments, rank 0 compares
 * both files with the model; the host reads file A back through the same
 * view; then every rank reads its data back through ferry with another
 * random memory type and checks the bytes. Odd rounds use the individual
 * file pointer (seek + write/read), even rounds explicit offsets. Rounds
 * cycle through romio_ds_write/romio_ds_read = enable/disable/automatic and
 * small sieving windows.
 */
#include <stdlib.h>
#include <string.h>

#include "datatype/datatype.h"
#include "ferry_test.h"
#include "oracle.h"

enum { ROUNDS = 24 };

/* A random filetype with nonnegative, nondecreasing displacements. */
static MPI_Datatype random_monotone(uint64_t *st)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, base = (ft_rand(st) % 2) ? MPI_BYTE : MPI_INT;
    int kind = (int)(ft_rand(st) % 5);
    int count = 1 + (int)(ft_rand(st) % 6), block = 1 + (int)(ft_rand(st) % 5);
    if (kind == 0) {
        FT_OK(MPI_Type_vector(count, block, block + (int)(ft_rand(st) % 7), base, &t));
    } else if (kind == 1) {
        int lens[6], disps[6], at = (int)(ft_rand(st) % 3);
        for (int i = 0; i < count; i++) {
            lens[i] = 1 + (int)(ft_rand(st) % 4);
            disps[i] = at;
            at += lens[i] + (int)(ft_rand(st) % 5);
        }
        FT_OK(MPI_Type_indexed(count, lens, disps, base, &t));
    } else if (kind == 2) {
        int sizes[2] = {2 + (int)(ft_rand(st) % 5), 2 + (int)(ft_rand(st) % 6)}, sub[2], start[2];
        for (int d = 0; d < 2; d++) {
            sub[d] = 1 + (int)(ft_rand(st) % (uint64_t)sizes[d]);
            start[d] = (int)(ft_rand(st) % (uint64_t)(sizes[d] - sub[d] + 1));
        }
        FT_OK(MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, base, &t));
    } else if (kind == 3) {
        int lens[2] = {block, 1};
        MPI_Aint disps[2] = {0, (MPI_Aint)(block * 4 + (int)(ft_rand(st) % 9))};
        MPI_Datatype types[2] = {base, MPI_DOUBLE};
        FT_OK(MPI_Type_create_struct(2, lens, disps, types, &t));
    } else {
        FT_OK(MPI_Type_contiguous(count * block, base, &t));
    }
    FT_OK(MPI_Type_commit(&t));
    return t;
}

/* This rank's interleaved slice: tile at rank * extent, resized to nprocs * extent. */
static MPI_Datatype rank_slice(MPI_Datatype tile)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(tile, &lb, &extent);
    int len = 1;
    MPI_Aint disp = (MPI_Aint)ft_rank * extent;
    MPI_Datatype placed, slice;
    FT_OK(MPI_Type_create_struct(1, &len, &disp, &tile, &placed));
    FT_OK(MPI_Type_create_resized(placed, 0, (MPI_Aint)ft_size * extent, &slice));
    FT_OK(MPI_Type_commit(&slice));
    MPI_Type_free(&placed);
    return slice;
}

static MPI_Info round_hints(int round)
{
    static const char *const modes[3] = {"automatic", "enable", "disable"};
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ds_write", (char *)modes[round % 3]);
    MPI_Info_set(info, "romio_ds_read", (char *)modes[(round / 3) % 3]);
    if (round % 2) {
        MPI_Info_set(info, "ind_wr_buffer_size", "4096");
        MPI_Info_set(info, "ind_rd_buffer_size", "4096");
        MPI_Info_set(info, "ferry_pack_buffer_size", "4096");
    }
    return info;
}

/* The stream a memory type really carries after its buffer was filled with
 * `wanted` through its byte map: overlapping types keep the last writer. */
static void actual_stream(const MPI_Count *map, MPI_Count n, MPI_Count lo, MPI_Count hi, const char *wanted,
                          char *actual)
{
    char *buf = calloc((size_t)(hi - lo) + 1, 1), *origin = buf - lo;
    for (MPI_Count k = 0; k < n; k++) origin[map[k]] = wanted[k];
    for (MPI_Count k = 0; k < n; k++) actual[k] = origin[map[k]];
    free(buf);
}

/* The model of the file after every rank wrote stream bytes [skip, skip + n)
 * of its slice: model[disp + map[r]] = the writer's data byte r - skip. */
static void build_model(char *model, MPI_Offset size, MPI_Datatype tile, MPI_Offset disp, MPI_Count skip,
                        MPI_Count n, uint64_t data_seed, const MPI_Count *mem_map, MPI_Count lo, MPI_Count hi)
{
    memset(model, 0, (size_t)size);
    char *data = malloc((size_t)n + 1), *wanted = malloc((size_t)n + 1);
    for (int r = 0; r < ft_size; r++) {
        /* Rank r's slice, rebuilt here from the tile the same way. */
        MPI_Aint lb, extent;
        MPI_Type_get_extent(tile, &lb, &extent);
        int len = 1;
        MPI_Aint at = (MPI_Aint)r * extent;
        MPI_Datatype placed, slice;
        MPI_Type_create_struct(1, &len, &at, &tile, &placed);
        MPI_Type_create_resized(placed, 0, (MPI_Aint)ft_size * extent, &slice);
        MPI_Type_commit(&slice);
        int tile_size;
        MPI_Type_size(slice, &tile_size);
        MPI_Count tiles = (skip + n) / tile_size + 1;
        MPI_Count *map = or_byte_map(slice, tiles);
        FT_CHECK(map != NULL);
        ft_fill(wanted, (size_t)n, data_seed + (uint64_t)r);
        actual_stream(mem_map, n, lo, hi, wanted, data);
        for (MPI_Count k = 0; k < n; k++) model[disp + map[skip + k]] = data[k];
        free(map);
        MPI_Type_free(&slice);
        MPI_Type_free(&placed);
    }
    free(data);
    free(wanted);
}

static char *read_whole(const char *path, MPI_Offset *size)
{
    FILE *f = fopen(path, "rb");
    FT_CHECK(f != NULL);
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *bytes = malloc((size_t)*size + 1);
    FT_CHECK(fread(bytes, 1, (size_t)*size, f) == (size_t)*size);
    fclose(f);
    return bytes;
}

/* A random memory type whose byte map (from the host's MPI_Pack) agrees
 * with ferry's engine: the views are the subject here, and Open MPI 4.1's
 * MPI_Pack misplaces bytes for some types (tests/datatype owns that). */
static MPI_Datatype agreeing_memory_type(uint64_t *st, int for_reading)
{
    for (;;) {
        MPI_Datatype mem = or_random_type(st, 2);
        int size;
        MPI_Type_size(mem, &size);
        MPI_Count *map = size > 0 ? or_byte_map(mem, 3) : NULL;
        int agree = map != NULL;
        if (agree && for_reading) {
            /* A type read into must not overlap itself, nor its neighbours in the count. */
            ferry__typeinfo_t info;
            agree = ferry__datatype_info(mem, &info) == 0 && info.nonoverlapping && info.true_extent <= info.extent;
        }
        if (agree) {
            MPI_Count lo, hi;
            or_span(mem, 3, &lo, &hi);
            char *buf = malloc((size_t)(hi - lo) + 1), *origin = buf - lo, *mine = malloc((size_t)size * 3);
            for (MPI_Count i = 0; i < hi - lo; i++) buf[i] = (char)(i * 7 + 1);
            agree = ferry__datatype_pack(origin, 3, mem, 0, mine, (MPI_Count)size * 3) == 0;
            for (MPI_Count k = 0; agree && k < (MPI_Count)size * 3; k++) agree = mine[k] == origin[map[k]];
            free(buf);
            free(mine);
        }
        free(map);
        if (agree) return mem;
        if (ft_rank == 0 && size > 0 && map != NULL && !for_reading)
            printf("indep_views: note: the host's MPI_Pack and ferry disagree on %s; drawing another\n",
                   or_describe(mem));
        or_type_free(&mem);
    }
}

static void one_round(int round, uint64_t *st)
{
    MPI_Datatype tile = random_monotone(st), slice = rank_slice(tile);
    MPI_Datatype etype = MPI_BYTE;
    MPI_Offset disp = (MPI_Offset)(ft_rand(st) % 64);
    MPI_Datatype mem = agreeing_memory_type(st, 0); /* never of size 0 */
    int mem_size;
    MPI_Type_size(mem, &mem_size);
    int count = 1 + (int)(ft_rand(st) % (uint64_t)(4096 / mem_size + 1));
    MPI_Count n = (MPI_Count)count * mem_size;
    MPI_Offset offset = (MPI_Offset)(ft_rand(st) % 50);
    uint64_t data_seed = ft_rand(st);
    MPI_Count lo, hi;
    or_span(mem, count, &lo, &hi);
    char *mem_buf = calloc((size_t)(hi - lo) + 1, 1), *origin = mem_buf - lo;
    /* Fill the memory so that its stream is this rank's data. */
    char *wanted = malloc((size_t)n + 1), *stream = malloc((size_t)n + 1);
    ft_fill(wanted, (size_t)n, data_seed + (uint64_t)ft_rank);
    MPI_Count *mem_map = or_byte_map(mem, count);
    FT_CHECK(mem_map != NULL || n == 0);
    for (MPI_Count k = 0; k < n; k++) origin[mem_map[k]] = wanted[k];
    actual_stream(mem_map, n, lo, hi, wanted, stream);

    char name_a[64], name_b[64];
    snprintf(name_a, sizeof name_a, "ferry.%d", round);
    snprintf(name_b, sizeof name_b, "host.%d", round);
    const char *path_a = ft_path(name_a), *path_b = ft_path(name_b);
    MPI_Info info = round_hints(round);
    ferry_File fa;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, path_a, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fa));
    FT_OK(ferry_File_set_view(fa, disp, etype, slice, "native", info));
    MPI_Status status;
    /* Odd rounds use the individual file pointer, even rounds explicit offsets. */
    int individual = round % 2;
    if (individual) {
        FT_OK(ferry_File_seek(fa, offset, MPI_SEEK_SET));
        FT_OK(ferry_File_write(fa, origin, count, mem, &status));
        MPI_Offset position = -1;
        FT_OK(ferry_File_get_position(fa, &position));
        FT_EQ(position, offset + n);
    } else {
        FT_OK(ferry_File_write_at(fa, offset, origin, count, mem, &status));
    }
    int got = -1;
    MPI_Get_count(&status, mem, &got);
    FT_EQ(got, count);
    FT_OK(ferry_File_sync(fa));
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_File fb;
    FT_OK(MPI_File_open(MPI_COMM_WORLD, path_b, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fb));
    FT_OK(MPI_File_set_view(fb, disp, etype, slice, "native", MPI_INFO_NULL));
    /* The host gets the same stream as plain bytes: ROMIO loops or crashes on
     * some derived memory types, and the filetype is what is compared here. */
    FT_OK(MPI_File_write_at(fb, offset, stream, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(MPI_File_close(&fb));
    MPI_Barrier(MPI_COMM_WORLD);

    if (ft_rank == 0) {
        MPI_Offset size_a, size_b;
        char *a = read_whole(path_a, &size_a), *b = read_whole(path_b, &size_b);
        char *model = calloc((size_t)size_a + 1, 1);
        build_model(model, size_a, tile, disp, offset, n, data_seed, mem_map, lo, hi);
        if (memcmp(a, model, (size_t)size_a) != 0)
            fprintf(stderr, "round %d: tile %s, disp %lld, offset %lld, memory %d elements; host file %s the model\n",
                    round, or_describe(tile), (long long)disp, (long long)offset, count,
                    size_a == size_b && memcmp(b, model, (size_t)size_a) == 0 ? "matches" : "also differs from");
        FT_EQ_MEM(a, model, (size_t)size_a);
        if (size_a != size_b || memcmp(a, b, (size_t)size_a) != 0) {
            MPI_Offset first = 0;
            while (first < size_a && first < size_b && a[first] == b[first]) first++;
            fprintf(stderr,
                    "indep_views round %d: the host's file (%lld bytes) differs from the model (%lld bytes) "
                    "first at byte %lld; tile %s\n",
                    round, (long long)size_b, (long long)size_a, (long long)first, or_describe(tile));
        }
        free(a);
        free(b);
        free(model);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* The host reads ferry's file through the same view. */
    char *host_read = malloc((size_t)n + 1);
    MPI_File fr;
    FT_OK(MPI_File_open(MPI_COMM_WORLD, path_a, MPI_MODE_RDONLY, MPI_INFO_NULL, &fr));
    FT_OK(MPI_File_set_view(fr, disp, etype, slice, "native", MPI_INFO_NULL));
    FT_OK(MPI_File_read_at(fr, offset, host_read, (int)n, MPI_BYTE, MPI_STATUS_IGNORE));
    FT_OK(MPI_File_close(&fr));
    if (memcmp(host_read, stream, (size_t)n) != 0)
        fprintf(stderr, "indep_views round %d: the host reads ferry's file differently (host bug?)\n", round);
    free(host_read);

    /* Read back with another memory type. */
    MPI_Datatype back = agreeing_memory_type(st, 1);
    int back_size;
    MPI_Type_size(back, &back_size);
    int back_count = back_size ? (int)(n / back_size) : 0;
    MPI_Count back_n = (MPI_Count)back_count * back_size;
    MPI_Count blo, bhi;
    or_span(back, back_count, &blo, &bhi);
    char *back_buf = calloc((size_t)(bhi - blo) + 1, 1), *back_origin = back_buf - blo;
    if (individual) {
        FT_OK(ferry_File_seek(fa, offset, MPI_SEEK_SET));
        FT_OK(ferry_File_read(fa, back_origin, back_count, back, &status));
    } else {
        FT_OK(ferry_File_read_at(fa, offset, back_origin, back_count, back, &status));
    }
    MPI_Get_count(&status, back, &got);
    FT_EQ(got, back_size ? back_count : 0);
    MPI_Count *back_map = or_byte_map(back, back_count);
    char *expect = calloc((size_t)(bhi - blo) + 1, 1), *expect_origin = expect - blo;
    for (MPI_Count k = 0; k < back_n; k++) expect_origin[back_map[k]] = stream[k];
    if (memcmp(back_buf, expect, (size_t)(bhi - blo)) != 0)
        fprintf(stderr, "round %d: read back into %d x %s (%s form)\n", round, back_count, or_describe(back),
                individual ? "individual" : "explicit");
    FT_EQ_MEM(back_buf, expect, (size_t)(bhi - blo));
    free(expect);
    FT_OK(ferry_File_close(&fa));
    MPI_Info_free(&info);
    free(back_map);
    free(back_buf);
    free(mem_map);
    free(stream);
    free(wanted);
    free(mem_buf);
    or_type_free(&back);
    or_type_free(&mem);
    MPI_Type_free(&slice);
    MPI_Type_free(&tile);
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    uint64_t st = ft_seed;
    for (int round = 0; round < ROUNDS; round++) one_round(round, &st);
    return ft_finish();
}

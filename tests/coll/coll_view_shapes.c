/*
 * Issue 20 item 2 (in part): views of one shape at different places share
 * one cached tree. Each rank's view is a subarray block of a 3-D array
 * (starts differ in every dimension); the view cache counts that shape
 * once, exactly as when every rank passes the very same subarray, and a
 * collective write and read through the views put every byte where the
 * host MPI-IO puts it. Two shapes dealt to ranks alternately (not in runs
 * of neighbours) are cached twice, not once per rank: as many bytes as
 * when the ranks hold them in two runs. What a rank receives at set_view
 * depends on the shapes, not on where each rank's block lies, and a view
 * set again unchanged receives only what ranks say (five words each).
 */
#include <stdlib.h>
#include <string.h>

#include "ferry_test.h"

enum { N = 8, SUB = 4 }; /* an N^3 array of doubles in SUB^3 blocks, dealt to the ranks */

static MPI_Datatype block_of(int block)
{
    int sizes[3] = {N, N, N}, subs[3] = {SUB, SUB, SUB};
    int starts[3] = {(block / 4 % 2) * SUB, (block / 2 % 2) * SUB, (block % 2) * SUB};
    MPI_Datatype t;
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* A slab of the array, `thick` planes thick, at plane `at`: a second shape beside the blocks. */
static MPI_Datatype slab_of(int thick, int at)
{
    int sizes[3] = {N, N, N}, subs[3] = {thick, N, N}, starts[3] = {at, 0, 0};
    MPI_Datatype t;
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* The cache after set_view and a collective call that needs the views (which brings it up to date:
 * set_view exchanges nothing, nor does a call whose every rank's part moves early or is empty). */
static long long cache_bytes_with(ferry_File fh, MPI_Datatype view)
{
    static const double zeros[SUB * SUB * SUB];
    FT_OK(ferry_File_set_view(fh, 0, MPI_DOUBLE, view, "native", MPI_INFO_NULL));
    FT_OK(ferry_File_write_all(fh, zeros, SUB * SUB * SUB, MPI_DOUBLE, MPI_STATUS_IGNORE));
    return ft_info_number(fh, "ferry_stats_coll_view_cache_bytes");
}

/* What this rank received at the set_view before: ferry_stats_coll_view_recv_bytes. */
static long long received(ferry_File fh)
{
    return ft_info_number(fh, "ferry_stats_coll_view_recv_bytes");
}

static void write_through(ferry_File fh, MPI_File hf, MPI_Datatype view, const double *data)
{
    if (fh) {
        FT_OK(ferry_File_set_view(fh, 0, MPI_DOUBLE, view, "native", MPI_INFO_NULL));
        FT_OK(ferry_File_write_all(fh, data, SUB * SUB * SUB, MPI_DOUBLE, MPI_STATUS_IGNORE));
        double back[SUB * SUB * SUB];
        FT_OK(ferry_File_read_at_all(fh, 0, back, SUB * SUB * SUB, MPI_DOUBLE, MPI_STATUS_IGNORE));
        FT_EQ_MEM(back, data, sizeof back);
    } else {
        FT_OK(MPI_File_set_view(hf, 0, MPI_DOUBLE, view, "native", MPI_INFO_NULL));
        FT_OK(MPI_File_write_all(hf, data, SUB * SUB * SUB, MPI_DOUBLE, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    MPI_Datatype mine = block_of(ft_rank % 8), same = block_of(0);
    ferry_File fh;
    FT_OK(ferry_File_open(MPI_COMM_WORLD, ft_path("shapes"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    long long shared = cache_bytes_with(fh, same), placed = cache_bytes_with(fh, mine);
    long long recv_placed = received(fh);
    FT_CHECK(shared > 0);
    FT_EQ(placed, shared); /* one shape, counted once, wherever each rank's block lies */
    FT_EQ(cache_bytes_with(fh, same), shared);
    FT_EQ(received(fh), recv_placed); /* one blob and every rank's displacement, either way */
    FT_CHECK(recv_placed > 5 * 8 * ft_size);
    FT_EQ(cache_bytes_with(fh, same), shared);
    FT_EQ(received(fh), 5 * 8 * ft_size); /* unchanged: only what ranks say */
    FT_OK(ferry_File_set_view(fh, 0, MPI_DOUBLE, mine, "native", MPI_INFO_NULL));
    FT_EQ(received(fh), 5 * 8 * ft_size); /* set_view alone exchanges nothing */
    FT_EQ(ft_info_number(fh, "ferry_stats_coll_view_cache_bytes"), shared);
    if (ft_size > 2) {     /* two shapes: alternating ranks, then runs of ranks */
        MPI_Datatype alternate = ft_rank % 2 ? slab_of(1, ft_rank % N) : block_of(ft_rank % 8);
        MPI_Datatype runs = ft_rank < ft_size / 2 ? block_of(ft_rank % 8) : slab_of(1, ft_rank % N);
        long long alternating = cache_bytes_with(fh, alternate), recv_alternating = received(fh);
        long long in_runs = cache_bytes_with(fh, runs);
        FT_CHECK(alternating > shared);
        FT_EQ(alternating, in_runs);
        FT_EQ(received(fh), recv_alternating);
        MPI_Type_free(&alternate);
        MPI_Type_free(&runs);
    }
    double data[SUB * SUB * SUB];
    for (int i = 0; i < SUB * SUB * SUB; i++) data[i] = ft_rank * 1000 + i;
    write_through(fh, NULL, mine, data);
    FT_OK(ferry_File_close(&fh));
    MPI_File hf;
    FT_OK(MPI_File_open(MPI_COMM_WORLD, ft_path("shapes_host"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &hf));
    write_through(NULL, hf, mine, data);
    FT_OK(MPI_File_close(&hf));
    if (ft_rank == 0) {
        size_t size = (size_t)N * N * N * sizeof(double);
        unsigned char *a = calloc(size, 1), *b = calloc(size, 1);
        FILE *fa = fopen(ft_path("shapes"), "rb"), *fb = fopen(ft_path("shapes_host"), "rb");
        FT_CHECK(fa && fb);
        FT_CHECK(fread(a, 1, size, fa) > 0 && fread(b, 1, size, fb) > 0);
        fclose(fa), fclose(fb);
        FT_EQ_MEM(a, b, size);
        free(a), free(b);
    }
    MPI_Type_free(&mine);
    MPI_Type_free(&same);
    return ft_finish();
}

#include "ferry_test.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int ft_rank, ft_size;
uint64_t ft_seed;
static char scratch[512];
static const char *program = "test";

static void set_up(int *argc, char ***argv);

void ft_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    set_up(argc, argv);
}

int ft_init_thread(int *argc, char ***argv, int required)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(argc, argv, required, &provided);
    set_up(argc, argv);
    return provided;
}

static void set_up(int *argc, char ***argv)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &ft_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ft_size);
    if (*argc > 0) {
        const char *slash = strrchr((*argv)[0], '/');
        program = slash ? slash + 1 : (*argv)[0];
    }
    const char *env = getenv("FERRY_TEST_SEED");
    ft_seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
    MPI_Bcast(&ft_seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (ft_rank == 0) printf("%s: %d ranks, FERRY_TEST_SEED=%" PRIu64 "\n", program, ft_size, ft_seed);
}

int ft_finish(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0 && scratch[0]) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
        if (system(cmd) != 0) fprintf(stderr, "%s: could not remove %s\n", program, scratch);
    }
    if (ft_rank == 0) printf("%s: passed\n", program);
    MPI_Finalize();
    return 0;
}

const char *ft_scratch_dir(void)
{
    if (scratch[0]) return scratch;
    if (ft_rank == 0) {
        const char *base = getenv("FERRY_TEST_DIR");
        snprintf(scratch, sizeof scratch, "%s/ferry-%s-XXXXXX", base ? base : "/tmp", program);
        if (!mkdtemp(scratch)) ft_fail(__FILE__, __LINE__, "mkdtemp %s failed", scratch);
    }
    MPI_Bcast(scratch, sizeof scratch, MPI_CHAR, 0, MPI_COMM_WORLD);
    return scratch;
}

const char *ft_path(const char *name)
{
    static char slots[8][600];
    static int next;
    char *slot = slots[next++ % 8];
    snprintf(slot, sizeof slots[0], "%s/%s", ft_scratch_dir(), name);
    return slot;
}

uint64_t ft_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void ft_fill(void *buf, size_t len, uint64_t seed)
{
    unsigned char *p = buf;
    uint64_t state = seed, word = 0;
    for (size_t i = 0; i < len; i++) {
        if (i % 8 == 0) word = ft_rand(&state);
        p[i] = (unsigned char)(word >> (8 * (i % 8)));
    }
}

int ft_class(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

const char *ft_errstr(int code)
{
    static char text[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (ferry_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "error code %d", code);
    return text;
}

void ft_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL [%s rank %d] %s:%d: ", program, ft_rank, file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (FERRY_TEST_SEED=%" PRIu64 ")\n", ft_seed);
    va_end(ap);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

void ft_eq_mem(const char *file, int line, const char *an, const char *bn, const void *a, const void *b, size_t len)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < len; i++)
        if (x[i] != y[i])
            ft_fail(file, line, "%s and %s differ at byte %zu of %zu: 0x%02x != 0x%02x", an, bn, i, len, x[i], y[i]);
}

void ft_expect_fail(const char *file, int line, const char *expr, int rc, int cls, const char *needle)
{
    if (rc == MPI_SUCCESS) ft_fail(file, line, "%s: expected class %d, got success", expr, cls);
    const char *text = ft_errstr(rc);
    if (ft_class(rc) != cls)
        ft_fail(file, line, "%s: expected class %d, got class %d (%s)", expr, cls, ft_class(rc), text);
    if (needle && !strstr(text, needle))
        ft_fail(file, line, "%s: error string does not contain '%s': %s", expr, needle, text);
}

void ft_skip(const char *fmt, ...)
{
    if (ft_rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    printf("%s: skipped: ", program);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

const char *ft_info_lookup(ferry_File fh, const char *key, int *found)
{
    static char value[MPI_MAX_INFO_VAL + 1];
    MPI_Info info;
    *found = 0;
    value[0] = '\0';
    FT_OK(ferry_File_get_info(fh, &info));
    MPI_Info_get(info, (char *)key, MPI_MAX_INFO_VAL, value, found);
    MPI_Info_free(&info);
    return value;
}

const char *ft_info_string(ferry_File fh, const char *key)
{
    int flag = 0;
    const char *value = ft_info_lookup(fh, key, &flag);
    if (!flag) ft_fail(__FILE__, __LINE__, "get_info lacks %s", key);
    return value;
}

const char *ft_write_text(const char *name, const char *text)
{
    const char *path = ft_path(name);
    if (ft_rank == 0) {
        FILE *file = fopen(path, "w");
        FT_CHECK(file != NULL);
        fputs(text, file);
        fclose(file);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return path;
}

long long ft_info_number(ferry_File fh, const char *key)
{
    return atoll(ft_info_string(fh, key));
}

MPI_Datatype ft_interleaved_view(int block)
{
    MPI_Datatype vec, view;
    FT_OK(MPI_Type_vector(1, block, block * ft_size, MPI_BYTE, &vec));
    FT_OK(MPI_Type_create_resized(vec, 0, (MPI_Aint)block * ft_size, &view));
    FT_OK(MPI_Type_commit(&view));
    MPI_Type_free(&vec);
    return view;
}

char ft_message[MPI_MAX_ERROR_STRING + 1];

int ft_capture(int code)
{
    int len = 0;
    ft_message[0] = '\0';
    if (code != MPI_SUCCESS) ferry_Error_string(code, ft_message, &len);
    return code;
}

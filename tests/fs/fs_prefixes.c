/*
 * File-system prefixes in file names, as ROMIO's users write them (issue
 * 33 item 1, src/fs/names.c): a known prefix is stripped at open, delete
 * and delete-on-close and chooses the layout code; a prefix of a file
 * system ferry cannot reach is refused (MPI_ERR_IO); "word:/..." with an
 * unknown word and no directory "word:" is refused (MPI_ERR_NO_SUCH_FILE);
 * other names with colons are paths. Runs in the scratch directory, so
 * relative names land there.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ferry_test.h"
#include "fs/fs.h"

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Collective: opens `name` (creating), writes this rank's byte, closes. */
static int create(const char *name, int amode)
{
    ferry_File fh;
    int rc = ferry_File_open(MPI_COMM_WORLD, name, amode | MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) return rc;
    char byte = (char)('a' + ft_rank);
    FT_OK(ferry_File_write_at(fh, ft_rank, &byte, 1, MPI_CHAR, MPI_STATUS_IGNORE));
    FT_OK(ferry_File_close(&fh));
    return MPI_SUCCESS;
}

/* Rank 0 deletes `name`; every rank learns the outcome. */
static int delete_on_rank0(const char *name)
{
    int rc = ft_rank == 0 ? ferry_File_delete(name, MPI_INFO_NULL) : MPI_SUCCESS;
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

/* `name` (with a prefix) makes the file `path`, not a file called name; delete through the prefix removes it. */
static void stripped(const char *name, const char *path)
{
    FT_OK(create(name, 0));
    MPI_Barrier(MPI_COMM_WORLD);
    if (!exists(path)) ft_fail(__FILE__, __LINE__, "open '%s' did not make '%s'", name, path);
    if (strcmp(name, path) != 0 && exists(name)) ft_fail(__FILE__, __LINE__, "open '%s' made a file of that name", name);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank looked before rank 0 deletes */
    FT_OK(delete_on_rank0(name));
    FT_CHECK(!exists(path));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void known_prefixes(void)
{
    const char *words[] = {"ufs", "UFS", "nfs", "xfs", "gpfs", "panfs", "pvfs2", "lustre", "Lustre", "testfs"};
    char name[64];
    for (int i = 0; i < (int)(sizeof words / sizeof words[0]); i++) {
        snprintf(name, sizeof name, "%s:prefixed_%d", words[i], i);
        stripped(name, name + strlen(words[i]) + 1);
    }
    char absolute[600];
    snprintf(absolute, sizeof absolute, "ufs:%s", ft_path("absolute"));
    stripped(absolute, absolute + 4);
    /* Delete on close goes through the prefix too. */
    FT_OK(create("nfs:on_close", MPI_MODE_DELETE_ON_CLOSE));
    FT_CHECK(!exists("on_close") && !exists("nfs:on_close"));
    FT_FAILS_NAMING(MPI_ERR_BAD_FILE, "no path after the prefix", create("ufs:", 0));
}

static void refused_prefixes(void)
{
    FT_FAILS_NAMING(MPI_ERR_IO, "'daos:' prefix", create("daos:/refused", 0));
    FT_FAILS_NAMING(MPI_ERR_IO, "'quobyte:' prefix", create("QUOBYTE:refused", 0));
    FT_FAILS_NAMING(MPI_ERR_IO, "'ime:' prefix", ferry_File_delete("ime:refused", MPI_INFO_NULL));
    char unknown[600];
    snprintf(unknown, sizeof unknown, "lustr:%s", ft_path("typo"));
    FT_FAILS_NAMING(MPI_ERR_NO_SUCH_FILE, "'lustr:' is not a file-system prefix", create(unknown, 0));
    FT_FAILS_NAMING(MPI_ERR_NO_SUCH_FILE, "'lustr:' is not a file-system prefix",
                    ferry_File_delete(unknown, MPI_INFO_NULL));
    FT_CHECK(!exists("refused") && !exists(ft_path("typo")));
}

/* Names that hold a colon but no prefix ferry knows are paths. */
static void colons_in_paths(void)
{
    stripped("./dot:slash", "./dot:slash");
    char absolute[600];
    snprintf(absolute, sizeof absolute, "%s", ft_path("x:y"));
    stripped(absolute, absolute);
    stripped("nosuch_fstype:plain.out", "nosuch_fstype:plain.out"); /* MPICH 4.1's fstype_prefix test */
    stripped("run:12:30.dat", "run:12:30.dat");
    if (ft_rank == 0) FT_CHECK(mkdir("mydir:", 0777) == 0 || exists("mydir:"));
    MPI_Barrier(MPI_COMM_WORLD);
    stripped("mydir:/inside", "mydir:/inside"); /* "word:/..." through an existing directory "word:" */
    MPI_Barrier(MPI_COMM_WORLD);
    if (ft_rank == 0) FT_CHECK(rmdir("mydir:") == 0);
}

/* ROMIO_FSTYPE_FORCE (MPICH 4.1): a prefix for names without a colon. */
static void forced_prefix(void)
{
    setenv("ROMIO_FSTYPE_FORCE", "lustre:", 1);
    stripped("forced", "forced");
    setenv("ROMIO_FSTYPE_FORCE", "nosuch:", 1); /* unknown: ignored, as in ROMIO */
    stripped("forced", "forced");
    setenv("ROMIO_FSTYPE_FORCE", "daos:", 1);
    FT_FAILS_NAMING(MPI_ERR_IO, "'daos:' prefix", create("forced", 0));
    unsetenv("ROMIO_FSTYPE_FORCE");
}

/* The prefix chooses the layout code: recorded on the open file. */
static void layout_kind(void)
{
    const struct {
        const char *name;
        int kind;
    } cases[] = {{"lustre:kind", FERRY_FS_KIND_LUSTRE}, {"ufs:kind", FERRY_FS_KIND_UNIX}, {"kind", FERRY_FS_KIND_AUTO}};
    for (int i = 0; i < 3; i++) {
        ferry__fs_file_t *f = NULL;
        char name[64];
        snprintf(name, sizeof name, "%s%d", cases[i].name, ft_rank);
        FT_OK(ferry__fs_open(name, FERRY_FS_READ | FERRY_FS_WRITE | FERRY_FS_CREATE, &f));
        FT_EQ(f->kind, cases[i].kind);
        ferry__fs_layout_t layout = {0};
        FT_OK(ferry__fs_layout(f, &layout)); /* not Lustre here: the ioctl fails, one target */
        FT_EQ(layout.stripe_count, 1);
        FT_EQ(layout.stripe_size, layout.block_size);
        FT_OK(ferry__fs_close(f));
        FT_OK(ferry__fs_remove(name));
        FT_CHECK(!exists(strchr(name, ':') ? strchr(name, ':') + 1 : name));
    }
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    FT_CHECK(chdir(ft_scratch_dir()) == 0);
    unsetenv("ROMIO_FSTYPE_FORCE");
    known_prefixes();
    refused_prefixes();
    colons_in_paths();
    forced_prefix();
    layout_kind();
    return ft_finish();
}

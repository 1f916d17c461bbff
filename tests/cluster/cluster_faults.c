/*
 * The job side of the cluster fault suite (cluster_faults.h; the driver is
 * tools/cluster-faults).
 *
 * usage: cluster_faults ferry|host coll|indep|read|container|ckpt CTL DATA
 *                       [--rehearse] [--sparse] [--megabytes M]
 */
#include "cluster_faults.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "error/error.h"

double fx_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int fx_record(fx_outcome_t *o, int rc, double t0)
{
    o->t0 = t0;
    o->t1 = fx_now();
    o->cls = rc == MPI_SUCCESS ? 0 : ft_class(rc);
    ft_capture(rc);
    snprintf(o->message, sizeof o->message, "%s", ft_message);
    return rc;
}

void fx_merge(fx_outcome_t *o, const fx_outcome_t *later)
{
    o->t1 = later->t1;
    if (o->cls == 0 && later->cls != 0) {
        o->cls = later->cls;
        memcpy(o->message, later->message, sizeof o->message);
    }
}

static void ctl_path(const fx_run_t *run, const char *name, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", run->ctl, name);
}

void fx_mark(const fx_run_t *run, const char *name, const char *text)
{
    if (ft_rank != 0) return;
    char path[1024], tmp[1100];
    ctl_path(run, name, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.part", path);
    FILE *f = fopen(tmp, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, path) != 0)
        ft_fail(__FILE__, __LINE__, "cannot write the marker %s", path);
}

/* Tabs and line breaks of a message would break the outcome line. */
static void one_line(char *text)
{
    for (char *c = text; *c; c++)
        if (*c == '\t' || *c == '\n' || *c == '\r') *c = ' ';
}

static void write_outcomes(const fx_run_t *run, const char *phase, fx_outcome_t *all, const char *hosts)
{
    size_t len = (size_t)ft_size * (FX_MESSAGE + 256), used = 0;
    char *text = malloc(len), name[64];
    FT_CHECK(text != NULL);
    text[0] = '\0';
    for (int r = 0; r < ft_size; r++) {
        one_line(all[r].message);
        used += (size_t)snprintf(text + used, len - used, "%d\t%s\t%s\t%.6f\t%.6f\t%lld\t%lld\t%s\n", r,
                                 hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME,
                                 all[r].cls ? ferry__error_class_name(all[r].cls) : "MPI_SUCCESS", all[r].t0, all[r].t1,
                                 all[r].extra[0], all[r].extra[1], all[r].message);
    }
    snprintf(name, sizeof name, "%s.out", phase);
    fx_mark(run, name, text);
    free(text);
}

void fx_report(const fx_run_t *run, const char *phase, const fx_outcome_t *mine, fx_outcome_t *all)
{
    fx_outcome_t *gathered = malloc(sizeof *gathered * (size_t)ft_size);
    char *hosts = malloc((size_t)ft_size * MPI_MAX_PROCESSOR_NAME), host[MPI_MAX_PROCESSOR_NAME] = "";
    int len;
    FT_CHECK(gathered && hosts);
    MPI_Get_processor_name(host, &len);
    MPI_Gather(mine, (int)sizeof *mine, MPI_BYTE, gathered, (int)sizeof *mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (ft_rank == 0) {
        if (all) memcpy(all, gathered, sizeof *gathered * (size_t)ft_size);
        write_outcomes(run, phase, gathered, hosts);
    }
    free(gathered);
    free(hosts);
}

void fx_wait(const fx_run_t *run, const char *phase)
{
    char path[1024], name[64];
    snprintf(name, sizeof name, "%s.go", phase);
    ctl_path(run, name, path, sizeof path);
    /* Every rank polls (no rank spins in a barrier for seconds beside its node's FUSE client). */
    struct stat st;
    while (stat(path, &st) != 0) usleep(10000);
    MPI_Barrier(MPI_COMM_WORLD);
}

void fx_ready(const fx_run_t *run, double seconds, const char *target)
{
    double longest = 0;
    MPI_Reduce(&seconds, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    char text[1200];
    snprintf(text, sizeof text, "seconds\t%.6f\ntarget\t%s\n", longest, target);
    fx_mark(run, "ready", text);
    fx_wait(run, "ready");
}

void fx_begin_call(const fx_run_t *run)
{
    MPI_Barrier(MPI_COMM_WORLD);
    char text[64];
    snprintf(text, sizeof text, "%.6f\n", fx_now());
    fx_mark(run, "in-call", text);
}

static int parse(int argc, char **argv, fx_run_t *run)
{
    if (argc < 5) return 0;
    *run =
        (fx_run_t){.host = !strcmp(argv[1], "host"), .call = argv[2], .ctl = argv[3], .data = argv[4], .megabytes = 4};
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "--rehearse")) run->rehearse = 1;
        else if (!strcmp(argv[i], "--sparse")) run->sparse = 1;
        else if (!strcmp(argv[i], "--megabytes") && i + 1 < argc) run->megabytes = atoll(argv[++i]);
        else return 0;
    }
    return run->megabytes > 0 && (run->host || !strcmp(argv[1], "ferry"));
}

int main(int argc, char **argv)
{
    ft_init(&argc, &argv);
    fx_run_t run;
    if (!parse(argc, argv, &run))
        ft_fail(__FILE__, __LINE__,
                "usage: cluster_faults ferry|host coll|indep|read|container|ckpt CTL DATA "
                "[--rehearse] [--sparse] [--megabytes M]");
    if (!strcmp(run.call, "container")) fx_container_case(&run);
    else if (!strcmp(run.call, "ckpt")) fx_ckpt_case(&run);
    else if (!strcmp(run.call, "coll") || !strcmp(run.call, "indep") || !strcmp(run.call, "read")) fx_mpiio_case(&run);
    else ft_fail(__FILE__, __LINE__, "unknown call '%s'", run.call);
    return ft_finish();
}

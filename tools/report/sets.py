"""The runs of the quick and the full set (tools/ferry-report).

A run is one ferry-bench workload at one rank count with fixed options; the
set runs it once per host contender (hosts below) unless it names its own.
Sizes: the quick set keeps each run to a few seconds on a quiet 2-core
machine (about three minutes in all); the full set is what the
docs/benchmarks*.md tables were measured with. `smoke` shrinks everything
to check the machinery (the test of the JSON fields).
"""
import os

# Host MPI-IO contenders: which build, which mpiexec options.
HOSTS = {
    "ompio": {"mpi": "openmpi", "label": "Open MPI OMPIO", "mca": []},
    "romio321": {"mpi": "openmpi", "label": "Open MPI ROMIO 3.2.1", "mca": ["--mca", "io", "romio321"]},
    "mpich": {"mpi": "mpich", "label": "MPICH ROMIO", "mca": []},
}
PER_MPI = ["ompio", "mpich"]  # workloads whose host side does not depend on the MPI-IO component

# Report sections, in order: id, title, what the section shows.
SECTIONS = [
    ("overview", "Ratios to each host", ""),
    ("contig", "Contiguous blocks (contig)", "Each rank writes then reads its own block; POSIX is the ceiling."),
    ("volume", "Volume scaling (contig)", "The contiguous workload from 4 MiB to 1 GiB per run."),
    ("noncontig", "Noncontiguous vectors (noncontig, seed 001)", "Blocks of 8 B and 1 KiB, four memory/file cases."),
    ("scaling", "Rank scaling (noncontig collective, btio)", "1 to 16 ranks on 2 cores: oversubscribed above 2."),
    ("btio", "BTIO-like subarrays (btio)", "One write_all and one read_all of a 3-D array."),
    ("discontig", "Random blocks with guided prefetching (discontig, seed 000)", ""),
    ("mar", "Multiple access ranges (mar, seed 000)", "Interleaved sub-ranges in one read: guided prefetch vs none, on disk."),
    ("partition", "File partitioning (partition, seed 000)", "Small random records per rank, with and without MPI_MODE_UNIQUE_OPEN."),
    ("views", "Huge irregular views (views, issue 20)", "An indexed filetype of 1-3-int blocks dealt round-robin: "
     "set_view and write_all seconds and peak memory (lower is better), ferry's view-cache bound in force."),
    ("calls", "A collective call's fixed cost (calls, issue 31)", "write_at_all and read_at_all of 0, 1 KiB and "
     "64 KiB per rank, regular (every rank the same window of its view) and irregular: median microseconds per "
     "call, lower is better."),
    ("open", "Open and close (open, issue 20)", "open+close of one file repeated, alone and with one write_shared: "
     "median ms per cycle, lower is better."),
    ("ylib", "Y-Lib stripe-aware aggregation (ylib, seed 002)", "Strided write_all on a striped layout given by hints."),
    ("types", "Datatype engine (types)", "Pack and unpack against the host's MPI_Pack."),
    ("overlap", "Background I/O (overlap)", "Nonblocking writes hidden behind computation."),
    ("container", "Task-local container (issue 16)", "N task-local files against one ferry container (and one plain "
     "shared file, the ceiling of any one-file container): create, write, read. No host MPI-IO in it: the "
     "'x host' column is the speed ratio to task-local files. Sweeps over N: `tools/bench/bench-container.sh`."),
    ("cluster", "On the cluster in a box (issue 27)", "The same workloads on tools/cluster's nodes (network "
     "namespaces on one bridge, TCP between nodes, shared memory inside one) with the files on its GlusterFS "
     "volume, one FUSE client per node, 4 ranks on 2 nodes (cluster2-) or 4 nodes (cluster4-) (docs/cluster.md). "
     "Every contender runs on the same mount in the same run."),
    ("ckpt", "Checkpoint/restart (issue 17)", "Seconds per checkpoint (lower is better) of an ocean model's "
     "3-D and 2-D fields through each ferry_ckpt strategy, on ferry and on the host MPI-IO through the same code, "
     "each a set's second checkpoint (docs/checkpoint.md)."),
]


def run(section, rid, workload, args, ranks=4, hosts=None, x=None, nodes=0):
    """One run; x: (name, value) placing it on a plot axis (ranks, volume); nodes: on tools/cluster's nodes."""
    return {"section": section, "id": rid, "workload": workload, "args": list(args), "ranks": ranks,
            "hosts": hosts or list(HOSTS), "x": x, "nodes": nodes}


CLUSTER_DIR = os.path.join(os.environ.get("FERRY_CLUSTER_MOUNT", "/mnt/ferry-cluster"), "bench")


def cluster_runs(sizes, reps, nodes=2, ranks=4):
    """The quick set's families on the cluster (issue 27 item 5): noncontig collective and independent,
    BTIO, the checkpoint strategies, the container against task-local files, contiguous blocks. Calls of a
    few milliseconds there measure the scheduler of its time-shared cores more than the I/O: the noncontig
    runs move 2 MiB per rank (8 times the quick set's), and every run repeats at least 5 times."""
    reps = str(max(int(reps), 5))
    d, tag = ["--dir", CLUSTER_DIR], "cluster%d-" % nodes
    c = lambda rid, workload, args, hosts=None: run("cluster", tag + rid, workload, d + args, ranks=ranks,
                                                    hosts=hosts, nodes=nodes)
    return [
        c("contig", "contig", ["--total", sizes["contig"], "--reps", reps]),
        c("noncontig-coll", "noncontig", ["--mode", "collective", "--bytes", sizes["nc_cluster"], "--reps", reps]),
        c("noncontig-indep", "noncontig", ["--bytes", sizes["nc_cluster"], "--host-budget", sizes["budget"],
                                           "--reps", reps]),
        c("btio", "btio", ["--class", sizes["btio"], "--reps", reps]),
        c("ckpt", "ckpt", ["--n", sizes["ckpt_n"], "--reps", reps]),
        c("calls", "calls", ["--cycles", sizes["calls"], "--reps", reps]),
        c("container", "container", ["--bytes", sizes["container"], "--reps", reps], hosts=PER_MPI),
    ]


def _scaling(sizes, rank_counts, btio_class, reps):
    runs = []
    for n in rank_counts:
        runs.append(run("scaling", "noncontig-coll-np%d" % n, "noncontig",
                        ["--mode", "collective", "--blocklen", "256", "--bytes", sizes["nc_scale"], "--reps", reps],
                        ranks=n, x=("ranks", n)))
        runs.append(run("scaling", "btio-np%d" % n, "btio", ["--class", btio_class, "--reps", reps],
                        ranks=n, x=("ranks", n)))
    return runs


def _volume(volumes, reps):
    return [run("volume", "contig-%s" % v, "contig", ["--total", v, "--reps", reps], x=("volume", v))
            for v in volumes]


def _set(sizes, reps, rank_counts, volumes, btio_class, btio_scale_class):
    shm, disk = ["--dir", "/dev/shm"], ["--dir", os.environ.get("FERRY_BENCH_DISK_DIR", sizes["disk"])]
    runs = [
        run("contig", "contig-shm", "contig", shm + ["--total", sizes["contig"], "--reps", reps]),
        run("contig", "contig-disk", "contig", disk + ["--total", sizes["contig"], "--reps", reps]),
        run("noncontig", "noncontig-coll", "noncontig",
            shm + ["--mode", "collective", "--bytes", sizes["nc"], "--reps", reps]),
        run("noncontig", "noncontig-indep", "noncontig",
            shm + ["--bytes", sizes["nc"], "--host-budget", sizes["budget"], "--reps", reps]),
        run("btio", "btio-shm", "btio", shm + ["--class", btio_class, "--reps", reps]),
        run("btio", "btio-disk", "btio", disk + ["--class", btio_class, "--reps", reps]),
        run("discontig", "discontig-disk", "discontig", disk + ["--total", sizes["discontig"], "--reps", reps]),
        run("mar", "mar-disk", "mar", disk + ["--total", sizes["mar"], "--reps", reps]),
        run("partition", "partition-shm", "partition", shm + ["--bytes", sizes["partition"], "--reps", reps]),
        run("partition", "partition-disk", "partition", disk + ["--bytes", sizes["partition"], "--reps", reps]),
        run("views", "views-shm", "views", shm + ["--blocks", sizes["views"], "--reps", reps]),
        run("open", "open-shm", "open", shm + ["--cycles", sizes["open"], "--reps", reps]),
        run("calls", "calls-shm", "calls", shm + ["--cycles", sizes["calls"], "--reps", reps]),
        run("open", "open-disk", "open", disk + ["--cycles", sizes["open"], "--reps", reps]),
        run("ylib", "ylib-shm", "ylib", shm + ["--bytes", sizes["ylib"], "--reps", reps]),
        run("types", "types", "types", ["--bytes", sizes["types"], "--reps", reps], ranks=1, hosts=PER_MPI),
        run("overlap", "overlap-disk", "overlap", disk + ["--size", sizes["overlap"], "--reps", reps],
            hosts=PER_MPI),
        run("container", "container-shm", "container", shm + ["--bytes", sizes["container"], "--reps", reps],
            hosts=PER_MPI),
        run("container", "container-disk", "container", disk + ["--bytes", sizes["container"], "--reps", reps],
            hosts=PER_MPI),
        run("ckpt", "ckpt", "ckpt", shm + ["--n", sizes["ckpt_n"], "--reps", reps]),
    ]
    return runs + _volume(volumes, reps) + _scaling(sizes, rank_counts, btio_scale_class, reps)


QUICK_SIZES = {"calls": "30", "nc_cluster": "2m", "btio": "A", "contig": "64m", "nc": "256k", "nc_scale": "256k", "budget": "0.5", "discontig": "16m",
               "mar": "32m", "partition": "8m", "ylib": "4m", "types": "64k", "overlap": "16m", "ckpt_n": "256", "disk": "/var/tmp",
               "container": "16m", "open": "20", "views": "1m"}
FULL_SIZES = {"calls": "100", "nc_cluster": "4m", "btio": "B", "contig": "1g", "nc": "4m", "nc_scale": "4m", "budget": "2", "discontig": "64m", "mar": "256m",
              "partition": "16m", "ylib": "64m", "types": "256k", "overlap": "64m", "ckpt_n": "512", "disk": "/var/tmp",
              "container": "64m", "open": "40", "views": "10m"}
SMOKE_SIZES = {"calls": "3", "nc_cluster": "16k", "btio": "S", "contig": "1m", "nc": "16k", "nc_scale": "16k", "budget": "0.2", "discontig": "256k",
               "mar": "1m", "partition": "64k", "ylib": "256k", "types": "16k", "overlap": "1m", "ckpt_n": "64", "disk": "/var/tmp",
               "container": "256k", "open": "2", "views": "10k"}


def runs_of(name, cluster=False):
    """The runs of the set `name`: quick, full or smoke; the full set always has the cluster's runs, the
    quick one when `cluster` (both at 2 and at 4 nodes), the smoke one at 2 nodes when `cluster`."""
    if name == "full":
        return (_set(FULL_SIZES, "5", [1, 2, 4, 8, 16], ["4m", "16m", "64m", "256m", "1g"], "B", "B")
                + cluster_runs(FULL_SIZES, "5") + cluster_runs(FULL_SIZES, "5", nodes=4))
    if name == "smoke":
        return _set(SMOKE_SIZES, "1", [1, 2], ["1m", "2m"], "S", "S") + (cluster_runs(SMOKE_SIZES, "1") if cluster else [])
    return _set(QUICK_SIZES, "3", [1, 2, 4], ["4m", "16m", "64m"], "A", "A") + (
        cluster_runs(QUICK_SIZES, "3") + cluster_runs(QUICK_SIZES, "3", nodes=4) if cluster else [])

"""Running a set: one ferry-bench process group per run and host, JSON kept.

Each run's JSON goes to <out>/json/<host>/<run id>.json and its text
output to <out>/raw/<host>/<run id>.txt; a run that fails or times out is
recorded in <out>/json/<host>/<run id>.failed with its exit status, and the
set goes on.
"""
import fcntl
import os
import shlex
import signal
import subprocess
import sys
import time

from sets import HOSTS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def default_bench(mpi):
    return os.path.join(ROOT, "build", "release-" + mpi, "bench", "ferry-bench")


def build(mpis):
    """The release builds the set needs (tools/setup.sh installs missing packages first)."""
    for mpi in mpis:
        subprocess.run([os.path.join(ROOT, "tools", "setup.sh"), "release-" + mpi], check=True)


def workloads_of(bench):
    """The workloads a ferry-bench binary offers (from its --help)."""
    out = subprocess.run([bench, "--help"], capture_output=True, text=True).stdout
    names, listing = set(), False
    for line in out.splitlines():
        if line.startswith("workloads:"):
            listing = True
        elif listing and line.startswith("  "):
            names.add(line.split()[0])
        elif listing:
            break
    return names


CLUSTER = os.path.join(ROOT, "tools", "cluster")


def launcher(host, ranks, run_mpi=None, nodes=0):
    """(argv prefix, extra environment) that starts `ranks` processes for `host` (on tools/cluster's nodes
    when `nodes`)."""
    spec = HOSTS[host]
    env = {}
    if nodes:  # the hosts' bytes may be wrong there: marked in the row, not a failed run (docs/cluster.md)
        env = {"FERRY_CLUSTER_MPIRUN_ARGS": " ".join(spec["mca"]), "FERRY_BENCH_HOST_WRONG_OK": "1"}
        return [CLUSTER, "run", "--mpi", spec["mpi"], "-n", str(ranks), "--"], env
    if run_mpi:  # the test suite's runner (tests/common/run_mpi.sh): the same flags the tests use
        if spec["mca"]:
            env["OMPI_MCA_io"] = spec["mca"][-1]
        return [run_mpi, "600", str(ranks)], env
    if spec["mpi"] == "openmpi":
        env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        return ["mpiexec.openmpi", "--oversubscribe", "--bind-to", "none"] + spec["mca"] + ["-n", str(ranks)], env
    return ["mpiexec.mpich", "-launcher", "fork", "-n", str(ranks)], env


def _paths(out, host, rid):
    json_dir, raw_dir = os.path.join(out, "json", host), os.path.join(out, "raw", host)
    os.makedirs(json_dir, exist_ok=True)
    os.makedirs(raw_dir, exist_ok=True)
    return (os.path.join(json_dir, rid + ".json"), os.path.join(raw_dir, rid + ".txt"),
            os.path.join(json_dir, rid + ".failed"))


def _run_bounded(argv, env, timeout):
    """(exit status, output) of argv, 124 when it outlived timeout seconds. The launcher and every rank it
    started run in a process group of their own, killed whole on a timeout: killing the launcher alone
    left hung ranks spinning for the rest of the set."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return 124, "timed out after %s s\n%s" % (timeout, out or "")


def run_one(r, host, bench, out, options):
    """Runs r on host; returns (seconds, exit status)."""
    json_path, raw_path, failed_path = _paths(out, host, r["id"])
    for stale in (json_path, failed_path):
        if os.path.exists(stale):
            os.remove(stale)
    prefix, env = launcher(host, r["ranks"], options.get("run_mpi"), r.get("nodes", 0))
    argv = prefix + [bench, r["workload"]] + r["args"] + ["--json", os.path.abspath(json_path)]
    env = dict(os.environ, **env)
    env["FERRY_BENCH_LAUNCHER"] = " ".join(shlex.quote(a) for a in prefix)
    if options.get("hints"):
        env["FERRY_HINTS"] = os.path.abspath(options["hints"])
    start = time.time()
    status, text = _run_bounded(argv, env, options.get("timeout", 1800))
    with open(raw_path, "w") as f:
        f.write("$ " + " ".join(shlex.quote(a) for a in argv) + "\n" + text)
    if status == 0 and not os.path.exists(json_path):
        status = 3  # a workload that parses argv by hand ignores --json: see docs/report.md
        text += "\nno JSON written: the workload has not adopted bench_parse/bench_finish yet\n"
    if status != 0:
        with open(failed_path, "w") as f:
            f.write("exit status %d; output in %s\n" % (status, os.path.relpath(raw_path, out)))
    return time.time() - start, status


def run_set(runs, hosts, benches, outs, options):
    """Every run on every host it names among `hosts`, once per output folder in `outs` (the rounds, one
    whole set after the other); returns the failures [(host, id, status)] and the runs made."""
    failures, todo = [], [(r, h) for r in runs for h in hosts if h in r["hosts"]]
    offered = {mpi: workloads_of(path) for mpi, path in benches.items()}
    todo = [(r, h) for r, h in todo if r["workload"] in offered[HOSTS[h]["mpi"]]]
    started = time.time()
    print("ferry-report: %d runs (%s), %d round(s) -> %s" % (len(todo), ", ".join(hosts), len(outs), outs[0]),
          flush=True)
    cluster = ClusterNodes()
    for k, out in enumerate(outs):
        for i, (r, h) in enumerate(todo):
            cluster.have(r.get("nodes", 0))
            print("ferry-report: [%d/%d%s] %s on %s, %d ranks: ferry-bench %s %s" %
                  (i + 1, len(todo), ", round %d" % (k + 1) if len(outs) > 1 else "", r["id"], HOSTS[h]["label"],
                   r["ranks"], r["workload"], " ".join(r["args"])), flush=True)
            seconds, status = run_one(r, h, benches[HOSTS[h]["mpi"]], out, options)
            if status != 0:
                failures.append((h, r["id"], status))
                print("ferry-report:   FAILED (exit %d), see %s/raw/%s/%s.txt" % (status, out, h, r["id"]),
                      file=sys.stderr, flush=True)
            else:
                print("ferry-report:   %.1f s" % seconds, flush=True)
    cluster.done()
    print("ferry-report: %d runs in %.0f s, %d failed" % (len(todo) * len(outs), time.time() - started,
                                                          len(failures)), flush=True)
    return failures, len(todo) * len(outs)


class ClusterNodes:
    """Brings tools/cluster up with the node count a run needs (leaving one that is already so), and down at
    the end if it brought it up."""

    def __init__(self):
        self.nodes, self.brought_up, self.lock = self._current(), False, None

    @staticmethod
    def _current():
        env = subprocess.run([CLUSTER, "env"], capture_output=True, text=True).stdout
        for line in env.splitlines():
            if line.startswith("FERRY_CLUSTER_NODES="):
                return len(line.split("=", 1)[1].strip('"').split())
        return 0

    @staticmethod
    def _standard(nodes):
        """Whether the cluster that is up was built as a benchmark wants it (not, say, with a fault suite's
        small brick; tools/cluster keeps how it was brought up) and still works (a run killed from outside
        leaves dead clients behind, which `tools/cluster status` finds)."""
        try:
            with open("/run/ferry-cluster/up-args") as f:
                if f.read().split() != ["--nodes", str(nodes)]:
                    return False
        except OSError:
            pass
        return subprocess.run([CLUSTER, "status"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0

    def have(self, nodes):
        if nodes and self.lock is None:  # one cluster user at a time (tests/cluster/run-cluster-tests.sh too)
            self.lock = open("/run/ferry-cluster.lock", "w")
            fcntl.flock(self.lock, fcntl.LOCK_EX)
            self.nodes = self._current()
        if nodes and (nodes != self.nodes or not self._standard(nodes)):
            subprocess.run([CLUSTER, "up", "--nodes", str(nodes)], check=True)
            self.nodes, self.brought_up = nodes, True
        if nodes:  # also on a cluster someone else left up
            os.makedirs(os.path.join(os.environ.get("FERRY_CLUSTER_MOUNT", "/mnt/ferry-cluster"), "bench"),
                        exist_ok=True)

    def done(self):
        if self.brought_up:
            subprocess.run([CLUSTER, "down"], check=True)
        if self.lock is not None:
            self.lock.close()

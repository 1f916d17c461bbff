#!/usr/bin/env bash
# Multi-level checkpoints on tools/cluster's nodes (issue 30, docs/checkpoint.md "Multi-level
# checkpoints"): every node's local storage is its own tmpfs at /mnt/ferry-local, the shared
# directory is on the GlusterFS volume.
#
# usage: [FERRY_MPI=mpich] tests/cluster/run-levels-cluster.sh [--nodes N] [--per-node K] [--mib M] [--reps R]
#                                                               [--no-time] [--scenario S] [--ctest] BUILD_DIR
#   1. (unless --no-time or a single scenario) R alternating runs: the shared-file write against level 1 and
#      level 1 + partner copy, and a drained write (its call, then its drain_wait); medians, slowest rank;
#   2. scenario "partner": steps 1 and 2 written at every level; node 2's local storage emptied; restart:
#      step 2 from level 2 (the partner copies on node 3, or node 1 with 2 nodes), every value checked;
#      then every node's local storage emptied; restart: step 2 from level 3 (the netCDF file);
#   3. scenario "drain": step 1 written at every level, step 2 written and the job killed (SIGKILL on every
#      rank) while its drain runs; no netCDF file of step 2; restart: step 2 from level 1, every value
#      checked; then every node's local storage emptied; restart: step 1 from level 3.
#   --scenario partner|drain|all (default all: the timing, then both).
#   Alone, it holds /run/ferry-cluster.lock, brings the cluster up with N nodes (default 2) and takes it down.
#   --ctest (ctest's tests ckpt_levels_partner and ckpt_levels_drain, run by
#   tests/cluster/run-cluster-tests.sh): exit 77 (skipped) unless FERRY_TEST_CLUSTER is set; with it, the
#   caller holds the lock and the cluster is up: the scenario runs on that cluster (its N nodes, 4 ranks
#   spread evenly, 4 MiB each by default) in FERRY_TEST_DIR, without taking the lock (it would wait for
#   its own caller) and without up or down.
set -uo pipefail
root_dir=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$root_dir/tools/cluster
nodes=2 per_node="" mib="" reps=5 timing=1 scenario=all ctest=0
while [ $# -gt 1 ]; do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --per-node) per_node=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --no-time) timing=0; shift ;;
    --scenario) scenario=$2; shift 2 ;;
    --ctest) ctest=1; shift ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] && [[ $scenario =~ ^(partner|drain|all)$ ]] || {
  echo "usage: $0 [--nodes N] [--per-node K] [--mib M] [--reps R] [--no-time] [--scenario partner|drain|all] [--ctest] BUILD_DIR" >&2
  exit 2
}
job=$(cd "$1" && pwd)/tests/cluster/ckpt_levels_job
[ -x "$job" ] || { echo "no $job (build first)" >&2; exit 2; }
[ "$scenario" = all ] || timing=0

if [ $ctest = 1 ]; then
  [ -n "${FERRY_TEST_CLUSTER:-}" ] || { echo "skipped: runs on tools/cluster's nodes (tests/cluster/run-cluster-tests.sh)"; exit 77; }
  eval "$("$cluster" env)"
  nodes=$(echo $FERRY_CLUSTER_NODES | wc -w)
  [ "$nodes" -ge 2 ] || { echo "the cluster is down or has one node ($FERRY_CLUSTER_NODES)" >&2; exit 1; }
  per_node=${per_node:-$(( (4 + nodes - 1) / nodes ))}
  mib=${mib:-4}
  parent=${FERRY_TEST_DIR:?FERRY_TEST_DIR names the cluster run\'s directory}
else
  exec 9>/run/ferry-cluster.lock
  flock 9
  FERRY_CLUSTER_LOCAL_SIZE=${FERRY_CLUSTER_LOCAL_SIZE:-1G} "$cluster" up --nodes "$nodes" >/dev/null || exit 1
  trap '"$cluster" down >/dev/null 2>&1' EXIT
  eval "$("$cluster" env)"
  per_node=${per_node:-2}
  mib=${mib:-16}
  parent=$FERRY_CLUSTER_MOUNT
fi
ranks=$((nodes * per_node))
[ "$nodes" -ge 2 ] && [ "$ranks" -ge 2 ] || { echo "needs 2 nodes or more" >&2; exit 2; }
local=$FERRY_CLUSTER_LOCAL
status=0

run() { "$cluster" run -n "$ranks" --per-node "$per_node" -- "$job" "$@"; }
fail() { echo "run-levels-cluster: $*"; status=1; }
empty_local() { # every node's (or the nodes given) local storage lost
  local n
  for n in ${*:-$FERRY_CLUSTER_NODES}; do "$cluster" exec "$n" -- sh -c "rm -f $local/*" || fail "could not empty $n's $local"; done
}
# A killed job: every rank SIGKILLs itself while the drain (held by FERRY_CKPT_DRAIN_DELAY) runs.
killed_write() {
  local delay="-x FERRY_CKPT_DRAIN_DELAY=5000"
  [ "${FERRY_MPI:-openmpi}" = mpich ] && delay="-genv FERRY_CKPT_DRAIN_DELAY 5000"
  FERRY_CLUSTER_MPIRUN_ARGS=$delay run write "$@" die >/dev/null 2>&1
}

scenario_partner() {
  local dir=$1
  run write "$dir" "$local" "$mib" 1 && run write "$dir" "$local" "$mib" 2 || fail "partner: writing steps 1-2 failed"
  empty_local n2
  echo "node n2's local storage emptied"
  run restart "$dir" "$local" "$mib" 2 2 || fail "partner: no step 2 from level 2"
  empty_local
  echo "every node's local storage emptied"
  run restart "$dir" "$local" "$mib" 2 3 || fail "partner: no step 2 from level 3"
}

scenario_drain() {
  local dir=$1
  run write "$dir" "$local" "$mib" 1 || fail "drain: writing step 1 failed"
  killed_write "$dir" "$local" "$mib" 2
  echo "step 2 written at levels 1-2, the job killed during its drain"
  [ -e "$dir/ml.000000000002.nc" ] && fail "drain: the killed drain committed step 2"
  run restart "$dir" "$local" "$mib" 2 1 || fail "drain: no step 2 from level 1"
  empty_local
  echo "every node's local storage emptied"
  run restart "$dir" "$local" "$mib" 1 3 || fail "drain: no step 1 from level 3"   # step 2 was never drained
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS
if [ $timing = 1 ]; then
  dir=$parent/levels-time.$$
  mkdir -p "$dir"
  run time "$dir" "$local" "$mib" "$reps" || fail "the timed runs failed"
  empty_local
  rm -rf "$dir"
  echo "load after timing: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
for s in partner drain; do
  [ "$scenario" = all ] || [ "$scenario" = $s ] || continue
  dir=$parent/levels-$s.$$
  rm -rf "$dir"; mkdir -p "$dir"
  empty_local   # a scenario starts with every level empty: none finds another's files
  scenario_$s "$dir"
  empty_local
  rm -rf "$dir"
done
echo "run-levels-cluster $scenario: $([ $status = 0 ] && echo passed || echo FAILED) ($nodes nodes x $per_node ranks," \
     "$mib MiB per rank, ${FERRY_MPI:-openmpi}, $((SECONDS - start)) s)"
exit $status

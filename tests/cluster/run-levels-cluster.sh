#!/usr/bin/env bash
# Multi-level checkpoints on tools/cluster's nodes (issue 30, docs/checkpoint.md "Multi-level
# checkpoints"): every node's local storage is its own tmpfs at /mnt/ferry-local, the shared
# directory is on the GlusterFS volume.
#
# usage: [FERRY_MPI=mpich] tests/cluster/run-levels-cluster.sh [--nodes N] [--per-node K] [--mib M] [--reps R] [--no-time] BUILD_DIR
#   1. (unless --no-time) R alternating runs: the shared-file write against level 1 and level 1 +
#      partner copy, and a drained write (its call, then its drain_wait); medians, slowest rank;
#   2. steps 1 and 2 written at every level; node 2's local storage emptied; restart: step 2 from
#      level 2 (the partner copies on node 3, or node 1 with 2 nodes), every value checked;
#   3. step 3 written, the job killed (SIGKILL on every rank) while its drain runs; restart: step 3
#      from level 1, every value checked; no netCDF file of step 3;
#   4. every node's local storage emptied; restart: step 2 from level 3 (the netCDF file).
# Holds /run/ferry-cluster.lock, brings the cluster up with N nodes (default 2) and takes it down.
set -uo pipefail
root_dir=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$root_dir/tools/cluster
nodes=2 per_node=2 mib=16 reps=5 timing=1
while [ $# -gt 1 ]; do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --per-node) per_node=$2; shift 2 ;;
    --mib) mib=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --no-time) timing=0; shift ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--nodes N] [--per-node K] [--mib M] [--reps R] [--no-time] BUILD_DIR" >&2; exit 2; }
job=$(cd "$1" && pwd)/tests/cluster/ckpt_levels_job
[ -x "$job" ] || { echo "no $job (build first)" >&2; exit 2; }
ranks=$((nodes * per_node))

exec 9>/run/ferry-cluster.lock
flock 9
FERRY_CLUSTER_LOCAL_SIZE=${FERRY_CLUSTER_LOCAL_SIZE:-1G} "$cluster" up --nodes "$nodes" >/dev/null || exit 1
trap '"$cluster" down >/dev/null 2>&1' EXIT
eval "$("$cluster" env)"
dir=$FERRY_CLUSTER_MOUNT/levels.$$ local=$FERRY_CLUSTER_LOCAL
mkdir -p "$dir"
run() { "$cluster" run -n "$ranks" --per-node "$per_node" -- "$job" "$@"; }
status=0
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ $timing = 1 ]; then
  run time "$dir" "$local" "$mib" "$reps" || status=1
  for n in $FERRY_CLUSTER_NODES; do "$cluster" exec "$n" -- sh -c "rm -f $local/time*"; done
  echo "load after timing: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
run write "$dir" "$local" "$mib" 1 && run write "$dir" "$local" "$mib" 2 || status=1
"$cluster" exec n2 -- sh -c "rm -f $local/*"   # node 2's local storage lost
echo "node n2's local storage emptied"
run restart "$dir" "$local" "$mib" 2 2 || status=1
delay="-x FERRY_CKPT_DRAIN_DELAY=5000"
[ "${FERRY_MPI:-openmpi}" = mpich ] && delay="-genv FERRY_CKPT_DRAIN_DELAY 5000"
FERRY_CLUSTER_MPIRUN_ARGS=$delay run write "$dir" "$local" "$mib" 3 die >/dev/null 2>&1
[ -e "$dir/ml.000000000003.nc" ] && { echo "the killed drain committed step 3"; status=1; }
run restart "$dir" "$local" "$mib" 3 1 || status=1
for n in $FERRY_CLUSTER_NODES; do "$cluster" exec "$n" -- sh -c "rm -f $local/*"; done
echo "every node's local storage emptied"
run restart "$dir" "$local" "$mib" 2 3 || status=1   # step 3 was never drained: step 2's netCDF file
rm -rf "$dir"
echo "run-levels-cluster: $([ $status = 0 ] && echo passed || echo FAILED) ($nodes nodes x $per_node ranks, $mib MiB per rank)"
exit $status

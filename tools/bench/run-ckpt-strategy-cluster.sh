#!/usr/bin/env bash
# Steer against gather on the cluster in a box (issue 30, docs/checkpoint.md "Which strategy at
# which size"): shelfsea --compare (collective, ferry's MPI-IO, the two strategies alternating
# checkpoint by checkpoint, the first rotating) at several state sizes, on both MPIs, RUNS runs each,
# with the ranks spread over the nodes and all on one node, the files on the GlusterFS volume. The
# load average is printed beside every run; tools/bench/ckpt_strategy.py takes the medians.
#
# usage: tools/bench/run-ckpt-strategy-cluster.sh [--nodes N] OUT.jsonl BUILD_DIR_OPENMPI BUILD_DIR_MPICH
# environment: RUNS (3), REPS (5), RANKS (4), GRIDS ("251x206x1 251x206x5 251x206x20 502x412x10"),
#   DIR (/dev/shm, --nodes 1 only)
# Holds /run/ferry-cluster.lock, brings the cluster up with N nodes (default 2) and down again;
# --nodes 1 runs on this machine without the cluster (files in DIR).
set -uo pipefail
cluster=$(cd "$(dirname "$0")/../.." && pwd)/tools/cluster
case ${1:-} in --nodes) nodes=$2; shift 2 ;; *) nodes=2 ;; esac
[ $# -eq 3 ] || { echo "usage: $0 [--nodes N] OUT.jsonl BUILD_DIR_OPENMPI BUILD_DIR_MPICH" >&2; exit 2; }
out=$(realpath "$1")
declare -A builds=([openmpi]=$(cd "$2" && pwd) [mpich]=$(cd "$3" && pwd))
ranks=${RANKS:-4}

# --nodes 1: no cluster, the host's mpiexec on this machine, files in DIR (default /dev/shm): the
# single-node reference under the same load.
launch() { # MPI RANKS_PER_NODE PROGRAM ARGS...
  local mpi=$1 per_node=$2; shift 2
  if [ "$nodes" = 1 ]; then
    if [ "$mpi" = openmpi ]; then
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpiexec.openmpi --oversubscribe --bind-to none -n "$ranks" "$@"
    else
      mpiexec.mpich -launcher fork -n "$ranks" "$@"
    fi
  else
    FERRY_MPI=$mpi "$cluster" run -n "$ranks" --per-node "$per_node" -- "$@"
  fi
}
if [ "$nodes" = 1 ]; then
  dir=${DIR:-/dev/shm}/strategy.$$
else
  exec 9>/run/ferry-cluster.lock
  flock 9
  "$cluster" up --nodes "$nodes" >/dev/null || exit 1
  trap '"$cluster" down >/dev/null 2>&1' EXIT
  eval "$("$cluster" env)"
  dir=$FERRY_CLUSTER_MOUNT/strategy.$$
fi
mkdir -p "$dir"
status=0
for run in $(seq 1 "${RUNS:-3}"); do
  for grid in ${GRIDS:-251x206x1 251x206x5 251x206x20 502x412x10}; do
    IFS=x read -r nx ny nz <<< "$grid"
    for mpi in openmpi mpich; do
      placements=$(( (ranks + nodes - 1) / nodes ))
      [ "$nodes" = 1 ] || placements+=" $ranks"   # spread over the nodes, then all on n1
      for per_node in $placements; do
        echo "run $run $grid $mpi ${nodes} nodes, $per_node per node: load $(cut -d' ' -f1-3 /proc/loadavg)"
        launch "$mpi" "$per_node" "${builds[$mpi]}/apps/shelfsea/shelfsea" \
          --nx "$nx" --ny "$ny" --nz "$nz" --compare "$dir" --reps "${REPS:-5}" --json "$dir/part.jsonl" || status=1
        # the row names its placement: nodes used and ranks per node
        sed "s/^{/{\"nodes\":$(( (ranks + per_node - 1) / per_node )),\"per_node\":$per_node,\"run\":$run,\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\",/" \
          "$dir/part.jsonl" >> "$out"
        rm -f "$dir/part.jsonl"
      done
    done
  done
done
rm -rf "$dir"
exit $status

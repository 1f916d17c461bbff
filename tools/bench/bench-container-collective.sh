#!/usr/bin/env bash
# The container's collective mode (collectors) against independent writers
# on the cluster in a box (docs/cluster.md): ferry-bench container with the
# ferry and collective contenders, alternating in one invocation per rank
# count (medians of the repetitions), files on the GlusterFS volume. Holds
# /run/ferry-cluster.lock for the whole run, brings the cluster up with
# NODES nodes and takes it down at the end. Prints the load with each run.
#
# usage: tools/bench/bench-container-collective.sh BUILD_DIR [openmpi|mpich]
# environment:
#   FERRY_BENCH_NODES     nodes (default 4)
#   FERRY_BENCH_COUNTS    rank counts (default "16 32 64")
#   FERRY_BENCH_REPS      repetitions (default 5)
#   FERRY_BENCH_BYTES     bytes per rank (default 256k)
#   FERRY_BENCH_PIECE     bytes per write call (default 4k)
#   FERRY_BENCH_FLUSH     flush after every this many bytes (default 64k)
#   FERRY_BENCH_COLLECTORS ranks per collector (default 0: one per node)
#   FERRY_BENCH_OUT       directory for the JSON documents (default: none written)
set -uo pipefail
root_dir=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [openmpi|mpich]" >&2; exit 2; }
build=$(cd "$1" && pwd)
mpi=${2:-openmpi}
nodes=${FERRY_BENCH_NODES:-4}
counts=${FERRY_BENCH_COUNTS:-16 32 64}
cluster=$root_dir/tools/cluster
exec 9>/run/ferry-cluster.lock
flock 9
"$cluster" up --nodes "$nodes" > /dev/null || exit 1
eval "$("$cluster" env)"
dir=$FERRY_CLUSTER_MOUNT/bench-collective
mkdir -p "$dir"
status=0
for n in $counts; do
  json=()
  [ -n "${FERRY_BENCH_OUT:-}" ] && mkdir -p "$FERRY_BENCH_OUT" && json=(--json "$FERRY_BENCH_OUT/$mpi-n$n.json")
  echo "=== $mpi, $n ranks on $nodes nodes, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$cluster" run --mpi "$mpi" -n "$n" -- "$build/bench/ferry-bench" container --dir "$dir" --only ferry,collective \
    --bytes "${FERRY_BENCH_BYTES:-256k}" --piece "${FERRY_BENCH_PIECE:-4k}" --flush "${FERRY_BENCH_FLUSH:-64k}" \
    --collectors "${FERRY_BENCH_COLLECTORS:-0}" --reps "${FERRY_BENCH_REPS:-5}" "${json[@]}" || status=1
  echo "=== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
rm -rf "$dir"
"$cluster" down > /dev/null
exit $status

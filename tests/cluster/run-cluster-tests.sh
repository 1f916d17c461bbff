#!/usr/bin/env bash
# The suite's cluster part: a subset of the tests that covers every layer,
# run on tools/cluster's nodes (ranks spread over them, TCP between nodes)
# with their files on its GlusterFS volume, for each build given.
#
# usage: tests/cluster/run-cluster-tests.sh [--nodes N] BUILD_DIR...
#   brings the cluster up with N nodes (default 2) unless one is up with
#   that many, runs the subset in each build directory, and takes the
#   cluster down again if it brought it up. Exit status 0 when all passed.
#
# What each test stands for on the cluster:
#   mpiio_differential    collective and independent data paths against the model (ferry
#                         alone: the host MPI-IOs lose bytes on a caching client, docs/cluster.md;
#                         sync-barrier-sync after writes, which MPI asks of every program)
#   coll_random           two-phase writes and reads over random views and hints, byte-checked
#   coll_racing_writer    no lost update: aggregators' read-modify-write beside a racing writer
#                         on another node, byte-range locks through the FUSE clients
#   coll_shm              node-shared slabs inside each node, messages between nodes
#   mpiio_atomic          atomic mode: locks held across nodes, no mixed block
#   mpiio_consistency     sync-barrier-sync makes another node's bytes visible
#   sharedfp_*            shared file pointers in one-sided memory across nodes
#   async_collective      nonblocking collectives in the background
#   container_*           the task-local container, mapped reads, the Python reader; collective
#                         mode (collectors per node write for the others); buddy copies (one node's
#                         file per node deleted, its streams read back from the next node's copy)
#   ckpt_matrix           checkpoints, all strategies, ferry's backend (the host backends lose bytes
#                         on a caching client: their read-modify-writes read stale pages)
#   shelfsea_restart      restart on another rank (and node) count
#   ckpt_levels_*         multi-level checkpoints (tests/cluster/run-levels-cluster.sh --ctest, on this
#                         cluster under this script's lock): one node's local storage lost, restart from
#                         the partner copies; the job killed in its drain, restart from level 1; every
#                         node's local storage lost, restart from the netCDF file
#   software_hdf5/pnetcdf unmodified HDF5 and PnetCDF programs on the drop-in (the host reference
#                         run on local disk: the hosts lose bytes on a caching client)
set -uo pipefail

root_dir=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$root_dir/tools/cluster
nodes=2
if [ "${1:-}" = --nodes ]; then nodes=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: $0 [--nodes N] BUILD_DIR..." >&2; exit 2; }

tests=(mpiio_differential.np3 coll_random.np4 coll_racing_writer_two.np4 coll_shm.np4 mpiio_atomic.np4 indep_growing.np4
       mpiio_consistency.np3 sharedfp_pointer.np4 sharedfp_ordered.np4 async_collective_multiple.np3
       container_roundtrip.np5 container_mapped.np3 container_python.np4 container_collect.np4 container_buddy.np4
       ckpt_matrix.np3 shelfsea_restart ckpt_levels_partner ckpt_levels_drain
       software_hdf5.np4 software_pnetcdf.np4)
pattern="^($(IFS='|'; echo "${tests[*]}" | sed 's/\./\\./g'))\$"

# One cluster at a time on a machine: wait for whoever else is using it (other sessions' faults, benchmarks).
exec 9>/run/ferry-cluster.lock
flock 9
brought_up=0
# reuse a cluster only when it has as many nodes and every client works: a run killed from outside leaves
# dead clients (ENOTCONN) that `status` finds, and `up` clears first
if [ "$("$cluster" env 2>/dev/null | sed -n 's/^FERRY_CLUSTER_NODES="\(.*\)"/\1/p' | wc -w)" != "$nodes" ] \
   || ! "$cluster" status >/dev/null 2>&1; then
  "$cluster" up --nodes "$nodes" || exit 1
  brought_up=1
fi
eval "$("$cluster" env)"
export FERRY_TEST_CLUSTER=1 FERRY_TEST_DIR=$FERRY_CLUSTER_MOUNT/tests FERRY_DIFF_HOST=0 FERRY_DIFF_SYNC=1 CKPT_FERRY_ONLY=1
export FERRY_TEST_REFERENCE_DIR=${TMPDIR:-/tmp}   # software_compare: the host reference on local disk
mkdir -p "$FERRY_TEST_DIR"

status=0
for build in "$@"; do
  echo "=== ferry cluster tests: $build on $nodes nodes ($FERRY_CLUSTER_NODES), files on $FERRY_CLUSTER_MOUNT ==="
  start=$SECONDS
  (cd "$build" && ctest --output-on-failure --timeout 600 -R "$pattern") || status=1
  echo "ferry cluster tests: $build took $((SECONDS - start)) s"
done
[ $brought_up = 1 ] && "$cluster" down
exit $status

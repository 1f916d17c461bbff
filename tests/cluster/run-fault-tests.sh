#!/usr/bin/env bash
# The fast subset of the cluster fault suite (tools/cluster-faults --quick):
# ferry alone, six cases that cover each fault (a brick server killed inside
# a collective write, then restarted; killed inside a checkpoint, restarted
# only after the close; a node's client killed inside independent writes
# and container appends; a brick full under a collective write; a slow node
# under a collective write), for each build given.
#
# usage: tests/cluster/run-fault-tests.sh BUILD_DIR...
#   Exit status 0 when ferry held every promise in every case (docs/cluster.md,
#   "Faults"). Takes /run/ferry-cluster.lock per batch unless the caller holds
#   it on descriptor 9 (tests/cluster/run-cluster-tests.sh does); leaves the
#   cluster as it found it (up with the same arguments, or down).
set -uo pipefail

root_dir=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR..." >&2; exit 2; }
out=${TMPDIR:-/tmp}/ferry-cluster-faults-$$   # each run's markers, outcomes and log; kept when a case fails
status=0
for build in "$@"; do
  echo "=== ferry cluster faults: $build ==="
  start=$SECONDS
  "$root_dir/tools/cluster-faults" --quick --builds "$build" --out "$out" || status=1
  echo "ferry cluster faults: $build took $((SECONDS - start)) s"
done
if [ $status = 0 ]; then rm -rf "$out"; else echo "ferry cluster faults: details in $out/results.jsonl and $out/runs"; fi
exit $status

#!/usr/bin/env bash
# The racing-writer test (tests/coll/coll_racing_writer.c, issue 13) for many
# rounds: a two-phase collective write racing another rank's independent
# writes into its holes, on one handle (MPI_THREAD_MULTIPLE) and on two;
# then again with every write slowed by 1 ms (FERRY_FAULT=write:1+:slow),
# which widens each read-modify-write. CI runs 60 and 48 rounds; this runs
# 1,000 and 200 (or $1 and $1 / 5) per mode and MPI.
#
# usage: tools/bench/race-rounds.sh [rounds] [config...]   (default: 1000 openmpi mpich)
# FERRY_RACE_BUILD=DIR runs the programs under DIR/<config> instead (built
# elsewhere, e.g. an older ferry with this test added, to show it losing bytes).
set -uo pipefail

root_dir=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-1000}
[ $# -gt 0 ] && shift
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(openmpi mpich)
build_root=${FERRY_RACE_BUILD:-$root_dir/build}
status=0
run() { # config mode rounds [fault]
  echo "=== $1, $2 handle(s), $3 rounds${4:+, FERRY_FAULT=$4} ==="
  FERRY_FAULT=${4:-} FERRY_RACE_ROUNDS=$3 "$build_root/$1/tests/run_mpi.sh" 7200 4 \
    "$build_root/$1/tests/coll/coll_racing_writer_$2" "$2" || status=1
}
for config in "${configs[@]}"; do
  [ -n "${FERRY_RACE_BUILD:-}" ] || "$root_dir/tools/setup.sh" "$config" || exit 1
  for mode in one two; do run "$config" "$mode" "$rounds"; done
  for mode in one two; do run "$config" "$mode" $((rounds / 5)) "write:1+:slow"; done
done
exit $status

#!/usr/bin/env bash
# The whole test suite: builds and tests ferry against Open MPI, against
# MPICH, and under AddressSanitizer + UndefinedBehaviorSanitizer (Open MPI).
# Installs missing Debian packages first (as root). Exit status 0 only when
# every configuration passes.
#
# usage: tools/run-tests.sh [config...]     (default: openmpi mpich asan cluster)
#   cluster: a subset on tools/cluster's nodes and GlusterFS volume, with the Open MPI and
#   MPICH builds (tests/cluster/run-cluster-tests.sh), at 2 nodes and at 4, then the fast
#   subset of the fault suite at 2 nodes (tests/cluster/run-fault-tests.sh: real faults of the
#   file system under ferry's calls, docs/cluster.md "Faults")
set -uo pipefail

root_dir=$(cd "$(dirname "$0")/.." && pwd)
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(openmpi mpich asan cluster)
export FERRY_TEST_DIR=${FERRY_TEST_DIR:-/tmp}

"$root_dir/tools/setup.sh" || exit 1
echo "=== ferry house rules (tools/checks/check-rules.sh) ==="
"$root_dir/tools/checks/check-rules.sh" || exit 1
passed=0 failed=0 status=0 broken=()
# The benchmark command builds with -O3; its warnings differ from the test builds'.
for config in release-openmpi release-mpich; do
  echo "=== ferry build: $config ==="
  "$root_dir/tools/setup.sh" "$config" || { status=1; broken+=("$config"); }
done
# Adds the "N tests passed, M tests failed out of T" lines of a log to the totals; 1 when it has none.
count_results() {
  local log=$1 line total bad found=0
  while read -r line; do
    total=$(echo "$line" | sed -E 's/.* out of ([0-9]+).*/\1/')
    bad=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) tests failed.*/\1/')
    passed=$((passed + total - bad)); failed=$((failed + bad)); found=1
  done < <(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$log")
  [ $found = 1 ]
}

# The cluster part: both MPIs' builds on 2 nodes, then a 4-node pass of the same subset, then
# the fault suite's fast subset (it takes the cluster's lock per batch and leaves it as found).
run_cluster() {
  local log=$1 builds=() mpi
  for mpi in openmpi mpich; do
    "$root_dir/tools/setup.sh" "$mpi" || return 1
    builds+=("$root_dir/build/$mpi")
  done
  "$root_dir/tests/cluster/run-cluster-tests.sh" --nodes 2 "${builds[@]}" 2>&1 | tee -a "$log"
  local two=${PIPESTATUS[0]}
  "$root_dir/tests/cluster/run-cluster-tests.sh" --nodes 4 "${builds[@]}" 2>&1 | tee -a "$log"
  local four=${PIPESTATUS[0]}
  "$root_dir/tests/cluster/run-fault-tests.sh" "${builds[@]}" 2>&1 | tee -a "$log"
  [ "$two" -eq 0 ] && [ "$four" -eq 0 ] && [ "${PIPESTATUS[0]}" -eq 0 ]
}

for config in "${configs[@]}"; do
  echo "=== ferry tests: $config ==="
  if [ "$config" = cluster ]; then
    log=$(mktemp)
    run_cluster "$log" || status=1
    count_results "$log" || status=1
    rm -f "$log"
    continue
  fi
  if ! "$root_dir/tools/setup.sh" "$config"; then
    status=1; broken+=("$config"); continue
  fi
  # The cluster-only tests (label cluster: they skip off the cluster) run in the cluster part.
  selection=(-LE cluster)
  # The sanitizer build skips the multi-GiB tests: they test 64-bit paths, not memory safety;
  # the benchmark report run (it tests the JSON and report, not memory safety; 600 s at load 30), and
  # the libraries' own suites (their programs with ASan preloaded hung in exit: tests/software/CMakeLists.txt).
  [ "$config" = asan ] && selection=(-LE "large|report|suite|cluster")
  log=$(mktemp)
  (cd "$root_dir/build/$config" && ctest --output-on-failure --timeout 600 "${selection[@]}") 2>&1 | tee "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  count_results "$log" || status=1
  rm -f "$log"
done
echo "ferry tests over ${configs[*]}:"
echo "total: $passed passed, $failed failed"
[ ${#broken[@]} -eq 0 ] || echo "builds that failed (their compiler errors are above): ${broken[*]}"
exit $status

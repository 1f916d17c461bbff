#!/usr/bin/env bash
# Before/after of ferry itself over the benchmark report's quick set (issue 32: "the quick benchmark
# set before and after in one run"): two ferry-bench binaries (two builds of ferry, e.g. a commit
# before a refactor and after it) alternate run by run, RUNS times each, so a loaded machine slows
# both alike; every run is tools/ferry-report's quick set (or --only IDS) against one host, whose
# numbers come along. tools/bench/report_ab.py then compares ferry's medians row by row.
#
# usage: tools/bench/run-report-ab.sh <before ferry-bench> <after ferry-bench> <out-dir> [ferry-report options]
# environment: FERRY_MPI=openmpi|mpich (default openmpi), RUNS (default 5), AB_HOST (the host contender:
#   romio321 for Open MPI, mpich for MPICH, by default); AB_BEFORE_ENV, AB_AFTER_ENV: NAME=VALUE words set
#   for that side's runs only (one binary, two settings: e.g. AB_AFTER_ENV=FERRY_WAIT=yield)
set -euo pipefail
before=$1 after=$2 out=$3
shift 3
root_dir=$(cd "$(dirname "$0")/../.." && pwd)
mpi=${FERRY_MPI:-openmpi}
host=${AB_HOST:-$([ "$mpi" = openmpi ] && echo romio321 || echo mpich)}
mkdir -p "$out"
for run in $(seq 1 "${RUNS:-5}"); do
  for label in before after; do
    bench=$before side_env=${AB_BEFORE_ENV:-}
    [ "$label" = after ] && bench=$after side_env=${AB_AFTER_ENV:-}
    echo "$label run $run: load $(cut -d' ' -f1-3 /proc/loadavg), $(date +%T)" | tee -a "$out/load.txt"
    # shellcheck disable=SC2086 # NAME=VALUE words
    env $side_env /usr/bin/python3 "$root_dir/tools/ferry-report" --no-render --hosts "$host" --bench "$mpi=$bench" \
      --out "$out/$label-$run" "$@" > "$out/$label-$run.log" 2>&1 ||
      echo "$label run $run: ferry-report failed (see $out/$label-$run.log)" | tee -a "$out/load.txt"
  done
done
/usr/bin/python3 "$root_dir/tools/bench/report_ab.py" "$out" "$host"

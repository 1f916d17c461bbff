#!/usr/bin/env bash
# The checkpoint benchmarks of issue 17, side by side in one run: ferry-bench
# ckpt (strategies against a container-style write, synthetic ocean layout)
# and the shelfsea mini-app's table, on 4 and 9 ranks, on /dev/shm and on
# disk, ferry and the host MPI-IO through the same code; then the plot and
# the Markdown tables (tools/bench/plot_ckpt.py).
#
# usage: tools/bench/run-ckpt-bench.sh [out-dir]       (default: ckpt-bench-results)
# environment: FERRY_MPI=openmpi|mpich (default openmpi), FERRY_BENCH_DISK_DIR
#   (default /var/tmp), CKPT_RANKS ("4 9"), CKPT_N (512), CKPT_NZ (20),
#   CKPT_REPS (5), SHELF_GRID ("--nx 251 --ny 206 --nz 20")
set -euo pipefail

root_dir=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-ckpt-bench-results}
mpi=${FERRY_MPI:-openmpi}
mkdir -p "$out"
"$root_dir/tools/setup.sh" "release-$mpi"
build="$root_dir/build/release-$mpi"
json="$out/ckpt-$mpi.jsonl"
: > "$json"
docs=()
if [ "$mpi" = openmpi ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  launch=(mpiexec.openmpi --oversubscribe --bind-to none -n)
else
  launch=(mpiexec.mpich -launcher fork -n)
fi
for ranks in ${CKPT_RANKS:-4 9}; do
  for dir in /dev/shm "${FERRY_BENCH_DISK_DIR:-/var/tmp}"; do
    doc="$out/ckpt-$mpi-$ranks-$(basename "$dir").json"
    docs+=("$doc")
    "${launch[@]}" "$ranks" "$build/bench/ferry-bench" ckpt --dir "$dir" --n "${CKPT_N:-512}" --nz "${CKPT_NZ:-20}" \
      --reps "${CKPT_REPS:-5}" --json "$doc"
    # shellcheck disable=SC2086
    "${launch[@]}" "$ranks" "$build/apps/shelfsea/shelfsea" ${SHELF_GRID:---nx 251 --ny 206 --nz 20} --table "$dir" \
      --reps "${CKPT_REPS:-5}" --json "$json"
  done
done
/usr/bin/python3 "$root_dir/tools/bench/plot_ckpt.py" "${docs[@]}" "$json" "$out/ckpt-$mpi.png" --markdown | tee "$out/ckpt-$mpi.md"

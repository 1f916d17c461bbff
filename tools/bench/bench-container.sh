#!/usr/bin/env bash
# ferry-bench container over N = 4 to 256 streams (ranks, oversubscribed),
# on /dev/shm and on disk, with and without a sync before close on disk,
# then the metadata system calls of each contender (strace). Results go to
# a directory of JSON files (one per run, docs/report.md; plotted by
# tools/bench/plot_bench_container.py) and the tables to stdout.
#
# usage: tools/bench/bench-container.sh [openmpi|mpich]
# environment:
#   FERRY_SIONLIB_DIR     the prefix of a SIONlib 1.7.6 installed outside the repository, against the
#                         same MPI (ferry never builds it); adds the SIONlib contender
#   FERRY_BENCH_DISK_DIR  the on-disk directory (default /var/tmp)
#   FERRY_BENCH_COUNTS    stream counts (default "4 16 64 128 256")
#   FERRY_BENCH_REPS      repetitions, medians reported (default 5)
#   FERRY_BENCH_TOTAL     bytes written per run over all streams (default 1g)
#   FERRY_BENCH_OUT       the directory of JSON files (default container-bench)
set -euo pipefail
root_dir=$(cd "$(dirname "$0")/../.." && pwd)
mpi=${1:-openmpi}
disk=${FERRY_BENCH_DISK_DIR:-/var/tmp}
counts=${FERRY_BENCH_COUNTS:-4 16 64 128 256}
reps=${FERRY_BENCH_REPS:-5}
total=${FERRY_BENCH_TOTAL:-1g}
out=${FERRY_BENCH_OUT:-container-bench}
mkdir -p "$out"
build="$root_dir/build/release-$mpi"
if [ -n "${FERRY_SIONLIB_DIR:-}" ]; then
  build="$root_dir/build/container-bench-$mpi"
  "$root_dir/tools/setup.sh"
  cmake -S "$root_dir" -B "$build" -G Ninja -DFERRY_MPI="$mpi" -DCMAKE_BUILD_TYPE=Release -DFERRY_BUILD_TESTS=OFF \
        -DFERRY_WERROR=ON -DFERRY_SIONLIB_DIR="$FERRY_SIONLIB_DIR" > /dev/null
  ninja -C "$build" ferry-bench > /dev/null
else
  "$root_dir/tools/setup.sh" "release-$mpi"
fi
bench="$build/bench/ferry-bench"
if [ "$mpi" = openmpi ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  launch() { n=$1; shift; mpiexec.openmpi --oversubscribe --bind-to none -n "$n" "$@"; }
else
  launch() { n=$1; shift; mpiexec.mpich -launcher fork -n "$n" "$@"; }
fi
bytes_of() { # the run's total over n streams, in whole KiB
  python3 -c "import sys; t = sys.argv[1]; m = {'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30}
v = int(t[:-1]) * m[t[-1].lower()] if t[-1].isalpha() else int(t); print('%dk' % max(1, v // int(sys.argv[2]) >> 10))" "$total" "$1"
}
echo "ferry-bench container sweep: $mpi, load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, JSON to $out"
# Open MPI 4.1.4 reports a rank "exiting improperly" after MPI_Finalize with 256 ranks on one node (a
# bare MPI_Init/MPI_Finalize program does too): the results are printed and saved before, so go on.
run() { launch "$@" || echo "(exit status $?)"; echo; }
for dir in /dev/shm "$disk"; do
  for n in $counts; do
    run "$n" "$bench" container --dir "$dir" --bytes "$(bytes_of "$n")" --reps "$reps" \
      --json "$out/$(basename "$dir")-n$n.json"
  done
done
for n in 4 16; do # the device behind the page cache: sync before close
  run "$n" "$bench" container --dir "$disk" --bytes "$(bytes_of "$n")" --reps "$reps" --sync 1 \
    --json "$out/$(basename "$disk")-synced-n$n.json"
done
"$root_dir/tools/bench/bench-container-syscalls.sh" "$bench" "$mpi" "$disk" $counts

#!/usr/bin/env bash
# The main job: a ferry-bench workload (default: contig), 4 ranks, ferry
# side by side with the host MPI's own MPI-IO (and plain POSIX for contig),
# on /dev/shm (software cost) and on disk. Installs missing Debian packages
# first (as root).
#
# usage: tools/run-bench.sh [workload] [extra ferry-bench options]
#   e.g. tools/run-bench.sh noncontig --mode collective --blocklen 2
#        FERRY_BENCH_RANKS=9 tools/run-bench.sh btio --class C
# environment: FERRY_MPI=openmpi|mpich (default openmpi),
#              FERRY_BENCH_DISK_DIR (default /var/tmp), FERRY_BENCH_RANKS (default 4)
set -euo pipefail

root_dir=$(cd "$(dirname "$0")/.." && pwd)
mpi=${FERRY_MPI:-openmpi}
ranks=${FERRY_BENCH_RANKS:-4}
workload=contig
case "${1:-}" in
  contig|noncontig|discontig|btio|types|overlap|ckpt) workload=$1; shift ;;
esac
reps=()
[ "$workload" = contig ] && reps=(--reps 5)
"$root_dir/tools/setup.sh" "release-$mpi"
bench="$root_dir/build/release-$mpi/bench/ferry-bench"

if [ "$mpi" = openmpi ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  launch=(mpiexec.openmpi --oversubscribe --bind-to none -n "$ranks")
else
  launch=(mpiexec.mpich -launcher fork -n "$ranks")
fi
for dir in /dev/shm "${FERRY_BENCH_DISK_DIR:-/var/tmp}"; do
  "${launch[@]}" "$bench" "$workload" --dir "$dir" "${reps[@]}" "$@"
  echo
done

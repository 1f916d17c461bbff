#!/usr/bin/env bash
# The main job. Without a workload: the quick set of tools/ferry-report (a
# few minutes): every ferry-bench workload, ferry side by side with Open
# MPI's OMPIO and ROMIO 3.2.1 and MPICH's ROMIO, on /dev/shm and on disk;
# JSON, Markdown tables and PNG plots in docs/report/ (the path is printed
# at the end). Options go to tools/ferry-report (--full, --out DIR, --only
# IDS, --hosts ..., --hints FILE; tools/ferry-report --help).
#
# With a workload: that ferry-bench workload alone, 4 ranks, on /dev/shm
# and on disk, tables on stdout:
#   tools/run-bench.sh noncontig --mode collective --blocklen 2
#   FERRY_BENCH_RANKS=9 tools/run-bench.sh btio --class C
# environment: FERRY_MPI=openmpi|mpich (default openmpi),
#              FERRY_BENCH_DISK_DIR (default /var/tmp), FERRY_BENCH_RANKS (default 4)
# Installs missing Debian packages first (as root).
set -euo pipefail

root_dir=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 0 ] || [ "${1:0:1}" = "-" ]; then
  "$root_dir/tools/setup.sh"   # python3-matplotlib and the MPIs, before Debian's python3 runs the report
  exec /usr/bin/python3 "$root_dir/tools/ferry-report" "$@"
fi

mpi=${FERRY_MPI:-openmpi}
ranks=${FERRY_BENCH_RANKS:-4}
workload=$1
shift
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

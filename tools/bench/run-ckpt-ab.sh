#!/usr/bin/env bash
# Before/after of the checkpoint strategies (issue 31 item 3): the shelfsea
# mini-app's table (every strategy x collective/independent x ferry/host
# MPI-IO) at several state sizes, two builds alternating run by run (so a
# loaded machine slows both alike), RUNS runs each; then the medians over
# runs of each run's median (tools/bench/ckpt_ab.py). The load average is logged
# beside every run.
#
# usage: tools/bench/run-ckpt-ab.sh <before-build-dir> <after-build-dir> <out-dir>
# environment: FERRY_MPI=openmpi|mpich (default openmpi), RUNS (5), REPS (3),
#   RANKS (4), DIR (/dev/shm), GRIDS ("251x206x1 251x206x5 251x206x20 502x412x20")
set -euo pipefail
before=$1 after=$2 out=$3
mpi=${FERRY_MPI:-openmpi}
mkdir -p "$out"
if [ "$mpi" = openmpi ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  launch=(mpiexec.openmpi --oversubscribe --bind-to none -n "${RANKS:-4}")
else
  launch=(mpiexec.mpich -launcher fork -n "${RANKS:-4}")
fi
for grid in ${GRIDS:-251x206x1 251x206x5 251x206x20 502x412x20}; do
  IFS=x read -r nx ny nz <<< "$grid"
  for run in $(seq 1 "${RUNS:-5}"); do
    for label in before after; do
      build=$before
      [ "$label" = after ] && build=$after
      echo "$label $mpi $grid run $run: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load-$mpi.txt"
      "${launch[@]}" "$build/apps/shelfsea/shelfsea" --nx "$nx" --ny "$ny" --nz "$nz" --table "${DIR:-/dev/shm}" \
        --reps "${REPS:-3}" --json "$out/$label-$mpi.jsonl" > /dev/null
    done
  done
done

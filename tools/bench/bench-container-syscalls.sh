#!/usr/bin/env bash
# Metadata system calls of creating, opening and closing N streams: N
# task-local files, one ferry container, SIONlib (when ferry-bench was built
# with it). strace -f -y follows every process of the job and names the file
# behind each descriptor, so only calls on the benchmark's own directory
# count; a run that does everything but the contender (--only baseline: the
# directory's creation and removal) is subtracted. The cleanup's unlinks
# are not counted.
#
# usage: tools/bench/bench-container-syscalls.sh FERRY_BENCH [openmpi|mpich] [DIR] [N...]
#   e.g. tools/bench/bench-container-syscalls.sh build/release-openmpi/bench/ferry-bench openmpi /var/tmp 4 16 64 256
set -uo pipefail
bench=$1 mpi=${2:-openmpi} dir=${3:-/var/tmp}
shift 3 2>/dev/null || shift $#
counts=("$@")
[ ${#counts[@]} -eq 0 ] && counts=(4 16 64 256)
calls=open,openat,creat,close,stat,fstat,lstat,newfstatat,statx,statfs,fstatfs,mkdir,ftruncate,fsync,fdatasync,fallocate,access,faccessat,faccessat2,lseek
if [ "$mpi" = openmpi ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  launch() { mpiexec.openmpi --oversubscribe --bind-to none -n "$@"; }
else
  launch() { mpiexec.mpich -launcher fork -n "$@"; }
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
total_of() { # contender n -> metadata system calls of the whole job; nothing when the job failed
  rm -f "$out"/trace.*
  # -ff: one file per process, so no call is split into "unfinished" and "resumed" lines
  strace -ff -y -qq -o "$out/trace" -e trace="$calls" \
    bash -c "$(declare -f launch); launch $2 $bench container --dir $dir --only $1 --create-only 1 --reps 1 --bytes 0" \
    > "$out/job.log" 2>&1 || return 0  # strace exits with the job's status
  cat "$out"/trace.* | grep -c 'ferry-bench-container-'
}
for n in "${counts[@]}"; do
  base=$(total_of baseline "$n")
  [ -n "$base" ] || { echo "N=$n: the baseline run failed:"; cat "$out/job.log"; exit 1; }
  for who in tasklocal ferry sionlib; do
    got=$(total_of "$who" "$n")
    if [ -n "$got" ]; then
      echo "N=$n $who: $((got - base)) metadata system calls (job $got, baseline $base)"
    elif grep -q "no contender named" "$out/job.log"; then
      echo "N=$n $who: not measured: this ferry-bench has no $who (SIONlib needs cmake -DFERRY_SIONLIB_DIR=...)"
    else
      echo "N=$n $who: not measured: the run failed:"; cat "$out/job.log"
    fi
  done
done

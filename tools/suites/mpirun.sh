#!/bin/sh
# The MPI launcher the suites' own harnesses call (HDF5's RUNPARALLEL,
# PnetCDF's TESTMPIRUN and TESTSEQRUN), set by tools/run-suites.sh:
#
#   mpirun.sh -n <np> <program> [args...]     under mpiexec
#   mpirun.sh --serial <program> [args...]    directly (ncvalidator)
#
# Environment: FERRY_SUITES_MPI (openmpi | mpich), FERRY_SUITES_PRELOAD (the
# drop-in, with any sanitizer runtime before it: the ferry runs; empty: the
# host's MPI-IO), FERRY_SUITES_TIMEOUT (seconds per run, default 1800: a
# hang is a failure), FERRY_SUITES_LOG (a directory: each run's output goes
# to <n>.out there, also to stdout, and a line "<n> <exit status> <np>
# <directory> <command>" (tab-separated) to runs.tsv, so a failure is found
# by program, not by reading the harness's output, and a run can be repeated).
np=serial
case "${1:-}" in
  -n) np=$2; shift 2 ;;
  --serial) shift ;;
  *) echo "usage: $0 -n <np> | --serial <program> [args...]" >&2; exit 2 ;;
esac
program="$*" # what runs.tsv names: the program and its arguments
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# As tests/common/run_mpi.sh: no oversubscription complaints, shared memory only.
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 HYDRA_LAUNCHER=fork
[ -n "${FERRY_SUITES_HOST_IO:-}" ] && export OMPI_MCA_io="$FERRY_SUITES_HOST_IO"
if [ "$np" != serial ]; then
  [ -n "${FERRY_SUITES_PRELOAD:-}" ] && set -- env "LD_PRELOAD=$FERRY_SUITES_PRELOAD" "$@"
  case "${FERRY_SUITES_MPI:-}" in
    openmpi) set -- mpiexec.openmpi --oversubscribe --bind-to none -n "$np" "$@" ;;
    mpich) set -- mpiexec.mpich -launcher fork -n "$np" "$@" ;;
    *) echo "mpirun.sh: FERRY_SUITES_MPI must be openmpi or mpich" >&2; exit 2 ;;
  esac
fi
if [ -z "${FERRY_SUITES_LOG:-}" ]; then
  exec timeout -k 10 "${FERRY_SUITES_TIMEOUT:-1800}" "$@"
fi
# The harnesses start one run at a time (make without -j), so runs are numbered in order.
n=$(($(find "$FERRY_SUITES_LOG" -maxdepth 1 -name '*.out' | wc -l) + 1))
timeout -k 10 "${FERRY_SUITES_TIMEOUT:-1800}" "$@" >"$FERRY_SUITES_LOG/$n.out" 2>&1
status=$?
cat "$FERRY_SUITES_LOG/$n.out"
printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$status" "$np" "$PWD" "$program" >>"$FERRY_SUITES_LOG/runs.tsv"
exit $status

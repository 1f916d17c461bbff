#!/bin/sh
# Runs a test that must abort: passes when the job exits with an error status
# that is not the runner's timeout and its output contains <needle>.
# usage: expect_abort.sh <run_mpi.sh> <timeout> <nprocs> <needle> <program> [args...]
run=$1; timeout_s=$2; nprocs=$3; needle=$4; shift 4
# An aborted job cannot clean up its scratch directory: give it one here.
FERRY_TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ferry-expect-abort-XXXXXX"); export FERRY_TEST_DIR
out=$("$run" "$timeout_s" "$nprocs" "$@" 2>&1); rc=$?
rm -rf "$FERRY_TEST_DIR"
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then echo "expect_abort: the job exited 0"; exit 1; fi
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "expect_abort: the job timed out (hang)"; exit 1; fi
case "$out" in *"NOT ABORTED"*) echo "expect_abort: a rank carried on"; exit 1 ;; esac
case "$out" in
  *"$needle"*) ;;
  *) # MPICH's launcher sometimes drops a rank's last stderr lines when the job
     # is aborted; accept that only for an MPI_Abort status, not a signal.
     if [ "$rc" -gt 128 ]; then echo "expect_abort: killed by signal $((rc - 128)), output lacks '$needle'"; exit 1; fi
     echo "expect_abort: note: output lacks '$needle' (launcher lost it)" ;;
esac
echo "expect_abort: aborted as expected (status $rc)"

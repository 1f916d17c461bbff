#!/bin/sh
# Runs a test that must abort: passes when the job exits with an error status
# that is not the runner's timeout and its output contains <needle>.
# usage: expect_abort.sh <run_mpi.sh> <timeout> <nprocs> <needle> <program> [args...]
run=$1; timeout_s=$2; nprocs=$3; needle=$4; shift 4
out=$("$run" "$timeout_s" "$nprocs" "$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then echo "expect_abort: the job exited 0"; exit 1; fi
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "expect_abort: the job timed out (hang)"; exit 1; fi
case "$out" in *"NOT ABORTED"*) echo "expect_abort: a rank carried on"; exit 1 ;; esac
case "$out" in *"$needle"*) ;; *) echo "expect_abort: output lacks '$needle'"; exit 1 ;; esac
echo "expect_abort: aborted as expected (status $rc)"

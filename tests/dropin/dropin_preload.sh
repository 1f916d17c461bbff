#!/bin/sh
# The drop-in test: the same plain MPI-IO program, once on the host's MPI-IO
# and once with libferry-mpiio.so preloaded, must produce identical files,
# and the preloaded run must be served by ferry.
# usage: dropin_preload.sh <run_mpi.sh> <program> <libferry-mpiio.so> <nprocs> [preload-prefix]
set -eu
run=$1; program=$2; library=$3; nprocs=$4; prefix=${5:-}
dir=$(mktemp -d "${FERRY_TEST_DIR:-/tmp}/ferry-dropin-XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$run" 120 "$nprocs" "$program" "$dir/host.out" host
"$run" 120 "$nprocs" env "LD_PRELOAD=${prefix}${library}" "$program" "$dir/ferry.out" ferry
cmp "$dir/host.out" "$dir/ferry.out"
echo "dropin_preload: files identical ($(stat -c %s "$dir/ferry.out") bytes)"

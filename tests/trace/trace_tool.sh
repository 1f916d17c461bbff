#!/bin/sh
# FERRY_TRACE end to end: run a test program with failures injected, then
# check the per-rank files and what ferry-trace makes of them.
# usage: trace_tool.sh <run_mpi.sh> <coll_fault program> <ferry-trace>
set -eu
run=$1; program=$2; tool=$3
dir=$(mktemp -d "${FERRY_TEST_DIR:-/tmp}/ferry-trace-XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "trace_tool: $*" >&2; exit 1; }

mkdir "$dir/all" "$dir/errors" "$dir/from"
FERRY_TRACE=all FERRY_TRACE_DIR="$dir/all" "$run" 60 3 "$program" >/dev/null
[ "$(ls "$dir/all" | wc -l)" -eq 3 ] || fail "expected one file per rank"
grep -q "kind=call	op=pwrite" "$dir/all"/ferry-trace.1.* || fail "no pwrite records on rank 1"
grep -q "op=pwrite.*result=-1	errno=28" "$dir/all"/ferry-trace.1.* || fail "injected ENOSPC not recorded on rank 1"
"$tool" -n 5 "$dir/all" > "$dir/report"
grep -q "^per-rank summary" "$dir/report" || fail "no summary"
grep -q "rank 0  MPI_ERR_NO_SPACE: ferry: write_at_all failed on rank 1" "$dir/report" || fail "agreed error missing"
grep -q "rank 1  MPI_ERR_NO_SPACE: ferry: write '" "$dir/report" || fail "local error missing"
[ "$(sed -n '/^slowest calls/,$p' "$dir/report" | grep -c ' us  rank ')" -eq 5 ] || fail "expected 5 slowest calls"

FERRY_TRACE=errors FERRY_TRACE_DIR="$dir/errors" "$run" 60 3 "$program" >/dev/null
grep -q "kind=error" "$dir/errors"/* || fail "errors mode recorded no error"
! grep -q "kind=call" "$dir/errors"/* || fail "errors mode recorded calls"

FERRY_TRACE=all FERRY_TRACE_FROM=1000000000 FERRY_TRACE_DIR="$dir/from" "$run" 60 3 "$program" >/dev/null
! grep -q "op=p\(read\|write\)" "$dir/from"/* || fail "FERRY_TRACE_FROM did not filter transfers"
grep -q "op=open" "$dir/from"/* || fail "FERRY_TRACE_FROM dropped non-transfer calls"
echo "trace_tool: trace files and ferry-trace report ok"

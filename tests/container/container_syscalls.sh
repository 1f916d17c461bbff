#!/bin/sh
# tools/bench/bench-container-syscalls.sh at N=2: every contender it measures has
# a count of zero or more, and one this ferry-bench lacks (SIONlib unless
# built with -DFERRY_SIONLIB_DIR) is said to be not measured, not given a
# negative count (it printed "sionlib: -5 metadata system calls").
#
# usage: container_syscalls.sh SCRIPT FERRY_BENCH openmpi|mpich
script=$1 bench=$2 mpi=$3
command -v strace > /dev/null || { echo "container_syscalls: skipped: no strace"; exit 0; }
dir=$(mktemp -d "${FERRY_TEST_DIR:-/tmp}/ferry-container-syscalls-XXXXXX") || exit 1
fail() { echo "FAIL container_syscalls: $*"; cat "$dir/out.log"; rm -rf "$dir"; exit 1; }
"$script" "$bench" "$mpi" "$dir" 2 > "$dir/out.log" 2>&1 || fail "the script exited $?"
cat "$dir/out.log"
grep -q "^N=2 tasklocal: [0-9][0-9]* metadata system calls" "$dir/out.log" || fail "no count for task-local files"
grep -q "^N=2 ferry: [0-9][0-9]* metadata system calls" "$dir/out.log" || fail "no count for ferry"
grep -q "^N=2 sionlib: \(not measured: this ferry-bench has no sionlib\|[0-9][0-9]* metadata\)" "$dir/out.log" ||
  fail "SIONlib neither measured nor said to be missing"
grep -q -- ": -[0-9]" "$dir/out.log" && fail "a negative count"
rm -rf "$dir"
echo "container_syscalls: passed"

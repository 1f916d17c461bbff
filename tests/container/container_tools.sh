#!/bin/sh
# ferry-container round trips: a container written by NP ranks (two files,
# 512-byte blocks) whose streams the writer also left as plain files;
# cat and split give exactly those bytes, defrag gives one chunk per stream
# with the same bytes, verify passes and then catches one flipped data
# byte, which cat and defrag refuse to return; exit statuses for scripts
# (usage 2, unreadable 4, damaged 1).
#
# usage: container_tools.sh RUN_MPI WRITER TOOL NPROCS
run_mpi=$1 writer=$2 tool=$3 np=$4
export FERRY_TEST_SEED=${FERRY_TEST_SEED:-$(date +%s)}
dir=$(mktemp -d "${FERRY_TEST_DIR:-/tmp}/ferry-container-tools-XXXXXX") || exit 1
echo "container_tools: $np ranks, FERRY_TEST_SEED=$FERRY_TEST_SEED, in $dir"
fail() { echo "FAIL container_tools: $* (FERRY_TEST_SEED=$FERRY_TEST_SEED)"; exit 1; }
expect_status() { # expected command...
  want=$1; shift
  "$@" > "$dir/out.log" 2> "$dir/err.log"; got=$?
  [ "$got" = "$want" ] || { cat "$dir/out.log" "$dir/err.log"; fail "$* exited $got, expected $want"; }
}

"$run_mpi" 120 "$np" "$writer" write "$dir/c.ctr" 2 512 60000 "$dir" > "$dir/writer.log" 2>&1 ||
  { cat "$dir/writer.log"; fail "the writer failed"; }
last=$((np - 1))
for s in $(seq 0 $last); do
  name=$(printf '%06d' "$s")
  expect_status 0 "$tool" cat "$dir/c.ctr" "$s" "$dir/cat.$name"
  cmp "$dir/cat.$name" "$dir/expected.$name" || fail "cat of stream $s differs"
done
expect_status 0 "$tool" split "$dir/c.ctr" "$dir/split"
for s in $(seq 0 $last); do
  name=$(printf '%06d' "$s")
  cmp "$dir/split.$name" "$dir/expected.$name" || fail "split of stream $s differs"
done
expect_status 0 "$tool" defrag --block-size 1024 "$dir/c.ctr" "$dir/d.ctr"
expect_status 0 "$tool" dump "$dir/d.ctr"
grep -q "block 1024" "$dir/out.log" || fail "defrag did not change the alignment"
awk '$1 ~ /^[0-9]+$/ && NF >= 6 && $4 > 1 { bad = 1 } END { exit bad }' "$dir/out.log" ||
  fail "defrag left a stream in more than one chunk"
for s in $(seq 0 $last); do
  name=$(printf '%06d' "$s")
  "$tool" cat "$dir/d.ctr" "$s" | cmp - "$dir/expected.$name" || fail "defragmented stream $s differs"
done
expect_status 0 "$tool" verify "$dir/c.ctr"
expect_status 0 "$tool" verify --progress "$dir/d.ctr"
grep -q "100%" "$dir/err.log" || fail "verify --progress drew no bar"

# Flip one data byte of the first stream that has data; verify must say which.
expect_status 0 "$tool" dump --chunks "$dir/c.ctr"
set -- $(awk '$1 ~ /^[0-9]+$/ && NF >= 6 { stream = $1 } /^ +chunk 0:/ && $8 > 0 { print $4, $6, $8, stream; exit }' \
         "$dir/out.log")
[ $# -eq 4 ] || fail "dump --chunks listed no chunk with data"
file="$dir/c.ctr"; [ "$1" -gt 0 ] && file=$(printf '%s.%06d' "$dir/c.ctr" "$1")
at=$(($2 + $3 / 2)) stream=$4
byte=$(od -An -tu1 -j "$at" -N1 "$file" | tr -d ' ')  # complemented, so it always changes (a constant 0xff
printf "\\$(printf '%03o' $((byte ^ 255)))" |      # left a byte that was 0xff as it was: 1 run in 256)
  dd of="$file" bs=1 seek="$at" conv=notrunc 2>/dev/null
expect_status 1 "$tool" verify "$dir/c.ctr"
grep -q "data checksum mismatch" "$dir/out.log" || fail "verify did not name the damaged chunk"
# ... and no reader returns it: cat and defrag fail naming the chunk and leave no output.
expect_status 4 "$tool" cat "$dir/c.ctr" "$stream" "$dir/bad.out"
grep -q "stream $stream chunk 0 in .* fails its data checksum" "$dir/err.log" || fail "cat did not name the chunk"
[ -e "$dir/bad.out" ] && fail "a failed cat left its output"
expect_status 4 "$tool" defrag "$dir/c.ctr" "$dir/bad.ctr"
ls "$dir" | grep -q "^bad.ctr" && fail "a failed defrag left a container"

expect_status 2 "$tool"
expect_status 2 "$tool" cat "$dir/c.ctr" 99999
expect_status 4 "$tool" dump "$dir/missing.ctr"
echo "not a container" > "$dir/text"
expect_status 4 "$tool" cat "$dir/text" 0
grep -q "not a ferry container" "$dir/err.log" || fail "no message for a file that is not a container"
rm -rf "$dir"
echo "container_tools: passed"

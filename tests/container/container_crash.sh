#!/bin/sh
# kill -9 of a whole writing job, then recover: every rank of a container
# writer flushes often and records each flushed length in a ledger; the
# script kills every rank with SIGKILL while they write, checks the tools
# see an incomplete container, runs `ferry-container recover`, and checks
# every stream holds at least its ledger's flushed length, byte for byte.
#
# usage: container_crash.sh RUN_MPI WRITER TOOL NPROCS
run_mpi=$1 writer=$2 tool=$3 np=$4
export FERRY_TEST_SEED=${FERRY_TEST_SEED:-$(date +%s)}
dir=$(mktemp -d "${FERRY_TEST_DIR:-/tmp}/ferry-container-crash-XXXXXX") || exit 1
echo "container_crash: $np ranks, FERRY_TEST_SEED=$FERRY_TEST_SEED, in $dir"
launcher=
kill_writers() {
  for r in $(seq 0 $((np - 1))); do
    [ -s "$dir/pid.$r" ] && kill -9 "$(cat "$dir/pid.$r")" 2>/dev/null
  done
}
fail() {
  echo "FAIL container_crash: $* (FERRY_TEST_SEED=$FERRY_TEST_SEED)"
  kill_writers
  [ -n "$launcher" ] && wait "$launcher"
  cat "$dir/writer.log"
  exit 1
}
expect_status() { # expected command...
  want=$1; shift
  "$@" > "$dir/out.log" 2>&1; got=$?
  [ "$got" = "$want" ] || { cat "$dir/out.log"; fail "$* exited $got, expected $want"; }
}

"$run_mpi" 300 "$np" "$writer" crash "$dir/c.ctr" "$dir" > "$dir/writer.log" 2>&1 &
launcher=$!
ready=0
for i in $(seq 1 1200); do
  ready=$(ls "$dir" | grep -c '^ready\.')
  [ "$ready" -ge "$np" ] && break
  sleep 0.1
done
[ "$ready" -ge "$np" ] || fail "the writers never all flushed"
sleep "$(awk 'BEGIN { srand(); printf "%.2f", 0.2 + rand() }')"
kill_writers
wait "$launcher" && fail "the killed job exited 0"
launcher=

expect_status 3 "$tool" dump "$dir/c.ctr"
expect_status 3 "$tool" cat "$dir/c.ctr" 0
expect_status 0 "$tool" recover "$dir/c.ctr"
cat "$dir/out.log"
expect_status 0 "$tool" verify "$dir/c.ctr"
expect_status 0 "$tool" recover "$dir/c.ctr"
grep -q "already complete" "$dir/out.log" || fail "a second recover did something"
"$writer" check-recovered "$dir/c.ctr" "$dir" "$np" || fail "recovered streams differ from what was flushed"
rm -rf "$dir"
echo "container_crash: passed"

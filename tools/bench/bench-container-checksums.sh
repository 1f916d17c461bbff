#!/usr/bin/env bash
# What data checksums cost the container, in one process (one stream), so
# the numbers hold on a machine others load:
#   1. instructions (valgrind --tool=callgrind, exact, user space only): a
#      write and a read of BYTES through the container, data checksums off
#      and on; the difference per byte is what the checksums add (CRC-32C,
#      and the checked reader's copies);
#   2. processor time of the write phase and wall-clock read bandwidth from
#      ferry-bench container, REPS runs of each, alternating (the load is
#      printed beside them: wall-clock numbers mean little under load).
# The chunk size is 1 MiB (the default), the calls 1 MiB, on DIR.
#
# usage: tools/bench/bench-container-checksums.sh FERRY_BENCH [DIR] [BYTES] [REPS]
#   e.g. tools/bench/bench-container-checksums.sh build/openmpi/bench/ferry-bench /dev/shm 64m 5
set -euo pipefail
bench=$1 dir=${2:-/dev/shm} bytes=${3:-64m} reps=${4:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { # checksums [valgrind...]: one ferry-bench run of the container alone
  local ck=$1; shift
  "$@" "$bench" container --dir "$dir" --only ferry --bytes "$bytes" --chunk 1m --piece 1m --reps 1 \
    --checksums "$ck" 2> /dev/null
}
instructions() { # checksums -> instructions of the whole run
  run "$1" valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1" > /dev/null 2>&1
  awk '/^summary:/ { print $2 }' "$out/cg.$1"
}
bytes_n=$(numfmt --from=iec "${bytes^^}")
off=$(instructions 0) on=$(instructions 1)
echo "instructions, $bytes written and read: checksums off $off, on $on:" \
     "+$(awk -v a="$off" -v b="$on" -v n="$bytes_n" 'BEGIN { printf "%.3f", (b - a) / n }') per byte"
echo "load before the timed runs: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$reps"); do
  for ck in 0 1; do
    run "$ck" env | awk -v ck="$ck" '$1 == "ferry" { print "checksums " ck ": write MiB/s " $4 ", write cpu s " $8 \
                                                     ", read MiB/s " $6 }'
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

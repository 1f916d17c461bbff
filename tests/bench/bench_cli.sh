#!/bin/sh
# The command lines people expect from ferry-bench and ferry-trace: help on
# stdout with exit 0 (and nothing run), refusals with a message and exit 2.
# usage: bench_cli.sh <run_mpi.sh> <ferry-bench> <ferry-trace>
set -u
run=$1; bench=$2; trace=$3
failures=0
out=$(mktemp); err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

fail() { echo "bench_cli: FAILED: $*" >&2; failures=$((failures + 1)); }

# expect <status> <stdout pattern|-> <stderr pattern|-> command...
expect() {
  want=$1; out_pattern=$2; err_pattern=$3; shift 3
  "$@" >"$out" 2>"$err"
  status=$?
  [ "$status" -eq "$want" ] || fail "'$*' exited $status, not $want; stderr: $(head -c 300 "$err")"
  [ "$out_pattern" = - ] || grep -q -e "$out_pattern" "$out" || fail "'$*': stdout lacks '$out_pattern'"
  [ "$err_pattern" = - ] || grep -q -e "$err_pattern" "$err" || fail "'$*': stderr lacks '$err_pattern'"
}

# Help, without mpiexec: every workload listed with its options.
expect 0 "usage: mpiexec" - "$bench" --help
workloads=$(sed -n '/^workloads:/,/^$/p' "$out" | awk 'NR > 1 && NF { print $1 }')
[ -n "$workloads" ] || fail "ferry-bench --help lists no workloads"
for w in $workloads; do
  expect 0 "usage: .*ferry-bench $w" - "$bench" "$w" --help
  grep -q -e "--reps N" "$out" || [ "$w" = hints ] || fail "ferry-bench $w --help does not list --reps"
done
expect 0 "--total BYTES" - "$bench" contig --help
grep -q "MiB/s" "$out" && fail "ferry-bench contig --help ran the benchmark"
expect 0 "--class WORD" - "$bench" btio -h
expect 2 - "unknown workload 'nosuch'" "$bench" nosuch
expect 2 - "usage:" "$bench"

# Refusals, under MPI (options are parsed on every rank after MPI_Init).
expect 2 - "unknown option '--totl'" "$run" 60 1 "$bench" contig --totl 1M
expect 2 - "invalid value for --total: '1x'" "$run" 60 1 "$bench" contig --total 1x
expect 2 - "invalid value for --class: 'Z'" "$run" 60 1 "$bench" btio --class Z
expect 2 - "invalid value for --reps: '0'" "$run" 60 1 "$bench" types --reps 0
expect 2 - "invalid value for --blocklen" "$run" 60 1 "$bench" noncontig --blocklen two
expect 2 - "needs a value" "$run" 60 1 "$bench" discontig --total
expect 2 - "unexpected argument 'extra'" "$run" 60 1 "$bench" ylib extra
expect 2 - "invalid value for --mode" "$run" 60 1 "$bench" noncontig --mode=sideways

# ferry-trace
expect 0 "usage: ferry-trace" - "$trace" --help
expect 0 "--slowest N" - "$trace" -h
expect 2 - "unknown option '--bogus'" "$trace" --bogus
expect 2 - "invalid value for --slowest: 'x'" "$trace" -n x
expect 2 - "no trace directory or files" "$trace"
expect 0 "0 records" - "$trace" -n 3 /dev/null

[ "$failures" -eq 0 ] || exit 1
echo "bench_cli: every help and refusal as expected"

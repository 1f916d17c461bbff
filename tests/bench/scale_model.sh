#!/bin/sh
# Issue 20 item 8: the scaling model (ferry-bench scale) against real runs,
# and what it must show at 131072 ranks.
#   - at 3 and 4 ranks, every quantity the model predicts (metadata bytes
#     per call sent and received, view-cache bytes, bytes received at
#     set_view, aggregators, strategy)
#     equals what the real run's statistics say, for every pattern;
#   - in the sweep, a regular call's metadata per rank is the same at 16
#     and at 131072 ranks, and BT-IO views cost under 4 MiB of view cache
#     per rank at 131072;
#   - a view change receives what ranks said and each rank's displacement
#     (48 B per rank) plus each distinct shape once, not every rank's view;
#   - a two-phase call's buffers for tile patterns (checkpoint, BT-IO) stay
#     under 4 MiB at 131072 ranks: steps keep shares only for the pairs that
#     exchange bytes (46-48 MB when they kept one per rank and aggregator).
# usage: scale_model.sh <run_mpi.sh> <ferry-bench>
set -u
run=$1; bench=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failures=0
fail() { echo "scale_model: FAILED: $*" >&2; failures=$((failures + 1)); }

for n in 3 4; do
  "$run" 300 "$n" "$bench" scale >"$out" 2>&1 || fail "the check at $n ranks exited $?: $(tail -5 "$out")"
  [ "$(grep -c ' same$' "$out")" -eq 15 ] || fail "at $n ranks, not 15 quantities the same: $(cat "$out")"
  grep -q DIFFER "$out" && fail "at $n ranks the model differs: $(grep DIFFER "$out")"
  grep -A1 'model:' "$out" | awk '/model:/ { sub(/.*model: */, ""); m = $0 } /measured:/ { sub(/.*measured: */, ""); if ($0 != m) bad = 1 } END { exit bad }' \
    || fail "at $n ranks the strategies differ: $(grep -A1 'model:' "$out")"
done

# The sweep, one pattern at a time: 131072 virtual ranks take about 5 s per pattern here, 100 s under ASan.
sweep() { # <pattern> <ranks>
  "$run" 900 1 "$bench" scale --pattern "$1" --ranks "$2" >"$out" 2>&1 || fail "the $1 sweep exited $?: $(tail -5 "$out")"
}
# Columns: P shapes cache state update meta-out meta-in regular ...
update_bound=$((48 * 131072 + 65536))
check_update() { # <pattern>: the update's received bytes at 131072 ranks
  update=$(sed -n "/model, $1,/,/^\$/p" "$out" | awk '$1 == 131072 { print $5 }')
  [ -n "$update" ] && [ "$update" -le "$update_bound" ] || fail "$1's view change receives '$update' bytes at 131072 ranks, over $update_bound"
}
check_agg_bufs() { # <pattern>: the reported aggregator's buffers for one call at 131072 ranks
  bufs=$(sed -n "/model, $1,/,/^\$/p" "$out" | awk '$1 == 131072 { print $11 }')
  [ -n "$bufs" ] && [ "$bufs" -lt 4194304 ] || fail "$1's two-phase buffers at 131072 ranks are '$bufs' bytes, not under 4 MiB"
}
for pattern in noncontig checkpoint; do
  sweep "$pattern" 16,131072
  rows=$(sed -n "/model, $pattern,/,/^\$/p" "$out" | awk '$1 ~ /^[0-9]+$/ { print $1, $7, $8 }')
  [ "$(echo "$rows" | awk '$3 == "yes"' | wc -l)" -eq 2 ] || fail "$pattern is not regular at 16 and 131072: $rows"
  [ "$(echo "$rows" | awk '{ print $2 }' | sort -u | wc -l)" -eq 1 ] || fail "$pattern's metadata grows with P: $rows"
  check_update "$pattern"
  [ "$pattern" = checkpoint ] && check_agg_bufs checkpoint
done
sweep btio 131072
cache=$(sed -n '/model, btio,/,/^$/p' "$out" | awk '$1 == 131072 { print $3 }')
[ -n "$cache" ] && [ "$cache" -lt 4194304 ] || fail "BT-IO's view cache at 131072 ranks is '$cache' bytes, not under 4 MiB"
check_update btio
check_agg_bufs btio

[ "$failures" -eq 0 ] || exit 1
echo "scale_model: the model agrees with real runs at 3 and 4 ranks; at 131072 regular calls exchange what they do at 16, and BT-IO's view cache is $cache bytes"

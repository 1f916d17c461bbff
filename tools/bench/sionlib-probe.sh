#!/usr/bin/env bash
# Checks SIONlib 1.7.6's failures named in issue 16 (docs/container.md,
# "SIONlib 1.7.6"), next to ferry's container doing the same. ferry's
# policy: the repository holds no third-party code and nothing that builds
# it; ferry only finds a SIONlib installed outside it, when configured with
# -DFERRY_SIONLIB_DIR=<its prefix> (then ferry-sionlib-probe exists).
#
# usage: tools/bench/sionlib-probe.sh BUILD_DIR SIONLIB_PREFIX [openmpi|mpich]
#   e.g. tools/bench/sionlib-probe.sh build/sion-openmpi "$FERRY_SIONLIB_DIR" openmpi
set -uo pipefail
build=$1 prefix=$2 mpi=${3:-openmpi}
probe="$build/bench/ferry-sionlib-probe"
[ -x "$probe" ] || { echo "no $probe: configure with -DFERRY_SIONLIB_DIR=$prefix and build ferry-sionlib-probe"; exit 2; }
if [ "$mpi" = openmpi ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  run() { n=$1; shift; timeout 60 mpiexec.openmpi --oversubscribe --bind-to none -n "$n" "$@"; }
else
  run() { n=$1; shift; timeout 60 mpiexec.mpich -launcher fork -n "$n" "$@"; }
fi
dir=$(mktemp -d /tmp/ferry-sionlib-probe-XXXXXX)
trap 'rm -rf "$dir"' EXIT

echo "== close gathers once per block (collective calls per rank, 4 ranks)"
for blocks in 1 4 16 64; do run 4 "$probe" collectives "$dir" "$blocks" 2>&1 | grep '^collectives'; done
echo "== a write larger than the chunk"
run 4 "$probe" big-write "$dir" 2>&1 | grep '^one write'
echo "== the tail of a chunk when a write does not fit"
run 4 "$probe" tail "$dir" 2>&1 | grep '^two writes'
echo "== a 4-rank file read by 2 and by 6 ranks (a correct library refuses the wrong count, or maps every stream)"
run 4 "$probe" write "$dir/four.sion" > /dev/null 2>&1
run 2 "$probe" read-with "$dir/four.sion" 2>&1 | grep '^reader' | sort
run 6 "$probe" read-with "$dir/four.sion" > "$dir/six.log" 2>&1
echo "6 readers: exit status $? (124: timed out after 60 s)"
grep '^reader' "$dir/six.log" | sort
echo "== kill -9 after a flush, then SIONlib's own tools"
run 4 "$probe" crash "$dir/crash.sion" > /dev/null 2>&1
echo "killed job left $(stat -c %s "$dir/crash.sion") bytes"
for tool in siondump sioncat; do
  "$prefix/bin/$tool" "$dir/crash.sion" > "$dir/tool.log" 2>&1
  echo "$tool: $(grep -m1 -o 'bad value[^,]*\|cannot[^,]*' "$dir/tool.log" || head -c 200 "$dir/tool.log")"
done
